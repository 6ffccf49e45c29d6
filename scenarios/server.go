package scenarios

import (
	"errors"
	"math"
	"slices"
	"strings"

	"github.com/tasksim/tasksim/internal/mcp"
)

// The server knobs: each plays one kind of server an SRE wants to rehearse
// against (slower, failing, full, throttling, with a struggling downstream). They map one to
// one onto mockserver.Config (runner.ServerConfig); every zero value is "off".

// latencyOps are the requests a client sends, of either era: their names (mcp.Op.Name) are
// the keys of Server.Latency, besides "*".
var latencyOps = [...]mcp.Op{
	mcp.OpInitialize, mcp.OpToolsList, mcp.OpToolsCall, mcp.OpTasksGet, mcp.OpTasksResult,
	mcp.OpTasksList, mcp.OpTasksCancel, mcp.OpPing,
	mcp.OpServerDiscover, mcp.OpTasksUpdate, mcp.OpSubscriptionsListen, // 2026-07-28
}

// latencyKeys returns the names of latencyOps, in their order.
func latencyKeys() []string {
	keys := make([]string, len(latencyOps))
	for i, op := range latencyOps {
		keys[i] = op.Name()
	}
	return keys
}

// Limits that catch typos in server knobs.
const (
	maxServerCount = 1_000_000 // caps, workers, queues, capacity, burst
	maxInputRounds = 16        // the mock server's limit on input rounds per task
)

// Stalls are replies that do not come: with Probability per request, or during periodic
// windows (the first Window of every Every, counted from the server's start), a request is
// held for Duration before it is served.
type Stalls struct {
	// Probability is the share of requests stalled, in [0, 1]. Default 0.
	Probability float64 `yaml:"probability"`
	// Duration is how long a stalled request waits; > 0 when stalls are on. Default 5s.
	Duration Duration `yaml:"duration"`
	// Every is the period of stall windows; 0 = no windows. Default 0s.
	Every Duration `yaml:"every"`
	// Window is the length of each window, from the start of each period; with Every > 0 it
	// must be in (0, Every]. Default 0s.
	Window Duration `yaml:"window"`
}

// ToolProfile is the default behaviour of one tool; per-call arguments (duration_ms,
// outcome, input_required, input_rounds) override it.
type ToolProfile struct {
	// Duration is the work duration of a call; the zero Dist (not written) = the server's
	// default duration (1s; `serve --duration`). Default none.
	Duration Dist `yaml:"duration,omitempty"`
	// Outcomes is the outcome mix. Default all 0: always completed.
	Outcomes Outcomes `yaml:"outcomes"`
	// Input is how often and how long a call needs input (input_required).
	Input ToolInput `yaml:"input"`
}

// Outcomes is the outcome mix of a tool's calls: ratios in [0, 1] that sum to 1 when any is
// given; all 0 = always completed. In a file the block is replaced whole: the ratios not
// written are 0.
type Outcomes struct {
	Completed float64 `yaml:"completed"` // share that completes
	Failed    float64 `yaml:"failed"`    // share that ends failed with an isError result (R51)
	Error     float64 `yaml:"error"`     // share that ends failed with a JSON-RPC error (R17)
}

func (*Outcomes) replacedWhole() {}

// ToolInput is how often a tool's call needs input, and for how many rounds.
type ToolInput struct {
	// Probability is the share of calls that go input_required, in [0, 1]. Default 0.
	Probability float64 `yaml:"probability"`
	// Rounds is the number of elicitation rounds of such a call, 0..16; 0 = 1. Default 0.
	Rounds int `yaml:"rounds"`
}

// IntervalKind names a pollInterval policy of the server.
type IntervalKind string

// Interval policies.
const (
	IntervalFixed    IntervalKind = "fixed"    // advertise Server.PollInterval
	IntervalPerTool  IntervalKind = "per_tool" // PerTool[tool], else Server.PollInterval
	IntervalAdaptive IntervalKind = "adaptive" // grows with load, see IntervalPolicy
)

// LoadSignal is the load an adaptive pollInterval follows.
type LoadSignal string

