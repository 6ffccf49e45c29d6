package scenarios

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// full is minimal plus a server section with every knob set (lines 4-41).
const full = minimal + `server:
  seed: 7
  latency:
    "*": {dist: fixed, value: 1ms}
    tasks/get: {dist: lognormal, p50: 2ms, p99: 20ms}
    tools/call: 5ms
  stalls: {probability: 0.01, duration: 5s, every: 1m, window: 10s}
  tools:
    work_task:
      duration: {dist: pareto, p50: 5s, p99: 20s, max: 1m}
      outcomes: {completed: 0.9, failed: 0.05, error: 0.05}
      input: {probability: 0.1, rounds: 2}
    work: {outcomes: {failed: 1}}
  poll_policy:
    kind: adaptive
    per_tool: {work_task: 2s}
    signal: queue_depth
    base: 1s
    per_unit: 10ms
    max: 30s
  backpressure:
    max_tasks: 1000
    max_tasks_per_tenant: 100
    workers: 8
    queue: 16
    when_full: refuse_429
    retry_after: 2s
    raised_poll_interval: 5s
    rate_limits: {get_per_client: 10/s, get_per_tenant: 100/s, create_per_client: 1/s, create_per_tenant: 600/m, burst: 5}
  downstream:
    capacity: 4
    service_time: {dist: exponential, mean: 50ms}
    queue_limit: 32
    failure_rate: 0.02
    stall:
      probability: 0.001
      duration: 2s
      windows: [{start: 10s, duration: 10s}, {start: 1m, duration: 5s}]
`

// TestServerDecode: every knob decodes to its field, and positions are recorded.
func TestServerDecode(t *testing.T) {
	s := mustParse(t, full)
	if err := s.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	ms := func(n int) Duration { return Duration(time.Duration(n) * time.Millisecond) }
	want := Default().Server
	want.Seed = 7
	want.Latency = map[string]Dist{
		"*":          {Kind: DistFixed, Value: ms(1)},
		"tasks/get":  {Kind: DistLognormal, P50: ms(2), P99: ms(20)},
		"tools/call": {Kind: DistFixed, Value: ms(5)},
	}
	want.Stalls = Stalls{Probability: 0.01, Duration: ms(5000), Every: ms(60000), Window: ms(10000)}
	want.Tools = map[string]ToolProfile{
		"work_task": {
			Duration: Dist{Kind: DistPareto, P50: ms(5000), P99: ms(20000), Max: ms(60000)},
			Outcomes: Outcomes{Completed: 0.9, Failed: 0.05, Error: 0.05},
			Input:    ToolInput{Probability: 0.1, Rounds: 2},
		},
		"work": {Outcomes: Outcomes{Failed: 1}},
	}
	want.PollPolicy = IntervalPolicy{Kind: IntervalAdaptive, PerTool: map[string]Duration{"work_task": ms(2000)},
		Signal: SignalQueueDepth, Base: ms(1000), PerUnit: ms(10), Max: ms(30000)}
	want.Backpressure = Backpressure{MaxTasks: 1000, MaxTasksPerTenant: 100, Workers: 8, Queue: 16,
		WhenFull: FullRefuse429, RetryAfter: ms(2000), RaisedPollInterval: ms(5000),
		RateLimits: RateLimits{GetPerClient: Rate{10, time.Second}, GetPerTenant: Rate{100, time.Second},
			CreatePerClient: Rate{1, time.Second}, CreatePerTenant: Rate{600, time.Minute}, Burst: 5}}
	want.Downstream = Downstream{Capacity: 4, ServiceTime: Dist{Kind: DistExponential, Mean: ms(50)},
		QueueLimit: 32, FailureRate: 0.02, Stall: DownstreamStall{Probability: 0.001, Duration: ms(2000),
			Windows: []Window{{ms(10000), ms(10000)}, {ms(60000), ms(5000)}}}}
	if !reflect.DeepEqual(s.Server, want) {
		t.Errorf("server =\n%+v\nwant\n%+v", s.Server, want)
	}
	for path, pos := range map[string]string{
		"server.latency.tasks/get":                    "t.yaml:8:5",
		"server.tools.work_task.outcomes.error":       "t.yaml:14:48",
		"server.backpressure.rate_limits.burst":       "t.yaml:32:114",
		"server.downstream.stall.windows[1].duration": "t.yaml:41:58",
	} {
		if got := s.Where(path); got != pos {
			t.Errorf("Where(%q) = %q, want %q", path, got, pos)
		}
	}
}

