package mockserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

// Server is a mock MCP Tasks server. Create it with NewServer or NewUnstartedServer.
//
// It is a composition: the task core, which knows no protocol era (core.go), one front end
// per era over it (front.go: sessionFront for 2025-11-25, statelessFront for 2026-07-28),
// and the HTTP endpoint they share (endpoint). The known-bad and insecure modes are
// wrappers chosen once when it is built (modes.go, and each front end's reply filter and
// method modes).
type Server struct {
	// URL is the MCP endpoint, http://127.0.0.1:PORT/mcp, once the server has started.
	URL string
	// Listener is the listener Start serves on; NewUnstartedServer opens it on Config.Addr
	// so that a caller may replace it before Start.
	Listener net.Listener

	// store is the core's table of tasks. It sits here rather than in core so that a test
	// may build a Server around a bare store (store_internal_test.go).
	store *store
	core
	sessionFront                // 2025-11-25 and older: sessions (front.go, methods.go)
	modern       statelessFront // 2026-07-28: stateless (modern.go)
	endpoint
}

// endpoint is what the front ends share of HTTP: the mux of /mcp and /metrics, the http.Server
// and its shutdown, who answers a GET or a DELETE, and the counters of requests and
// notifications.
type endpoint struct {
	mux       *http.ServeMux
	httpSrv   *http.Server
	closeOnce sync.Once
	started   bool
	// streams answers a GET or a DELETE, chosen once by initFronts from Config.Protocols.
	streams http.HandlerFunc

	requests requestCounters // requests.go
	notes    noteCounters    // notifications sent (listen.go)
	prom     *exporter       // prom.go: /metrics
}

// NewUnstartedServer validates cfg and builds a server whose listener is open on cfg.Addr but
// which does not serve yet: call Start. Handler may be used without starting at all.
func NewUnstartedServer(cfg Config) (*Server, error) {
	s, err := newServer(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("mock server: listen on %s: %w", s.cfg.Addr, err)
	}
	s.Listener = ln
	return s, nil
}

// NewServer returns a started server listening on cfg.Addr (default 127.0.0.1:0).
func NewServer(cfg Config) (*Server, error) {
	s, err := NewUnstartedServer(cfg)
	if err != nil {
		return nil, err
	}
	s.Start()
	return s, nil
}

// NewHandlerServer builds a server that is never bound to a port: for tests that drive
// Handler in-process (httptest.NewRecorder, testing/synctest). Call Close when done.
func NewHandlerServer(cfg Config) (*Server, error) {
	s, err := newServer(cfg)
	if err != nil {
		return nil, err
	}
	s.startReaper()
	return s, nil
}

func newServer(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("mock server config: %w", err)
	}
	s := &Server{
		store: newStore(),
	}
	s.cfg = cfg.withDefaults()
	s.dialect = mcp.V20251125{}
	s.elicits = make(map[string]*elicitation)
	s.closing = make(chan struct{})
	s.initRequestPath() // the clock first: everything after reads it
	s.ledger.window, s.ledger.ttlCap, s.ledger.clock = s.cfg.LedgerWindow, s.cfg.MaxTTL, s.clock
	s.ledger.grant(s.cfg.DefaultTTL) // the default window's floor
	s.initBackpressure()
	s.initFaults()
	s.initModes()
	s.initFronts()
	if s.cfg.Inject {
		s.inject = injectionText(s.cfg.Seed)
	}
	s.mux = http.NewServeMux()
	s.mux.Handle("/mcp", http.HandlerFunc(s.serveMCP))
	s.prom = newExporter(s)
	s.mux.Handle("/metrics", s.prom)
	return s, nil
}

// Start serves on s.Listener in the background and sets URL.
func (s *Server) Start() {
	if s.started {
		panic("mockserver: Server already started")
	}
	s.started = true
	s.URL = "http://" + s.Listener.Addr().String() + "/mcp"
	s.httpSrv = &http.Server{
		Handler:           s.mux,
		ReadHeaderTimeout: 10 * time.Second,
		// No WriteTimeout: tasks/result and GET streams are long-lived by design (H5, H6).
	}
	s.startReaper()
	go func() { _ = s.httpSrv.Serve(s.Listener) }()
}

// Handler returns the server's HTTP handler: the /mcp endpoint and /metrics (prom.go).
func (s *Server) Handler() http.Handler { return s.mux }

// Close ends every stream and session, stops the reaper, and waits for in-flight requests.
func (s *Server) Close() {
	s.shutdown(context.Background())
}

// Shutdown is Close bounded by ctx: it returns ctx's error if in-flight requests outlive it.
func (s *Server) Shutdown(ctx context.Context) error { return s.shutdown(ctx) }

func (s *Server) shutdown(ctx context.Context) error {
	var err error
	s.closeOnce.Do(func() {
		close(s.closing)
		s.sessions.closeAll()
		if s.httpSrv != nil {
			err = s.httpSrv.Shutdown(ctx)
			if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
				_ = s.httpSrv.Close()
			}
		} else if s.Listener != nil {
			_ = s.Listener.Close()
		}
		s.chains.stop()
		s.down.close()
		var all []*task // collected first: no task lock is taken inside a shard lock (store.go)
		s.store.each(func(t *task) bool { all = append(all, t); return true })
		for _, t := range all {
			t.mu.Lock()
			if t.timer != nil {
				t.timer.Stop()
				t.timer = nil
			}
			t.mu.Unlock()
		}
	})
	return err
}

