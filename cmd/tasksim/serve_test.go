package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/runner"
	"github.com/tasksim/tasksim/scenarios"
)

// serverScenario sets every server knob; it is a server-only file (no name, duration or
// clients), which serve accepts and run would not.
const serverScenario = `server:
  poll_interval: 500ms
  seed: 42
  latency:
    "*": 1ms
    tasks/get: {dist: lognormal, p50: 2ms, p99: 20ms}
  stalls: {probability: 0.01, duration: 3s, every: 1m, window: 5s}
  tools:
    work_task:
      duration: {dist: pareto, p50: 1s, p99: 4s}
      outcomes: {completed: 0.9, failed: 0.05, error: 0.05}
      input: {probability: 0.1, rounds: 2}
  poll_policy: {kind: adaptive, per_tool: {work: 2s}, signal: request_rate, base: 1s, per_unit: 10ms, max: 30s}
  backpressure:
    max_tasks: 100
    max_tasks_per_tenant: 10
    workers: 8
    queue: 4
    when_full: refuse_429
    retry_after: 2s
    raised_poll_interval: 5s
    rate_limits: {get_per_client: 10/s, get_per_tenant: 600/m, create_per_client: 1/s, create_per_tenant: 5/s, burst: 3}
  downstream:
    capacity: 4
    service_time: {dist: exponential, mean: 50ms}
    queue_limit: 16
    failure_rate: 0.02
    stall: {probability: 0.001, duration: 2s, windows: [{start: 10s, duration: 10s}]}
`

// TestServerConfig: runner.ServerConfig maps every knob of the server section onto mockserver.Config.
func TestServerConfig(t *testing.T) {
	sc, err := scenarios.Parse("s.yaml", []byte(serverScenario))
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.ValidateServer(); err != nil {
		t.Fatal(err)
	}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	d := func(n int) scenarios.Duration { return scenarios.Duration(ms(n)) }
	want := mockserver.Config{
		PollInterval: ms(500), DefaultTTL: 5 * time.Minute, MaxTTL: time.Hour, ReaperInterval: time.Second,
		ListPageSize: 50, ServerVersion: version, Seed: 42, Faults: scenarios.ServerFaults{Status: 503},
		Latency: map[string]scenarios.Dist{
			"*":         {Kind: scenarios.DistFixed, Value: d(1)},
			"tasks/get": {Kind: scenarios.DistLognormal, P50: d(2), P99: d(20)},
		},
		Stalls: mockserver.Stalls{Probability: 0.01, Duration: 3 * time.Second, Every: time.Minute, Window: 5 * time.Second},
		Tools: map[string]mockserver.ToolProfile{"work_task": {
			Duration:  scenarios.Dist{Kind: scenarios.DistPareto, P50: d(1000), P99: d(4000)},
			Completed: 0.9, Failed: 0.05, Error: 0.05, InputProbability: 0.1, InputRounds: 2,
		}},
		Poll: mockserver.PollPolicy{Kind: "adaptive", PerTool: map[string]time.Duration{"work": 2 * time.Second},
			Signal: "request_rate", Base: time.Second, PerUnit: ms(10), Max: 30 * time.Second},
		Backpressure: mockserver.Backpressure{MaxTasks: 100, MaxTasksPerTenant: 10, Workers: 8, Queue: 4,
			WhenFull: "refuse_429", RetryAfter: 2 * time.Second, RaisedPollInterval: 5 * time.Second,
			GetRatePerClient: 10, GetRatePerTenant: 10, CreateRatePerClient: 1, CreateRatePerTenant: 5, Burst: 3},
		Downstream: mockserver.Downstream{Capacity: 4, ServiceTime: scenarios.Dist{Kind: scenarios.DistExponential, Mean: d(50)},
			QueueLimit: 16, FailureRate: 0.02, StallProbability: 0.001, StallDuration: 2 * time.Second,
			StallWindows: []mockserver.Window{{Start: 10 * time.Second, Duration: 10 * time.Second}}},
	}
	if got := runner.ServerConfig(sc); !reflect.DeepEqual(got, want) {
		t.Errorf("ServerConfig =\n%+v\nwant\n%+v", got, want)
	}

	// server.seed 0 is the scenario's seed; the defaults map to knobs that are off.
	def := scenarios.Default()
	def.Seed = 9
	got := runner.ServerConfig(def)
	if got.Seed != 9 || got.Latency != nil || got.Tools != nil || got.Stalls.Probability != 0 || got.Stalls.Every != 0 ||
		got.Backpressure.Workers != 0 || got.Backpressure.MaxTasks != 0 || got.Backpressure.GetRatePerClient != 0 ||
		got.Downstream.Capacity != 0 || got.Poll.Kind != "fixed" {
		t.Errorf("runner.ServerConfig(Default()) = %+v, want every knob off and Seed 9", got)
	}
}

