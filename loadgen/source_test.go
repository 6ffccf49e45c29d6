package loadgen

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestCheckSourceAddrs(t *testing.T) {
	lo := []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("127.0.0.3")}
	ten := []netip.Addr{netip.MustParseAddr("10.1.2.3")}
	v6 := []netip.Addr{netip.MustParseAddr("::1")}
	for _, c := range []struct {
		name, target string
		addrs, iface []netip.Addr
		want         []string // substrings of the error, in order; none = no error
	}{
		{"loopback to loopback", "http://127.0.0.1:8080/mcp", lo, nil, nil},
		{"localhost", "http://localhost:8080/mcp", lo, nil, nil},
		{"none", "http://127.0.0.1:8080/mcp", nil, nil, nil},
		{"not loopback to loopback", "http://127.0.0.1:1/mcp", ten, nil, []string{"10.1.2.3 is not a loopback address, and the target 127.0.0.1 is on loopback"}},
		{"loopback to elsewhere", "http://10.9.9.9:1/mcp", lo[:1], nil, []string{"127.0.0.1 is a loopback address, and the target 10.9.9.9 is not on loopback"}},
		{"family", "http://[::1]:1/mcp", lo[:1], nil, []string{"127.0.0.1 is IPv4, and the target ::1 is IPv6"}},
		{"v6 loopback", "http://[::1]:1/mcp", v6, nil, nil},
		{"localhost is IPv4", "http://localhost:1/mcp", v6, nil, []string{"::1 is IPv6, and the target localhost is IPv4"}},
		{"v6 target, v4 source", "http://[::1]:1/mcp", ten, nil, []string{"use addresses of ::1"}},
		{"not this machine's", "http://10.9.9.9:1/mcp", ten, []netip.Addr{netip.MustParseAddr("10.0.0.1")}, []string{"10.1.2.3 is not an address of this machine"}},
		{"this machine's", "http://mcp.example:1/mcp", ten, ten, nil},
		{"every problem", "http://127.0.0.1:1/mcp", append(slices.Clone(ten), netip.MustParseAddr("192.168.0.1")), nil,
			[]string{"10.1.2.3 is not a loopback", "192.168.0.1 is not a loopback"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := CheckSourceAddrs(c.target, c.addrs, c.iface)
			if len(c.want) == 0 {
				if err != nil {
					t.Errorf("CheckSourceAddrs = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("CheckSourceAddrs = nil, want %q", c.want)
			}
			msg := err.Error()
			for _, w := range c.want {
				i := strings.Index(msg, w)
				if i < 0 {
					t.Fatalf("CheckSourceAddrs = %q, want it to say %q", msg, w)
				}
				msg = msg[i+len(w):]
			}
		})
	}
}

func TestAutoSourceAddrs(t *testing.T) {
	const ports = 28232
	for _, c := range []struct {
		target string
		conns  int
		want   int
	}{
		{"http://127.0.0.1:8080/mcp", 20000, 0},     // one address holds them
		{"http://127.0.0.1:8080/mcp", ports, 0},     // exactly
		{"http://127.0.0.1:8080/mcp", ports + 1, 2}, // one more: a second address
		{"http://localhost:8080/mcp", 100000, 4},    // ceil(100,000 / 28,232)
		{"http://127.0.0.9:8080/mcp", 100000, 4},    // any 127/8 target: the sources start at .1
		{"http://[::1]:8080/mcp", 100000, 0},        // IPv6 has one loopback address
		{"http://10.0.0.1:8080/mcp", 100000, 0},     // not ours to choose
		{"http://mcp.example:8080/mcp", 100000, 0},  // nor here
		{"http://127.0.0.1:8080/mcp", 100 * ports, 100},
	} {
		got := AutoSourceAddrs(c.target, c.conns, ports)
		if len(got) != c.want {
			t.Errorf("AutoSourceAddrs(%s, %d) = %v, want %d addresses", c.target, c.conns, got, c.want)
			continue
		}
		for i, a := range got {
			if want := netip.AddrFrom4([4]byte{127, 0, 0, byte(i + 1)}); a != want {
				t.Errorf("AutoSourceAddrs(%s, %d)[%d] = %v, want %v", c.target, c.conns, i, a, want)
			}
		}
	}
}
