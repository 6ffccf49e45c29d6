package mockserver

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/tasksim/tasksim/internal/clock"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/scenarios"
)

// Config tunes a Server. The zero value of every field means "use the default" written next
// to it, so Config{} is a valid, spec-complete server.
type Config struct {
	// Addr is the listen address of NewServer. Default "127.0.0.1:0" (a free loopback port).
	Addr string

	// PollInterval is the pollInterval advertised on every task. Default 1s.
	PollInterval time.Duration

	// DefaultTTL is the ttl granted to a task that requests none. Default 5m.
	DefaultTTL time.Duration

	// MaxTTL caps requested ttls; larger requests are clamped to it (R45, R56). Default 1h.
	MaxTTL time.Duration

	// UnlimitedTTL grants ttl null (unlimited retention) to tasks that request no ttl,
	// instead of DefaultTTL. Requested ttls are still clamped to MaxTTL. Default false.
	UnlimitedTTL bool

	// LedgerWindow is how long the domain ledger remembers an idempotency key after its last
	// use (and at least while its task is stored); beyond it a repeated key is a new key
	// (ledger.go). 0 = the largest ttl granted so far: at least DefaultTTL, at most MaxTTL.
	LedgerWindow time.Duration

	// Clock is the server's time: every instant it reads and every wait it arms
	// (clock.go). nil = the machine's (clock.Real); a simulation's event loop (package sim)
	// runs the server in virtual time.
	Clock clock.Clock

	// ReaperInterval is how often expired tasks are swept. Lookups of an expired task delete
	// it at once as well, so this bounds cleanup lag only for tasks nobody asks about.
	// Default 1s.
	ReaperInterval time.Duration

	// ListPageSize is the number of tasks per tasks/list page. Default 50.
	ListPageSize int

	// DefaultDuration is the duration of a tool call that passes no duration_ms. Default 1s.
	DefaultDuration time.Duration

	// Tokens maps bearer tokens to tenant names. When empty the server has no authorization
	// context: every request is accepted, tasks are not bound to anyone, and tasks.list is not
	// declared (R54). When set, every request needs a known token (else 401) and each task is
	// bound to its creator's tenant (R52, R53).
	Tokens map[string]string

	// AllowedOrigins lists Origin header values accepted besides loopback origins (H10).
	// Requests with any other Origin get 403. A request without Origin is accepted.
	AllowedOrigins []string

	// MaxBodyBytes limits a POST body; larger bodies get 413. Default 4 MiB.
	MaxBodyBytes int64

	// StatusNotifications turns on task status notifications: in the legacy era
	// notifications/tasks/status, sent on the owning session's GET stream only (R20 says
	// clients must not depend on them); in the modern era notifications/tasks on the
	// subscriptions/listen streams that ask for the task (listen.go; off, a listen is
	// acknowledged with no taskIds). Default off.
	StatusNotifications bool

	// MaxSubscriptions bounds the subscriptions/listen streams open at once (the modern era's
	// push channel, listen.go); one more is answered 429. Default 1024.
	MaxSubscriptions int

	// SSERetry is sent as the retry field of every SSE stream's priming event: how long a
	// client should wait before it reconnects after the stream is cut (H5). Default 0: none.
	SSERetry time.Duration

	// Seed seeds the server's one random source: the same seed and configuration give the
	// same sequence of server decisions (latencies, durations, outcomes, failures). Default 0.
	Seed uint64

	// Latency delays the reply of each JSON-RPC method ("tasks/get", "tools/call", ...) by a
	// sample of its distribution; the key "*" applies to methods without their own entry.
	// Default none.
	Latency map[string]scenarios.Dist

	// Stalls hold some replies for a long time (probability or periodic windows). Default off.
	Stalls Stalls

	// Tools gives per-tool defaults: duration distribution, outcome mix, input rounds.
	// Per-call arguments override them. Default none (DefaultDuration, always completed).
	Tools map[string]ToolProfile

	// Poll is the pollInterval policy; the zero value advertises PollInterval (fixed).
	Poll PollPolicy

	// Backpressure caps tasks, runs work on a bounded executor, and rate-limits callers.
	// Default unbounded.
	Backpressure Backpressure

	// Downstream is the simulated system of record behind the tools. Default off.
	Downstream Downstream

	// Faults inject the server faults (faults.go): per request, per task, per
	// tasks/result stream, and restarts on a schedule. Trigger windows and the restart
	// schedule are counted from the server's start. Status 0 means 503. Default off.
	Faults scenarios.ServerFaults

	// Events, when set, records every injected fault that took effect (Source "server",
	// Kind the fault's scenario name, faults.go). Default nil: counted in Stats.Faults only.
	Events *metrics.Events

	// Metrics, when set, receives the server's own measurements: cleanup_lag (expiry ->
	// deletion) and orphaned_tasks. Default nil: Stats only.
	Metrics *metrics.Shard

	// Tracer, when set, makes every JSON-RPC request a server span, the child of the trace
	// context its params._meta carries (trace.go, docs/METRICS.md#traces). Default nil: no
	// span, nothing read.
	Tracer trace.Tracer

	// Fixtures lists the official conformance suite's fixture tools (greet, slow_compute,
	// failing_job, protocol_error_job, confirm_delete, multi_input, test_tool_with_task;
	// fixtures.go) after the default tools, and serves them on the same task core. tasksim
	// serve sets it. Default false: the default tools only.
	Fixtures bool

	// NoTasks plays a server without the tasks capability (compat.go): no
	// capabilities.tasks, no execution.taskSupport on tools, tasks/* unknown (-32601), and a
	// task parameter on tools/call ignored: the call runs synchronously (R4). Default false.
	NoTasks bool

	// Protocol is the newest protocol version the server speaks (compat.go): initialize
	// answers a client asking for a newer one with it (H1). A version without Tasks
	// (2025-06-18) declares no tasks capability. Default "" = 2025-11-25.
	Protocol string

	// Protocols says which protocol eras the endpoint answers (modern.go): ProtocolsBoth,
	// each request in its era; ProtocolsModern, 2026-07-28 with the Tasks extension only; or
	// ProtocolsLegacy, 2025-11-25 and older with sessions only: the server as it was before
	// the modern era. Default "" = ProtocolsLegacy (scenarios default to both).
	Protocols Protocols

	// Insecure turns on deliberately insecure modes, to prove that tasksim's isolation
	// probes and secret detector work (insecure.go). Default none.
	Insecure Insecure

	// KnownBad turns on deliberately broken modes, each breaking one rule of docs/RULES.md,
	// to prove that every case of tasksim's contract suite can fail (knownbad.go). Default
	// none.
	KnownBad KnownBad

	// Revocations withdraw a tenant's token, or its right to fetch results, at set times
	// from the server's start (insecure.go). Default none.
	Revocations []Revocation

	// Inject plants a prompt-injection canary (InjectionPrefix...) in every statusMessage
	// and every tool result (insecure.go). Default off.
	Inject bool

	// ServerName and ServerVersion are reported as serverInfo. Defaults "tasksim-mock" and
	// the tasksim version "0.1.0".
	ServerName, ServerVersion string
}

