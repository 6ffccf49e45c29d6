package metrics_test

import (
	"strconv"
	"testing"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

// The names are a contract: summary.json, CSV, HTML and the interval log's tags use them.
func TestHistNames(t *testing.T) {
	want := [metrics.NumHists]struct{ name, unit string }{
		metrics.LatencyInitialize:  {"latency_initialize", "ms"},
		metrics.LatencyToolsCall:   {"latency_tools_call", "ms"},
		metrics.LatencyTasksGet:    {"latency_tasks_get", "ms"},
		metrics.LatencyTasksResult: {"latency_tasks_result", "ms"},
		metrics.LatencyTasksList:   {"latency_tasks_list", "ms"},
		metrics.LatencyTasksCancel: {"latency_tasks_cancel", "ms"},
		metrics.TaskE2E:            {"task_e2e", "ms"},
		metrics.PollsPerTask:       {"polls_per_task", "count"},
		metrics.PollAmplification:  {"poll_amplification", "ratio"},
		metrics.DetectionLag:       {"detection_lag", "ms"},
		metrics.ResultLag:          {"result_lag", "ms"},
		metrics.ScheduleLag:        {"schedule_lag", "ms"},
		metrics.CleanupLag:         {"cleanup_lag", "ms"},
		metrics.CancelLatency:      {"cancel_latency", "ms"},
		metrics.DownstreamWait:     {"downstream_wait", "ms"},
		metrics.LatencyTasksUpdate: {"latency_tasks_update", "ms"},
	}
	for h := range metrics.NumHists {
		if got := h.Name(); got != want[h].name {
			t.Errorf("Hist(%d).Name() = %q, want %q", h, got, want[h].name)
		}
		if got := h.Unit(); got != want[h].unit {
			t.Errorf("%s.Unit() = %q, want %q", h, got, want[h].unit)
		}
		wantScale := 0.001
		if h == metrics.PollsPerTask {
			wantScale = 1
		}
		if got := h.Scale(); got != wantScale {
			t.Errorf("%s.Scale() = %v, want %v", h, got, wantScale)
		}
		if p, ok := metrics.ParseHist(h.Name()); !ok || p != h {
			t.Errorf("ParseHist(%q) = %v, %v", h.Name(), p, ok)
		}
		hh := metrics.NewHistogram(h)
		if hh.Tag() != h.Name() || hh.HighestTrackableValue() != h.Highest() || hh.SignificantFigures() != metrics.SigFigs {
			t.Errorf("NewHistogram(%s): tag %q, highest %d, sigfigs %d", h, hh.Tag(), hh.HighestTrackableValue(), hh.SignificantFigures())
		}
	}
	if _, ok := metrics.ParseHist("latency_tasks_gett"); ok {
		t.Error("ParseHist accepted an unknown name")
	}
	if got := metrics.NumHists.Name(); got != "hist(16)" {
		t.Errorf("NumHists.Name() = %q", got)
	}
}

func TestCounterGaugeNames(t *testing.T) {
	counters := [metrics.NumCounters]string{
		"tasks_created", "tasks_completed", "tasks_failed", "tasks_cancelled", "tasks_expired",
		"tasks_unknown", "tasks_dropped", "polls", "invalid_transitions", "backpressure_signals",
		"reconnects", "orphaned_tasks", "downstream_rejections", "amplification_polls",
		"amplification_advised", "faults_injected", "resumed_observations", "reconciled",
		"retried_creates", "cancels_sent", "cancels_acked", "cancels_late", "cancels_broken",
		"results_lost", "creates_not_found", "input_required_seen",
		"elicitations_received", "elicitations_accepted", "elicitations_declined",
		"elicitations_cancelled", "cancelled_unrequested", "cancels_refused", "sync_calls",
		"tasks_lost", "cancels_ignored", "cancels_undone",
	}
	for c := range metrics.NumCounters {
		if got := c.Name(); got != counters[c] {
			t.Errorf("Counter(%d).Name() = %q, want %q", c, got, counters[c])
		}
	}
	for c := range metrics.NumCounters {
		server := c == metrics.OrphanedTasks || c == metrics.DownstreamRejections
		if c.ServerSide() != server {
			t.Errorf("%s.ServerSide() = %v, want %v", c, c.ServerSide(), server)
		}
	}
	gauges := [metrics.NumGauges]string{
		"in_flight", "retained_tasks", "downstream_in_flight", "downstream_queue_depth", "sessions",
	}
	for g := range metrics.NumGauges {
		if got := g.Name(); got != gauges[g] {
			t.Errorf("Gauge(%d).Name() = %q, want %q", g, got, gauges[g])
		}
		if g.ServerSide() != (g != metrics.InFlight) {
			t.Errorf("%s.ServerSide() = %v", g, g.ServerSide())
		}
	}
}

func TestLatencyOfOutcomeNames(t *testing.T) {
	for op := range mcp.NumOps {
		h, ok := metrics.LatencyOf(op)
		switch op {
		case mcp.OpInitialize, mcp.OpToolsCall, mcp.OpTasksGet, mcp.OpTasksResult, mcp.OpTasksList,
			mcp.OpTasksCancel, mcp.OpTasksUpdate:
			if !ok || h.Name() != "latency_"+op.MetricName() {
				t.Errorf("LatencyOf(%s) = %s, %v", op, h, ok)
			}
		default: // tools/list, DELETE, notifications and server-to-client requests
			if ok {
				t.Errorf("LatencyOf(%s) = %s, want none", op, h)
			}
		}
	}
	outcomes := [metrics.NumOutcomes]string{"ok", "rpc_error", "http_error", "transport", "protocol", "stopped",
		"backpressure", "expected", "injected"}
	for o := range metrics.NumOutcomes {
		if got := o.Name(); got != outcomes[o] {
			t.Errorf("Outcome(%d).Name() = %q, want %q", o, got, outcomes[o])
		}
		wantErr := o != metrics.OutcomeOK && o != metrics.OutcomeStopped &&
			o != metrics.OutcomeBackpressure && o != metrics.OutcomeExpected && o != metrics.OutcomeInjected
		if o.IsError() != wantErr {
			t.Errorf("%s.IsError() = %v, want %v", o, o.IsError(), wantErr)
		}
	}
}

func TestCodeSlots(t *testing.T) {
	for _, code := range []int{-32700, -32600, -32601, -32602, -32603, -32042} {
		i := metrics.RPCCodeSlot(code)
		if i < 0 || i >= metrics.NumRPCCodes-1 || metrics.RPCCodeLabel(i) != itoa(code) {
			t.Errorf("RPCCodeSlot(%d) = %d, label %q", code, i, metrics.RPCCodeLabel(i))
		}
	}
	for _, code := range []int{0, 1, -32000, -32099, -32604} {
		if i := metrics.RPCCodeSlot(code); i != metrics.NumRPCCodes-1 || metrics.RPCCodeLabel(i) != "other" {
			t.Errorf("RPCCodeSlot(%d) = %d, want the other slot", code, i)
		}
	}
	seen := map[int]bool{}
	for _, st := range []int{400, 401, 403, 404, 405, 406, 413, 415, 429, 500, 502, 503, 504} {
		i := metrics.HTTPStatusSlot(st)
		if i < 0 || i >= metrics.NumHTTPStatuses-1 || seen[i] || metrics.HTTPStatusLabel(i) != itoa(st) {
			t.Errorf("HTTPStatusSlot(%d) = %d, label %q", st, i, metrics.HTTPStatusLabel(i))
		}
		seen[i] = true
	}
	for _, st := range []int{0, 200, 302, 402, 501, 599} {
		if i := metrics.HTTPStatusSlot(st); i != metrics.NumHTTPStatuses-1 || metrics.HTTPStatusLabel(i) != "other" {
			t.Errorf("HTTPStatusSlot(%d) = %d, want the other slot", st, i)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
