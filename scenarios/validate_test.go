package scenarios

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestValidateRules checks each rule once: the source is minimal (valid) plus the lines given,
// and want is the complete list of problems, positions included.
func TestValidateRules(t *testing.T) {
	const open = "name: t\nduration: 40s\nworkload:\n  model: open\n" // lines 1-4
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"minimal is valid", minimal, nil},
		{"name required", "duration: 10s\nworkload: {clients: 5}\n", []string{"t.yaml: name: required"}},
		{"name pattern", "name: Bad_Name\nduration: 10s\nworkload: {clients: 5}\n", []string{
			`t.yaml:1:1: name: must match [a-z0-9-]+, got "Bad_Name"`}},
		{"duration required", "name: t\nworkload: {clients: 5}\n", []string{"t.yaml: duration: must be > 0, got 0s"}},
		{"duration positive", "name: t\nduration: -1s\nworkload: {clients: 5}\n", []string{"t.yaml:2:1: duration: must be > 0, got -1s"}},
		{"grace", minimal + "grace: -1s\n", []string{"t.yaml:4:1: grace: must be >= 0, got -1s"}},
		{"grace zero is fine", minimal + "grace: 0s\n", nil},
		{"target https", minimal + "target: https://mcp.example.com/mcp\n", nil},
		{"target scheme", minimal + "target: ftp://example.com\n", []string{
			`t.yaml:4:1: target: must be "" (the embedded server) or an http(s) URL, got "ftp://example.com"`}},
		{"target host", minimal + "target: http://\n", []string{
			`t.yaml:4:1: target: must be "" (the embedded server) or an http(s) URL, got "http://"`}},
		{"header name", minimal + "headers:\n  Bad Header: x\n", []string{
			"t.yaml:5:3: headers.Bad Header: not a valid HTTP header name"}},
		{"header reserved", minimal + "headers:\n  mcp-session-id: x\n", []string{
			"t.yaml:5:3: headers.mcp-session-id: is set by the client itself and cannot be overridden"}},
		{"header repeated", minimal + "headers:\n  X-Api-Key: a\n  x-api-key: b\n", []string{
			"t.yaml:6:3: headers.x-api-key: repeats header X-Api-Key (header names ignore case)"}},
		{"header value", minimal + "headers:\n  X-A: \"a\\nb\"\n", []string{
			"t.yaml:5:3: headers.X-A: value must not contain CR, LF or NUL"}},
		{"tool", minimal + "tool: \"\"\n", []string{"t.yaml:4:1: tool: required"}},
		{"task_ttl", minimal + "task_ttl: -5s\n", []string{"t.yaml:4:1: task_ttl: must be >= 0, got -5s"}},
		{"fallback", minimal + "fallback: maybe\n", []string{`t.yaml:4:1: fallback: must be one of refuse, sync, got "maybe"`}},
		{"model", "name: t\nduration: 1s\nworkload: {model: half-open}\n", []string{
			`t.yaml:3:12: workload.model: must be one of closed, open, got "half-open"`}},
		{"clients with an unknown model", "name: t\nduration: 1s\nworkload: {model: half-open, clients: -1}\n", []string{
			`t.yaml:3:12: workload.model: must be one of closed, open, got "half-open"`,
			`t.yaml:3:30: workload.clients: must be >= 0 and <= 1000000, got -1`}},
		{"closed clients required", "name: t\nduration: 1s\n", []string{"t.yaml: workload.clients: must be > 0 and <= 1000000, got 0"}},
		{"closed clients bound", "name: t\nduration: 1s\nworkload:\n  clients: 1000001\n", []string{
			"t.yaml:4:3: workload.clients: must be > 0 and <= 1000000, got 1000001"}},
		{"closed think_time", "name: t\nduration: 1s\nworkload:\n  clients: 1\n  think_time: -1s\n", []string{
			"t.yaml:5:3: workload.think_time: must be >= 0, got -1s"}},
		{"closed rate and stages", "name: t\nduration: 1s\nworkload:\n  clients: 1\n  rate: 5/s\n  stages: [{duration: 1s, target: 1/s}]\n", []string{
			"t.yaml:5:3: workload.rate: applies to the open model only (workload.model is closed)",
			"t.yaml:6:3: workload.stages: apply to the open model only (workload.model is closed)"}},
		{"open rate", open + "  rate: 50/s\n", nil},
		{"open needs a rate", open, []string{"t.yaml:3:1: workload.rate: must be > 0 for the open model without stages, got 0/s"}},
		{"open rate bound", open + "  rate: 2000000/s\n", []string{
			"t.yaml:5:3: workload.rate: must be in [0/s, 1000000/s], got 2000000/s"}},
		{"open clients", open + "  rate: 1/s\n  clients: -1\n", []string{
			"t.yaml:6:3: workload.clients: must be >= 0 (0 = max_in_flight) and <= 1000000, got -1"}},
		{"open think_time", open + "  rate: 1/s\n  think_time: 1s\n", []string{
			"t.yaml:6:3: workload.think_time: applies to the closed model only (workload.model is open)"}},
		{"open max_in_flight", open + "  rate: 1/s\n  max_in_flight: 0\n", []string{
			"t.yaml:6:3: workload.max_in_flight: must be > 0 and <= 1000000, got 0"}},
		{"open stages from a start rate", open + "  rate: 10/s\n  stages:\n    - {duration: 0s, target: 20/s}\n    - {duration: 40s, target: 0/s}\n", nil},
		{"open stage duration", open + "  stages:\n    - {duration: -1s, target: 5/s}\n", []string{
			"t.yaml:6:8: workload.stages[0].duration: must be >= 0, got -1s"}},
		{"open stage target", open + "  stages:\n    - {duration: 1s, target: 5000000/s}\n", []string{
			"t.yaml:6:22: workload.stages[0].target: must be in [0/s, 1000000/s], got 5000000/s"}},
		{"open stages too long", open + "  stages:\n    - {duration: 30s, target: 5/s}\n    - {duration: 20s, target: 5/s}\n", []string{
			"t.yaml:5:3: workload.stages: last 50s in total, longer than duration (40s)"}},
		{"open stages all zero", open + "  stages:\n    - {duration: 30s, target: 0/s}\n", []string{
			"t.yaml:5:3: workload.stages: every target is 0/s: no task would ever start"}},
		{"poll policy", minimal + "client:\n  poll:\n    policy: eager\n", []string{
			`t.yaml:6:5: client.poll.policy: must be one of server, fixed, backoff, got "eager"`}},
		{"poll interval", minimal + "client:\n  poll:\n    interval: 0s\n", []string{
			"t.yaml:6:5: client.poll.interval: must be > 0, got 0s"}},
		{"backoff", minimal + "client:\n  poll:\n    policy: backoff\n    interval: 2s\n    multiplier: 0.5\n    max_interval: 1s\n", []string{
			"t.yaml:8:5: client.poll.multiplier: must be >= 1, got 0.5",
			"t.yaml:9:5: client.poll.max_interval: must be >= interval (2s), got 1s"}},
		{"backoff rules ignored for fixed", minimal + "client:\n  poll:\n    policy: fixed\n    multiplier: 0.5\n", nil},
		{"jitter", minimal + "client:\n  poll:\n    jitter: 1\n", []string{"t.yaml:6:5: client.poll.jitter: must be in [0, 1), got 1"}},
		{"jitter negative", minimal + "client:\n  poll:\n    jitter: -0.1\n", []string{"t.yaml:6:5: client.poll.jitter: must be in [0, 1), got -0.1"}},
		{"poll clamps", minimal + "client:\n  poll:\n    min: 2s\n    max: 1s\n", []string{
			"t.yaml:6:5: client.poll.min: must be <= max (1s), got 2s"}},
		{"poll clamps negative", minimal + "client:\n  poll:\n    min: -1s\n    max: -1s\n", []string{
			"t.yaml:6:5: client.poll.min: must be >= 0, got -1s",
			"t.yaml:7:5: client.poll.max: must be >= 0, got -1s"}},
		{"poll deadline", minimal + "client:\n  poll:\n    deadline: 0s\n", []string{"t.yaml:6:5: client.poll.deadline: must be > 0, got 0s"}},
		{"result", minimal + "client:\n  result: wait\n", []string{`t.yaml:5:3: client.result: must be one of poll, block, got "wait"`}},
		{"cancel probability", minimal + "client:\n  cancel: {probability: 1.5}\n", []string{
			"t.yaml:5:12: client.cancel.probability: must be in [0, 1], got 1.5"}},
		{"input ratios", minimal + "client:\n  input: {accept: 0.5, decline: 0.6, cancel: -0.1}\n", []string{
			"t.yaml:5:38: client.input.cancel: must be in [0, 1], got -0.1"}},
		{"input sum", minimal + "client:\n  input: {accept: 0.5}\n", []string{
			"t.yaml:5:3: client.input: accept + decline + cancel must be 1, got 0.5"}},
		{"input split", minimal + "client:\n  input: {accept: 0.7, decline: 0.2, cancel: 0.1}\n", nil},
		{"request_timeout", minimal + "client:\n  request_timeout: 0s\n", []string{"t.yaml:5:3: client.request_timeout: must be > 0, got 0s"}},
		{"max_conns", minimal + "client:\n  max_conns: -1\n", []string{"t.yaml:5:3: client.max_conns: must be >= 0, got -1"}},
		{"source_addresses", minimal + "client:\n  source_addresses: [127.0.0.1-127.0.0.8, 127.0.1.0/30, 127.0.2.1]\n", nil},
		{"source_addresses parse", minimal + "client:\n  source_addresses: [127.0.0.x, 127.0.0.9-127.0.0.1, \"\", 127.0.0.0/8]\n", []string{
			`t.yaml:5:22: client.source_addresses[0]: "127.0.0.x": not an IP address`,
			`t.yaml:5:33: client.source_addresses[1]: "127.0.0.9-127.0.0.1": the range ends before it starts`,
			`t.yaml:5:54: client.source_addresses[2]: "": empty: want an address, a range A-B or a prefix A/N`,
			`t.yaml:5:58: client.source_addresses[3]: "127.0.0.0/8": more than 4096 source addresses in all`}},
		{"source_addresses embedded", minimal + "client:\n  source_addresses: [10.0.0.1, \"::1\"]\n", []string{
			"t.yaml:5:22: client.source_addresses[0]: 10.0.0.1 is not a loopback address, and the target 127.0.0.1 is on loopback: use addresses of 127.0.0.0/8",
			"t.yaml:5:32: client.source_addresses[1]: ::1 is IPv6, and the target 127.0.0.1 is IPv4"}},
		{"source_addresses remote", minimal + "target: http://10.0.0.9:8080/mcp\nclient:\n  source_addresses: [127.0.0.2, 10.0.0.1]\n", []string{
			"t.yaml:6:22: client.source_addresses[0]: 127.0.0.2 is a loopback address, and the target 10.0.0.9 is not on loopback: it cannot be reached from there"}},
		{"server durations", minimal + "server:\n  poll_interval: -1s\n  ttl: 0s\n  max_ttl: 0s\n  reaper_interval: 0s\n  list_page_size: 0\n", []string{
			"t.yaml:5:3: server.poll_interval: must be >= 0, got -1s",
			"t.yaml:6:3: server.ttl: must be > 0, got 0s",
			"t.yaml:7:3: server.max_ttl: must be > 0, got 0s",
			"t.yaml:8:3: server.reaper_interval: must be > 0, got 0s",
			"t.yaml:9:3: server.list_page_size: must be > 0, got 0"}},
		{"server poll_interval zero advertises none", minimal + "server: {poll_interval: 0s}\n", nil},
		{"server ttl cap", minimal + "server:\n  ttl: 2h\n", []string{"t.yaml:5:3: server.ttl: must be <= max_ttl (1h0m0s), got 2h0m0s"}},
		{"tokens", minimal + "server:\n  tokens:\n    a: tok\n    b: tok\n    c: \"\"\n    d: two words\n    \"\": x\n", []string{
			"t.yaml:10:5: server.tokens.: tenant name must not be empty",
			"t.yaml:7:5: server.tokens.b: token is the same as tenant a's: tokens must be distinct",
			"t.yaml:8:5: server.tokens.c: token must not be empty",
			"t.yaml:9:5: server.tokens.d: token must be visible ASCII without spaces (it goes in an Authorization header)"}},
		{"thresholds", minimal + "thresholds:\n  - \"a < 1\"\n  - \" \"\n", []string{"t.yaml:6:5: thresholds[1]: must not be empty"}},
		{"error budget over 100%", minimal + "error_budget: 120%\n", []string{"t.yaml:4:1: error_budget: must be in [0%, 100%], got 120%"}},
		{"error budget negative", minimal + "error_budget: -1%\n", []string{"t.yaml:4:1: error_budget: must be in [0%, 100%], got -1%"}},
		{"error budget zero", minimal + "error_budget: 0%\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkValidate(t, tc.src, tc.want) })
	}
}

