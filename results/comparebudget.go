package results

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/scenarios"
)

// Budgets: how much worse than the baseline a candidate's figure may be before it is a
// regression (docs/METRICS.md#budgets).

// Budget sources, as compare.json names them.
const (
	BudgetDefault  = "default"
	BudgetScenario = "scenario" // the candidate's scenario, compare.budgets
	BudgetFlag     = "flag"     // --budget
)

// Budget is the change a metric may show in its worse direction: Rel as a ratio of the
// baseline's figure (0.2 = 20%), Abs in the metric's unit (percentage points for a rate, a
// count for a rare event). With both, a regression must exceed both: +20% of a 2 ms p50 is
// scheduling noise, not a regression, until it is also more than the absolute floor. Off
// shows the metric without judging it.
type Budget struct {
	Metric string  `json:"metric"`
	Rel    float64 `json:"-"`
	Abs    float64 `json:"-"`
	HasRel bool    `json:"-"`
	HasAbs bool    `json:"-"`
	Off    bool    `json:"-"`
	Source string  `json:"source"`
}

// String is the budget as written: "+20% +1ms", "-10%", "+0.5pt", "0", "off".
func (b Budget) String() string {
	if b.Off {
		return "off"
	}
	def, _ := compareMetric(b.Metric)
	sign := "+"
	if def.lowerIsWorse {
		sign = "-"
	}
	var parts []string
	if b.HasRel {
		parts = append(parts, sign+strconv.FormatFloat(100*b.Rel, 'f', -1, 64)+"%")
	}
	if b.HasAbs {
		if def.unit == "count" && b.Abs == 0 && !b.HasRel {
			return "0"
		}
		parts = append(parts, sign+strconv.FormatFloat(b.Abs, 'f', -1, 64)+unitSuffix(def.unit))
	}
	return strings.Join(parts, " ")
}

// unitSuffix is how an absolute budget is written in unit.
func unitSuffix(unit string) string {
	switch unit {
	case "ms":
		return "ms"
	case "%":
		return "pt"
	case "per_s":
		return "/s"
	}
	return ""
}

// exceeded says whether a change in the worse direction (worse > 0: worse by that much
// in the metric's unit, rel the same as a ratio of the baseline, nil without one) is beyond
// the budget.
func (b Budget) exceeded(worse float64, rel *float64) bool {
	switch {
	case b.Off:
		return false
	case b.HasRel && rel == nil: // from a baseline of zero, any increase is past a ratio
		return worse > 0 && (!b.HasAbs || worse > b.Abs)
	case b.HasRel && b.HasAbs:
		return *rel > b.Rel && worse > b.Abs
	case b.HasRel:
		return *rel > b.Rel
	}
	return worse > b.Abs
}

// ParseBudget parses "METRIC CHANGE [CHANGE]" or "METRIC off": CHANGE is +N% (relative) or
// +N with the metric's unit (ms, pt for a rate's percentage points, /s, or a bare number
// for a count or a ratio), signed in the metric's worse direction: + for a latency, - for
// the throughput. A bare 0 is a zero budget.
func ParseBudget(expr, source string) (Budget, error) {
	f := strings.Fields(expr)
	if len(f) < 2 || len(f) > 3 {
		return Budget{}, fmt.Errorf("budget %q: want METRIC CHANGE [CHANGE], e.g. 'latency_tasks_get.p99 +20%%' or 'task_e2e.p99 +15%% +5ms'", expr)
	}
	def, err := compareMetric(f[0])
	if err != nil {
		return Budget{}, fmt.Errorf("budget %q: %w", expr, err)
	}
	for _, ch := range f[1:] {
		if ch == "%" || ch == unitSuffix(def.unit) {
			return Budget{}, fmt.Errorf("budget %q: write each change as one word, the number with its unit, as in '+20%%'", expr)
		}
	}
	b := Budget{Metric: def.name, Source: source}
	if len(f) == 2 && strings.EqualFold(f[1], "off") {
		b.Off = true
		return b, nil
	}
	for _, ch := range f[1:] {
		if err := b.add(def, ch); err != nil {
			return Budget{}, fmt.Errorf("budget %q: %w", expr, err)
		}
	}
	return b, nil
}

