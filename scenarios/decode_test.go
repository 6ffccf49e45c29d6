package scenarios

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// minimal is the smallest valid scenario; tests append to it.
const minimal = "name: t\nduration: 10s\nworkload: {clients: 5}\n"

func mustParse(t *testing.T, src string) *Scenario {
	t.Helper()
	s, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatalf("Parse:\n%v\nsource:\n%s", err, src)
	}
	return s
}

// problems unwraps a joined error into its *Error parts, failing on anything else.
func problems(t *testing.T, err error) []*Error {
	t.Helper()
	if err == nil {
		return nil
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	out := make([]*Error, 0, len(errs))
	for _, e := range errs {
		var pe *Error
		if !errors.As(e, &pe) {
			t.Fatalf("problem %v (%T) is not an *Error", e, e)
		}
		out = append(out, pe)
	}
	return out
}

func TestParseDefaults(t *testing.T) {
	s := mustParse(t, minimal)
	want := Default()
	want.Name, want.Duration, want.Workload.Clients = "t", Duration(10*time.Second), 5
	want.Source, want.origins = "t.yaml", s.origins
	if !reflect.DeepEqual(s, want) {
		t.Errorf("Parse(minimal) =\n%+v\nwant\n%+v", s, want)
	}
	if err := s.Validate(); err != nil {
		t.Errorf("minimal scenario does not validate: %v", err)
	}
	if err := Default().Validate(); err == nil {
		t.Error("Default() validates, but it lacks name, duration and clients")
	}
}

// TestParseStrict checks that every decoding problem is reported, located, and at once.
func TestParseStrict(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // the problems, in order, as full messages (or prefixes ending in "...")
	}{
		{"unknown top-level field", minimal + "durration: 5s\n", []string{
			`t.yaml:4:1: durration: unknown field; did you mean "duration"? (valid: name, description, seed, duration, grace, target, headers, tls, protocol, tool, args, task_ttl, fallback, workload, client, server, faults, recovery, security, thresholds, error_budget, slo, compare, rollback, expect_manifest, contract)`}},
		{"unknown nested field", minimal + "client:\n  poll:\n    polcy: fixed\n", []string{
			`t.yaml:6:5: client.poll.polcy: unknown field; did you mean "policy"? (valid: policy, interval, multiplier, max_interval, jitter, min, max, deadline)`}},
		{"unknown field, nothing close", minimal + "server: {colour: red}\n", []string{
			`t.yaml:4:10: server.colour: unknown field (valid: poll_interval, ...`}},
		{"string for integer", "name: t\nduration: 1s\nworkload:\n  clients: many\n", []string{
			`t.yaml:4:12: workload.clients: expected an integer, got "many"`}},
		{"float for integer", "name: t\nduration: 1s\nworkload: {clients: 2.5}\n", []string{
			`t.yaml:3:21: workload.clients: expected an integer, got number 2.5`}},
		{"integer overflow", minimal + "server: {list_page_size: 99999999999999999999}\n", []string{
			`t.yaml:4:26: server.list_page_size: expected an integer, got number 99999999999999999999`}},
		{"yes is not a bool", minimal + "server: {null_ttl: yes}\n", []string{
			`t.yaml:4:20: server.null_ttl: expected true or false, got "yes"`}},
		{"negative seed", minimal + "seed: -1\n", []string{
			`t.yaml:4:7: seed: expected a non-negative integer, got integer -1`}},
		{"infinite float", minimal + "client: {poll: {multiplier: .inf}}\n", []string{
			`t.yaml:4:29: client.poll.multiplier: expected a finite number, got number .inf`}},
		{"mapping for string", minimal + "tool: {a: 1}\n", []string{
			`t.yaml:4:7: tool: expected a string, got a mapping`}},
		{"scalar for mapping", minimal + "client: fast\n", []string{
			`t.yaml:4:9: client: expected a mapping, got "fast"`}},
		{"scalar for sequence", minimal + "thresholds: \"a < 1\"\n", []string{
			`t.yaml:4:13: thresholds: expected a sequence, got "a < 1"`}},
		{"bad duration", minimal + "grace: 30\n", []string{
			`t.yaml:4:8: grace: duration "30" has no unit (write it like 30s or 30ms)`}},
		{"bad rate in a stage", "name: t\nduration: 1s\nworkload:\n  model: open\n  stages:\n    - {duration: 1s, target: 5}\n", []string{
			`t.yaml:6:30: workload.stages[0].target: invalid rate "5" (want COUNT/UNIT, like 50/s or 3000/m)`}},
		{"bad distribution shorthand", minimal + "client: {cancel: {delay: soon}}\n", []string{
			`t.yaml:4:26: client.cancel.delay: expected a distribution {dist: ...} or a fixed duration: invalid duration "soon" (want a Go duration like 500ms, 5s or 1m30s)`}},
		{"duplicate key", minimal + "grace: 1s\ngrace: 2s\n", []string{
			`t.yaml:5:1: grace: duplicate key (first at line 4)`}},
		{"non-string key", minimal + "server: {[a]: 1}\n", []string{
			`t.yaml:4:10: server: mapping keys must be strings, got a sequence`}},
		{"args nested keys must be strings", minimal + "args: {a: {1: x}}\n", []string{
			`t.yaml:4:11: args.a: mapping keys must be strings to be sent as JSON`}},
		{"args NaN", minimal + "args: {a: .nan}\n", []string{
			`t.yaml:4:11: args.a: NaN cannot be sent as JSON`}},
		{"header value not a string", minimal + "headers: {X-A: [1]}\n", []string{
			`t.yaml:4:16: headers.X-A: expected a string, got a sequence`}},
		{"threshold unknown field", minimal + "thresholds: [{a: 1}]\n", []string{
			`t.yaml:4:14: thresholds[0]: a: unknown field in a threshold (valid: expr, abort_on_fail, on_no_data)`}},
		{"threshold without expr", minimal + "thresholds: [{abort_on_fail: true}]\n", []string{
			`t.yaml:4:14: thresholds[0]: a threshold mapping needs expr`}},
		{"threshold abort not a bool", minimal + "thresholds: [{expr: \"polls.count > 1\", abort_on_fail: maybe}]\n", []string{
			`t.yaml:4:14: thresholds[0]: abort_on_fail: expected true or false, got "maybe"`}},
		{"threshold on_no_data misspelt", minimal + "thresholds:\n  - {expr: \"detection_lag.p99 < 1s\", on_no_data: ok}\n", []string{
			`t.yaml:5:5: thresholds[0]: on_no_data: expected fail or pass, got "ok"`}},
		{"error budget without %", minimal + "error_budget: 5\n", []string{
			`t.yaml:4:15: error_budget: percentage "5" has no %: write it like 5%`}},
		{"threshold a sequence", minimal + "thresholds: [[1]]\n", []string{
			`t.yaml:4:14: thresholds[0]: expected a threshold expression string or {expr, abort_on_fail, on_no_data}, got a sequence`}},
		{"bad merge", minimal + "client:\n  <<: 5\n", []string{
			`t.yaml:5:7: client: a merge (<<) takes a mapping or a sequence of mappings, got integer 5`}},
		{"every problem at once, in document order", "name: t\nduration: soon\nworkload:\n  clients: x\n  modle: open\nbogus: 1\nclient: {result: [block]}\n", []string{
			`t.yaml:2:11: duration: invalid duration "soon" (want a Go duration like 500ms, 5s or 1m30s)`,
			`t.yaml:4:12: workload.clients: expected an integer, got "x"`,
			`t.yaml:5:3: workload.modle: unknown field; did you mean "model"? (valid: model, clients, think_time, rate, stages, max_in_flight)`,
			`t.yaml:6:1: bogus: unknown field (valid: name, ...`,
			`t.yaml:7:18: client.result: expected a string, got a sequence`,
		}},
		{"syntax error: the line of the bracket", "name: t\nduration: [1s\n", []string{`t.yaml:2: invalid YAML: did not find expected ',' or ']'`}},
		{"syntax error: block mapping", "name: t\nworkload:\n  clients: 1\n model: open\n", []string{`t.yaml:4: invalid YAML: did not find expected key`}},
		{"syntax error: mapping values", "name: t\n  duration: 1s\n", []string{`t.yaml:2: invalid YAML: mapping values are not allowed in this context`}},
		{"syntax error: unterminated quote", "name: 'open\n", []string{`t.yaml:2: invalid YAML: found unexpected end of stream`}},
		{"syntax error on line 1", "]\n", []string{`t.yaml:1: invalid YAML: did not find expected node content`}},
		{"tab indentation", "name: t\nworkload:\n\tclients: 1\n", []string{`t.yaml:3: invalid YAML: found character that cannot start any token`}},
		{"unknown anchor", minimal + "grace: *nope\n", []string{`t.yaml:4:8: invalid YAML: unknown anchor 'nope' referenced`}},
		{"two documents", minimal + "---\nname: u\n", []string{`t.yaml:4:1: more than one YAML document: a scenario file holds one`}},
		{"empty", "", []string{`t.yaml:1:1: empty scenario: it needs at least name and duration`}},
		{"only comments", "# nothing\n", []string{`t.yaml:1:1: empty scenario: it needs at least name and duration`}},
		{"explicit null document", "~\n", []string{`t.yaml:1:1: a scenario is a mapping (name: ..., duration: ...), got null`}},
		{"top-level sequence", "- name: t\n", []string{`t.yaml:1:1: a scenario is a mapping (name: ..., duration: ...), got a sequence`}},
		{"invalid UTF-8", "name: t\ndescription: ab\xffc\n", []string{`t.yaml:2:16: invalid UTF-8: a scenario file must be UTF-8 text`}},
		{"control character", "name: t\n  \x01\n", []string{`t.yaml:2:3: control character U+0001 is not allowed`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("t.yaml", []byte(tc.src))
			if err == nil {
				t.Fatalf("Parse succeeded (%+v), want problems", s)
			}
			if s != nil {
				t.Errorf("Parse returned a scenario with an error")
			}
			got := problems(t, err)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d problems:\n%v\nwant %d:\n%s", len(got), err, len(tc.want), strings.Join(tc.want, "\n"))
			}
			for i, w := range tc.want {
				g := got[i].Error()
				if p, ok := strings.CutSuffix(w, "..."); ok && strings.HasPrefix(g, p) {
					continue
				}
				if g != w {
					t.Errorf("problem %d:\n got %s\nwant %s", i, g, w)
				}
				if got[i].Line == 0 {
					t.Errorf("problem %d has no line", i)
				}
			}
		})
	}
}

