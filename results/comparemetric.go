package results

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/metrics"
)

// The metrics of a comparison: each estimated in both runs, then judged against its budget.

// compareAll is the row of every metric that one run measured at least, in table order.
func compareAll(b, c *compareSide, budgets map[string]Budget) []MetricChange {
	out := []MetricChange{}
	for _, def := range compareMetrics {
		be, bs, bok, bwhy := def.estimate(b)
		ce, cs, cok, cwhy := def.estimate(c)
		if be == nil && ce == nil {
			continue
		}
		bud := budgets[def.name]
		row := MetricChange{Metric: def.name, Unit: def.unit, Baseline: be, Candidate: ce, Budget: bud.String(), Source: bud.Source}
		switch {
		case be == nil || ce == nil:
			row.Verdict, row.Note = MetricNoData, "measured in one run only: "+firstOf(bwhy, cwhy)
		case def.kind == mRare:
			ch := Change{Abs: ce.Value - be.Value}
			row.Change = &ch
			row.judgeRare(def, bud, b.sum, c.sum)
		default:
			row.judgeChange(def, bud, *be, *ce, bs, cs, bok && cok, firstOf(bwhy, cwhy))
		}
		out = append(out, row)
	}
	return out
}

// judgeChange sets the change of a measured row, widened by the paired batch means when
// the figure comes from the histograms (bs and cs, the figure in each time section), and
// its verdict; enough is false (why says so) when a run has too few samples.
func (m *MetricChange) judgeChange(def metricDef, bud Budget, be, ce Estimate, bs, cs []float64, enough bool, why string) {
	ch := changeOf(be, ce)
	m.Change = &ch
	if enough && bs != nil {
		var k int
		if *m.Change, k, enough = widenPaired(ch, bs, cs); !enough {
			why = fmt.Sprintf("%s is held in %d time sections of both runs; judging it needs %d (their run-to-run variation cannot be told otherwise)",
				def.name, k, MinSections)
		}
	}
	if !enough {
		m.Verdict, m.Note = MetricTooFewSamples, why
		return
	}
	m.judge(def, bud)
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// estimate is def's figure in run s, and for a figure of the histograms its value in each
// of the run's time sections: nil when s did not measure it (why says so); ok false when s
// measured it on too few samples (why says how many it has and needs).
func (def metricDef) estimate(s *compareSide) (e *Estimate, sections []float64, ok bool, why string) {
	sum := s.sum
	switch def.kind {
	case mQuantile, mMean:
		hh := s.hists[def.hist]
		if hh == nil || hh.TotalCount() == 0 {
			return nil, nil, false, "no " + def.hist.Name() + " values in " + s.dir
		}
		var est Estimate
		if def.kind == mQuantile {
			est, ok = quantileEstimate(hh, def.q, def.hist.Scale())
			sections = sectionQuantiles(s.sectionsOf(def.hist), def.q, def.hist.Scale())
		} else {
			est, ok = meanEstimate(hh, def.hist.Scale())
			sections = sectionMeans(s.sectionsOf(def.hist), def.hist.Scale())
		}
		if !ok {
			why = fmt.Sprintf("%s has %d samples; %s needs %d", s.dir, est.Samples, def.name, samplesNeeded(def))
		}
		return &est, sections, ok, why
	case mThroughput, mRequestRate:
		n := sum.Tasks.Completed
		if def.kind == mRequestRate {
			n = requestTotals(sum).Count
		}
		if sum.DurationS <= 0 {
			return nil, nil, false, "no duration in " + s.dir
		}
		est := countRateEstimate(n, sum.DurationS)
		return &est, nil, true, ""
	case mErrorRate, mBackpressure, mTaskRate:
		return def.rate(s)
	case mAmplification:
		return amplification(s)
	}
	v := def.rare(sum)
	if v == nil {
		return nil, nil, false, def.name + " not checked in " + s.dir
	}
	return &Estimate{Value: float64(*v), Low: float64(*v), High: float64(*v), Samples: sum.Tasks.Created}, nil, true, ""
}

// rate is def's rate in run s: requests in error, requests answered with backpressure (a
// request's outcome, so never more than the requests), or tasks ending in def's outcome,
// of all created.
func (def metricDef) rate(s *compareSide) (*Estimate, []float64, bool, string) {
	sum := s.sum
	var k, n int64
	switch def.kind {
	case mTaskRate:
		k, n = def.tasks(&sum.Tasks), sum.Tasks.Created
	case mBackpressure:
		for _, r := range sum.Requests {
			k += r.ByOutcome[metrics.OutcomeBackpressure.String()]
		}
		n = requestTotals(sum).Count
	default:
		t := requestTotals(sum)
		k, n = t.Errors, t.Count
	}
	if n <= 0 {
		return nil, nil, false, "nothing to divide by in " + s.dir
	}
	if k < 0 || k > n {
		return nil, nil, false, fmt.Sprintf("%s: %s counts %d of %d: not a share (summary.json is damaged)", s.dir, def.name, k, n)
	}
	est := rateEstimate(k, n)
	return &est, nil, true, ""
}

// samplesNeeded is the fewest samples def is judged on.
func samplesNeeded(def metricDef) int64 {
	if def.kind == mQuantile {
		return int64(math.Ceil(MinTail/(1-def.q) - 1e-9))
	}
	return MinTail
}

// amplification is the fleet poll amplification, its interval that of the per-task
// amplifications' mean (and its sections' means); without their histogram the figure has
// no interval: too few samples to judge.
func amplification(s *compareSide) (*Estimate, []float64, bool, string) {
	amp, _, _ := s.sum.Fleet.Measured()
	if !amp {
		return nil, nil, false, "no poll amplification in " + s.dir
	}
	v := s.sum.Fleet.PollAmplification
	est := Estimate{Value: v, Low: v, High: v}
	hh := s.hists[metrics.PollAmplification]
	if hh == nil || hh.TotalCount() == 0 {
		return &est, nil, false, "no poll_amplification values in " + s.dir + ": the figure has no interval"
	}
	m, ok := meanEstimate(hh, metrics.PollAmplification.Scale())
	est.Low, est.High, est.Samples = v-(m.Value-m.Low), v+(m.High-m.Value), m.Samples
	sections := sectionMeans(s.sectionsOf(metrics.PollAmplification), metrics.PollAmplification.Scale())
	if !ok {
		return &est, sections, false, fmt.Sprintf("%s has %d tasks with an amplification; %d needed", s.dir, m.Samples, MinTail)
	}
	return &est, sections, true, ""
}

// requestTotals adds up the requests of every method.
func requestTotals(s *Summary) RequestStats {
	var t RequestStats
	for _, r := range s.Requests {
		t.Count += r.Count
		t.Errors += r.Errors
	}
	return t
}

// judge sets the verdict of a measured row: a regression when the change in the worse
// direction is beyond the budget and its 95% interval excludes no change (both runs'
// noise cannot explain it); within_noise when beyond the budget by its point only.
func (m *MetricChange) judge(def metricDef, bud Budget) {
	ch := m.Change
	worse, worseLow := ch.Abs, ch.AbsLow
	var rel *float64
	if ch.Rel != nil {
		r := *ch.Rel
		rel = &r
	}
	if def.lowerIsWorse {
		worse, worseLow = -ch.Abs, -ch.AbsHigh
		if rel != nil {
			*rel = -*rel
		}
	}
	switch {
	case bud.Off:
		m.Verdict = MetricShown
	case !bud.exceeded(worse, rel):
		m.Verdict = MetricPass
	case worseLow > 0:
		m.Verdict, m.Note = MetricRegression, fmt.Sprintf("%s, beyond the budget %s and the runs' noise (95%% interval %s)",
			changeText(m.Unit, ch), bud, intervalText(m.Unit, ch))
	default:
		m.Verdict, m.Note = MetricWithinNoise, fmt.Sprintf("%s is beyond the budget %s, but within the runs' noise (95%% interval %s)",
			changeText(m.Unit, ch), bud, intervalText(m.Unit, ch))
	}
}

// judgeRare judges a rare event's count: the candidate's count against the baseline's
// scaled to the candidate's tasks, with no allowance for noise (the default budget is zero:
// one lost task more is a regression).
func (m *MetricChange) judgeRare(def metricDef, bud Budget, b, c *Summary) {
	expected := m.Baseline.Value
	if b.Tasks.Created > 0 {
		expected *= float64(c.Tasks.Created) / float64(b.Tasks.Created)
	}
	// Counts are whole: the baseline's count scaled to the candidate's tasks is rounded up,
	// so that as many events in both runs is never a regression.
	worse := m.Candidate.Value - math.Ceil(expected-1e-9)
	var rel *float64
	if expected > 0 {
		r := worse / math.Ceil(expected-1e-9)
		rel = &r
	}
	switch {
	case bud.Off:
		m.Verdict = MetricShown
	case m.Candidate.Value > 0 && bud.exceeded(worse, rel):
		m.Verdict, m.Note = MetricRegression, fmt.Sprintf("%s %s in the candidate against %s in the baseline (%s at the candidate's task count), budget %s",
			num(m.Candidate.Value), def.name, num(m.Baseline.Value), num(round3(expected)), bud)
	default:
		m.Verdict = MetricPass
	}
}

// changeText is a change as the tables show it: "+31.2ms (+1450%)".
func changeText(unit string, ch *Change) string {
	s := signed(ch.Abs) + unitSuffix(unit)
	if unit == "%" {
		s = signed(ch.Abs) + "pt"
	}
	if ch.Rel != nil {
		s += " (" + signed(100**ch.Rel) + "%)"
	}
	return s
}

// intervalText is the 95% interval of a change: "+29.8ms..+32.9ms".
func intervalText(unit string, ch *Change) string {
	u := unitSuffix(unit)
	return signed(ch.AbsLow) + u + ".." + signed(ch.AbsHigh) + u
}

func signed(v float64) string {
	v = round3(v)
	if v >= 0 {
		return "+" + strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// manifestDrift lists the manifest fields that differ, flattened to dotted paths (tools by
// name); volatile fields (when and from where the manifest was taken, the probe's own
// session evidence and notes) are left out.
func manifestDrift(b, c *client.Manifest) []Difference {
	if b == nil || c == nil {
		return nil
	}
	bf, cf := manifestFields(b), manifestFields(c)
	var out []Difference
	for _, k := range sortedKeys(union(bf, cf)) {
		bv, bok := bf[k]
		cv, cok := cf[k]
		if !bok {
			bv = "absent"
		}
		if !cok {
			cv = "absent"
		}
		if bv != cv {
			out = append(out, Difference{Field: k, Baseline: bv, Candidate: cv, Allowed: true})
		}
	}
	return out
}

func union(a, b map[string]string) map[string]string {
	u := map[string]string{}
	for k := range a {
		u[k] = ""
	}
	for k := range b {
		u[k] = ""
	}
	return u
}

// manifestFields is m's leaves as dotted paths and their JSON text, without the volatile
// ones; tools are listed by name, below.
func manifestFields(m *client.Manifest) map[string]string {
	raw, _ := json.Marshal(m) // a Manifest always encodes
	var tree map[string]any
	_ = json.Unmarshal(raw, &tree)
	for _, k := range []string{"target", "taken_at", "session", "notes", "instructions", "tools"} {
		delete(tree, k)
	}
	out := map[string]string{}
	flatten("", tree, out)
	for _, t := range m.Tools {
		out["tools."+t.Name+".task_support"] = cmp.Or(t.TaskSupport, "none")
	}
	return out
}

// flatten adds the leaves of the JSON value v (as encoding/json decodes into any) to out,
// keyed by their dotted paths under prefix, each as its JSON text. It walks the manifest's
// JSON rather than its fields on purpose: every leaf is compared, so a field added to the
// manifest is caught as drift without a change here.
func flatten(prefix string, v any, out map[string]string) {
	if m, ok := v.(map[string]any); ok {
		for k, x := range m {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			flatten(p, x, out)
		}
		return
	}
	b, _ := json.Marshal(v)
	out[prefix] = string(b)
}
