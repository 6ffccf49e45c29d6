package scenarios

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"
)

// FuzzParse: Parse never panics, every problem it reports is an *Error with a line, and a
// scenario it accepts can be validated, re-encoded and parsed back.
func FuzzParse(f *testing.F) {
	for _, info := range Builtins() {
		data, err := library.ReadFile("library/" + info.Name + ".yaml")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		minimal,
		minimal + "client: {cancel: {delay: {dist: lognormal, p50: 1s, p99: 2s}}}\n",
		"name: t\nduration: 1s\nworkload: {model: open, stages: [&a {duration: 1s, target: 5/s}, {<<: *a}]}\n",
		"name: t\nargs: {a: &x [1, *x]}\n",
		"name: t\nthresholds: [\"a < 1\"]\nheaders: {A: b}\nserver: {tokens: {t: x}}\n",
		full,
		minimal + "server: {latency: {ping: 1ms}, tools: {w: {outcomes: {error: 1}}}, downstream: {stall: {windows: [{start: 1s}]}}}\n",
		"a: 1\n---\nb: 2\n", "]", "\xff", "name: [", "? [a]\n: 1\n", "!!binary aGk=",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("f.yaml", data)
		if err != nil {
			if s != nil {
				t.Fatal("Parse returned a scenario and an error")
			}
			errs := []error{err}
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				errs = j.Unwrap()
			}
			for _, e := range errs {
				var pe *Error
				if !errors.As(e, &pe) || pe.Source != "f.yaml" || pe.Line <= 0 {
					t.Fatalf("problem without a position: %#v", e)
				}
			}
			return
		}
		verr := s.Validate() // must not panic
		for _, e := range flatten(verr) {
			var pe *Error
			if !errors.As(e, &pe) {
				t.Fatalf("Validate problem %v is not an *Error", e)
			}
		}
		out, err := yaml.Marshal(s)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		back, err := Parse("back.yaml", out)
		if err != nil {
			t.Fatalf("re-parse of the marshalled scenario: %v\n%s", err, out)
		}
		// Validity survives the round trip except for secrets (written redacted).
		if len(s.Headers) == 0 && len(s.Server.Tokens) == 0 && (verr == nil) != (back.Validate() == nil) {
			t.Fatalf("validity changed in the round trip: %v vs %v\n%s", verr, back.Validate(), out)
		}
	})
}

// FuzzSet: Set never panics, on error leaves the scenario as it was, and is idempotent.
func FuzzSet(f *testing.F) {
	for _, kv := range [][2]string{
		{"workload.clients", "5"}, {"workload.stages[0].target", "5/s"}, {"args.x", "{a: 1}"},
		{"client.cancel.delay", "1s"}, {"headers.A", "b"}, {"thresholds[0]", "a < 1"},
		{"client.poll", "{policy: fixed}"}, {"workload.stages[9]", ""}, {"x.y[", "]"},
		{"server.tools.work.input.rounds", "2"}, {"server.latency.ping", "{dist: pareto, p50: 1ms, p99: 2ms}"},
		{"server.downstream.stall.windows[0].start", "1s"}, {"server.poll_policy.per_tool.a.b", "1s"},
	} {
		f.Add(kv[0], kv[1])
	}
	f.Fuzz(func(t *testing.T, path, value string) {
		s, err := Parse("t.yaml", []byte(minimal))
		if err != nil {
			t.Fatal(err)
		}
		before, _ := Parse("t.yaml", []byte(minimal))
		if err := s.Set(path, value); err != nil {
			for _, e := range flatten(err) {
				var pe *Error
				if !errors.As(e, &pe) || pe.Source != "--set" {
					t.Fatalf("Set problem %#v is not an *Error from --set", e)
				}
			}
			if !reflect.DeepEqual(s, before) {
				t.Fatalf("a failed Set(%q, %q) changed the scenario", path, value)
			}
			return
		}
		_ = s.Validate() // must not panic
		once := *s
		once.Args, once.Headers, once.Thresholds = maps.Clone(s.Args), maps.Clone(s.Headers), slices.Clone(s.Thresholds)
		once.Workload.Stages, once.Server.Tokens = slices.Clone(s.Workload.Stages), maps.Clone(s.Server.Tokens)
		once.Server.Latency, once.Server.Tools = maps.Clone(s.Server.Latency), maps.Clone(s.Server.Tools)
		once.Server.PollPolicy.PerTool = maps.Clone(s.Server.PollPolicy.PerTool)
		once.Server.Downstream.Stall.Windows = slices.Clone(s.Server.Downstream.Stall.Windows)
		once.origins = maps.Clone(s.origins)
		if err := s.Set(path, value); err != nil {
			t.Fatalf("Set(%q, %q) succeeded once, then failed: %v", path, value, err)
		}
		if !reflect.DeepEqual(s, &once) {
			t.Fatalf("Set(%q, %q) twice differs from once:\n%+v\n%+v", path, value, s, &once)
		}
	})
}

func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
