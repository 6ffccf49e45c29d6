package client

import (
	"net"
	"net/netip"
	"sync/atomic"
)

// Source addresses of the dials. A run that needs more connections to one target than one
// local address has ephemeral ports for (loadgen/source.go says why and when) spreads them
// over several local source addresses: each dial takes the next address of the list, round
// robin (sourceAddrs.next), so N addresses hold N times the ports.

// sourceAddrs hands out local addresses for dials, round robin.
type sourceAddrs struct {
	addrs []*net.TCPAddr
	turn  atomic.Uint64 // dials so far
}

// newSourceAddrs returns the round robin over addrs; nil when there are none.
func newSourceAddrs(addrs []netip.Addr) *sourceAddrs {
	if len(addrs) == 0 {
		return nil
	}
	s := &sourceAddrs{addrs: make([]*net.TCPAddr, len(addrs))}
	for i, a := range addrs {
		s.addrs[i] = net.TCPAddrFromAddrPort(netip.AddrPortFrom(a.Unmap(), 0))
	}
	return s
}

// next is the local address of the next dial: each address of the list in turn.
func (s *sourceAddrs) next() *net.TCPAddr {
	n := s.turn.Add(1) - 1
	return s.addrs[n%uint64(len(s.addrs))]
}

// dialer returns base dialing from the next source address; base itself without sources.
func (s *sourceAddrs) dialer(base *net.Dialer) *net.Dialer {
	if s == nil {
		return base
	}
	d := *base
	d.LocalAddr = s.next()
	return &d
}