// Load signals.
const (
	SignalInFlight    LoadSignal = "in_flight"    // non-terminal tasks
	SignalQueueDepth  LoadSignal = "queue_depth"  // tasks waiting for an executor worker
	SignalRequestRate LoadSignal = "request_rate" // requests in the last second
)

// IntervalPolicy decides the pollInterval advertised on each task reply:
//
//	fixed:     PollInterval
//	per_tool:  PerTool[tool], else PollInterval
//	adaptive:  min(Max, Base + PerUnit * load), load = the Signal's current value;
//	           Base 0 = PollInterval, Max 0 = no cap. It may change during a task's life.
type IntervalPolicy struct {
	// Kind is fixed, per_tool or adaptive. Default "fixed".
	Kind IntervalKind `yaml:"kind"`
	// PerTool maps a tool name to its interval (> 0), for per_tool. Default none.
	PerTool map[string]Duration `yaml:"per_tool,omitempty"`
	// Signal is the load of adaptive: in_flight, queue_depth or request_rate. Default
	// "in_flight".
	Signal LoadSignal `yaml:"signal"`
	// Base is the adaptive interval at zero load; >= 0, 0 = PollInterval. Default 0s.
	Base Duration `yaml:"base"`
	// PerUnit is added per unit of load; >= 0. Default 0s.
	PerUnit Duration `yaml:"per_unit"`
	// Max caps the adaptive interval; >= 0, 0 = no cap, else >= Base. Default 0s.
	Max Duration `yaml:"max"`
}

// FullAction is what a create meets when the server is full.
type FullAction string

// Actions when full.
const (
	FullRefuseRPC         FullAction = "refuse_rpc"          // JSON-RPC error -32603
	FullRefuse429         FullAction = "refuse_429"          // HTTP 429 with Retry-After
	FullQueue             FullAction = "queue"               // accept; the task waits ("queued")
	FullRaisePollInterval FullAction = "raise_poll_interval" // accept, advertise a longer interval
)

// Backpressure bounds what the server accepts. Counts are in [0, 1000000], 0 = unbounded.
type Backpressure struct {
	// MaxTasks caps non-terminal tasks over all tenants; 0 = no cap. Default 0.
	MaxTasks int `yaml:"max_tasks"`
	// MaxTasksPerTenant caps non-terminal tasks per tenant; 0 = no cap. Default 0.
	MaxTasksPerTenant int `yaml:"max_tasks_per_tenant"`
	// Workers is the executor size: tasks whose work runs at once; 0 = every task. Default 0.
	Workers int `yaml:"workers"`
	// Queue is the number of tasks that may wait for a worker (they stay working with
	// statusMessage "queued"); needs Workers > 0. Default 0.
	Queue int `yaml:"queue"`
	// WhenFull is what a create meets when a cap or workers + queue are full: refuse_rpc,
	// refuse_429, queue or raise_poll_interval. Default "refuse_rpc".
	WhenFull FullAction `yaml:"when_full"`
	// RetryAfter is the Retry-After of 429 replies; > 0. Default 1s.
	RetryAfter Duration `yaml:"retry_after"`
	// RaisedPollInterval is advertised while full with raise_poll_interval; >= 0,
	// 0 = 4 x PollInterval. Default 0s.
	RaisedPollInterval Duration `yaml:"raised_poll_interval"`
	// RateLimits throttle callers with 429 + Retry-After.
	RateLimits RateLimits `yaml:"rate_limits"`
}

// RateLimits are token buckets on tasks/get and on creates (task-augmented tools/call), per
// client (MCP session) and per tenant. A rate of 0/s is no limit.
type RateLimits struct {
	GetPerClient    Rate `yaml:"get_per_client"`    // tasks/get per session. Default 0/s.
	GetPerTenant    Rate `yaml:"get_per_tenant"`    // tasks/get per tenant. Default 0/s.
	CreatePerClient Rate `yaml:"create_per_client"` // creates per session. Default 0/s.
	CreatePerTenant Rate `yaml:"create_per_tenant"` // creates per tenant. Default 0/s.
	// Burst is the bucket size of every limiter; >= 1. Default 1.
	Burst int `yaml:"burst"`
}

