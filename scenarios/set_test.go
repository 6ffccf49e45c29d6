package scenarios

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestSet(t *testing.T) {
	tests := []struct {
		path, value string
		check       func(s *Scenario) any // returns the field set
		want        any
	}{
		{"workload.clients", "500", func(s *Scenario) any { return s.Workload.Clients }, 500},
		{"seed", "42", func(s *Scenario) any { return s.Seed }, uint64(42)},
		{"client.cancel.probability", "0.25", func(s *Scenario) any { return s.Client.Cancel.Probability }, 0.25},
		{"client.poll.multiplier", "3", func(s *Scenario) any { return s.Client.Poll.Multiplier }, 3.0},
		{"server.null_ttl", "true", func(s *Scenario) any { return s.Server.NullTTL }, true},
		{"client.poll.policy", "fixed", func(s *Scenario) any { return s.Client.Poll.Policy }, PollFixed},
		{"description", "a: b # not YAML", func(s *Scenario) any { return s.Description }, "a: b # not YAML"},
		{"target", "", func(s *Scenario) any { return s.Target }, ""},
		{"server.poll_interval", "2s", func(s *Scenario) any { return s.Server.PollInterval }, Duration(2 * time.Second)},
		{"workload.rate", "3000/m", func(s *Scenario) any { return s.Workload.Rate }, Rate{3000, time.Minute}},
		{"args.duration_ms", "100", func(s *Scenario) any { return s.Args["duration_ms"] }, 100},
		{"args.outcome", "failed", func(s *Scenario) any { return s.Args["outcome"] }, "failed"},
		{"args.input_required", "true", func(s *Scenario) any { return s.Args["input_required"] }, true},
		{"args.meta", "{a: [1, x]}", func(s *Scenario) any { return s.Args["meta"] }, map[string]any{"a": []any{1, "x"}}},
		{"args", "{duration_ms: 7}", func(s *Scenario) any { return s.Args }, map[string]any{"duration_ms": 7}},
		{"headers.Authorization", "Bearer a b", func(s *Scenario) any { return s.Headers["Authorization"] }, Secret("Bearer a b")},
		{"headers.X.Dotted", "v", func(s *Scenario) any { return s.Headers["X.Dotted"] }, Secret("v")},
		{"server.tokens.acme", "tok-1", func(s *Scenario) any { return s.Server.Tokens["acme"] }, Secret("tok-1")},
		{"thresholds[0]", "latency_tasks_get.p99 < 200ms", func(s *Scenario) any { return s.Thresholds },
			[]Threshold{{Expr: "latency_tasks_get.p99 < 200ms"}}},
		{"thresholds", `["a < 1", "b < 2"]`, func(s *Scenario) any { return len(s.Thresholds) }, 2},
		{"thresholds[0]", `{expr: "detection_lag.p99 < 1s", on_no_data: pass}`, func(s *Scenario) any { return s.Thresholds },
			[]Threshold{{Expr: "detection_lag.p99 < 1s", OnNoData: NoDataPass}}},
		{"thresholds", `[{expr: "a < 1", abort_on_fail: true, on_no_data: fail}]`, func(s *Scenario) any { return s.Thresholds },
			[]Threshold{{Expr: "a < 1", AbortOnFail: true, OnNoData: NoDataFail}}},
		{"error_budget", "2.5%", func(s *Scenario) any { return s.ErrorBudget }, Percent(2.5)},
		{"workload.stages[0].target", "80/s", func(s *Scenario) any { return s.Workload.Stages }, []Stage{{Target: Rate{80, time.Second}}}},
		{"workload.stages[0]", "{duration: 5s, target: 1/s}", func(s *Scenario) any { return s.Workload.Stages },
			[]Stage{{Duration(5 * time.Second), Rate{1, time.Second}}}},
		{"client.cancel.delay", "1s", func(s *Scenario) any { return s.Client.Cancel.Delay },
			Dist{Kind: DistFixed, Value: Duration(time.Second)}},
		{"client.cancel.delay", "{dist: normal, mean: 1s, stddev: 100ms}", func(s *Scenario) any { return s.Client.Cancel.Delay },
			Dist{Kind: DistNormal, Mean: Duration(time.Second), StdDev: Duration(100 * time.Millisecond)}},
		{"client.cancel.delay.max", "3s", func(s *Scenario) any { return s.Client.Cancel.Delay },
			Dist{Kind: DistUniform, Min: Duration(time.Second), Max: Duration(3 * time.Second)}},
		{"client.input", "{decline: 1}", func(s *Scenario) any { return s.Client.Input }, Input{Decline: 1}},
		{"client.poll", "{policy: backoff, max_interval: 1m}", func(s *Scenario) any { return s.Client.Poll },
			Poll{Policy: PollBackoff, Interval: Duration(time.Second), Multiplier: 2, MaxInterval: Duration(time.Minute),
				Deadline: Duration(10 * time.Minute)}},
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
}

func TestSetErrors(t *testing.T) {
	tests := []struct{ path, value, want string }{
		{"", "1", "--set: empty path (valid: name, description, seed, duration, grace, target, headers, tls, protocol, tool, args, task_ttl, fallback, workload, client, server, faults, recovery, security, thresholds, error_budget, slo, compare, rollback, expect_manifest, contract)"},
		{"workload.clinets", "1", `--set: workload.clinets: unknown field "clinets"; did you mean workload.clients? (fields of workload: workload.model, workload.clients, workload.think_time, workload.rate, workload.stages, workload.max_in_flight)`},
		{"clients", "1", `--set: clients: unknown field "clients"; did you mean workload.clients? (top-level fields: name, ...`},
		{"client.pol.interval", "1s", `--set: client.pol.interval: unknown field "pol"; did you mean client.poll? (fields of client: client.poll, client.result, client.cancel, client.input, client.request_timeout, client.max_conns, client.source_addresses)`},
		{"server.nope", "1", `--set: server.nope: unknown field "nope" (fields of server: server.poll_interval, ...`},
		{"client[0]", "1", "--set: client[0]: client has fields: write client.FIELD"},
		{"client", "x", `--set: client: expected a mapping, got "x"`},
		{"client.", "x", `--set: client.: unknown field ""...`},
		{"client.poll[0]", "x", "--set: client.poll[0]: client.poll has fields: write client.poll.FIELD"},
		{"workload.stages.target", "1/s", "--set: workload.stages.target: workload.stages is a sequence: name an item, like workload.stages[0]"},
		{"workload.stages[x]", "1/s", "--set: workload.stages[x]: workload.stages is a sequence: name an item, like workload.stages[0]"},
		{"workload.stages[-1]", "1/s", "--set: workload.stages[-1]: workload.stages is a sequence: name an item, like workload.stages[0]"},
		{"workload.stages[3].target", "1/s", "--set: workload.stages[3].target: index 3 out of range: workload.stages has 0 items (index 0 appends one)"},
		{"workload.stages[0]target", "1/s", "--set: workload.stages[0]target: workload.stages[0] has fields: write workload.stages[0].FIELD"},
		{"workload.rate.count", "1", `--set: workload.rate.count: workload.rate is a single value: it has no "count"`},
		{"workload.clients.x", "1", `--set: workload.clients.x: workload.clients is a single value: it has no ".x"`},
		{"args", "[1]", "--set: args: expected a mapping, got a sequence"},
		{"args.", "1", "--set: args.: args is a mapping: name a key, like args.KEY"},
		{"args.x", "[1", "--set: args.x: invalid value \"[1\": ..."},
		{"args.x", "{1: a}", "--set: args.x: mapping keys must be strings to be sent as JSON"},
		{"workload.clients", "", "--set: workload.clients: a value is required"},
		{"workload.clients", "x", `--set: workload.clients: expected an integer, got "x"`},
		{"workload.clients", "1.5", "--set: workload.clients: expected an integer, got number 1.5"},
		{"seed", "-1", "--set: seed: expected a non-negative integer, got integer -1"},
		{"server.null_ttl", "yes", `--set: server.null_ttl: expected true or false, got "yes"`},
		{"client.cancel.probability", ".nan", "--set: client.cancel.probability: expected a finite number, got number .nan"},
		{"grace", "5", `--set: grace: duration "5" has no unit (write it like 5s or 5ms)`},
		{"workload.rate", "5", `--set: workload.rate: invalid rate "5" (want COUNT/UNIT, like 50/s or 3000/m)`},
		{"client.cancel.delay", "{dist: uniform, mni: 1s}", `--set: client.cancel.delay.mni: unknown field; did you mean "min"? (valid: dist, value, min, max, mean, stddev, p50, p99)`},
		{"client.poll", "{interval: x, jitter: y}", "--set: client.poll.interval: invalid duration \"x\" (want a Go duration like 500ms, 5s or 1m30s)\n--set: client.poll.jitter: expected a finite number, got \"y\""},
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
			problems(t, err) // every part is an *Error
			if !reflect.DeepEqual(s, before) {
				t.Errorf("a failed Set changed the scenario:\n%+v\nwas\n%+v", s, before)
			}
		})
	}
}

// TestSetOrigins: overriding a subtree drops the file positions inside it.
func TestSetOrigins(t *testing.T) {
	s, err := Load("open-ramp")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Where("workload.stages[1].target"); got != "builtin:open-ramp:15:23" {
		t.Fatalf("Where before Set = %q", got)
	}
	if err := s.Set("workload.stages", "[{duration: 10s, target: 5/s}, {duration: 1s, target: -1/s}]"); err == nil {
		t.Fatal("Set of a negative rate succeeded")
	}
	if err := s.Set("workload.stages", "[{duration: 10s, target: 5/s}, {duration: 1s, target: 0/s}]"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"workload.stages", "workload.stages[1].target", "workload.stages[0]"} {
		if got := s.Where(p); got != "--set" {
			t.Errorf("Where(%q) = %q, want --set", p, got)
		}
	}
	if got := s.Where("workload.max_in_flight"); got != "builtin:open-ramp:16:3" {
		t.Errorf("Where(max_in_flight) = %q, want its file position", got)
	}
}
