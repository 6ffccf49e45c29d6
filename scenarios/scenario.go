package scenarios

import "time"

// Scenario is one run, as data: what to call, how hard, how clients behave, how the embedded
// mock server behaves, and which thresholds gate the run. Every field's default is written
// next to it; Default returns a Scenario with all of them, and Parse starts from Default, so a
// field absent from a file (or null in it) keeps its default.
type Scenario struct {
	// Name identifies the scenario in reports and run directories; required, [a-z0-9-]+.
	Name string `yaml:"name"`
	// Description is one line for `tasksim scenarios`. Default "".
	Description string `yaml:"description,omitempty"`
	// Seed seeds the run's single random source; recorded in the summary. Default 1.
	Seed uint64 `yaml:"seed"`
	// Duration is the length of the load phase; required, > 0.
	Duration Duration `yaml:"duration"`
	// Grace is how long in-flight tasks may drain after the load phase; tasks still open then
	// end "unknown". Default 30s; 0 = no drain.
	Grace Duration `yaml:"grace"`
	// Target is "" for the embedded mock server, else the http(s) URL of a real MCP endpoint.
	// Default "".
	Target string `yaml:"target,omitempty"`
	// Headers are extra HTTP headers sent to a real target (e.g. Authorization). Values are
	// Secrets: never printed. Default none.
	Headers map[string]Secret `yaml:"headers,omitempty"`
	// TLS configures an https:// target: a CA trusted besides the system roots, a client
	// certificate (mutual TLS), or no verification at all. Default: the system roots.
	TLS TLS `yaml:"tls"`
	// Protocol pins the protocol era the clients speak: "2025-11-25" (initialize, sessions,
	// tasks/result) or "2026-07-28" (stateless, the Tasks extension). Default "": found by
	// asking (server/discover first, docs/RULES.md#e32), modern where the target serves it;
	// on the embedded server 2025-11-25, unless pinned to 2026-07-28 (the server then serves
	// both eras, unless server.protocols says otherwise) or server.protocols is modern.
	Protocol string `yaml:"protocol,omitempty"`
	// Tool is the tool called with task augmentation. Default "work_task".
	Tool string `yaml:"tool"`
	// Args are the tool arguments, passed as-is (they must be representable in JSON). On the
	// embedded server they steer each call (duration_ms, outcome, ...: docs/SERVER.md "Tools").
	// Default none.
	Args map[string]any `yaml:"args,omitempty"`
	// TaskTTL is the ttl requested in params.task; 0 = none requested. Default 0.
	TaskTTL Duration `yaml:"task_ttl"`
	// Fallback is what to do when the target lacks tasks.requests.tools.call or the tool
	// forbids tasks. Default "refuse".
	Fallback Fallback `yaml:"fallback"`
	// Workload is the arrival model.
	Workload Workload `yaml:"workload"`
	// Client is how every virtual client behaves.
	Client Client `yaml:"client"`
	// Server configures the embedded mock server; ignored by `run` with a Target.
	Server Server `yaml:"server"`
	// Faults inject chaos at the client, the embedded server and the network (faults.go).
	// Default off.
	Faults Faults `yaml:"faults"`
	// Recovery is how clients recover from faults (faults.go).
	Recovery Recovery `yaml:"recovery"`
	// Security spreads clients over tenants, runs isolation probes and secret canaries
	// (security.go). Default off.
	Security Security `yaml:"security"`
	// Thresholds are user threshold expressions, evaluated by the results package over the
	// whole run and per window. Default none.
	Thresholds []Threshold `yaml:"thresholds,omitempty"`
	// ErrorBudget is the share of requests that may fail: every run is judged by
	// requests.errors_rate <= ErrorBudget besides its Thresholds, and a run without any
	// request fails it (no data). Backpressure (429, 503 with Retry-After, a create refused
	// for capacity) and refusals the contract prescribes are not errors. 0%..100%.
	// Default 5%.
	ErrorBudget Percent `yaml:"error_budget"`
	// SLO overrides or switches off the default SLOs judged after the error budget (slo.go,
	// docs/METRICS.md#default-slos). Default: every default SLO on.
	SLO SLO `yaml:"slo"`
	// Compare is how a run of this scenario is compared with a baseline: budgets and the
	// fields allowed to differ (compare.go). Default: the default budgets, nothing allowed.
	Compare Compare `yaml:"compare"`
	// Rollback rehearses the canary's kill switch (rollback.go). Default off.
	Rollback Rollback `yaml:"rollback"`
	// ExpectManifest names a pin file (`tasksim probe --pin`): the target's manifest is
	// compared with it, and drift fails the compatibility gate (docs/ARCHITECTURE.md#pin). A
	// relative name is taken from the scenario file's directory. Default "" (none).
	ExpectManifest string `yaml:"expect_manifest,omitempty"`
	// Contract runs the contract suite (`tasksim conform`) against the target before the
	// load: its result is the run's contract gate. On the embedded server the suite runs
	// against a server of its own, of the same configuration, so that its tasks do not count
	// in the run's figures. Default false.
	Contract bool `yaml:"contract"`

	// Source is where the scenario came from: the file name as given, "builtin:NAME", or ""
	// when built in code. Error messages start with it.
	Source string `yaml:"-"`

	// origins maps a field path ("workload.clients", "workload.stages[0].target",
	// "args.duration_ms") to where its value came from. Nil for a scenario built in code.
	origins map[string]origin
}