// Downstream is the simulated system of record every unit of tool work goes through.
type Downstream struct {
	// Capacity is the number of concurrent operations; 0 = no downstream model (work is just
	// time, and the other fields must be left 0). Default 0.
	Capacity int `yaml:"capacity"`
	// ServiceTime is the time one operation holds a slot; zero Dist (not written) = 0.
	// Default none.
	ServiceTime Dist `yaml:"service_time,omitempty"`
	// QueueLimit is the number of operations that may wait for a slot; more are rejected.
	// 0 = unbounded. Default 0.
	QueueLimit int `yaml:"queue_limit"`
	// FailureRate is the share of operations that fail (the task fails with a JSON-RPC
	// error), in [0, 1]. Default 0.
	FailureRate float64 `yaml:"failure_rate"`
	// Stall makes operations take longer.
	Stall DownstreamStall `yaml:"stall"`
}

// DownstreamStall makes downstream operations stall: a share of them, and all of them during
// windows.
type DownstreamStall struct {
	// Probability is the share of operations that stall, in [0, 1]. Default 0.
	Probability float64 `yaml:"probability"`
	// Duration is the extra time of an operation stalled by Probability; > 0 when
	// Probability > 0. Default 0s.
	Duration Duration `yaml:"duration"`
	// Windows are periods, from the server's start, during which every operation stalls: an
	// operation that starts inside a window waits until the window ends. Default none.
	Windows []Window `yaml:"windows,omitempty"`
}

// Window is a period of a run, measured from the server's start.
type Window struct {
	Start    Duration `yaml:"start"`    // >= 0
	Duration Duration `yaml:"duration"` // > 0
}

// ValidateServer reports every problem with the server section alone, as Validate does:
// what `tasksim serve` needs, which has no use for name, duration or workload.
func (s *Scenario) ValidateServer() error {
	v := &validator{s: s}
	v.server()
	v.serverFaults()
	return errors.Join(v.errs...)
}

// count checks a count in [0, maxServerCount].
func (v *validator) count(path string, n int) {
	if n < 0 || n > maxServerCount {
		v.add(path, "must be >= 0 and <= %d, got %d", maxServerCount, n)
	}
}

// serverKnobs checks the knobs of server.go.
func (v *validator) serverKnobs() {
	sv := v.s.Server
	keys := latencyKeys()
	for _, m := range sortedKeys(sv.Latency) {
		path := "server.latency." + m
		if m != "*" && !slices.Contains(keys, m) {
			v.add(path, "unknown method%s (valid: \"*\", %s)", suggest(m, keys), strings.Join(keys, ", "))
			continue
		}
		sv.Latency[m].problems(v, path)
	}
	v.nonNegative("server.sse_retry", sv.SSERetry)
	st := sv.Stalls
	v.ratio("server.stalls.probability", st.Probability)
	v.nonNegative("server.stalls.duration", st.Duration)
	v.nonNegative("server.stalls.every", st.Every)
	v.nonNegative("server.stalls.window", st.Window)
	if (st.Probability > 0 || st.Every > 0) && st.Duration == 0 {
		v.add("server.stalls.duration", "must be > 0 when stalls are on (probability > 0 or every > 0)")
	}
	switch {
	case st.Every > 0 && (st.Window <= 0 || st.Window > st.Every):
		v.add("server.stalls.window", "must be > 0 and <= every (%v), got %v", st.Every, st.Window)
	case st.Every == 0 && st.Window > 0:
		v.add("server.stalls.window", "has no effect without every > 0")
	}
	for _, name := range sortedKeys(sv.Tools) {
		v.tool("server.tools."+name, name, sv.Tools[name])
	}
	v.intervalPolicy(sv.PollPolicy)
	v.backpressure(sv.Backpressure)
	v.downstream(sv.Downstream)
	if sv.Protocol != "" {
		oneOf(v, "server.protocol", sv.Protocol, serverProtocols...)
	}
	if sv.Protocols != "" {
		oneOf(v, "server.protocols", sv.Protocols, ServerEras...)
	}
	modes := KnownBadModes()
	for i, m := range sv.KnownBad {
		p := indexPath("server.known_bad", i)
		if v.s.Target != "" {
			v.add(p, "applies to the embedded server only (target is set)")
		}
		oneOf(v, p, m, modes...)
	}
}