// TestServerDefaults: the defaults are the documented ones, and off.
func TestServerDefaults(t *testing.T) {
	sv := Default().Server
	if sv.Seed != 0 || sv.Latency != nil || sv.Tools != nil || sv.Stalls != (Stalls{Duration: Duration(5 * time.Second)}) ||
		sv.PollPolicy.Kind != IntervalFixed || sv.PollPolicy.Signal != SignalInFlight ||
		sv.Backpressure != (Backpressure{WhenFull: FullRefuseRPC, RetryAfter: Duration(time.Second), RateLimits: RateLimits{Burst: 1}}) ||
		!reflect.DeepEqual(sv.Downstream, Downstream{}) {
		t.Errorf("Default().Server knobs = %+v", sv)
	}
	if err := Default().ValidateServer(); err != nil {
		t.Errorf("Default().ValidateServer() = %v", err)
	}
}

// TestServerValidate checks each server rule once: minimal plus the lines given (line 4 is
// "server:"); want is the complete list of problems, positions included.
func TestServerValidate(t *testing.T) {
	const sv = minimal + "server:\n"
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"full is valid", full, nil},
		{"latency method", sv + "  latency:\n    tasks/gett: 1ms\n    tools/call: 1ms\n", []string{
			`t.yaml:6:5: server.latency.tasks/gett: unknown method; did you mean "tasks/get"? (valid: "*", initialize, tools/list, tools/call, tasks/get, tasks/result, tasks/list, tasks/cancel, ping, server/discover, tasks/update, subscriptions/listen)`}},
		{"latency dist", sv + "  latency:\n    \"*\": {dist: lognormal, p50: 2ms, p99: 1ms}\n    ping: {p50: 1ms}\n", []string{
			"t.yaml:6:38: server.latency.*.p99: must be >= p50 (2ms), got 1ms",
			"t.yaml:7:5: server.latency.ping.dist: required, one of fixed, uniform, exponential, normal, lognormal, pareto"}},
		{"stalls ranges", sv + "  stalls: {probability: 1.5, duration: -1s, every: -1s, window: -1s}\n", []string{
			"t.yaml:5:12: server.stalls.probability: must be in [0, 1], got 1.5",
			"t.yaml:5:30: server.stalls.duration: must be >= 0, got -1s",
			"t.yaml:5:45: server.stalls.every: must be >= 0, got -1s",
			"t.yaml:5:57: server.stalls.window: must be >= 0, got -1s"}},
		{"stalls on need a duration", sv + "  stalls:\n    probability: 0.1\n    duration: 0s\n", []string{
			"t.yaml:7:5: server.stalls.duration: must be > 0 when stalls are on (probability > 0 or every > 0)"}},
		{"stall window within every", sv + "  stalls: {every: 10s, window: 20s}\n", []string{
			"t.yaml:5:24: server.stalls.window: must be > 0 and <= every (10s), got 20s"}},
		{"stall window needs every", sv + "  stalls: {window: 2s}\n", []string{
			"t.yaml:5:12: server.stalls.window: has no effect without every > 0"}},
		{"tool ranges", sv + "  tools:\n    work_task:\n      duration: {dist: uniform}\n      outcomes: {completed: 2, failed: -1}\n      input: {probability: -0.5, rounds: 17}\n", []string{
			"t.yaml:7:7: server.tools.work_task.duration.max: must be > 0 with dist uniform, got 0s",
			"t.yaml:8:18: server.tools.work_task.outcomes.completed: must be in [0, 1], got 2",
			"t.yaml:8:32: server.tools.work_task.outcomes.failed: must be in [0, 1], got -1",
			"t.yaml:9:15: server.tools.work_task.input.probability: must be in [0, 1], got -0.5",
			"t.yaml:9:34: server.tools.work_task.input.rounds: must be >= 0 (0 = 1) and <= 16, got 17"}},
		{"outcomes sum", sv + "  tools:\n    work:\n      outcomes: {failed: 0.1}\n", []string{
			"t.yaml:7:7: server.tools.work.outcomes: completed + failed + error must be 1 (or all 0), got 0.1"}},
		{"tool name", sv + "  tools:\n    \"\": {}\n", []string{"t.yaml:6:5: server.tools.: tool name must not be empty"}},
		{"poll policy enums", sv + "  poll_policy: {kind: eager, signal: cpu}\n", []string{
			`t.yaml:5:17: server.poll_policy.kind: must be one of fixed, per_tool, adaptive, got "eager"`,
			`t.yaml:5:30: server.poll_policy.signal: must be one of in_flight, queue_depth, request_rate, got "cpu"`}},
		{"poll policy durations", sv + "  poll_policy:\n    kind: per_tool\n    per_tool: {work: 0s}\n    base: 2s\n    per_unit: -1ms\n    max: 1s\n", []string{
			"t.yaml:7:16: server.poll_policy.per_tool.work: must be > 0, got 0s",
			"t.yaml:9:5: server.poll_policy.per_unit: must be >= 0, got -1ms",
			"t.yaml:8:5: server.poll_policy.base: must be <= max (1s), got 2s"}},
		{"backpressure counts", sv + "  backpressure: {max_tasks: -1, max_tasks_per_tenant: 2000000, workers: -2, queue: -3}\n", []string{
			"t.yaml:5:18: server.backpressure.max_tasks: must be >= 0 and <= 1000000, got -1",
			"t.yaml:5:33: server.backpressure.max_tasks_per_tenant: must be >= 0 and <= 1000000, got 2000000",
			"t.yaml:5:64: server.backpressure.workers: must be >= 0 and <= 1000000, got -2",
			"t.yaml:5:77: server.backpressure.queue: must be >= 0 and <= 1000000, got -3"}},
		{"queue needs workers", sv + "  backpressure: {queue: 5}\n", []string{
			"t.yaml:5:18: server.backpressure.queue: needs workers > 0 (0 workers = every task runs at once: nothing waits)"}},
		{"when_full", sv + "  backpressure:\n    when_full: drop\n    retry_after: 0s\n    raised_poll_interval: -1s\n", []string{
			`t.yaml:6:5: server.backpressure.when_full: must be one of refuse_rpc, refuse_429, queue, raise_poll_interval, got "drop"`,
			"t.yaml:7:5: server.backpressure.retry_after: must be > 0, got 0s",
			"t.yaml:8:5: server.backpressure.raised_poll_interval: must be >= 0, got -1s"}},
		{"rate limits", sv + "  backpressure:\n    rate_limits: {get_per_client: 2000000/s, burst: 0}\n", []string{
			"t.yaml:6:19: server.backpressure.rate_limits.get_per_client: must be in [0/s, 1000000/s], got 2000000/s",
			"t.yaml:6:46: server.backpressure.rate_limits.burst: must be >= 1 and <= 1000000, got 0"}},
		{"downstream ranges", sv + "  downstream:\n    capacity: 2\n    service_time: {dist: pareto, p50: 1s, p99: 1s}\n    queue_limit: -1\n    failure_rate: 2\n    stall:\n      probability: 0.5\n      windows: [{start: -1s, duration: 0s}]\n", []string{
			"t.yaml:7:43: server.downstream.service_time.p99: must be > p50 (1s) with dist pareto, got 1s",
			"t.yaml:8:5: server.downstream.queue_limit: must be >= 0 and <= 1000000, got -1",
			"t.yaml:9:5: server.downstream.failure_rate: must be in [0, 1], got 2",
			"t.yaml:10:5: server.downstream.stall.duration: must be > 0 when stall.probability > 0",
			"t.yaml:12:18: server.downstream.stall.windows[0].start: must be >= 0, got -1s",
			"t.yaml:12:30: server.downstream.stall.windows[0].duration: must be > 0, got 0s"}},
		{"downstream off", sv + "  downstream:\n    failure_rate: 0.5\n    stall: {duration: 1s}\n", []string{
			"t.yaml:5:3: server.downstream.capacity: must be > 0 for failure_rate, stall to take effect (0 = no downstream model)"}},
		{"every problem at once", sv + "  stalls: {probability: 2}\n  backpressure: {workers: -1}\n", []string{
			"t.yaml:5:12: server.stalls.probability: must be in [0, 1], got 2",
			"t.yaml:6:18: server.backpressure.workers: must be >= 0 and <= 1000000, got -1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkValidate(t, tc.src, tc.want) })
	}
}

