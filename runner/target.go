package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/loadgen/chaos"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/scenarios"
)

// reach starts the target (the embedded server, or the URL given), reads its manifest and
// decides how to call the tool (r.manifest), and puts the chaos proxy in front of it when
// the scenario has network faults. closeTarget stops what reach started.
func (r *runRequest) reach(ctx context.Context, rec *metrics.Recorder, events *metrics.Events) (
	target *client.Target, srv *mockserver.Server, closeTarget func(), err error) {
	sc := r.sc
	var closers []func()
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	defer func() {
		if err != nil {
			closeAll() // the results are zeroed by then: not closeTarget
		}
	}()
	target, srv, err = startTarget(sc, sc.Workload.PoolSize(), r.conns.addrs, rec.Shard(0), events, r.opts.InProcess)
	if err != nil {
		return nil, nil, nil, err
	}
	target.Tracer = r.tracer // the probe's requests are spans too (nil: untraced)
	if srv != nil {
		closers = append(closers, srv.Close)
		r.cfg.Reconciler = embeddedReconciler(sc, srv)
	}
	limit := cmp.Or(r.opts.ProbeTimeout, DefaultProbeTimeout)
	probeCtx, cancelProbe := context.WithTimeout(ctx, limit)
	manifest, err := probeRun(probeCtx, target, srv != nil, sc)
	err = client.ProbeTimedOut(probeCtx, err, limit, "--probe-timeout sets it")
	cancelProbe()
	if err != nil {
		return nil, nil, nil, &TargetError{err} // unreachable target, or not of the era pinned: exit 1 with the reason
	}
	r.manifest = manifest
	fb := client.FallbackRefuse
	if sc.Fallback == scenarios.FallbackSync {
		fb = client.FallbackSync
	}
	if err := manifest.Decide(fb); err != nil {
		var ce *client.CapabilityError
		if errors.As(err, &ce) {
			return nil, nil, nil, &UsageError{fmt.Errorf("%s: %w", TargetName(sc), err)}
		}
		return nil, nil, nil, err
	}
	if sc.Faults.Network.On() {
		// After the manifest: the capability check goes straight to the target, so that a
		// toxic drawn for its connection cannot end the run before it starts.
		proxied, stopChaos, err := startChaos(target.URL, sc.Faults.Network, sc.Seed, events)
		if err != nil {
			return nil, nil, nil, err
		}
		closers = append(closers, stopChaos)
		target.URL = proxied
	}
	return target, srv, closeAll, nil
}

// probeRun reads the manifest a run needs, in the era its clients will speak: the one the
// scenario pins (protocol), else the one the target answers first by E32 (server/discover,
// docs/RULES.md#e32): 2026-07-28 where it is served, 2025-11-25 otherwise, the fallback said
// in the manifest (era_detection). The embedded server is spoken to without detection (see
// runProtocol): in 2025-11-25 unless pinned or serving 2026-07-28 alone. A target that does not serve the era pinned is told plainly, as
// the runtime error it is (exit 1): a modern-only one pinned to 2025-11-25 is a
// client.ModernOnlyError, a legacy-only one pinned to 2026-07-28 an error naming what its
// server/discover answered.
func probeRun(ctx context.Context, target *client.Target, embedded bool, sc *scenarios.Scenario) (*client.Manifest, error) {
	target.Protocol = runProtocol(sc, embedded)
	if target.Protocol == client.ProtocolLegacy {
		return client.Probe(ctx, target, sc.Tool) // a modern-only target: a *client.ModernOnlyError
	}
	return client.ProbeWith(ctx, target, client.ProbeOptions{Tool: sc.Tool})
}

// runProtocol is the era a run pins before it asks (client.Target.Protocol): the scenario's
// protocol; on the embedded server, when that is auto, the era it serves alone
// (server.protocols modern), else 2025-11-25, spoken without detection.
func runProtocol(sc *scenarios.Scenario, embedded bool) string {
	switch {
	case sc.Protocol != client.ProtocolAuto || !embedded:
		return sc.Protocol
	case mockserver.Protocols(sc.Server.Protocols) == mockserver.ProtocolsModern:
		return client.ProtocolModern
	}
	return client.ProtocolLegacy
}

// TLSOptions are the client's TLS settings of sc (its tls: section, --ca-cert, ...).
func TLSOptions(sc *scenarios.Scenario) client.TLSOptions {
	return client.TLSOptions{CACert: sc.TLS.CACert, ClientCert: sc.TLS.ClientCert,
		ClientKey: sc.TLS.ClientKey, InsecureSkipVerify: sc.TLS.InsecureSkipVerify}
}