// TestValidateAllAtOnce: several problems in one file are all reported, each at its place.
func TestValidateAllAtOnce(t *testing.T) {
	src := `name: baseline
duration: 0s
workload:
  model: closed
  clients: 0
client:
  poll:
    policy: fixd
    jitter: 2
  cancel:
    probability: 0.1
    delay: {dist: uniform, min: 3s, max: 2s}
server:
  list_page_size: -1
`
	s, err := Parse("baseline.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"baseline.yaml:2:1: duration: must be > 0, got 0s",
		"baseline.yaml:5:3: workload.clients: must be > 0 and <= 1000000, got 0",
		`baseline.yaml:8:5: client.poll.policy: must be one of server, fixed, backoff, got "fixd"`,
		"baseline.yaml:9:5: client.poll.jitter: must be in [0, 1), got 2",
		"baseline.yaml:12:28: client.cancel.delay.min: must be <= max (2s), got 3s",
		"baseline.yaml:14:3: server.list_page_size: must be > 0, got -1",
	}
	if got := s.Validate(); got == nil || got.Error() != strings.Join(want, "\n") {
		t.Errorf("Validate():\n%v\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

// TestValidateWithoutFile: a scenario built in code has no positions; overrides say --set.
func TestValidateWithoutFile(t *testing.T) {
	s := Default()
	s.Name, s.Duration = "coded", Duration(time.Second)
	s.Args = map[string]any{"bad": make(chan int)}
	if err := s.Set("workload.clients", "0"); err != nil {
		t.Fatal(err)
	}
	checkErr := func(want ...string) {
		t.Helper()
		if got := s.Validate(); got == nil || got.Error() != strings.Join(want, "\n") {
			t.Errorf("Validate():\n%v\nwant:\n%s", got, strings.Join(want, "\n"))
		}
	}
	checkErr("args: cannot be sent as JSON: json: unsupported type: chan int",
		"--set: workload.clients: must be > 0 and <= 1000000, got 0")

	// A field overridden after Parse loses its file position.
	f := mustParse(t, minimal)
	if err := f.Set("workload.clients", "-3"); err != nil {
		t.Fatal(err)
	}
	if err := f.Validate(); err == nil || err.Error() != "--set: workload.clients: must be > 0 and <= 1000000, got -3" {
		t.Errorf("Validate() = %v", err)
	}
	if got := f.Where("workload.model"); got != "t.yaml:3:1" {
		t.Errorf(`Where("workload.model") = %q, want the workload key "t.yaml:3:1"`, got)
	}
}

func TestRateAt(t *testing.T) {
	w := Workload{
		Model: ModelOpen,
		Rate:  Rate{10, time.Second},
		Stages: []Stage{
			{Duration(10 * time.Second), Rate{110, time.Second}}, // 10 -> 110 over 10s
			{0, Rate{50, time.Second}},                           // step to 50
			{Duration(20 * time.Second), Rate{50, time.Second}},  // hold
		},
	}
	tests := []struct {
		at   time.Duration
		want float64
	}{
		{-time.Second, 10}, {0, 10}, {5 * time.Second, 60}, {9 * time.Second, 100},
		{10 * time.Second, 50}, {25 * time.Second, 50}, {30 * time.Second, 50}, {time.Hour, 50},
	}
	for _, tc := range tests {
		if got := w.RateAt(tc.at); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("RateAt(%v) = %v, want %v", tc.at, got, tc.want)
		}
	}
	if got := w.StagesDuration(); got != 30*time.Second {
		t.Errorf("StagesDuration() = %v, want 30s", got)
	}
	if got := (Workload{Rate: Rate{3000, time.Minute}}).RateAt(time.Minute); got != 50 {
		t.Errorf("constant RateAt = %v, want 50", got)
	}
}

func TestPoolSize(t *testing.T) {
	tests := []struct {
		w    Workload
		want int
	}{
		{Workload{Model: ModelClosed, Clients: 7, MaxInFlight: 1000}, 7},
		{Workload{Model: ModelOpen, Clients: 0, MaxInFlight: 1000}, 1000},
		{Workload{Model: ModelOpen, Clients: 50, MaxInFlight: 1000}, 50},
	}
	for _, tc := range tests {
		if got := tc.w.PoolSize(); got != tc.want {
			t.Errorf("%+v.PoolSize() = %d, want %d", tc.w, got, tc.want)
		}
	}
}

// checkValidate asserts that src validates with exactly the problems want, positions included.
func checkValidate(t *testing.T, src string, want []string) {
	t.Helper()
	var got []string
	for _, e := range problems(t, mustParse(t, src).Validate()) {
		got = append(got, e.Error())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Validate():\n  %s\nwant:\n  %s\nsource:\n%s",
			strings.Join(got, "\n  "), strings.Join(want, "\n  "), src)
	}
}