func TestParseLimits(t *testing.T) {
	t.Run("file too big", func(t *testing.T) {
		big := minimal + "description: " + strings.Repeat("x", maxFileBytes) + "\n"
		_, err := Parse("t.yaml", []byte(big))
		if err == nil || !strings.Contains(err.Error(), "more than the limit") {
			t.Fatalf("Parse of %d bytes = %v, want a size error", len(big), err)
		}
	})
	t.Run("too many problems", func(t *testing.T) {
		var b strings.Builder
		b.WriteString(minimal)
		for i := range 80 {
			fmt.Fprintf(&b, "unknown%d: 1\n", i)
		}
		got := problems(t, func() error { _, err := Parse("t.yaml", []byte(b.String())); return err }())
		if len(got) != maxProblems+1 {
			t.Fatalf("got %d problems, want %d and a summary", len(got), maxProblems)
		}
		if last := got[maxProblems].Error(); last != "t.yaml:54:1: 30 more problems not shown" {
			t.Errorf("summary = %q", last)
		}
	})
	t.Run("alias expansion of errors", func(t *testing.T) {
		// One mapping of 2000 unknown keys, aliased as each of 2000 stages: 4 million problems.
		var b strings.Builder
		b.WriteString("name: t\nduration: 1s\nargs:\n  m: &m {")
		for i := range 2000 {
			fmt.Fprintf(&b, "k%d: 1, ", i)
		}
		b.WriteString("}\nworkload:\n  model: open\n  stages: [")
		b.WriteString(strings.Repeat("*m, ", 2000))
		b.WriteString("]\n")
		_, err := Parse("t.yaml", []byte(b.String()))
		got := problems(t, err)
		if len(got) != maxProblems+1 || got[maxProblems].Msg != "more problems not shown" {
			t.Fatalf("got %d problems, want %d and a summary; last: %v", len(got), maxProblems, got[len(got)-1])
		}
	})
	t.Run("merge expansion bomb", func(t *testing.T) {
		// Six levels of 16-way merges: 16^6 = 16 million mappings to visit.
		var b strings.Builder
		b.WriteString("name: t\nduration: 1s\nworkload:\n  model: open\n  stages:\n    - &l0 {duration: 1s}\n")
		for i := 1; i <= 6; i++ {
			fmt.Fprintf(&b, "    - &l%d {<<: [%s]}\n", i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 16), ", "))
		}
		_, err := Parse("t.yaml", []byte(b.String()))
		got := problems(t, err)
		if len(got) != 1 || got[0].Line == 0 || !strings.Contains(got[0].Msg, "document too complex") {
			t.Fatalf("Parse = %v, want one complexity error", err)
		}
	})
	t.Run("self-referential merge", func(t *testing.T) {
		_, err := Parse("t.yaml", []byte(minimal+"client: &c\n  poll: {}\n  <<: *c\n"))
		if err == nil || !strings.Contains(err.Error(), "merges (<<) nested more than 8 deep") {
			t.Fatalf("Parse = %v, want a merge depth error", err)
		}
	})
}