// KnownBadMode is a deliberately broken mode of the embedded server
// (mockserver/knownbad.go): each breaks one rule of docs/RULES.md.
type KnownBadMode string

// Known-bad modes, with the rules they break.
const (
	KnownBadBlockingGet        KnownBadMode = "blocking_get"          // tasks/get waits for the end (R15, R16)
	KnownBadNoPollInterval     KnownBadMode = "no_poll_interval"      // no pollInterval on task objects (R15)
	KnownBadMissingFields      KnownBadMode = "missing_fields"        // no createdAt, lastUpdatedAt, ttl (R42-R44)
	KnownBadCancelTerminalOK   KnownBadMode = "cancel_terminal_ok"    // a terminal task's cancel answered (R26)
	KnownBadCancelNotFinal     KnownBadMode = "cancel_not_final"      // the work's outcome overrides a cancel (R28, R14)
	KnownBadEarlyResult        KnownBadMode = "early_result"          // tasks/result answers at once, empty (R18)
	KnownBadNoRelatedMeta      KnownBadMode = "no_related_meta"       // tasks/result without related-task _meta (R19)
	KnownBadIsErrorCompleted   KnownBadMode = "is_error_completed"    // an isError result ends completed (R51)
	KnownBadListWithoutAuth    KnownBadMode = "list_without_auth"     // tasks/list offered without tokens (R54)
	KnownBadListTruncated      KnownBadMode = "list_truncated"        // tasks/list never sends nextCursor (R23)
	KnownBadWrongErrorCodes    KnownBadMode = "wrong_error_codes"     // -32603 for -32602, -32602 for -32601 (R46, R47, R26, R8, R10)
	KnownBadNoTaskSupportCheck KnownBadMode = "no_task_support_check" // taskSupport not enforced (R8, R10)
	KnownBadNeverExpire        KnownBadMode = "never_expire"          // expired tasks kept and answered (R46)
	KnownBadLostSession400     KnownBadMode = "lost_session_400"      // 400 for an unknown session, not 404 (H8)
	KnownBadSessionless        KnownBadMode = "sessionless"           // requests without Mcp-Session-Id served (H2)
	KnownBadAnyVersion         KnownBadMode = "any_version"           // initialize echoes any version (H1)
	KnownBadInputNoMeta        KnownBadMode = "input_no_meta"         // elicitation/create without related-task _meta (R36)
	KnownBadIgnoreTaskParam    KnownBadMode = "ignore_task_param"     // an optional tool called as a task runs plain (R11)
	KnownBadRefuseTaskParam    KnownBadMode = "refuse_task_param"     // without tasks, a task parameter is refused (R4)
	KnownBadSelfCancel         KnownBadMode = "self_cancel"           // work that ends ends the task cancelled (R27)
	KnownBadMissingSession404  KnownBadMode = "missing_session_404"   // no Mcp-Session-Id: 404, not 400 (H2)
	KnownBadBooleanLeaves      KnownBadMode = "boolean_leaves"        // capabilities.tasks leaves sent as true (R1)
	KnownBadCancelIgnored      KnownBadMode = "cancel_ignored"        // a working task's cancel accepted, not carried out (R27; E60 allows it)
	KnownBadCancelTerminal     KnownBadMode = "cancel_terminal"       // a completed or failed task's cancel makes it cancelled (R26, R14)
)

