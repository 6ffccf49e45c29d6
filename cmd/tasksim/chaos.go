package main

import (
	"fmt"
	"net"
	"net/url"

	"github.com/tasksim/tasksim/loadgen/chaos"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/scenarios"
)

// startChaos puts a chaos proxy injecting f (decisions drawn from seed, fault events
// recorded in ev, which may be nil) in front of the http target at targetURL. The proxy
// listens on 127.0.0.1:0; proxiedURL is targetURL with its host replaced by the proxy's
// address (so requests through it carry that Host header), and stop closes the proxy and
// every connection through it. The proxy moves bytes and cannot see inside TLS: an https
// target is an error.
func startChaos(targetURL string, f scenarios.NetworkFaults, seed uint64, ev *metrics.Events) (proxiedURL string, stop func(), err error) {
	u, err := url.Parse(targetURL)
	if err != nil {
		return "", nil, fmt.Errorf("chaos proxy: target: %w", err)
	}
	upstream, err := upstreamAddr(u)
	if err != nil {
		return "", nil, err
	}
	p := chaos.New(upstream, f, seed, ev)
	if err := p.Listen("127.0.0.1:0"); err != nil {
		return "", nil, fmt.Errorf("chaos proxy: %w", err)
	}
	proxied := *u
	proxied.Host = p.Addr().String()
	return proxied.String(), func() { p.Close() }, nil
}

// upstreamAddr is the host:port the proxy dials for target u: u's port, else 80.
func upstreamAddr(u *url.URL) (string, error) {
	switch u.Scheme {
	case "http":
	case "https":
		return "", fmt.Errorf("chaos proxy: target %s: the chaos proxy supports http only, not https (it cannot see inside TLS); "+
			"put it in front of a plain http endpoint or turn faults.network off", u.Redacted())
	default:
		return "", fmt.Errorf("chaos proxy: target %s: scheme %q is not http", u.Redacted(), u.Scheme)
	}
	host := u.Hostname()
	if host == "" {
		return "", fmt.Errorf("chaos proxy: target %s has no host", u.Redacted())
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(host, port), nil
}