// Fallback is the behaviour when the target cannot run the tool as a task (R6, R7).
type Fallback string

// Fallbacks.
const (
	FallbackRefuse Fallback = "refuse" // stop the run with a usage error naming what is missing
	FallbackSync   Fallback = "sync"   // call the tool without task augmentation
)

// Model is the workload model.
type Model string

// Models.
const (
	// ModelClosed runs Clients virtual clients, each running tasks back to back (with
	// ThinkTime between them): the load adapts to the server.
	ModelClosed Model = "closed"
	// ModelOpen starts tasks at a rate whatever the clients are doing; an arrival that finds
	// MaxInFlight tasks in flight (or no free client) is dropped and counted, never delayed.
	ModelOpen Model = "open"
)

// Workload is the arrival model.
type Workload struct {
	// Model is closed or open. Default "closed".
	Model Model `yaml:"model"`
	// Clients is, for closed, the number of virtual clients (required, 1..1000000); for open,
	// the size of the client pool, 0 = MaxInFlight (see PoolSize). Default 0.
	Clients int `yaml:"clients"`
	// ThinkTime is, for closed only, the pause between the end of a client's task and the
	// start of its next. Default 0.
	ThinkTime Duration `yaml:"think_time"`
	// Rate is, for open only, the constant arrival rate when there are no Stages, and the rate
	// at which the first stage starts when there are. Default 0/s.
	Rate Rate `yaml:"rate,omitempty"`
	// Stages is, for open only, a piecewise-linear ramp of the arrival rate (see RateAt). Their
	// total duration must not exceed Scenario.Duration; the last target then holds. Default none.
	Stages []Stage `yaml:"stages,omitempty"`
	// MaxInFlight is, for open only, the cap on tasks in flight; arrivals beyond it are dropped.
	// 1..1000000. Default 1000.
	MaxInFlight int `yaml:"max_in_flight"`
}

// Stage is one piece of an open-model ramp.
type Stage struct {
	// Duration is the length of the stage; >= 0 (0 = a step to Target). Default 0.
	Duration Duration `yaml:"duration"`
	// Target is the arrival rate reached at the end of the stage. Default 0/s.
	Target Rate `yaml:"target"`
}

// PoolSize is the number of virtual clients to start: Clients, or for the open model with
// Clients 0, MaxInFlight.
func (w Workload) PoolSize() int {
	if w.Model == ModelOpen && w.Clients == 0 {
		return w.MaxInFlight
	}
	return w.Clients
}

// RateAt is the open-model arrival rate, in arrivals per second, at offset t into the load
// phase. With stages i = 0..n-1 of durations D_i and targets r_i, T_i = D_0 + ... + D_i,
// T_-1 = 0 and r_-1 = Rate:
//
//	RateAt(t) = r_{i-1} + (r_i - r_{i-1}) * (t - T_{i-1}) / D_i   for T_{i-1} <= t < T_i
//	RateAt(t) = r_{n-1}                                          for t >= T_{n-1}
//
// Without stages it is Rate. A stage with D_i = 0 is a step: it is never "current".
func (w Workload) RateAt(t time.Duration) float64 {
	t = max(t, 0)
	prev := w.Rate.PerSecond()
	var start time.Duration
	for _, s := range w.Stages {
		d := time.Duration(s.Duration)
		next := s.Target.PerSecond()
		if t < start+d {
			return prev + (next-prev)*float64(t-start)/float64(d)
		}
		start += d
		prev = next
	}
	return prev
}

