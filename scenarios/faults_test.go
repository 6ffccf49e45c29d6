package scenarios

import (
	"testing"
	"time"
)

// TestValidateFaults checks the rules of the faults and recovery sections.
func TestValidateFaults(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"every fault point", minimal + `faults:
  client:
    create_reply: {probability: 0.1}
    after_create: {every: 10s, window: 1s}
    before_result: {probability: 1}
    result_stream: {probability: 0.5}
    input_before_answer: {probability: 0.5}
    input_after_answer: {probability: 0.5}
    cancel_reply: {probability: 0.5}
    crash: {probability: 0.5}
  server:
    http_5xx: {probability: 0.1}
    status: 502
    reset: {probability: 0.1}
    session_expiry: {probability: 0.1}
    restart: {at: [5s], every: 10s}
    restart_loses_tasks: true
    duplicate: {probability: 0.1}
    early_expiry: {probability: 0.1}
    stuck: {probability: 0.1}
    effect_first: {probability: 0.1}
    non_idempotent: true
  network:
    latency: 20ms
    bandwidth: 100000
    reset: {probability: 0.1}
    reset_after: 10
    black_hole: {probability: 0.1}
    half_open: {probability: 0.1}
    half_open_after: 1s
recovery:
  retry_create: true
`, nil},
		{"probability", minimal + "faults:\n  client:\n    crash: {probability: 1.5}\n", []string{
			"t.yaml:6:13: faults.client.crash.probability: must be in [0, 1], got 1.5"}},
		{"window", minimal + "faults:\n  server:\n    reset: {every: 1s, window: 2s}\n", []string{
			"t.yaml:6:24: faults.server.reset.window: must be > 0 and <= every (1s), got 2s"}},
		{"window without every", minimal + "faults:\n  network:\n    reset: {window: 2s}\n", []string{
			"t.yaml:6:13: faults.network.reset.window: has no effect without every > 0"}},
		{"status", minimal + "faults:\n  server:\n    status: 418\n", []string{
			"t.yaml:6:5: faults.server.status: must be 500, 502, 503 or 504, got 418"}},
		{"restart_loses_tasks alone", minimal + "faults:\n  server:\n    restart_loses_tasks: true\n", []string{
			"t.yaml:6:5: faults.server.restart_loses_tasks: has no effect without restart.at, restart.every or rollback.restart"}},
		{"restart at", minimal + "faults:\n  server:\n    restart: {at: [-1s]}\n", []string{
			"t.yaml:6:20: faults.server.restart.at[0]: must be >= 0, got -1s"}},
		{"bandwidth", minimal + "faults:\n  network:\n    bandwidth: -1\n", []string{
			"t.yaml:6:5: faults.network.bandwidth: must be >= 0 (0 = no cap), got -1"}},
		{"retry without key", minimal + "recovery:\n  retry_create: true\n  idempotency_arg: \"\"\n  reconcile: false\n", []string{
			"t.yaml:5:3: recovery.retry_create: needs an idempotency_arg: a retry without the same idempotency key can start the work twice"}},
		{"budgets", minimal + "recovery:\n  budgets: {create: 0}\n", []string{
			"t.yaml:5:13: recovery.budgets.create: must be in [1, 1000], got 0"}},
		{"backoff", minimal + "recovery:\n  backoff: {initial: 1s, max: 10ms, jitter: 1}\n", []string{
			"t.yaml:5:26: recovery.backoff.max: must be >= initial (1s), got 10ms",
			"t.yaml:5:37: recovery.backoff.jitter: must be in [0, 1), got 1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkValidate(t, tc.src, tc.want) })
	}
}

// TestTrigger: windows fire whatever the probability; the zero Trigger never does.
func TestTrigger(t *testing.T) {
	tr := Trigger{Every: Duration(10 * time.Second), Window: Duration(time.Second)}
	for _, c := range []struct {
		at   time.Duration
		want bool
	}{{0, true}, {999 * time.Millisecond, true}, {time.Second, false}, {10 * time.Second, true}, {-time.Second, false}} {
		if got := tr.InWindow(Duration(c.at)); got != c.want {
			t.Errorf("InWindow(%v) = %v, want %v", c.at, got, c.want)
		}
	}
	if (Trigger{}).On() || (Trigger{}).InWindow(0) {
		t.Error("the zero Trigger fires")
	}
	if !(Faults{Network: NetworkFaults{Latency: Dist{Kind: DistFixed, Value: 1}}}).On() {
		t.Error("network latency alone does not turn the proxy on")
	}
}