func TestParseValues(t *testing.T) {
	s := mustParse(t, `
name: values
duration: 1m
grace: ~                       # null: the default stays
workload:
  model: open
  rate: 3000/m
  stages:
    - &ramp {duration: 10s, target: 50/s}
    - <<: *ramp                # merge key, with an override
      target: 80/s
client:
  poll:
    interval: &i 250ms
  cancel:
    probability: 0.25
    delay: {dist: exponential, mean: 2s}   # replaces the whole default (uniform 1s..2s)
  input: {decline: 1}                      # replaces the whole default (accept 1)
server:
  reaper_interval: *i          # alias of a scalar
  tokens: {acme: tok-a, globex: tok-b}
headers:
  Authorization: Bearer xyz
args:
  duration_ms: 100
  outcome: failed
  nested: {list: [1, 2.5, "x", true, null]}
`)
	if err := s.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"grace", s.Grace, Duration(30 * time.Second)},
		{"rate", s.Workload.Rate.PerSecond(), 50.0},
		{"stages", s.Workload.Stages, []Stage{
			{Duration(10 * time.Second), Rate{50, time.Second}},
			{Duration(10 * time.Second), Rate{80, time.Second}},
		}},
		{"poll interval", s.Client.Poll.Interval, Duration(250 * time.Millisecond)},
		{"poll policy default", s.Client.Poll.Policy, PollServer},
		{"delay", s.Client.Cancel.Delay, Dist{Kind: DistExponential, Mean: Duration(2 * time.Second)}},
		{"input", s.Client.Input, Input{Decline: 1}},
		{"reaper", s.Server.ReaperInterval, Duration(250 * time.Millisecond)},
		{"tokens", s.Server.Tokens, map[string]Secret{"acme": "tok-a", "globex": "tok-b"}},
		{"header", s.Headers["Authorization"].Reveal(), "Bearer xyz"},
		{"args", s.Args, map[string]any{
			"duration_ms": 100, "outcome": "failed",
			"nested": map[string]any{"list": []any{1, 2.5, "x", true, nil}},
		}},
		{"pool size", s.Workload.PoolSize(), 1000},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
	where := map[string]string{
		"workload.stages[1].target": "t.yaml:11:7", // the override
		"workload.stages[1]":        "t.yaml:10:7",
		"server.tokens.globex":      "t.yaml:21:25",
		"workload.max_in_flight":    "t.yaml:5:1", // absent: its parent
		"seed":                      "t.yaml",     // absent, top level
	}
	for path, want := range where {
		if got := s.Where(path); got != want {
			t.Errorf("Where(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestParseDistShorthand: a bare duration is a fixed distribution.
func TestParseDistShorthand(t *testing.T) {
	s := mustParse(t, minimal+"client: {cancel: {delay: 1500ms}}\n")
	if want := (Dist{Kind: DistFixed, Value: Duration(1500 * time.Millisecond)}); s.Client.Cancel.Delay != want {
		t.Errorf("delay = %+v, want %+v", s.Client.Cancel.Delay, want)
	}
}

// TestMarshalRoundTrip: a scenario written with yaml.Marshal (the effective scenario of a run)
// parses back to the same values; secrets are the exception: they are written redacted.
func TestMarshalRoundTrip(t *testing.T) {
	for _, info := range Builtins() {
		t.Run(info.Name, func(t *testing.T) {
			s, err := Load(info.Name)
			if err != nil {
				t.Fatal(err)
			}
			s.Thresholds = append(s.Thresholds, Threshold{Expr: "tasks.failed_rate < 1%"},
				Threshold{Expr: "detection_lag.p99 < 1s", OnNoData: NoDataPass},
				Threshold{Expr: "cancel_latency.p99 < 1s", AbortOnFail: true, OnNoData: NoDataFail})
			s.ErrorBudget = 2.5
			s.Client.Cancel.Delay = Dist{Kind: DistLognormal, P50: 1, P99: 2, Max: 3}
			s.Server.Tokens = map[string]Secret{"acme": "secret-token"}
			out, err := yaml.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(out), "secret-token") {
				t.Fatalf("marshalled scenario leaks a token:\n%s", out)
			}
			back, err := Parse("out.yaml", out)
			if err != nil {
				t.Fatalf("re-parse: %v\n%s", err, out)
			}
			if back.Server.Tokens["acme"] != redacted {
				t.Errorf("token written as %q, want %q", back.Server.Tokens["acme"], redacted)
			}
			back.Server.Tokens = s.Server.Tokens
			back.Source, back.origins = s.Source, s.origins
			for i := range back.Thresholds {
				back.Thresholds[i].Line, back.Thresholds[i].Column = s.Thresholds[i].Line, s.Thresholds[i].Column
			}
			if !reflect.DeepEqual(back, s) {
				t.Errorf("round trip changed the scenario:\n got %+v\nwant %+v\nyaml:\n%s", back, s, out)
			}
		})
	}
}
