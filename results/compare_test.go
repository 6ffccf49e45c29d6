package results

import (
	"cmp"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/scenarios"
)

// synthRun is a synthetic run for the comparison tests: 10 one-second windows, each with
// gets tasks/get replies of latency 2 ms + exponential(1 ms) + shiftMS, a share errPct of
// them JSON-RPC errors, and 50 tasks created and completed.
type synthRun struct {
	seed    uint64
	gets    int
	shiftMS float64
	errPct  float64
	clients int
	invalid int64  // invalid transitions: the hard gate fails
	era     string // the era asked for and spoken; "" = 2026-07-28
}

// write writes r as a run directory in dir.
func (r synthRun) write(t *testing.T, dir string) {
	t.Helper()
	start := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(r.seed, 7))
	rec := metrics.NewRecorder(1, start)
	var windows []metrics.Window
	for w := range 10 {
		sh := rec.Shard(0)
		for range r.gets {
			o := metrics.OutcomeOK
			if rng.Float64()*100 < r.errPct {
				o = metrics.OutcomeRPCError
			}
			d := time.Duration((2 + rng.ExpFloat64() + r.shiftMS) * float64(time.Millisecond))
			sh.Reply(mcp.OpTasksGet, o, 0, 200, d)
			sh.RecordDuration(metrics.ScheduleLag, time.Millisecond) // the generator on time
		}
		sh.Add(metrics.TasksCreated, 50)
		sh.Add(metrics.TasksCompleted, 50)
		if w == 0 {
			sh.Add(metrics.InvalidTransitions, r.invalid)
		}
		windows = append(windows, rec.Flush(start.Add(time.Duration(w+1)*time.Second)))
	}
	budget := 5.0
	clients := cmp.Or(r.clients, 50)
	era := r.era
	if era == "" {
		era = "2026-07-28"
	}
	s := Build(RunInfo{Version: "test", Scenario: "synthetic", Seed: r.seed, Protocol: era,
		Target: "http://127.0.0.1:1/mcp", StartedAt: start, Duration: 10 * time.Second, ErrorBudget: &budget, PollInterval: time.Second,
		DuplicateEffects: -1, SecondCreates: -1, EffectsAfterCancel: -1,
		Config: &RunConfig{ScenarioHash: "sha256:synthetic", DurationS: 10, Tool: "work_task", Clients: clients, Protocol: era, Shards: "0/1"},
	}, rec.Total(), windows)
	writeRun(t, dir, s, start, windows, nil, 0)
}

// comparePair writes base and cand and compares them.
func comparePair(t *testing.T, base, cand synthRun, opts CompareOptions) (*Comparison, error) {
	t.Helper()
	dir := t.TempDir()
	b, c := filepath.Join(dir, "base"), filepath.Join(dir, "cand")
	base.write(t, b)
	cand.write(t, c)
	return Compare(b, c, opts)
}

