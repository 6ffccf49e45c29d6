package runner

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/scenarios"
)

// overloaded is the overloaded server: a 250 ms advice answered in seconds.
var overloaded = []string{
	"duration=20s", "grace=10s", "workload.clients=20",
	"server.poll_interval=250ms", "client.poll.interval=250ms",
	"server.latency.tasks/get={dist: lognormal, p50: 800ms, p99: 4s}",
}

// slo returns the summary's default SLO over metric (its expression's left side), or nil.
func sloOn(sum *results.Summary, metric string) *results.ThresholdResult {
	for i, th := range sum.Thresholds {
		if th.Source == results.SourceSLO && strings.HasPrefix(th.Expr, metric+" ") {
			return &sum.Thresholds[i]
		}
	}
	return nil
}

// TestDefaultSLOsFailAnOverloadedServer: without a threshold of its own, a run against a
// server that answers tasks/get in seconds on a 250 ms advice fails, on the two latency
// SLOs computed from the advertised interval, while the error budget passes.
func TestDefaultSLOsFailAnOverloadedServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sum, _ := runVirtual(t, "baseline", results.VerdictFail, overloaded...)
		for metric, want := range map[string]string{
			"detection_lag.p99":     "detection_lag.p99 <= 1000ms",
			"latency_tasks_get.p99": "latency_tasks_get.p99 <= 500ms",
		} {
			th := sloOn(sum, metric)
			if th == nil {
				t.Fatalf("no default SLO on %s in %+v", metric, sum.Thresholds)
			}
			if th.Expr != want || th.Pass || !strings.Contains(th.Note, "P = 250ms, the pollInterval the target advertised") {
				t.Errorf("SLO %s: %+v, want %q failing, its note naming the advertised 250ms", metric, *th, want)
			}
			if th.WindowsEvaluated == 0 || th.WindowsFailed == 0 {
				t.Errorf("SLO %s judged no failing window: %+v", metric, *th)
			}
		}
		for _, th := range sum.Thresholds {
			if th.Source == results.SourceErrorBudget && !th.Pass {
				t.Errorf("the error budget failed (%+v): the SLOs must be what fails this run", th)
			}
		}
	})
}

// TestDefaultSLOsPassAHealthyRun: the same load on a server that answers at once passes
// every default SLO, each of the four judged.
func TestDefaultSLOsPassAHealthyRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sum, _ := runVirtual(t, "baseline", results.VerdictPass, overloaded[:5]...)
		n := 0
		for _, th := range sum.Thresholds {
			if th.Source == results.SourceSLO {
				n++
				if !th.Pass {
					t.Errorf("default SLO %s failed on a healthy server: %+v", th.Expr, th)
				}
			}
		}
		if n != 4 {
			t.Errorf("%d default SLOs judged, want 4: %+v", n, sum.Thresholds)
		}
	})
}

// TestSLOOverridesAndOff: slo.tasks_get sets its own limit, slo.detection_lag: off drops
// the SLO, and a scenario threshold on a metric supersedes its default.
func TestSLOOverridesAndOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sets := append(overloaded[:len(overloaded):len(overloaded)], "slo.tasks_get=10s", "slo.detection_lag=off")
		sum, _ := runVirtual(t, "baseline", results.VerdictPass, sets...)
		if th := sloOn(sum, "latency_tasks_get.p99"); th == nil || th.Expr != "latency_tasks_get.p99 <= 10s" || !th.Pass {
			t.Errorf("slo.tasks_get=10s: %+v, want latency_tasks_get.p99 <= 10s, passing", th)
		}
		if th := sloOn(sum, "detection_lag.p99"); th != nil {
			t.Errorf("slo.detection_lag=off still judged %+v", *th)
		}
	})
	sc, err := scenarios.Load("baseline")
	if err != nil {
		t.Fatal(err)
	}
	sc.Thresholds = []scenarios.Threshold{{Expr: "detection_lag.p99 < 20s"}}
	for _, s := range defaultSLOs(sc, 250*time.Millisecond) {
		if s.Key == scenarios.SLODetectionLag && (s.Th.Expr != "" || !strings.Contains(s.Skip, "superseded")) {
			t.Errorf("a scenario threshold on detection_lag.p99 did not supersede the default: %+v", s)
		}
	}
}

// TestSLOIntervalFollowsThePollPolicy: P is the advertised interval when the clients follow
// it, else the clients' own, and backing-off clients are not judged on detection lag.
func TestSLOIntervalFollowsThePollPolicy(t *testing.T) {
	sc := scenarios.Default()
	sc.Client.Poll.Interval = scenarios.Duration(2 * time.Second)
	for _, tc := range []struct {
		policy     scenarios.PollPolicy
		advertised time.Duration
		want       time.Duration
		lagJudged  bool
	}{
		{scenarios.PollServer, 250 * time.Millisecond, 250 * time.Millisecond, true},
		{scenarios.PollServer, 0, 2 * time.Second, true},
		{scenarios.PollFixed, 250 * time.Millisecond, 2 * time.Second, true},
		{scenarios.PollBackoff, 250 * time.Millisecond, 2 * time.Second, false},
	} {
		sc.Client.Poll.Policy = tc.policy
		p := SLOInterval(sc, tc.advertised, true)
		if p.P != tc.want || (p.LagSkip == "") != tc.lagJudged {
			t.Errorf("%s, advertised %v: %+v, want P %v, lag judged %v", tc.policy, tc.advertised, p, tc.want, tc.lagJudged)
		}
	}
}