// TestServerConfigKnownBad: each mode of server.known_bad turns on exactly one field of
// mockserver.KnownBad (those of the modern era in its KnownBad2026), a
// field of its own, and together they turn on every field.
func TestServerConfigKnownBad(t *testing.T) {
	seen := map[string]scenarios.KnownBadMode{}
	fields := 0
	for _, f := range reflect.VisibleFields(reflect.TypeFor[mockserver.KnownBad]()) {
		if f.Type.Kind() == reflect.Bool {
			fields++
		}
	}
	for _, m := range scenarios.KnownBadModes() {
		sc := scenarios.Default()
		sc.Server.KnownBad = []scenarios.KnownBadMode{m}
		cfg := runner.ServerConfig(sc)
		kb := reflect.ValueOf(cfg.KnownBad)
		var on []string
		for _, f := range reflect.VisibleFields(kb.Type()) {
			if f.Type.Kind() == reflect.Bool && kb.FieldByIndex(f.Index).Bool() {
				on = append(on, f.Name)
			}
		}
		if len(on) != 1 {
			t.Errorf("known_bad [%s] turns on %v, want one field", m, on)
			continue
		}
		if prev, dup := seen[on[0]]; dup {
			t.Errorf("known_bad [%s] and [%s] both turn on %s", prev, m, on[0])
		}
		seen[on[0]] = m
	}
	if len(seen) != fields {
		t.Errorf("the modes turn on %d fields of mockserver.KnownBad, which has %d", len(seen), fields)
	}
	if runner.ServerConfig(scenarios.Default()).KnownBad.On() {
		t.Error("a known-bad mode is on by default")
	}
}

