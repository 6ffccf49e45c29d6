package runner

import (
	"testing"
	"testing/synctest"

	"github.com/tasksim/tasksim/results"
)

// TestCompareRunsOfOneConfiguration: runs of one configuration with different seeds, in
// virtual time (no machine noise: only the seeds' sampling noise, from server latencies
// drawn from a lognormal), compare clean at the default budgets. A false alarm here is the
// statistics', never the machine's.
func TestCompareRunsOfOneConfiguration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var dirs []string
		for _, seed := range []string{"1", "2", "3"} {
			_, dir := runVirtual(t, "baseline", results.VerdictPass, "seed="+seed, "duration=8s", "workload.clients=60",
				"args.duration_ms=500", "server.poll_interval=200ms",
				"server.latency.*={dist: lognormal, p50: 2ms, p99: 20ms}")
			dirs = append(dirs, dir)
		}
		for i := 0; i+1 < len(dirs); i++ {
			c, err := results.Compare(dirs[i], dirs[i+1], results.CompareOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if c.Verdict != results.CompareVerdictPass {
				t.Errorf("seeds %d and %d: %s, failures %q, inconclusive %q", i+1, i+2, c.Verdict, c.Failures, c.Inconclusive)
			}
			judged := 0
			for _, m := range c.Metrics {
				if m.Verdict == results.MetricPass && m.Change != nil && m.Change.AbsLow != m.Change.AbsHigh {
					judged++
				}
				if m.Metric == "latency_tasks_get.p95" && (m.Verdict != results.MetricPass || m.Baseline.Value == m.Candidate.Value) {
					t.Errorf("seeds %d and %d: latency_tasks_get.p95 %s, %v and %v: want judged, and the seeds' samples apart", i+1, i+2, m.Verdict, m.Baseline.Value, m.Candidate.Value)
				}
			}
			if judged < 10 {
				t.Errorf("seeds %d and %d: %d metrics judged with an interval, want the latencies among them", i+1, i+2, judged)
			}
		}
	})
}
