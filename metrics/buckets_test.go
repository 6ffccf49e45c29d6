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