// TestParseServeFlags: the scenario configures the server, the flags override it, --set
// overrides both, and problems are usage errors located where they are.
func TestParseServeFlags(t *testing.T) {
	file := filepath.Join(t.TempDir(), "srv.yaml")
	if err := os.WriteFile(file, []byte(serverScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := parseServeFlags([]string{file, "--poll-interval", "2s", "--ttl", "1m", "--token", "acme=tok",
		"--set", "server.backpressure.workers=2", "--set", "server.ttl=2m", "--listen", "127.0.0.1:0"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PollInterval != 2*time.Second || cfg.DefaultTTL != 2*time.Minute || cfg.Backpressure.Workers != 2 ||
		cfg.Backpressure.Queue != 4 || cfg.Seed != 42 || cfg.Tokens["tok"] != "acme" || cfg.Addr != "127.0.0.1:0" {
		t.Errorf("config = %+v", cfg)
	}

	// A list value: the known-bad modes of serve.
	cfg, _, err = parseServeFlags([]string{"--set", "server.known_bad=[blocking_get, lost_session_400]"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := (mockserver.KnownBad{BlockingGet: true, LostSession400: true}); cfg.KnownBad != want {
		t.Errorf("--set server.known_bad=[blocking_get, lost_session_400]: %+v, want %+v", cfg.KnownBad, want)
	}

	// The OpenTelemetry flags: off by default, the sampling defaults, an endpoint given.
	_, tel, err := parseServeFlags([]string{"--otlp-endpoint", "http://127.0.0.1:4318", "--trace-max-per-second", "50"}, io.Discard)
	if want := (runner.Telemetry{Endpoint: "http://127.0.0.1:4318", SampleRatio: 1, MaxPerSecond: 50}); err != nil || tel != want {
		t.Errorf("serve --otlp-endpoint: %+v, %v; want %+v", tel, err, want)
	}

	// No scenario: scenarios.Default()'s server section, the seed of the default scenario.
	cfg, tel, err = parseServeFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := (runner.Telemetry{SampleRatio: 1, MaxPerSecond: 1000}); tel != want {
		t.Errorf("serve without the OpenTelemetry flags: %+v, want %+v", tel, want)
	}
	if want := runner.ServerConfig(scenarios.Default()); cfg.PollInterval != want.PollInterval || cfg.Seed != want.Seed ||
		cfg.Backpressure != want.Backpressure || cfg.DefaultDuration != time.Second || cfg.Addr != "127.0.0.1:0" {
		t.Errorf("config without a scenario = %+v", cfg)
	}

	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{file, "--set", "server.backpressure.when_full=drop", "--set", "server.stalls.probability=2"}, []string{
			`--set: server.stalls.probability: must be in [0, 1], got 2`,
			`--set: server.backpressure.when_full: must be one of refuse_rpc, refuse_429, queue, raise_poll_interval, got "drop"`}},
		{[]string{"--set", "server.backpressure.worker=2"}, []string{`unknown field "worker"; did you mean server.backpressure.workers?`}},
		{[]string{"--set", "server.latency.tasks/gett=1ms"}, []string{`server.latency.tasks/gett: unknown method; did you mean "tasks/get"?`}},
		{[]string{"--set", "nonsense"}, []string{`--set "nonsense": want path=value`}},
		{[]string{"a", "b"}, []string{"serve takes one scenario NAME or FILE, got 2 arguments"}},
		{[]string{"no-such-scenario"}, []string{`unknown scenario "no-such-scenario"`}},
		{[]string{"--ttl", "2h"}, []string{"--ttl: server.ttl: must be <= max_ttl (1h0m0s), got 2h0m0s"}},
		{[]string{"--set", "server.known_bad=[blocking_get, blocking_put]"}, []string{`--set: server.known_bad[1]: must be one of blocking_get, `}},
		{[]string{"--otlp-endpoint", "127.0.0.1:4318"}, []string{`--otlp-endpoint: "127.0.0.1:4318" is not an http(s) URL`}},
		{[]string{"--trace-sample-ratio", "1.5"}, []string{`--trace-sample-ratio 1.5: want a share from 0 to 1`}},
	} {
		_, _, err := parseServeFlags(tc.args, io.Discard)
		var ue *runner.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("parseServeFlags(%q) = %v, want a usage error", tc.args, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("parseServeFlags(%q) = %v\nwant it to say %q", tc.args, err, w)
			}
		}
	}
}

// TestServeScenarioFile: `tasksim serve FILE --set server.backpressure.workers=2` starts and
// prints its URL first; a bad override is exit code 2 naming the field.
func TestServeScenarioFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "srv.yaml")
	if err := os.WriteFile(file, []byte(serverScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	serveAndStop(t, file, "--set", "server.backpressure.workers=2")

	_, errOut, code := tasksim(t, "serve", file, "--set", "server.backpressure.workers=-1")
	if code != 2 || !strings.Contains(errOut, "server.backpressure.workers: must be >= 0") {
		t.Errorf("bad --set: exit %d, stderr %q; want 2 naming the field", code, errOut)
	}
}

// TestServeKnownBad: `tasksim serve --set server.known_bad=[...]` starts, says on stderr
// that the server breaks rules on purpose, and does not claim that tasks/list is off when
// list_without_auth turned it on.
func TestServeKnownBad(t *testing.T) {
	stderr := serveAndStop(t, "--set", "server.known_bad=[list_without_auth, blocking_get]")
	for _, want := range []string{"known-bad modes on (server.known_bad)", "yet tasks/list is on (known-bad list_without_auth"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if stderr := serveAndStop(t); strings.Contains(stderr, "known-bad") || strings.Contains(stderr, "server faults") {
		t.Errorf("serve without known-bad modes or faults mentions them:\n%s", stderr)
	}
	// A scenario's server faults are served too, and said.
	if stderr := serveAndStop(t, "reconnect-storm"); !strings.Contains(stderr, "server faults on (the scenario's faults.server)") {
		t.Errorf("serve reconnect-storm does not say its server faults are on:\n%s", stderr)
	}
}

// TestServeProtocols: serve answers both eras unless --protocols or server.protocols says
// otherwise; run's embedded server keeps to the legacy era; a value that is no era is a
// usage error naming the field.
func TestServeProtocols(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want mockserver.Protocols
	}{
		{nil, mockserver.ProtocolsBoth},
		{[]string{"--protocols", "modern"}, mockserver.ProtocolsModern},
		{[]string{"--protocols", "legacy"}, mockserver.ProtocolsLegacy},
		{[]string{"--set", "server.protocols=modern"}, mockserver.ProtocolsModern},
		{[]string{"--protocols", "modern", "--set", "server.protocols=both"}, mockserver.ProtocolsBoth},
	} {
		cfg, _, err := parseServeFlags(tc.args, io.Discard)
		if err != nil || cfg.Protocols != tc.want {
			t.Errorf("parseServeFlags(%q): Protocols %q, %v; want %q", tc.args, cfg.Protocols, err, tc.want)
		}
	}
	if got := runner.ServerConfig(scenarios.Default()).Protocols; got != "" {
		t.Errorf("run's embedded server: Protocols %q, want \"\" (legacy)", got)
	}
	_, _, err := parseServeFlags([]string{"--protocols", "newest"}, io.Discard)
	var ue *runner.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), `--protocols: server.protocols: must be one of both, modern, legacy, got "newest"`) {
		t.Errorf("--protocols newest: %v", err)
	}
}