func mustCompare(t *testing.T, base, cand synthRun, opts CompareOptions) *Comparison {
	t.Helper()
	c, err := comparePair(t, base, cand, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func row(t *testing.T, c *Comparison, metric string) MetricChange {
	t.Helper()
	i := slices.IndexFunc(c.Metrics, func(m MetricChange) bool { return m.Metric == metric })
	if i < 0 {
		t.Fatalf("no row %s", metric)
	}
	return c.Metrics[i]
}

// TestCompareIdentical: runs of one configuration with different seeds compare clean.
func TestCompareIdentical(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		c := mustCompare(t, synthRun{seed: seed, gets: 2000}, synthRun{seed: seed + 100, gets: 2000}, CompareOptions{})
		if c.Verdict != CompareVerdictPass || c.ExitCode() != 0 {
			t.Errorf("seed %d: verdict %s, failures %q, inconclusive %q", seed, c.Verdict, c.Failures, c.Inconclusive)
		}
	}
}

// TestCompareLatencyRegression: +30 ms on every tasks/get is a regression of each quantile.
func TestCompareLatencyRegression(t *testing.T) {
	c := mustCompare(t, synthRun{seed: 1, gets: 2000}, synthRun{seed: 2, gets: 2000, shiftMS: 30}, CompareOptions{})
	if c.Verdict != CompareVerdictFail || c.ExitCode() != ExitGateFailed {
		t.Fatalf("verdict %s, want fail", c.Verdict)
	}
	for _, m := range []string{"latency_tasks_get.p50", "latency_tasks_get.p95", "latency_tasks_get.p99"} {
		r := row(t, c, m)
		if r.Verdict != MetricRegression {
			t.Errorf("%s: %s, want regression", m, r.Verdict)
		}
		if ch := r.Change; ch.AbsLow > 30 || ch.AbsHigh < 30 {
			t.Errorf("%s: change interval %.3f..%.3f does not hold +30ms", m, ch.AbsLow, ch.AbsHigh)
		}
	}
	if !strings.HasPrefix(c.Failures[0], "latency_tasks_get.p50: ") {
		t.Errorf("failures %q: want latency_tasks_get.p50 named first", c.Failures)
	}
}

// TestCompareErrorRegression: 1% of requests failing is beyond the +0.5 point budget.
func TestCompareErrorRegression(t *testing.T) {
	c := mustCompare(t, synthRun{seed: 1, gets: 2000}, synthRun{seed: 2, gets: 2000, errPct: 1}, CompareOptions{})
	if r := row(t, c, "requests.errors_rate"); r.Verdict != MetricRegression {
		t.Fatalf("requests.errors_rate: %s (%s), want regression", r.Verdict, r.Note)
	}
	if c.Verdict != CompareVerdictFail {
		t.Errorf("verdict %s, want fail", c.Verdict)
	}
}

// TestCompareBudgets: a flag's budget replaces the default and says so; off shows the
// metric unjudged; a tighter budget catches a smaller change.
func TestCompareBudgets(t *testing.T) {
	c := mustCompare(t, synthRun{seed: 1, gets: 2000}, synthRun{seed: 2, gets: 2000, shiftMS: 30},
		CompareOptions{Budgets: []string{"latency_tasks_get.p50 off", "latency_tasks_get.p99 +2000%"}})
	if r := row(t, c, "latency_tasks_get.p50"); r.Verdict != MetricShown || r.Source != BudgetFlag || r.Budget != "off" {
		t.Errorf("p50: %s from %s (%s), want shown from flag (off)", r.Verdict, r.Source, r.Budget)
	}
	if r := row(t, c, "latency_tasks_get.p99"); r.Verdict != MetricPass {
		t.Errorf("p99 under a +2000%% budget: %s, want pass", r.Verdict)
	}
	if r := row(t, c, "latency_tasks_get.p95"); r.Verdict != MetricRegression || r.Source != BudgetDefault {
		t.Errorf("p95: %s from %s, want regression from default", r.Verdict, r.Source)
	}
	c = mustCompare(t, synthRun{seed: 1, gets: 2000}, synthRun{seed: 2, gets: 2000, shiftMS: 1},
		CompareOptions{Budgets: []string{"latency_tasks_get.p50 +10%"}})
	if r := row(t, c, "latency_tasks_get.p50"); r.Verdict != MetricRegression {
		t.Errorf("+1ms on a 2.7ms p50 with budget +10%%: %s (%s), want regression", r.Verdict, r.Note)
	}
	if r := row(t, c, "latency_tasks_get.p95"); r.Verdict != MetricPass {
		t.Errorf("+1ms on p95 under the default +15%% +10ms: %s, want pass", r.Verdict)
	}
}

// TestCompareRareEvents: an invalid transition the baseline did not have is a regression
// at the default zero budget, and fails the hard gate that passed: both are named.
func TestCompareRareEvents(t *testing.T) {
	c := mustCompare(t, synthRun{seed: 1, gets: 2000}, synthRun{seed: 2, gets: 2000, invalid: 1}, CompareOptions{})
	if r := row(t, c, "invalid_transitions"); r.Verdict != MetricRegression {
		t.Errorf("invalid_transitions: %s, want regression", r.Verdict)
	}
	want := "gate hard: passed in the baseline, fails in the candidate"
	if !slices.Contains(c.Failures, want) {
		t.Errorf("failures %q: want %q", c.Failures, want)
	}
}

// TestCompareRows: a gate, threshold or case row is judged on both runs' states, and only a
// row the baseline judged and the candidate did not makes the comparison inconclusive.
func TestCompareRows(t *testing.T) {
	for _, tc := range []struct {
		base, cand, verdict   string
		failure, inconclusive bool
	}{
		{"pass", "pass", "pass", false, false},
		{"pass", "fail", "regression", true, false},
		{"fail", "fail", "failing", true, false},
		{"", "fail", "failing", true, false},
		{"fail", "pass", "fixed", false, false},
		{"", "pass", "pass", false, false},
		{"pass", "not_evaluated", "not_evaluated", false, true},
		{"fail", "", "not_evaluated", false, true},
		{"not_evaluated", "not_evaluated", "not_evaluated", false, false},
		{"", "skip", "not_evaluated", false, false},
		{"no_data", "no_data", "not_evaluated", false, false},
		{"not_evaluated", "fail", "failing", true, false},
	} {
		v := verdictChange("g", tc.base, tc.cand)
		c := &Comparison{Gates: []VerdictChange{v}}
		c.judgeRows()
		if tc.failure && tc.base != "fail" && len(c.Failures) > 0 && strings.Contains(c.Failures[0], "as in the baseline") {
			t.Errorf("baseline %q: failure %q says it failed in the baseline too", tc.base, c.Failures[0])
		}
		if v.Verdict != tc.verdict || (len(c.Failures) > 0) != tc.failure || (len(c.Inconclusive) > 0) != tc.inconclusive {
			t.Errorf("baseline %q, candidate %q: verdict %s, failures %q, inconclusive %q; want %s, failure %v, inconclusive %v",
				tc.base, tc.cand, v.Verdict, c.Failures, c.Inconclusive, tc.verdict, tc.failure, tc.inconclusive)
		}
	}
}

// TestCompareNotComparable: another client count refuses the comparison, naming the field,
// unless --allow names it; then the difference is listed.
func TestCompareNotComparable(t *testing.T) {
	_, err := comparePair(t, synthRun{seed: 1, gets: 100}, synthRun{seed: 2, gets: 100, clients: 60}, CompareOptions{})
	var nc *NotComparableError
	if !errors.As(err, &nc) || len(nc.Differences) != 1 || nc.Differences[0].Field != "clients" {
		t.Fatalf("err %v, want not comparable on clients", err)
	}
	if !strings.Contains(err.Error(), "clients: baseline 50, candidate 60") || !strings.Contains(err.Error(), "--allow clients") {
		t.Errorf("error %q: want the field, both values and the flag that allows it", err)
	}
	c := mustCompare(t, synthRun{seed: 1, gets: 2000}, synthRun{seed: 2, gets: 2000, clients: 60}, CompareOptions{Allow: []string{"clients"}})
	if len(c.Differences) != 1 || !c.Differences[0].Allowed {
		t.Errorf("differences %+v, want clients, allowed", c.Differences)
	}
	if _, err := comparePair(t, synthRun{seed: 1}, synthRun{seed: 2}, CompareOptions{Allow: []string{"client"}}); err == nil || !strings.Contains(err.Error(), `did you mean clients`) {
		t.Errorf("--allow client: %v, want an unknown field with a suggestion", err)
	}
}

// TestCompareTooFewSamples: runs with too few samples to judge any latency say so, and the
// verdict is inconclusive, not a pass.
func TestCompareTooFewSamples(t *testing.T) {
	c := mustCompare(t, synthRun{seed: 1, gets: 1}, synthRun{seed: 2, gets: 1}, CompareOptions{})
	if c.Verdict != CompareVerdictInconclusive || c.ExitCode() != ExitGateFailed {
		t.Fatalf("verdict %s, want inconclusive (exit 99)", c.Verdict)
	}
	if r := row(t, c, "latency_tasks_get.p99"); r.Verdict != MetricTooFewSamples || !strings.Contains(r.Note, "needs 1000") {
		t.Errorf("p99 of 10 samples: %s (%s), want too_few_samples saying 1000 are needed", r.Verdict, r.Note)
	}
}

func TestParseBudget(t *testing.T) {
	for _, c := range []struct{ expr, want, err string }{
		{"latency_tasks_get.p99 +20%", "+20%", ""},
		{"task_e2e.p99 +15% +5ms", "+15% +5ms", ""},
		{"throughput -10%", "-10%", ""},
		{"requests.errors_rate +0.5pt", "+0.5pt", ""},
		{"tasks.lost 0", "0", ""},
		{"tasks.lost +2", "+2", ""},
		{"request_rate off", "off", ""},
		{"throughput +10%", "", "throughput is worse when lower: write the change as -N% or -N/s"},
		{"latency_tasks_get.p99 20%", "", "worse when higher"},
		{"latency_tasks_get.p99 +x%", "", "want a number >= 0"},
		{"latency_tasks_get.p99 +1% +2%", "", "one relative and one absolute change at most"},
		{"latency_task_get.p99 +1%", "", "did you mean latency_tasks_get.p99"},
		{"latency_tasks_get.p99", "", "want METRIC CHANGE [CHANGE]"},
		{"latency_tasks_get.p99 +20 %", "", "the number with its unit"},
		{"latency_tasks_get.p99 0%", "+0%", ""},
		{"throughput 0%", "-0%", ""},
		{"latency_tasks_get.p99 OFF", "off", ""},
	} {
		b, err := ParseBudget(c.expr, BudgetFlag)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: err %v, want %q", c.expr, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.expr, err)
		case c.err == "" && b.String() != c.want:
			t.Errorf("%q: %q, want %q", c.expr, b.String(), c.want)
		}
	}
}