// add reads one CHANGE of a budget for metric def.
func (b *Budget) add(def metricDef, ch string) error {
	if ch == "0" {
		b.HasAbs = true
		return nil
	}
	sign := "+"
	if def.lowerIsWorse {
		sign = "-"
	}
	if z := strings.TrimSuffix(strings.TrimSuffix(ch, "%"), unitSuffix(def.unit)); z != "" && strings.Trim(z, "0.") == "" {
		ch = sign + ch // "0%", "0ms": a zero budget needs no direction, as "0" does not
	}
	num, ok := strings.CutPrefix(ch, sign)
	if !ok {
		dir := "higher"
		if def.lowerIsWorse {
			dir = "lower"
		}
		return fmt.Errorf("%s is worse when %s: write the change as %sN%% or %sN%s", def.name, dir, sign, sign, unitSuffix(def.unit))
	}
	rel := false
	if n, ok := strings.CutSuffix(num, "%"); ok {
		num, rel = n, true
	} else if s := unitSuffix(def.unit); s != "" {
		num = strings.TrimSuffix(num, s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Errorf("%q: want a number >= 0, then %% or %q", ch, unitSuffix(def.unit))
	}
	switch {
	case rel && b.HasRel, !rel && b.HasAbs:
		return fmt.Errorf("%q: one relative and one absolute change at most", ch)
	case rel:
		b.Rel, b.HasRel = v/100, true
	default:
		b.Abs, b.HasAbs = v, true
	}
	return nil
}

// metricKind is what a compared metric reads.
type metricKind uint8

const (
	mQuantile      metricKind = iota + 1 // a quantile of hist
	mMean                                // the mean of hist
	mThroughput                          // tasks completed per second
	mRequestRate                         // requests per second
	mErrorRate                           // requests in error, % of requests
	mBackpressure                        // requests answered with backpressure, % of requests
	mTaskRate                            // tasks ending in one outcome, % of tasks created
	mAmplification                       // fleet poll amplification
	mRare                                // a rare event's count
)

// metricDef is one metric `compare` judges, with its default budget.
type metricDef struct {
	name         string
	kind         metricKind
	unit         string
	hist         metrics.Hist
	q            float64 // mQuantile
	lowerIsWorse bool
	budget       string // the default budget's CHANGEs, "off" for a metric shown only
	rare         func(s *Summary) *int64
	tasks        func(t *Tasks) int64 // mTaskRate: the outcome's count
	// pollBound marks a latency that waits on polls (a detection, a task's end to end):
	// its default floor is at least PollFloorShare of the poll interval.
	pollBound bool
}

// Default latency budgets: p50 +10%, p95 +15%, p99 +20%, each also more than an absolute
// floor, latencyFloorMS: below it a change is the scheduling noise of a shared machine, which
// two runs one after the other do not see alike, and which grows toward the tail (a p99 of
// a few ms on loopback doubles between runs of one configuration).
var latencyFloorMS = map[string]float64{"p50": 5, "p95": 10, "p99": 20}

// PollFloorShare is the share of the advertised poll interval below which a change of a
// latency that waits on polls (detection_lag, task_e2e, result_lag, cancel_latency,
// cleanup_lag) never regresses at the default budget: such a latency is the phase of the
// polls against the tasks' ends, which moves between runs of one configuration by a part
// of the interval. A task that ends just before a poll or just after it differs by a whole
// interval, and the share that falls on either side moves with the machine's load: two
// identical servers side by side on a loaded 2-CPU machine (load average 5 to 12) showed
// task_e2e.p95 apart by 0.41 of a 1 s interval, beyond its sampling noise. A fifth of the
// interval (sequential runs on a quiet machine: within 0.11) was not enough.
const PollFloorShare = 0.5

// pollBoundHists are the latencies that wait on polls.
var pollBoundHists = []metrics.Hist{metrics.TaskE2E, metrics.DetectionLag, metrics.ResultLag, metrics.CancelLatency, metrics.CleanupLag}

// latencyHists are the histograms whose p50, p95 and p99 are compared, in table order.
var latencyHists = []metrics.Hist{
	metrics.LatencyToolsCall, metrics.LatencyTasksGet, metrics.LatencyTasksResult,
	metrics.LatencyTasksCancel, metrics.LatencyTasksList, metrics.LatencyTasksUpdate,
	metrics.TaskE2E, metrics.DetectionLag, metrics.ResultLag, metrics.CancelLatency, metrics.CleanupLag,
}

// compareMetrics is every metric compare judges, in table order.
var compareMetrics = buildCompareMetrics()

func buildCompareMetrics() []metricDef {
	defs := []metricDef{
		{name: "throughput", kind: mThroughput, unit: "per_s", lowerIsWorse: true, budget: "-10%"},
		{name: "request_rate", kind: mRequestRate, unit: "per_s", budget: "off"},
		{name: "requests.errors_rate", kind: mErrorRate, unit: "%", budget: "+0.5pt"},
		{name: "backpressure_rate", kind: mBackpressure, unit: "%", budget: "+0.5pt"},
		{name: "tasks.failed_rate", kind: mTaskRate, unit: "%", budget: "+0.5pt", tasks: func(t *Tasks) int64 { return t.Failed }},
		{name: "tasks.expired_rate", kind: mTaskRate, unit: "%", budget: "+0.5pt", tasks: func(t *Tasks) int64 { return t.Expired }},
		{name: "polls_per_task.mean", kind: mMean, unit: "count", hist: metrics.PollsPerTask, budget: "+10%"},
		{name: "poll_amplification.fleet", kind: mAmplification, unit: "ratio", hist: metrics.PollAmplification, budget: "+10%"},
	}
	for _, h := range latencyHists {
		for _, q := range []struct {
			stat string
			q    float64
			rel  string
		}{{"p50", 0.5, "+10%"}, {"p95", 0.95, "+15%"}, {"p99", 0.99, "+20%"}} {
			defs = append(defs, metricDef{name: h.Name() + "." + q.stat, kind: mQuantile, unit: "ms", hist: h, q: q.q,
				budget: q.rel + " +" + strconv.FormatFloat(latencyFloorMS[q.stat], 'f', -1, 64) + "ms", pollBound: slices.Contains(pollBoundHists, h)})
		}
	}
	tasks := func(f func(t *Tasks) int64) func(*Summary) *int64 {
		return func(s *Summary) *int64 { v := f(&s.Tasks); return &v }
	}
	hard := func(f func(e *HardEvidence) *int64) func(*Summary) *int64 {
		return func(s *Summary) *int64 { return f(&s.Gates.Hard.Evidence) }
	}
	rare := []metricDef{
		{name: "tasks.lost", rare: tasks(func(t *Tasks) int64 { return t.Lost })},
		{name: "tasks.unknown", rare: tasks(func(t *Tasks) int64 { return t.Unknown })},
		{name: "tasks.result_lost", rare: tasks(func(t *Tasks) int64 { return t.ResultLost })},
		{name: "invalid_transitions", rare: hard(func(e *HardEvidence) *int64 { return &e.InvalidTransitions })},
		{name: "duplicate_effects", rare: hard(func(e *HardEvidence) *int64 { return e.DuplicateEffects })},
		{name: "cross_tenant_leaks", rare: hard(func(e *HardEvidence) *int64 { return e.CrossTenantLeaks })},
		{name: "planted_secrets", rare: hard(func(e *HardEvidence) *int64 { return e.PlantedSecrets })},
	}
	for _, d := range rare {
		d.kind, d.unit, d.budget = mRare, "count", "0"
		defs = append(defs, d)
	}
	return defs
}

// compareMetric is the metric named name, or an error naming the closest ones.
func compareMetric(name string) (metricDef, error) {
	i := slices.IndexFunc(compareMetrics, func(d metricDef) bool { return d.name == name })
	if i >= 0 {
		return compareMetrics[i], nil
	}
	names := make([]string, len(compareMetrics))
	for i, d := range compareMetrics {
		names[i] = d.name
	}
	if close := closest(name, names); len(close) > 0 {
		return metricDef{}, fmt.Errorf("unknown metric %q (did you mean %s?)", name, strings.Join(close, ", "))
	}
	return metricDef{}, fmt.Errorf("unknown metric %q (want throughput, request_rate, requests.errors_rate, backpressure_rate, tasks.failed_rate, tasks.expired_rate, polls_per_task.mean, poll_amplification.fleet, HIST.p50|p95|p99 of a latency histogram, or a rare event: tasks.lost, tasks.unknown, tasks.result_lost, invalid_transitions, duplicate_effects, cross_tenant_leaks, planted_secrets)", name)
}

// defaultBudget is the default budget of def.
func defaultBudget(def metricDef) Budget {
	b, err := ParseBudget(def.name+" "+def.budget, BudgetDefault)
	if err != nil { // the table above is fixed: a bad default is a build defect
		panic(err)
	}
	return b
}

// budgetsFor resolves the budget of every metric: the flags' first, then the scenario's,
// then the default, whose floor for a latency that waits on polls is at least
// PollFloorShare of pollMS (the longer of the two runs' poll intervals; 0 = unknown). A
// bad expression is an error naming where it came from.
func budgetsFor(flags []string, sc scenarios.Compare, pollMS float64) (map[string]Budget, error) {
	out := map[string]Budget{}
	for _, d := range compareMetrics {
		b := defaultBudget(d)
		if d.pollBound {
			b.Abs = max(b.Abs, round3(PollFloorShare*pollMS))
		}
		out[d.name] = b
	}
	var errs []error
	for _, set := range []struct {
		exprs  []string
		source string
	}{{sc.Budgets, BudgetScenario}, {flags, BudgetFlag}} {
		seen := map[string]string{}
		for _, e := range set.exprs {
			b, err := ParseBudget(e, set.source)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", budgetPlace(set.source), err))
				continue
			}
			// One would silently replace the other. A scenario's were checked when it was
			// validated (CheckBudgets); a run recorded before that check keeps its last.
			if prev, ok := seen[b.Metric]; ok && set.source == BudgetFlag {
				errs = append(errs, fmt.Errorf("%s: %q and %q both budget %s: give one", budgetPlace(set.source), prev, e, b.Metric))
				continue
			}
			seen[b.Metric] = e
			out[b.Metric] = b
		}
	}
	return out, errors.Join(errs...)
}

func budgetPlace(source string) string {
	if source == BudgetFlag {
		return "--budget"
	}
	return "the candidate's scenario, compare.budgets"
}

// CheckBudgets checks the budget expressions and allowances of s's compare section, each
// problem at file:line when s was read from a file.
func CheckBudgets(s *scenarios.Scenario) error {
	var errs []error
	seen := map[string]string{}
	for i, e := range s.Compare.Budgets {
		b, err := ParseBudget(e, BudgetScenario)
		if prev, ok := seen[b.Metric]; ok && err == nil {
			err = fmt.Errorf("%q and %q both budget %s: give one", prev, e, b.Metric)
		}
		if err != nil {
			errs = append(errs, placed(s, "compare.budgets["+strconv.Itoa(i)+"]", err))
			continue
		}
		seen[b.Metric] = e
	}
	for i, a := range s.Compare.Allow {
		if err := checkAllow(a); err != nil {
			errs = append(errs, placed(s, "compare.allow["+strconv.Itoa(i)+"]", err))
		}
	}
	return errors.Join(errs...)
}

func placed(s *scenarios.Scenario, path string, err error) error {
	if where := s.Where(path); where != "" {
		path = where + ": " + path
	}
	return fmt.Errorf("%s: %w", path, err)
}