// Stats is a snapshot of the server's counters.
type Stats struct {
	Sessions         int           // live sessions
	TasksLive        int64         // tasks held in the store (retained_tasks)
	TasksCreated     uint64        // tasks ever created
	TasksExpired     uint64        // tasks deleted because their ttl ran out
	OrphanedTasks    uint64        // terminal tasks deleted before anyone fetched the result
	MaxCleanupLag    time.Duration // largest expiry -> deletion delay seen
	Effects          uint64        // domain effects recorded in the ledger
	DuplicateEffects uint64        // second effects for one idempotency key (hard gate)
	TasksLost        uint64        // tasks forgotten by a restart with RestartLosesTasks

	// ExpiryQueue is the number of tasks in the reaper's expiry queue (a task deleted early
	// stays there until its ttl), and ElicitationsPending the elicitations not yet answered:
	// with the store (TasksLive) and the ledger (Ledger.Keys), the server's per-task state.
	ExpiryQueue         int
	ElicitationsPending int

	// IdempotentReplays counts task-augmented creates whose idempotency key already named a
	// task of their tenant: answered with that task, no new work. IdempotentExpired counts
	// those whose task no longer existed: refused with -32602 (idempotency.go).
	IdempotentReplays uint64
	IdempotentExpired uint64

	// Faults counts the injected faults that took effect, by kind (faults.go).
	Faults FaultCounts

	// Requests counts the JSON-RPC requests of the MCP endpoint by op and outcome, and
	// Rejections its HTTP rejections by status (requests.go).
	Requests   RequestCounts
	Rejections Rejections
	// ModernRequests is the part of Requests that the modern front end answered (2026-07-28,
	// modern.go); the legacy era's part is the difference.
	ModernRequests RequestCounts

	// Subscriptions is the number of open subscriptions/listen streams, and
	// SubscriptionsRefused the listens answered 429 because Config.MaxSubscriptions were open
	// (listen.go). Notifications counts the notifications sent, by era and kind.
	Subscriptions        int64
	SubscriptionsRefused uint64
	Notifications        Notifications

	BackpressureStats // executor, rate limits, downstream, ledger outcomes (backpressure.go)
}

// Stats returns the current counters.
func (s *Server) Stats() Stats {
	lc := s.ledger.counts()
	req, modernReq, rej := s.requests.snapshot()
	return Stats{
		Sessions:            s.sessions.count(),
		TasksLive:           s.store.live.Load(),
		TasksCreated:        s.created.Load(),
		TasksExpired:        s.expired.Load(),
		OrphanedTasks:       s.orphaned.Load(),
		MaxCleanupLag:       time.Duration(s.lagMaxNs.Load()),
		Effects:             lc.Applied,
		DuplicateEffects:    lc.Duplicates,
		TasksLost:           s.lost.Load(),
		ExpiryQueue:         s.store.expiring(),
		ElicitationsPending: s.pendingElicitations(),
		Requests:            req,
		Rejections:          rej,
		ModernRequests:      modernReq,

		Subscriptions:        s.modern.listens.open.Load(),
		SubscriptionsRefused: s.modern.listens.refused.Load(),
		Notifications:        s.notes.snapshot(),

		IdempotentReplays: s.replays.Load(),
		IdempotentExpired: s.replayExpired.Load(),
		Faults:            s.faultCounts(),

		BackpressureStats: s.backpressureStats(lc),
	}
}

// startReaper starts the reaper, a chain of calls on the server's clock every
// ReaperInterval (clock.go), and the restart schedule (faults.go).
func (s *Server) startReaper() {
	s.startRestarts()
	s.chains.start(s.clock, every(s.clock.Now(), s.cfg.ReaperInterval), s.reap)
}

// reap deletes the tasks whose ttl ran out by now and forgets the idempotency keys whose
// window did (ledger.go).
func (s *Server) reap(now time.Time) {
	for _, t := range s.store.expired(now) {
		s.purge(t, now)
	}
	s.ledger.forget(now)
}

// purge deletes an expired task and records the cleanup lag (docs/METRICS.md#cleanup_lag).
func (s *Server) purge(t *task, now time.Time) {
	if !s.store.remove(t) {
		return
	}
	t.expire()
	s.ledger.unbind(t) // idempotency.go
	s.expired.Add(1)
	t.mu.Lock()
	orphan := t.status.Terminal() && !t.fetched
	t.mu.Unlock()
	if orphan {
		s.orphaned.Add(1)
	}
	if m := s.cfg.Metrics; m != nil {
		m.RecordDuration(metrics.CleanupLag, now.Sub(t.expires))
		if orphan {
			m.Add(metrics.OrphanedTasks, 1)
		}
	}
	s.prom.observeCleanupLag(now.Sub(t.expires))
	lag := int64(now.Sub(t.expires))
	for {
		cur := s.lagMaxNs.Load()
		if lag <= cur || s.lagMaxNs.CompareAndSwap(cur, lag) {
			break
		}
	}
}

// visible returns t, a stored task or nil, when tenant may see it, and nil otherwise. A task
// of another tenant is reported exactly like a missing one, so that existence does not leak
// (R53, docs/RULES.md#gap-11). A task found expired is deleted on the spot.
func (s *Server) visible(t *task, tenant string) *task {
	if t == nil || t.tenant != tenant {
		return nil
	}
	if !t.expires.IsZero() {
		if now := s.clock.Now(); !now.Before(t.expires) {
			s.purge(t, now)
			return nil
		}
	}
	return t
}