// TestBudgetsTwice: two budgets of one metric from one place are refused, not one silently
// replaced; a --budget replaces the scenario's.
func TestBudgetsTwice(t *testing.T) {
	_, err := budgetsFor([]string{"throughput -5%", "throughput -20%"}, scenarios.Compare{}, 0)
	if err == nil || !strings.Contains(err.Error(), "both budget throughput") {
		t.Errorf("err %v, want both budgets of throughput named", err)
	}
	// A run recorded before `validate` refused them keeps its scenario's last: it stays comparable.
	if b, err := budgetsFor(nil, scenarios.Compare{Budgets: []string{"throughput -5%", "throughput -20%"}}, 0); err != nil || b["throughput"].String() != "-20%" {
		t.Errorf("a recorded scenario's two budgets: %+v (%v), want the last, -20%%", b["throughput"], err)
	}
	b, err := budgetsFor([]string{"throughput -20%"}, scenarios.Compare{Budgets: []string{"throughput -5%"}}, 0)
	if err != nil || b["throughput"].String() != "-20%" || b["throughput"].Source != BudgetFlag {
		t.Errorf("budget %+v (%v), want the flag's -20%%", b["throughput"], err)
	}
}

// TestCompareUnmeasuredBudget: a budget on a metric neither run measured is said to be
// judged nowhere, and the pass says it vouches only for what was judged.
func TestCompareUnmeasuredBudget(t *testing.T) {
	c := mustCompare(t, synthRun{seed: 1, gets: 2000}, synthRun{seed: 2, gets: 2000}, CompareOptions{Budgets: []string{"cleanup_lag.p99 +5%"}})
	if c := mustCompare(t, synthRun{seed: 1, gets: 2000}, synthRun{seed: 2, gets: 2000}, CompareOptions{Budgets: []string{"cleanup_lag.p99 off"}}); len(c.NotJudged) > 0 {
		t.Errorf("an off budget on an unmeasured metric: not judged %q, want nothing (it was asked not to be judged)", c.NotJudged)
	}
	want := "cleanup_lag.p99: budgeted by --budget, measured by neither run"
	if !slices.Contains(c.NotJudged, want) {
		t.Errorf("not judged %q: want %q", c.NotJudged, want)
	}
	if c.Verdict == CompareVerdictPass && !strings.Contains(verdictLine(c), "not judged") {
		t.Errorf("verdict line %q: want the figures not judged counted", verdictLine(c))
	}
}