// StagesDuration is the total duration of the stages.
func (w Workload) StagesDuration() time.Duration {
	var total time.Duration
	for _, s := range w.Stages {
		total += time.Duration(s.Duration)
	}
	return total
}

// Client is how every virtual client behaves.
type Client struct {
	// Poll spaces the tasks/get polls of one task.
	Poll Poll `yaml:"poll"`
	// Result is how a client obtains the result. Default "poll".
	Result ResultMode `yaml:"result"`
	// Cancel makes clients cancel a share of their tasks.
	Cancel Cancel `yaml:"cancel"`
	// Input answers elicitation/create requests (input_required tasks).
	Input Input `yaml:"input"`
	// RequestTimeout bounds each HTTP request; tasks/result streams are excepted. > 0.
	// Default 30s.
	RequestTimeout Duration `yaml:"request_timeout"`
	// MaxConns bounds the requests in flight at once, all clients together, and so the
	// connections they hold (loadgen.Config.MaxConns); >= 0. Default 0: 256 against the
	// embedded server, no bound against a target.
	MaxConns int `yaml:"max_conns"`
	// SourceAddresses are the local addresses the clients' connections are dialed from, each
	// new connection from the next, round robin, so that a run holds more connections to
	// one server address than one source address has ephemeral ports (~28,000 on Linux):
	// each entry an address (127.0.0.2), a range (127.0.0.1-127.0.0.8) or a CIDR prefix
	// (127.0.0.0/29), at most 4,096 addresses in all (ParseSourceAddrs). A loopback target
	// needs loopback sources, any other target sources configured on this machine. Default
	// none: the system's choice, but a run against an IPv4 loopback target that may open more
	// connections than one address holds spreads over 127.0.0.1-127.0.0.N by itself
	// (loadgen.AutoSourceAddrs).
	SourceAddresses []string `yaml:"source_addresses,omitempty"`
}

// PollPolicy selects how a client spaces its polls.
type PollPolicy string

// Poll policies.
const (
	// PollServer waits the pollInterval the target advertised on its latest reply (R15);
	// Interval when it advertises none.
	PollServer PollPolicy = "server"
	// PollFixed waits Interval whatever the target says.
	PollFixed PollPolicy = "fixed"
	// PollBackoff waits Interval, then Interval*Multiplier^k after k polls, capped at
	// MaxInterval.
	PollBackoff PollPolicy = "backoff"
)

// Poll is the client poll policy. The k-th wait (k = 0, 1, ...) is
//
//	base_k = advertised pollInterval, else Interval      (server)
//	base_k = Interval                                    (fixed)
//	base_k = min(Interval * Multiplier^k, MaxInterval)   (backoff)
//	wait_k = clamp(base_k * U(1-Jitter, 1+Jitter), Min, Max)   (a 0 bound is no bound)
//
// and no poll is sent after Deadline from the task's creation.
type Poll struct {
	// Policy is server, fixed or backoff. Default "server".
	Policy PollPolicy `yaml:"policy"`
	// Interval is the fixed interval, the server fallback, or the first backoff wait; > 0.
	// Default 1s.
	Interval Duration `yaml:"interval"`
	// Multiplier is the backoff growth factor; >= 1. Default 2.
	Multiplier float64 `yaml:"multiplier"`
	// MaxInterval caps backoff waits; >= Interval. Default 30s.
	MaxInterval Duration `yaml:"max_interval"`
	// Jitter is the fraction in [0, 1) by which each wait is scaled at random. Default 0.
	Jitter float64 `yaml:"jitter"`
	// Min is the lower clamp applied after policy and jitter; 0 = none. Default 0.
	Min Duration `yaml:"min"`
	// Max is the upper clamp applied after policy and jitter; 0 = none, else >= Min.
	// Default 0.
	Max Duration `yaml:"max"`
	// Deadline is the absolute per-task deadline counted from creation; progress never extends
	// it. > 0. Default 10m.
	Deadline Duration `yaml:"deadline"`
}