// TestServerDecodeErrors: type errors in server knobs are located at line:col.
func TestServerDecodeErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"server: {seed: -1}\n", `t.yaml:4:16: server.seed: expected a non-negative integer, got integer -1`},
		{"server: {latency: {ping: soon}}\n", `t.yaml:4:26: server.latency.ping: expected a distribution {dist: ...} or a fixed duration: invalid duration "soon" (want a Go duration like 500ms, 5s or 1m30s)`},
		{"server: {stalls: {probability: high}}\n", `t.yaml:4:32: server.stalls.probability: expected a finite number, got "high"`},
		{"server: {tools: {work: {outcome: {failed: 1}}}}\n", `t.yaml:4:25: server.tools.work.outcome: unknown field; did you mean "outcomes"? (valid: duration, outcomes, input)`},
		{"server: {tools: {work: {input: {rounds: 1.5}}}}\n", `t.yaml:4:41: server.tools.work.input.rounds: expected an integer, got number 1.5`},
		{"server: {poll_policy: {per_tool: {work: 2}}}\n", `t.yaml:4:41: server.poll_policy.per_tool.work: duration "2" has no unit (write it like 2s or 2ms)`},
		{"server: {backpressure: {rate_limits: {get_per_client: 5}}}\n", `t.yaml:4:55: server.backpressure.rate_limits.get_per_client: invalid rate "5" (want COUNT/UNIT, like 50/s or 3000/m)`},
		{"server: {backpressure: {workers: many}}\n", `t.yaml:4:34: server.backpressure.workers: expected an integer, got "many"`},
		{"server: {downstream: {stall: {windows: {start: 1s}}}}\n", `t.yaml:4:40: server.downstream.stall.windows: expected a sequence, got a mapping`},
		{"server: {downstream: {stall: {windows: [{begin: 1s}]}}}\n", `t.yaml:4:42: server.downstream.stall.windows[0].begin: unknown field (valid: start, duration)`},
	}
	for _, tc := range tests {
		t.Run(tc.src, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(minimal+tc.src))
			if err == nil || err.Error() != tc.want {
				t.Errorf("Parse error:\n got %v\nwant %s", err, tc.want)
			}
		})
	}
}

