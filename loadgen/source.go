package loadgen

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/tasksim/tasksim/scenarios"
)

// Source addresses. A TCP connection is named by its four-tuple, so the connections from one
// local address to one server address:port can use at most the ephemeral ports of the
// machine (Linux: net.ipv4.ip_local_port_range, 32768-60999 by default: 28,232), and a
// connection closed by the client holds its port for a minute more in TIME_WAIT. A run that
// needs more connections than that to one target, or that churns through connections
// (faults that cut them), spreads them over several local source addresses: each dial takes
// the next address of the list, round robin (client.ClientOptions.SourceAddrs), so N
// addresses hold N times the ports.
//
// Why source addresses and not several server ports: the server is whatever the target URL
// names, often not ours to start on several ports, and a run's virtual clients share one
// Target (one URL, one manifest); the source side is the load generator's own. On loopback
// every address of 127.0.0.0/8 is the machine's own, so 127.0.0.1-127.0.0.8 needs no setup;
// towards another machine the addresses must be configured on this one.

// CheckSourceAddrs says what is wrong with dialing targetURL from addrs, every problem at
// once: what scenarios.SourceProblems finds (loopback targets need loopback sources, other
// targets other sources, an address literal's family must be the sources'), and a source
// that is not loopback but not an address of this machine either (ifaceAddrs, from
// InterfaceAddrs; nil = not checked). No sources is no problem.
func CheckSourceAddrs(targetURL string, addrs []netip.Addr, ifaceAddrs []netip.Addr) error {
	if len(addrs) == 0 {
		return nil
	}
	var errs []error
	for _, p := range scenarios.SourceProblems(targetURL, addrs) {
		errs = append(errs, errors.New("source address "+p))
	}
	local := map[netip.Addr]bool{}
	for _, a := range ifaceAddrs {
		local[a.Unmap()] = true
	}
	for _, a := range addrs {
		if a = a.Unmap(); !a.IsLoopback() && ifaceAddrs != nil && !local[a] {
			errs = append(errs, fmt.Errorf("source address %s is not an address of this machine", a))
		}
	}
	return errors.Join(errs...)
}

// InterfaceAddrs lists the addresses of this machine's interfaces, for CheckSourceAddrs; nil
// if they cannot be read.
func InterfaceAddrs() []netip.Addr {
	as, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range as {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr().Unmap())
		}
	}
	return out
}

// EphemeralPorts is the number of local ports one source address has for connections to
// one server address: the size of /proc/sys/net/ipv4/ip_local_port_range, or Linux's default
// 28,232 (32768-60999) where it cannot be read.
func EphemeralPorts() int {
	const linuxDefault = 60999 - 32768 + 1
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return linuxDefault
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return linuxDefault
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || hi < lo {
		return linuxDefault
	}
	return hi - lo + 1
}

// AutoSourceAddrs is the spreading a run gets when it names no source addresses: none,
// unless the target is an IPv4 loopback address (or localhost) and conns, the connections the
// run may open at once, exceed what one source address holds (ports, EphemeralPorts): then
// 127.0.0.1 up to 127.0.0.N, N = ceil(conns / ports), every one of them the machine's own
// on Linux, where 127.0.0.0/8 is routed to loopback whole (only there: macOS configures
// 127.0.0.1 alone). Anywhere else the addresses are the machine's configuration, not
// tasksim's to choose, and ::1 is IPv6's only loopback address.
func AutoSourceAddrs(targetURL string, conns, ports int) []netip.Addr {
	if conns <= ports || ports <= 0 || runtime.GOOS != "linux" {
		return nil // elsewhere 127.0.0.2 and above may not be configured (macOS has 127.0.0.1 alone)
	}
	u, err := url.Parse(targetURL)
	if err != nil {
		return nil
	}
	host := u.Hostname()
	if a, err := netip.ParseAddr(host); err != nil && !strings.EqualFold(host, "localhost") || err == nil && !(a.Unmap().Is4() && a.IsLoopback()) {
		return nil
	}
	n := min((conns+ports-1)/ports, 255)
	out := make([]netip.Addr, n)
	for i := range n {
		out[i] = netip.AddrFrom4([4]byte{127, 0, 0, byte(1 + i)})
	}
	return out
}

// RunSources are the source addresses of a run's connections to targetURL: the scenario's
// entries (client.source_addresses, scenarios.ParseSourceAddrs), checked against the target
// and this machine's interfaces (CheckSourceAddrs); or, without any, AutoSourceAddrs for
// conns, the connections the run may open at once, and then auto is true. nil = the
// system's choice.
func RunSources(targetURL string, entries []string, conns int) (addrs []netip.Addr, auto bool, err error) {
	if len(entries) == 0 {
		return AutoSourceAddrs(targetURL, conns, EphemeralPorts()), true, nil
	}
	if addrs, err = scenarios.ParseSourceAddrs(entries); err != nil {
		return nil, false, fmt.Errorf("client.source_addresses: %w", err)
	}
	if err := CheckSourceAddrs(targetURL, addrs, InterfaceAddrs()); err != nil {
		return nil, false, fmt.Errorf("client.source_addresses: %w", err)
	}
	return addrs, false, nil
}