// ResultMode is how a client obtains a task's result.
type ResultMode string

// Result modes.
const (
	ResultPoll  ResultMode = "poll"  // poll tasks/get to a terminal status, then tasks/result
	ResultBlock ResultMode = "block" // call tasks/result at once and block on it
)

// Cancel makes clients cancel a share of their tasks.
type Cancel struct {
	// Probability is the share of tasks the client cancels, in [0, 1]. Default 0.
	Probability float64 `yaml:"probability"`
	// Delay is when, after creation, the client cancels. Default uniform 1s..2s. In a file it
	// is replaced whole: the fields not written are 0.
	Delay Dist `yaml:"delay"`
}

// Input answers elicitation/create requests. The ratios are in [0, 1] and sum to 1. Default
// accept 1. In a file the block is replaced whole: the ratios not written are 0.
type Input struct {
	Accept  float64 `yaml:"accept"`  // share answered with action "accept"
	Decline float64 `yaml:"decline"` // share answered with action "decline"
	Cancel  float64 `yaml:"cancel"`  // share answered with action "cancel"
}

func (*Input) replacedWhole() {}

// TLS is the TLS of an https:// target (client.TLSOptions).
type TLS struct {
	// CACert is a PEM file of CA certificates trusted besides the system roots (--ca-cert).
	CACert string `yaml:"ca_cert,omitempty"`
	// ClientCert and ClientKey are the PEM files of a client certificate and its key, for
	// mutual TLS (--client-cert, --client-key); both or neither.
	ClientCert string `yaml:"client_cert,omitempty"`
	ClientKey  string `yaml:"client_key,omitempty"`
	// InsecureSkipVerify accepts any server certificate (--insecure-skip-verify): the
	// summary marks the run as unverified. Default false.
	InsecureSkipVerify bool `yaml:"insecure_skip_verify"`
}

// Ledger bounds the embedded server's domain ledger (docs/SERVER.md#ledger-window).
type Ledger struct {
	// Window is how long an idempotency key is remembered after its last use (and at least
	// while its task is stored); a key repeated later is a new key, and a second effect
	// with it is not detected. 0s = the largest ttl granted (at least ttl, at most max_ttl).
	// Default 0s.
	Window Duration `yaml:"window"`
}