// TestServerSet: --set reaches every new knob, including fields inside map items.
func TestServerSet(t *testing.T) {
	tests := []struct {
		path, value string
		check       func(s *Scenario) any
		want        any
	}{
		{"server.seed", "9", func(s *Scenario) any { return s.Server.Seed }, uint64(9)},
		{"server.latency.tasks/get", "{dist: pareto, p50: 1ms, p99: 10ms}", func(s *Scenario) any { return s.Server.Latency["tasks/get"] },
			Dist{Kind: DistPareto, P50: Duration(time.Millisecond), P99: Duration(10 * time.Millisecond)}},
		{"server.latency.*", "2ms", func(s *Scenario) any { return s.Server.Latency["*"] }, Dist{Kind: DistFixed, Value: Duration(2 * time.Millisecond)}},
		{"server.latency.tools/call.p99", "20ms", func(s *Scenario) any { return s.Server.Latency["tools/call"] }, Dist{P99: Duration(20 * time.Millisecond)}},
		{"server.stalls.every", "1m", func(s *Scenario) any { return s.Server.Stalls.Every }, Duration(time.Minute)},
		{"server.tools.work_task.input.rounds", "2", func(s *Scenario) any { return s.Server.Tools["work_task"].Input.Rounds }, 2},
		{"server.tools.work_task.outcomes", "{failed: 1}", func(s *Scenario) any { return s.Server.Tools["work_task"].Outcomes }, Outcomes{Failed: 1}},
		{"server.tools.work_task.duration", "{dist: lognormal, p50: 1s, p99: 5s}", func(s *Scenario) any { return s.Server.Tools["work_task"].Duration },
			Dist{Kind: DistLognormal, P50: Duration(time.Second), P99: Duration(5 * time.Second)}},
		{"server.tools.work", "{input: {probability: 1}}", func(s *Scenario) any { return s.Server.Tools["work"] }, ToolProfile{Input: ToolInput{Probability: 1}}},
		{"server.poll_policy.kind", "adaptive", func(s *Scenario) any { return s.Server.PollPolicy.Kind }, IntervalAdaptive},
		{"server.poll_policy.per_tool.a.b", "3s", func(s *Scenario) any { return s.Server.PollPolicy.PerTool["a.b"] }, Duration(3 * time.Second)},
		{"server.backpressure.workers", "4", func(s *Scenario) any { return s.Server.Backpressure.Workers }, 4},
		{"server.backpressure.when_full", "queue", func(s *Scenario) any { return s.Server.Backpressure.WhenFull }, FullQueue},
		{"server.backpressure.rate_limits.get_per_client", "5/s", func(s *Scenario) any { return s.Server.Backpressure.RateLimits.GetPerClient }, Rate{5, time.Second}},
		{"server.downstream.stall.windows[0]", "{start: 10s, duration: 5s}", func(s *Scenario) any { return s.Server.Downstream.Stall.Windows },
			[]Window{{Duration(10 * time.Second), Duration(5 * time.Second)}}},
		{"server.downstream.service_time", "{dist: uniform, min: 1ms, max: 2ms}", func(s *Scenario) any { return s.Server.Downstream.ServiceTime },
			Dist{Kind: DistUniform, Min: Duration(time.Millisecond), Max: Duration(2 * time.Millisecond)}},
	}
	for _, tc := range tests {
		t.Run(tc.path+"="+tc.value, func(t *testing.T) {
			s := mustParse(t, minimal)
			if err := s.Set(tc.path, tc.value); err != nil {
				t.Fatalf("Set: %v", err)
			}
			if got := tc.check(s); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("after Set, field = %#v, want %#v", got, tc.want)
			}
			if got := s.Where(tc.path); got != "--set" {
				t.Errorf("Where(%q) = %q, want --set", tc.path, got)
			}
		})
	}

	// An existing dotted key wins over splitting at the first ".".
	s := mustParse(t, minimal+"server: {tools: {a.b: {input: {rounds: 1}}}}\n")
	if err := s.Set("server.tools.a.b.input.rounds", "3"); err != nil {
		t.Fatal(err)
	}
	if got := s.Server.Tools["a.b"].Input.Rounds; got != 3 || len(s.Server.Tools) != 1 {
		t.Errorf("tools after Set = %+v, want a.b with 3 rounds", s.Server.Tools)
	}
	// Validation after Set locates the problem at --set.
	if err := s.Set("server.backpressure.when_full", "drop"); err != nil {
		t.Fatal(err)
	}
	if err := s.ValidateServer(); err == nil || err.Error() != `--set: server.backpressure.when_full: must be one of refuse_rpc, refuse_429, queue, raise_poll_interval, got "drop"` {
		t.Errorf("ValidateServer() = %v", err)
	}
}