// Known-bad modes of the modern era (2026-07-28 with the Tasks extension:
// mockserver/knownbad2026.go), with the rules they break.
const (
	KnownBadNoResultType        KnownBadMode = "no_result_type"        // no resultType on discover, tools/list, synchronous calls (E11)
	KnownBadLenientEnvelope     KnownBadMode = "lenient_envelope"      // a missing or unsupported protocolVersion served (E3, E9)
	KnownBadNoHeaderCheck       KnownBadMode = "no_header_check"       // Mcp-Method and Mcp-Name not checked (E26, E64)
	KnownBadUnknownMethod200    KnownBadMode = "unknown_method_200"    // -32601 with HTTP 200 (E27)
	KnownBadLegacyMethods       KnownBadMode = "legacy_methods"        // tasks/result, tasks/list, ping answered (E37)
	KnownBadTasksUndeclared     KnownBadMode = "tasks_undeclared"      // tasks for requests without the extension (E44, E39)
	KnownBadModernMissingFields KnownBadMode = "modern_missing_fields" // no ttlMs, lastUpdatedAt on tasks (E45, E50)
	KnownBadGetNotReady         KnownBadMode = "get_not_ready"         // a task's first tasks/get: -32602 (E46)
	KnownBadIsErrorFailed       KnownBadMode = "is_error_failed"       // an isError result ends failed (E49)
	KnownBadNoInlinePayload     KnownBadMode = "no_inline_payload"     // no result or error in a terminal tasks/get (E50)
	KnownBadReuseInputKeys      KnownBadMode = "reuse_input_keys"      // every input request keyed "input" (E57)
	KnownBadAckWithTask         KnownBadMode = "ack_with_task"         // tasks/update and tasks/cancel answered with the task (E58, E60)
)

// Known-bad modes of the modern suite's terminal-cancel case (modern.cancel.terminal) and its
// schema check of inlined results.
const (
	KnownBadCancelTerminalFlip KnownBadMode = "cancel_terminal_flip"  // a completed or failed task's cancel makes it cancelled (E48)
	KnownBadNoInlineResultType KnownBadMode = "no_inline_result_type" // no resultType on the result inlined in tasks/get (E11, E50)
)

// KnownBadModes returns every known-bad mode, in the order above.
func KnownBadModes() []KnownBadMode {
	return []KnownBadMode{
		KnownBadBlockingGet, KnownBadNoPollInterval, KnownBadMissingFields, KnownBadCancelTerminalOK,
		KnownBadCancelNotFinal, KnownBadEarlyResult, KnownBadNoRelatedMeta, KnownBadIsErrorCompleted,
		KnownBadListWithoutAuth, KnownBadListTruncated, KnownBadWrongErrorCodes, KnownBadNoTaskSupportCheck,
		KnownBadNeverExpire, KnownBadLostSession400, KnownBadSessionless, KnownBadAnyVersion, KnownBadInputNoMeta,
		KnownBadIgnoreTaskParam, KnownBadRefuseTaskParam, KnownBadSelfCancel, KnownBadMissingSession404,
		KnownBadBooleanLeaves, KnownBadCancelIgnored, KnownBadCancelTerminal,
		KnownBadNoResultType, KnownBadLenientEnvelope, KnownBadNoHeaderCheck, KnownBadUnknownMethod200,
		KnownBadLegacyMethods, KnownBadTasksUndeclared, KnownBadModernMissingFields, KnownBadGetNotReady,
		KnownBadIsErrorFailed, KnownBadNoInlinePayload, KnownBadReuseInputKeys, KnownBadAckWithTask,
		KnownBadCancelTerminalFlip, KnownBadNoInlineResultType,
	}
}

// KnownBadOn reports whether known-bad mode m is on.
func (s Server) KnownBadOn(m KnownBadMode) bool { return slices.Contains(s.KnownBad, m) }

// ServerEras are the values of server.protocols: the eras the embedded server answers.
var ServerEras = []string{"both", "modern", "legacy"}

// ClientProtocols are the eras a run's clients may be pinned to (protocol), by version.
var ClientProtocols = []string{"2025-11-25", "2026-07-28"}

// serverProtocols are the protocol versions the embedded server can speak (server.protocol);
// only the first has Tasks.
var serverProtocols = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

func (v *validator) tool(path, name string, t ToolProfile) {
	if strings.TrimSpace(name) == "" {
		v.add(path, "tool name must not be empty")
	}
	if t.Duration != (Dist{}) {
		t.Duration.problems(v, path+".duration")
	}
	o := t.Outcomes
	v.ratio(path+".outcomes.completed", o.Completed)
	v.ratio(path+".outcomes.failed", o.Failed)
	v.ratio(path+".outcomes.error", o.Error)
	if sum := o.Completed + o.Failed + o.Error; sum != 0 && math.Abs(sum-1) > 1e-9 {
		v.add(path+".outcomes", "completed + failed + error must be 1 (or all 0), got %v", sum)
	}
	v.ratio(path+".input.probability", t.Input.Probability)
	if t.Input.Rounds < 0 || t.Input.Rounds > maxInputRounds {
		v.add(path+".input.rounds", "must be >= 0 (0 = 1) and <= %d, got %d", maxInputRounds, t.Input.Rounds)
	}
}

