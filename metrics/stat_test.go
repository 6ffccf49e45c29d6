package metrics_test

import (
	"math"
	"testing"
	"time"

	"github.com/tasksim/tasksim/metrics"
)

// 1..1000 ms, one each: the percentiles are known, and HDR keeps 3 significant digits.
func TestSummaryPercentiles(t *testing.T) {
	r := metrics.NewRecorder(4, t0)
	for i := 1; i <= 1000; i++ {
		r.Shard(i%4).RecordDuration(metrics.TaskE2E, time.Duration(i)*time.Millisecond)
	}
	w := r.Flush(sec(1))
	st := r.Total().Summary(metrics.TaskE2E)
	if st != w.Summary(metrics.TaskE2E) {
		t.Errorf("total %+v differs from its only window %+v", st, w.Summary(metrics.TaskE2E))
	}
	if st.Unit != "ms" || st.Count != 1000 {
		t.Fatalf("unit %q count %d", st.Unit, st.Count)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"min", st.Min, 1}, {"p50", st.P50, 500}, {"p90", st.P90, 900}, {"p99", st.P99, 990},
		{"p999", st.P999, 999}, {"max", st.Max, 1000}, {"mean", st.Mean, 500.5},
	} {
		// 3 significant digits: within 1/1000 of the value (HDR's bucket width is at most
		// 1/1024 of it).
		if math.Abs(c.got-c.want) > c.want/1000 {
			t.Errorf("%s = %v ms, want %v within 0.1%%", c.name, c.got, c.want)
		}
	}
}

func TestSummaryCounts(t *testing.T) {
	r := metrics.NewRecorder(1, t0)
	for i := int64(0); i <= 100; i++ {
		r.Shard(0).Record(metrics.PollsPerTask, i)
	}
	r.Flush(sec(1))
	st := r.Total().Summary(metrics.PollsPerTask)
	want := metrics.Stat{Unit: "count", Count: 101, Min: 0, P50: 50, P90: 90, P99: 99, P999: 100, Max: 100, Mean: 50}
	if !near(st.Mean, want.Mean) {
		t.Errorf("mean %v, want %v", st.Mean, want.Mean)
	}
	st.Mean = want.Mean // the mean is a float sum of 101 terms
	if st != want {
		t.Errorf("polls_per_task %+v, want %+v (counts below 2048 are exact)", st, want)
	}
}

func TestSummaryEmpty(t *testing.T) {
	r := metrics.NewRecorder(1, t0)
	w := r.Flush(sec(1))
	if st := w.Summary(metrics.LatencyTasksGet); st != (metrics.Stat{Unit: "ms"}) {
		t.Errorf("empty window: %+v", st)
	}
	if st := r.Total().Summary(metrics.PollAmplification); st != (metrics.Stat{Unit: "ratio"}) {
		t.Errorf("empty total: %+v", st)
	}
	var s metrics.Snapshot // built by hand, histograms nil
	if st := s.Summary(metrics.PollsPerTask); st != (metrics.Stat{Unit: "count"}) {
		t.Errorf("zero Snapshot: %+v", st)
	}
	if s.FleetPollAmplification() != 0 || s.StatusReadsPerTask() != 0 {
		t.Error("ratios of nothing are not 0")
	}
}
