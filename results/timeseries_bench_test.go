package results

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

// BenchmarkTimeseriesRow renders the timeseries.csv row of a busy window (8 shards, 2,000
// values each in the histograms the row reads, up to 1 s, and one task_e2e of 30 s), the
// collector's per-second cost beside metrics' BenchmarkFlush: it asks one statistic per
// cell, not a whole Summary.
func BenchmarkTimeseriesRow(b *testing.B) {
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	r := metrics.NewRecorder(8, start)
	rng := rand.New(rand.NewPCG(1, 2))
	hists := []metrics.Hist{metrics.LatencyTasksGet, metrics.LatencyToolsCall, metrics.LatencyTasksResult,
		metrics.TaskE2E, metrics.DetectionLag, metrics.ScheduleLag}
	for i := range 8 {
		s := r.Shard(i)
		for range 2000 {
			for _, h := range hists {
				s.Record(h, 100+rng.Int64N(1_000_000))
			}
			s.Reply(mcp.OpTasksGet, metrics.OutcomeOK, 0, 200, time.Millisecond)
		}
	}
	r.Shard(0).RecordDuration(metrics.TaskE2E, 30*time.Second)
	w := r.Flush(start.Add(time.Second))
	var row []byte
	b.ReportAllocs()
	for b.Loop() {
		row = appendRow(row[:0], start, &w, true)
	}
}