func TestServerSetErrors(t *testing.T) {
	tests := []struct{ path, value, want string }{
		{"server.tools.work.colour", "red", `--set: server.tools.work.colour: unknown field "colour" (fields of server.tools.work: server.tools.work.duration, server.tools.work.outcomes, server.tools.work.input)`},
		{"server.backpressure.worker", "2", `--set: server.backpressure.worker: unknown field "worker"; did you mean server.backpressure.workers? (fields of server.backpressure: ...`},
		{"server.backpressure.workers", "2.5", "--set: server.backpressure.workers: expected an integer, got number 2.5"},
		{"server.latency.ping", "{dist: x, mena: 1s}", `--set: server.latency.ping.mena: unknown field; did you mean "mean"? (valid: dist, value, min, max, mean, stddev, p50, p99)`},
	}
	for _, tc := range tests {
		t.Run(tc.path+"="+tc.value, func(t *testing.T) {
			s := mustParse(t, minimal)
			before := mustParse(t, minimal)
			err := s.Set(tc.path, tc.value)
			if err == nil {
				t.Fatalf("Set succeeded, want %q", tc.want)
			}
			got := err.Error()
			if p, ok := strings.CutSuffix(tc.want, "..."); ok {
				if !strings.HasPrefix(got, p) {
					t.Errorf("Set error:\n got %s\nwant %s", got, tc.want)
				}
			} else if got != tc.want {
				t.Errorf("Set error:\n got %s\nwant %s", got, tc.want)
			}
			if !reflect.DeepEqual(s, before) {
				t.Errorf("a failed Set changed the scenario")
			}
		})
	}
}

// TestValidateServer checks the server section alone: a scenario without name, duration or
// clients is fine for serve, and only server problems are reported.
func TestValidateServer(t *testing.T) {
	s, err := Parse("srv.yaml", []byte("server:\n  backpressure: {workers: 2, queue: 4}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ValidateServer(); err != nil {
		t.Errorf("ValidateServer() = %v", err)
	}
	if s.Validate() == nil {
		t.Error("Validate() accepts a scenario without name")
	}
	s, err = Parse("srv.yaml", []byte("duration: -1s\nserver:\n  ttl: 0s\n  stalls: {probability: -1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := "srv.yaml:3:3: server.ttl: must be > 0, got 0s\nsrv.yaml:4:12: server.stalls.probability: must be in [0, 1], got -1"
	if err := s.ValidateServer(); err == nil || err.Error() != want {
		t.Errorf("ValidateServer() =\n%v\nwant\n%s", err, want)
	}
}

// TestServerMarshalRoundTrip: the knobs written with yaml.Marshal (the effective scenario of
// a run) parse back to the same values.
func TestServerMarshalRoundTrip(t *testing.T) {
	s := mustParse(t, full)
	out, err := yaml.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse("out.yaml", out)
	if err != nil {
		t.Fatalf("re-parse: %v\n%s", err, out)
	}
	if !reflect.DeepEqual(back.Server, s.Server) {
		t.Errorf("round trip changed the server section:\n got %+v\nwant %+v\nyaml:\n%s", back.Server, s.Server, out)
	}
}