func (v *validator) intervalPolicy(p IntervalPolicy) {
	const path = "server.poll_policy"
	oneOf(v, path+".kind", p.Kind, IntervalFixed, IntervalPerTool, IntervalAdaptive)
	oneOf(v, path+".signal", p.Signal, SignalInFlight, SignalQueueDepth, SignalRequestRate)
	for _, tool := range sortedKeys(p.PerTool) {
		tp := path + ".per_tool." + tool
		if strings.TrimSpace(tool) == "" {
			v.add(tp, "tool name must not be empty")
		}
		v.positive(tp, p.PerTool[tool])
	}
	v.nonNegative(path+".base", p.Base)
	v.nonNegative(path+".per_unit", p.PerUnit)
	v.nonNegative(path+".max", p.Max)
	if p.Max > 0 && p.Base > p.Max {
		v.add(path+".base", "must be <= max (%v), got %v", p.Max, p.Base)
	}
}

func (v *validator) backpressure(b Backpressure) {
	const path = "server.backpressure"
	v.count(path+".max_tasks", b.MaxTasks)
	v.count(path+".max_tasks_per_tenant", b.MaxTasksPerTenant)
	v.count(path+".workers", b.Workers)
	v.count(path+".queue", b.Queue)
	if b.Queue > 0 && b.Workers == 0 {
		v.add(path+".queue", "needs workers > 0 (0 workers = every task runs at once: nothing waits)")
	}
	oneOf(v, path+".when_full", b.WhenFull, FullRefuseRPC, FullRefuse429, FullQueue, FullRaisePollInterval)
	v.positive(path+".retry_after", b.RetryAfter)
	v.nonNegative(path+".raised_poll_interval", b.RaisedPollInterval)
	r := b.RateLimits
	v.rate(path+".rate_limits.get_per_client", r.GetPerClient)
	v.rate(path+".rate_limits.get_per_tenant", r.GetPerTenant)
	v.rate(path+".rate_limits.create_per_client", r.CreatePerClient)
	v.rate(path+".rate_limits.create_per_tenant", r.CreatePerTenant)
	if r.Burst < 1 || r.Burst > maxServerCount {
		v.add(path+".rate_limits.burst", "must be >= 1 and <= %d, got %d", maxServerCount, r.Burst)
	}
}

func (v *validator) downstream(d Downstream) {
	const path = "server.downstream"
	v.count(path+".capacity", d.Capacity)
	if d.ServiceTime != (Dist{}) {
		d.ServiceTime.problems(v, path+".service_time")
	}
	v.count(path+".queue_limit", d.QueueLimit)
	v.ratio(path+".failure_rate", d.FailureRate)
	st := d.Stall
	v.ratio(path+".stall.probability", st.Probability)
	v.nonNegative(path+".stall.duration", st.Duration)
	if st.Probability > 0 && st.Duration == 0 {
		v.add(path+".stall.duration", "must be > 0 when stall.probability > 0")
	}
	for i, w := range st.Windows {
		wp := indexPath(path+".stall.windows", i)
		v.nonNegative(wp+".start", w.Start)
		v.positive(wp+".duration", w.Duration)
	}
	if d.Capacity == 0 {
		var set []string
		for _, f := range []struct {
			name string
			on   bool
		}{
			{"service_time", d.ServiceTime != (Dist{})}, {"queue_limit", d.QueueLimit != 0},
			{"failure_rate", d.FailureRate != 0}, {"stall", st.Probability != 0 || st.Duration != 0 || len(st.Windows) > 0},
		} {
			if f.on {
				set = append(set, f.name)
			}
		}
		if len(set) > 0 {
			v.add(path+".capacity", "must be > 0 for %s to take effect (0 = no downstream model)", strings.Join(set, ", "))
		}
	}
}
