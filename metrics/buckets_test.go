package metrics_test

import (
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

// TestLiveBuckets: a window carries its replies' durations by method and outcome, and every
// histogram, in fixed buckets whose bounds are inclusive upper bounds in the reported unit;
// the next window starts empty.
func TestLiveBuckets(t *testing.T) {
	rec := metrics.NewRecorder(2, time.Unix(0, 0))
	sh := rec.Shard(0)
	sh.Reply(mcp.OpTasksGet, metrics.OutcomeOK, 0, 0, 10*time.Millisecond)  // <= 0.01 s: bucket 0
	sh.Reply(mcp.OpTasksGet, metrics.OutcomeOK, 0, 0, 15*time.Millisecond)  // <= 0.02 s: bucket 1
	sh.Reply(mcp.OpTasksGet, metrics.OutcomeRPCError, -32602, 0, time.Hour) // beyond 300 s: the last
	rec.Shard(1).Record(metrics.PollsPerTask, 3)                            // <= 3: bucket 2
	rec.Shard(1).RecordDuration(metrics.DetectionLag, 700*time.Millisecond) // <= 1 s: bucket 7

	w := rec.Flush(time.Unix(1, 0))
	ok := w.Live.Durations[mcp.OpTasksGet][metrics.OutcomeOK]
	if ok.Counts[0] != 1 || ok.Counts[1] != 1 || ok.Total() != 2 || ok.Sum != 25_000 {
		t.Errorf("tasks/get ok: %+v, want one in each of the first two buckets, sum 25000 us", ok)
	}
	bad := w.Live.Durations[mcp.OpTasksGet][metrics.OutcomeRPCError]
	if bad.Counts[len(metrics.DurationBounds)] != 1 || bad.Total() != 1 {
		t.Errorf("tasks/get rpc_error: %+v, want one beyond the last bound", bad)
	}
	if got := w.Live.Hists[metrics.LatencyTasksGet].Total(); got != 3 {
		t.Errorf("latency_tasks_get: %d values in buckets, want 3", got)
	}
	if b := w.Live.Hists[metrics.PollsPerTask]; b.Counts[2] != 1 || b.Sum != 3 {
		t.Errorf("polls_per_task: %+v, want one in the bucket of bound 3", b)
	}
	if b := w.Live.Hists[metrics.DetectionLag]; b.Counts[7] != 1 {
		t.Errorf("detection_lag: %+v, want one in the bucket of bound 1 s (%v)", b, metrics.DetectionLag.Bounds())
	}
	if next := rec.Flush(time.Unix(2, 0)); next.Live != (metrics.Live{}) {
		t.Error("the next window's live buckets are not empty")
	}
}

// TestStatusReplyLiveOnly: a request answered by an HTTP status alone is counted, with its
// status, and its duration goes into the live durations under its outcome, not into the
// latency histogram, which holds JSON-RPC replies alone.
func TestStatusReplyLiveOnly(t *testing.T) {
	rec := metrics.NewRecorder(1, time.Unix(0, 0))
	sh := rec.Shard(0)
	sh.StatusReply(mcp.OpTasksGet, metrics.OutcomeHTTPError, 0, 503, 15*time.Millisecond)
	sh.StatusReply(mcp.OpTasksGet, metrics.OutcomeBackpressure, 0, 429, 10*time.Millisecond)
	w := rec.Flush(time.Unix(1, 0))
	if n := w.Requests[mcp.OpTasksGet][metrics.OutcomeHTTPError]; n != 1 {
		t.Errorf("tasks/get http_error: %d requests, want 1", n)
	}
	if n := w.HTTPStatuses[mcp.OpTasksGet][metrics.HTTPStatusSlot(503)]; n != 1 {
		t.Errorf("HTTP 503 counted %d times, want 1", n)
	}
	if b := w.Live.Durations[mcp.OpTasksGet][metrics.OutcomeHTTPError]; b.Total() != 1 || b.Counts[1] != 1 || b.Sum != 15_000 {
		t.Errorf("tasks/get http_error durations: %+v, want one of 15 ms", b)
	}
	if b := w.Live.Durations[mcp.OpTasksGet][metrics.OutcomeBackpressure]; b.Total() != 1 {
		t.Errorf("tasks/get backpressure durations: %+v, want one", b)
	}
	if got := w.Live.Hists[metrics.LatencyTasksGet].Total(); got != 0 {
		t.Errorf("latency_tasks_get holds %d values; a status without a JSON-RPC reply has none", got)
	}
	if h := w.Hists[metrics.LatencyTasksGet]; h != nil && h.TotalCount() != 0 {
		t.Errorf("the HDR latency_tasks_get holds %d values, want 0", h.TotalCount())
	}
}
