package scenarios

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// maxSourceAddrs bounds the addresses client.source_addresses may name, all entries
// together: 4,096 addresses hold over a hundred million connections, and a typo such as
// 127.0.0.0/8 must not expand into sixteen million.
const maxSourceAddrs = 4096

// ParseSourceAddrs expands the entries of client.source_addresses into addresses, in order:
// each entry is an address (127.0.0.2, ::1), an inclusive range of one family
// (127.0.0.1-127.0.0.8) or a CIDR prefix (127.0.0.0/29: every address it holds, the
// network's first included). It says which entry is wrong, and why.
func ParseSourceAddrs(entries []string) ([]netip.Addr, error) {
	var out []netip.Addr
	seen := map[netip.Addr]int{}
	for i, e := range entries {
		addrs, err := parseSourceEntry(strings.TrimSpace(e), maxSourceAddrs-len(out))
		if err != nil {
			return nil, fmt.Errorf("entry %d (%q): %w", i, e, err)
		}
		for _, a := range addrs {
			if j, dup := seen[a]; dup {
				return nil, fmt.Errorf("entry %d (%q): %s is in entry %d too: each address once", i, e, a, j)
			}
			seen[a] = i
		}
		out = append(out, addrs...)
	}
	return out, nil
}

// parseSourceEntry expands one entry into at most left addresses.
func parseSourceEntry(e string, left int) ([]netip.Addr, error) {
	tooMany := fmt.Errorf("more than %d source addresses in all", maxSourceAddrs)
	switch {
	case e == "":
		return nil, fmt.Errorf("empty: want an address, a range A-B or a prefix A/N")
	case strings.Contains(e, "/"):
		p, err := netip.ParsePrefix(e)
		if err != nil {
			return nil, fmt.Errorf("not a CIDR prefix such as 127.0.0.0/29")
		}
		if p.Addr().Zone() != "" {
			return nil, fmt.Errorf("a zone is not allowed")
		}
		p = p.Masked()
		if p.Addr().BitLen()-p.Bits() > 12 { // more than 4,096: it cannot fit
			return nil, tooMany
		}
		return expand(p.Addr(), lastOf(p), left, tooMany)
	case strings.Contains(e, "-"):
		a, b, _ := strings.Cut(e, "-")
		from, err1 := netip.ParseAddr(strings.TrimSpace(a))
		to, err2 := netip.ParseAddr(strings.TrimSpace(b))
		switch {
		case err1 != nil || err2 != nil:
			return nil, fmt.Errorf("not a range of addresses such as 127.0.0.1-127.0.0.8")
		case from.Zone() != "" || to.Zone() != "":
			return nil, fmt.Errorf("a zone is not allowed")
		case from.Is4() != to.Is4():
			return nil, fmt.Errorf("the range mixes IPv4 and IPv6")
		case to.Less(from):
			return nil, fmt.Errorf("the range ends before it starts")
		}
		return expand(from, to, left, tooMany)
	}
	a, err := netip.ParseAddr(e)
	if err != nil {
		return nil, fmt.Errorf("not an IP address")
	}
	if a.Zone() != "" {
		return nil, fmt.Errorf("a zone is not allowed")
	}
	if left < 1 {
		return nil, tooMany
	}
	return []netip.Addr{a.Unmap()}, nil
}

// expand lists from..to (inclusive), at most left of them (else tooMany).
func expand(from, to netip.Addr, left int, tooMany error) ([]netip.Addr, error) {
	var out []netip.Addr
	for a := from; ; a = a.Next() {
		if len(out) == left {
			return nil, tooMany
		}
		out = append(out, a.Unmap())
		if a == to {
			return out, nil
		}
	}
}

// lastOf is the last address of prefix p.
func lastOf(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// SourceProblems says what is wrong with dialing target from addrs (target "" is the
// embedded server, on 127.0.0.1): a loopback target (127.0.0.0/8, ::1, localhost) needs
// loopback sources, and any other target sources that are not loopback (they cannot reach
// it); the family of an address literal in the target must be the sources'. A host name
// other than localhost may resolve to either family: a dial then takes the addresses of its
// source's family. Whether an address is configured on this machine is the caller's check.
func SourceProblems(target string, addrs []netip.Addr) []string {
	host := "127.0.0.1" // the embedded server
	if target != "" {
		u, err := url.Parse(target)
		if err != nil || u.Hostname() == "" {
			return nil // the target's own check says what is wrong with it
		}
		host = u.Hostname()
	}
	loopTarget := strings.EqualFold(host, "localhost")
	literal, isLiteral := netip.Addr{}, false
	if loopTarget {
		// localhost is reached over IPv4 (the resolver gives 127.0.0.1 first, and a ::1
		// source finds no IPv6 address to go with it)
		literal, isLiteral = netip.AddrFrom4([4]byte{127, 0, 0, 1}), true
	} else if a, err := netip.ParseAddr(host); err == nil {
		literal, isLiteral = a.Unmap(), true
		loopTarget = literal.IsLoopback()
	}
	use := "127.0.0.0/8"
	if isLiteral && literal.Is6() {
		use = "::1"
	}
	var out []string
	for _, a := range addrs {
		switch {
		case loopTarget && !a.IsLoopback():
			out = append(out, fmt.Sprintf("%s is not a loopback address, and the target %s is on loopback: use addresses of %s", a, host, use))
		case !loopTarget && a.IsLoopback():
			out = append(out, fmt.Sprintf("%s is a loopback address, and the target %s is not on loopback: it cannot be reached from there", a, host))
		case isLiteral && a.Is4() != literal.Is4():
			out = append(out, fmt.Sprintf("%s is %s, and the target %s is %s", a, family(a), host, family(literal)))
		}
	}
	return out
}

func family(a netip.Addr) string {
	if a.Is4() {
		return "IPv4"
	}
	return "IPv6"
}