// Limits on per-call tool arguments, so a single call cannot exhaust the mock.
const (
	maxDurationMs   = 24 * 60 * 60 * 1000 // one day
	maxPayloadBytes = 1 << 20             // 1 MiB per result
	maxInputRounds  = 16
)

// withDefaults returns c with every zero field replaced by its documented default.
func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if c.Addr == "" {
		c.Addr = "127.0.0.1:0"
	}
	def(&c.PollInterval, time.Second)
	def(&c.DefaultTTL, 5*time.Minute)
	def(&c.MaxTTL, time.Hour)
	def(&c.ReaperInterval, time.Second)
	def(&c.DefaultDuration, time.Second)
	if c.ListPageSize == 0 {
		c.ListPageSize = 50
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = 4 << 20
	}
	if c.MaxSubscriptions == 0 {
		c.MaxSubscriptions = 1024
	}
	if c.ServerName == "" {
		c.ServerName = "tasksim-mock"
	}
	if c.ServerVersion == "" {
		c.ServerVersion = "0.1.0"
	}
	return c
}

// Validate reports every problem with c at once.
func (c Config) Validate() error {
	var errs []error
	neg := func(name string, d time.Duration) {
		if d < 0 {
			errs = append(errs, fmt.Errorf("%s must not be negative, got %v", name, d))
		}
	}
	neg("poll interval", c.PollInterval)
	neg("default ttl", c.DefaultTTL)
	neg("max ttl", c.MaxTTL)
	neg("reaper interval", c.ReaperInterval)
	neg("ledger window", c.LedgerWindow)
	neg("default duration", c.DefaultDuration)
	d := c.withDefaults()
	if d.DefaultTTL > d.MaxTTL {
		errs = append(errs, fmt.Errorf("default ttl %v exceeds max ttl %v", d.DefaultTTL, d.MaxTTL))
	}
	if d.DefaultDuration > maxDurationMs*time.Millisecond {
		errs = append(errs, fmt.Errorf("default duration %v exceeds the limit of 24h", d.DefaultDuration))
	}
	if c.ListPageSize < 0 {
		errs = append(errs, fmt.Errorf("list page size must not be negative, got %d", c.ListPageSize))
	}
	if c.MaxBodyBytes < 0 {
		errs = append(errs, fmt.Errorf("max body bytes must not be negative, got %d", c.MaxBodyBytes))
	}
	if c.MaxSubscriptions < 0 {
		errs = append(errs, fmt.Errorf("max subscriptions must not be negative, got %d", c.MaxSubscriptions))
	}
	for tok, tenant := range c.Tokens {
		if tok == "" {
			errs = append(errs, errors.New("a token must not be empty"))
		}
		if tenant == "" {
			errs = append(errs, errors.New("every token needs a tenant name"))
		}
	}
	errs = append(errs, c.requestPathProblems()...)
	errs = append(errs, c.securityProblems()...)
	errs = append(errs, c.compatProblems()...)
	if !c.Protocols.valid() {
		errs = append(errs, fmt.Errorf("protocols %q is not one of %q, %q, %q", c.Protocols, ProtocolsBoth, ProtocolsModern, ProtocolsLegacy))
	}
	errs = append(errs, c.Backpressure.problems()...)
	errs = append(errs, c.Downstream.problems()...)
	errs = append(errs, faultProblems(c.Faults)...)
	return errors.Join(errs...)
}