// tlsUnverified reports whether the run reaches its target over TLS without verifying it.
func tlsUnverified(sc *scenarios.Scenario) bool {
	return sc.TLS.InsecureSkipVerify && strings.HasPrefix(strings.ToLower(sc.Target), "https://")
}

// inProcessURL is the URL of an embedded server reached in process (Options.InProcess): no
// request leaves the process, the host is a name only.
const inProcessURL = "http://embedded.invalid/mcp"

// startTarget returns the target of the run: the URL given, or an embedded mock server on
// 127.0.0.1:0 configured from the scenario's server section (with inProcess, one bound to no
// port, reached through its handler); the clients' connections are dialed from sources
// (nil = the system's choice).
func startTarget(sc *scenarios.Scenario, pool int, sources []netip.Addr, serverMetrics *metrics.Shard, events *metrics.Events, inProcess bool) (*client.Target, *mockserver.Server, error) {
	tlsCfg, err := TLSOptions(sc).Config()
	if err != nil {
		return nil, nil, &UsageError{err}
	}
	t := &client.Target{
		Header:     http.Header{},
		Client:     client.NewHTTPClientWith(client.ClientOptions{IdleConns: 2 * pool, SourceAddrs: sources, TLS: tlsCfg}),
		ClientInfo: mcp.Implementation{Name: "tasksim", Version: Version},
	}
	for k, v := range sc.Headers {
		t.Header.Set(k, v.Reveal())
	}
	if sc.Target != "" {
		u, err := url.Parse(sc.Target)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, nil, &UsageError{fmt.Errorf("target %q is not an http(s) URL", sc.Target)}
		}
		t.URL = sc.Target
		if tenants := runTenants(sc); len(tenants) > 0 && t.Header.Get("Authorization") == "" {
			// As on the embedded server: the manifest probe, the cleanup probes and the
			// contract suite use the first tenant's token.
			t.Header.Set("Authorization", "Bearer "+tenants[0].Token.Reveal())
		}
		return t, nil, nil
	}
	scfg := ServerConfig(sc)
	scfg.Metrics = serverMetrics
	scfg.Events = events
	newServer := mockserver.NewServer
	if inProcess {
		newServer = mockserver.NewHandlerServer
	}
	srv, err := newServer(scfg)
	if err != nil {
		return nil, nil, err
	}
	t.URL = srv.URL
	if inProcess {
		t.URL, t.Client = inProcessURL, &http.Client{Transport: client.HandlerTransport(srv.Handler())}
	}
	if tenants := runTenants(sc); len(tenants) > 0 && t.Header.Get("Authorization") == "" {
		// The manifest probe and the cleanup probes use the first tenant's token; the
		// virtual clients use their own tenant's (loadgen.Security.Tenants).
		t.Header.Set("Authorization", "Bearer "+tenants[0].Token.Reveal())
	}
	return t, srv, nil
}

// runTenants are the tenants clients are spread over, sorted by name: server.tokens on the
// embedded server, security.tenants on a real target; none without tokens.
func runTenants(sc *scenarios.Scenario) []loadgen.Tenant {
	tokens := sc.Server.Tokens
	if sc.Target != "" {
		tokens = sc.Security.Tenants
	}
	var out []loadgen.Tenant
	for _, name := range slices.Sorted(maps.Keys(tokens)) {
		out = append(out, loadgen.Tenant{Name: name, Token: tokens[name]})
	}
	return out
}

// securityConfig maps the scenario's tenants and security section onto the load generator.
func securityConfig(sc *scenarios.Scenario) loadgen.Security {
	sec := sc.Security
	out := loadgen.Security{Tenants: runTenants(sc), ProbeShare: sec.ProbeShare, Canaries: sec.Canaries,
		WatchInjection: sec.Inject}
	for _, r := range sec.Revoke {
		out.Revoked = append(out.Revoked, loadgen.Revocation{Tenant: r.Tenant, At: time.Duration(r.At),
			Scope: string(cmp.Or(r.Scope, scenarios.RevokeAll))})
	}
	return out
}

// embeddedReconciler finds a task by idempotency key in the embedded server's ledger, for
// the reconciliation of creates whose reply was lost. Keys are unique within a
// run, so it looks in every tenant's ledger.
func embeddedReconciler(sc *scenarios.Scenario, srv *mockserver.Server) loadgen.Reconciler {
	tenants := []string{""}
	if len(sc.Server.Tokens) > 0 {
		tenants = slices.Sorted(maps.Keys(sc.Server.Tokens))
	}
	return loadgen.ReconcilerFunc(func(_ context.Context, key string) (string, bool, error) {
		for _, tenant := range tenants {
			if id, ok := srv.LookupKey(tenant, key); ok {
				return id, true, nil
			}
		}
		return "", false, nil
	})
}

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
