package scenarios

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestParseSourceAddrs(t *testing.T) {
	addrs := func(ss ...string) []netip.Addr {
		var out []netip.Addr
		for _, s := range ss {
			out = append(out, netip.MustParseAddr(s))
		}
		return out
	}
	for _, c := range []struct {
		in   []string
		want []netip.Addr
		err  string
	}{
		{in: nil},
		{in: []string{"127.0.0.2"}, want: addrs("127.0.0.2")},
		{in: []string{" 127.0.0.1 - 127.0.0.3 "}, want: addrs("127.0.0.1", "127.0.0.2", "127.0.0.3")},
		{in: []string{"127.0.0.4/30"}, want: addrs("127.0.0.4", "127.0.0.5", "127.0.0.6", "127.0.0.7")},
		{in: []string{"127.0.0.5/30"}, want: addrs("127.0.0.4", "127.0.0.5", "127.0.0.6", "127.0.0.7")}, // masked
		{in: []string{"127.0.0.255-127.0.1.1"}, want: addrs("127.0.0.255", "127.0.1.0", "127.0.1.1")},
		{in: []string{"::1", "fd00::1-fd00::2"}, want: addrs("::1", "fd00::1", "fd00::2")},
		{in: []string{"::ffff:127.0.0.1"}, want: addrs("127.0.0.1")}, // mapped: as IPv4
		{in: []string{"127.0.0.0/20"}, want: nil, err: ""},           // 4,096: the most
		{in: []string{"127.0.0.0/20", "127.0.0.1"}, err: `entry 1 ("127.0.0.1"): more than 4096 source addresses in all`},
		{in: []string{"127.0.0.0/19"}, err: `entry 0 ("127.0.0.0/19"): more than 4096`},
		{in: []string{"127.0.0.1-::1"}, err: "mixes IPv4 and IPv6"},
		{in: []string{"127.0.0.2-127.0.0.1"}, err: "ends before it starts"},
		{in: []string{"fe80::1%eth0"}, err: "a zone is not allowed"},
		{in: []string{"localhost"}, err: "not an IP address"},
		{in: []string{"127.0.0.1/33"}, err: "not a CIDR prefix"},
		{in: []string{"127.0.0.1-127.0.0.3", "127.0.0.2"}, err: `entry 1 ("127.0.0.2"): 127.0.0.2 is in entry 0 too`},
	} {
		got, err := ParseSourceAddrs(c.in)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseSourceAddrs(%q) error = %v, want %q", c.in, err, c.err)
			}
		case err != nil:
			t.Errorf("ParseSourceAddrs(%q) error = %v", c.in, err)
		case c.in != nil && c.in[0] == "127.0.0.0/20":
			if len(got) != 4096 || got[0] != netip.MustParseAddr("127.0.0.0") || got[4095] != netip.MustParseAddr("127.0.15.255") {
				t.Errorf("ParseSourceAddrs(%q) = %d addresses from %v to %v", c.in, len(got), got[0], got[len(got)-1])
			}
		case !slices.Equal(got, c.want):
			t.Errorf("ParseSourceAddrs(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}