// Server configures the embedded mock server.
type Server struct {
	// PollInterval is the pollInterval advertised on every task; 0 = advertise none (clients
	// fall back to client.poll.interval). Default 1s.
	PollInterval Duration `yaml:"poll_interval"`
	// TTL is the ttl granted to a task that requests none; > 0. Default 5m.
	TTL Duration `yaml:"ttl"`
	// MaxTTL caps requested ttls (R45, R56); >= TTL. Default 1h.
	MaxTTL Duration `yaml:"max_ttl"`
	// NullTTL grants ttl null (unlimited retention) to tasks that request none, instead of
	// TTL. Default false.
	NullTTL bool `yaml:"null_ttl"`
	// ReaperInterval is how often expired tasks are swept; > 0. Default 1s.
	ReaperInterval Duration `yaml:"reaper_interval"`
	// Ledger bounds what the domain ledger remembers.
	Ledger Ledger `yaml:"ledger"`
	// ListPageSize is the number of tasks per tasks/list page; > 0. Default 50.
	ListPageSize int `yaml:"list_page_size"`
	// StatusNotifications turns on notifications/tasks/status. Default false.
	StatusNotifications bool `yaml:"status_notifications"`
	// SSERetry is the retry field of every SSE stream's priming event: how long clients
	// wait before asking again after a cut stream (H5); 0 = none sent. Default 0s.
	SSERetry Duration `yaml:"sse_retry"`
	// Tokens maps a tenant name to its bearer token (a Secret). Empty = no authorization:
	// one anonymous tenant. Tokens must be distinct. Default none.
	Tokens map[string]Secret `yaml:"tokens,omitempty"`

	// The knobs below (server.go) play a slower, failing, full or throttling server. Their
	// zero values are "off".

	// Seed seeds the server's one random source (latencies, durations, outcomes, failures,
	// stalls): the same seed and scenario give the same server decisions. 0 = the scenario's
	// Seed. Default 0.
	Seed uint64 `yaml:"seed"`
	// Latency delays the reply of each JSON-RPC method by a sample of its distribution; the
	// key "*" applies to the methods without their own entry. Keys are initialize,
	// tools/list, tools/call, tasks/get, tasks/result, tasks/list, tasks/cancel, ping and "*".
	// Default none (no added latency).
	Latency map[string]Dist `yaml:"latency,omitempty"`
	// Stalls hold some replies for a long time. Default off.
	Stalls Stalls `yaml:"stalls"`
	// Tools gives per-tool defaults (duration, outcome mix, input rounds), keyed by tool name;
	// per-call arguments override them. Default none: 1s, always completed, no input.
	Tools map[string]ToolProfile `yaml:"tools,omitempty"`
	// PollPolicy decides the pollInterval advertised on each task reply. Default fixed
	// (PollInterval).
	PollPolicy IntervalPolicy `yaml:"poll_policy"`
	// Backpressure caps tasks, runs work on a bounded executor and rate-limits callers.
	// Default unbounded.
	Backpressure Backpressure `yaml:"backpressure"`
	// Downstream is the simulated system of record behind the tools. Default off.
	Downstream Downstream `yaml:"downstream"`

	// The compatibility knobs play a peer without Tasks, so that a run proves its
	// fallback: see mockserver/compat.go.

	// Tasks declares the tasks capability; false plays a server without it: no
	// capabilities.tasks, no execution.taskSupport on tools, and a task parameter ignored
	// (R4). Default true.
	Tasks bool `yaml:"tasks"`
	// Protocol is the newest protocol version the server speaks: 2025-11-25, 2025-06-18,
	// 2025-03-26 or 2024-11-05; only 2025-11-25 has Tasks. Default "" = 2025-11-25.
	Protocol string `yaml:"protocol"`
	// Protocols are the protocol eras the endpoint answers, each request classified by
	// itself (docs/RULES.md#era-detection): "both", "modern" (2026-07-28 with the Tasks
	// extension only) or "legacy" (2025-11-25 and older, with sessions, only). Default "":
	// both for tasksim serve; for the embedded server of tasksim run, legacy, or both when
	// the run is pinned to 2026-07-28 (protocol).
	Protocols string `yaml:"protocols"`

	// KnownBad turns on deliberately broken modes of the embedded server, each breaking one
	// rule of docs/RULES.md (mockserver/knownbad.go), so that every case of tasksim conform
	// can be shown to fail. Default none.
	KnownBad []KnownBadMode `yaml:"known_bad,omitempty"`
}

// DefaultErrorBudget is the error budget of a scenario that does not set its own.
const DefaultErrorBudget Percent = 5

// Default returns a Scenario with every default set and the required fields (Name,
// Duration, Workload.Clients for the closed model) left zero.
func Default() *Scenario {
	return &Scenario{
		Seed:     1,
		Grace:    Duration(30 * time.Second),
		Tool:     "work_task",
		Fallback: FallbackRefuse,
		Workload: Workload{Model: ModelClosed, MaxInFlight: 1000},
		Client: Client{
			Poll: Poll{
				Policy:      PollServer,
				Interval:    Duration(time.Second),
				Multiplier:  2,
				MaxInterval: Duration(30 * time.Second),
				Deadline:    Duration(10 * time.Minute),
			},
			Result: ResultPoll,
			Cancel: Cancel{Delay: Dist{
				Kind: DistUniform, Min: Duration(time.Second), Max: Duration(2 * time.Second),
			}},
			Input:          Input{Accept: 1},
			RequestTimeout: Duration(30 * time.Second),
		},
		Faults:      Faults{Server: defaultServerFaults()},
		Recovery:    defaultRecovery(),
		ErrorBudget: DefaultErrorBudget,
		Server: Server{
			PollInterval:   Duration(time.Second),
			TTL:            Duration(5 * time.Minute),
			MaxTTL:         Duration(time.Hour),
			ReaperInterval: Duration(time.Second),
			ListPageSize:   50,
			Tasks:          true,
			Stalls:         Stalls{Duration: Duration(5 * time.Second)},
			PollPolicy:     IntervalPolicy{Kind: IntervalFixed, Signal: SignalInFlight},
			Backpressure: Backpressure{
				WhenFull:   FullRefuseRPC,
				RetryAfter: Duration(time.Second),
				RateLimits: RateLimits{Burst: 1},
			},
		},
	}
}