// TestCheckBudgets: a scenario's bad budget or allowance is reported at its path.
func TestCheckBudgets(t *testing.T) {
	sc := &scenarios.Scenario{Compare: scenarios.Compare{Budgets: []string{"throughput +1%", "task_e2e.p99 +5%", "task_e2e.p99 +9%"}, Allow: []string{"seed"}}}
	err := CheckBudgets(sc)
	if err == nil || !strings.Contains(err.Error(), "compare.budgets[0]") || !strings.Contains(err.Error(), "compare.allow[0]") ||
		!strings.Contains(err.Error(), "compare.budgets[2]: \"task_e2e.p99 +5%\" and \"task_e2e.p99 +9%\" both budget task_e2e.p99") {
		t.Errorf("err %v, want both problems at their paths", err)
	}
}

// TestCompareEras: runs in two eras (the cells of sweep --vary protocol) are refused unless
// --allow protocol; allowed, they are compared and the difference listed.
func TestCompareEras(t *testing.T) {
	legacy, modern := synthRun{seed: 1, gets: 2000, era: "2025-11-25"}, synthRun{seed: 2, gets: 2000}
	_, err := comparePair(t, legacy, modern, CompareOptions{})
	var nc *NotComparableError
	if !errors.As(err, &nc) || nc.Differences[0].Field != "protocol" {
		t.Fatalf("err %v, want not comparable on protocol", err)
	}
	c := mustCompare(t, legacy, modern, CompareOptions{Allow: []string{"protocol"}})
	if c.Verdict != CompareVerdictPass || len(c.Differences) != 1 || c.Differences[0].Field != "protocol" {
		t.Errorf("verdict %s, differences %+v: want a pass with protocol allowed", c.Verdict, c.Differences)
	}
}
