package results

import (
	"maps"
	"strconv"
	"strings"

	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/scenarios"
)

// Where a threshold of a summary comes from (ThresholdResult.Source).
const (
	SourceScenario    = "scenario"     // the scenario's thresholds
	SourceErrorBudget = "error_budget" // the run's error budget (scenario field error_budget)
	SourceEvidence    = "evidence"     // the run saw the target work: tasks.done > 0
)

// evidenceExpr is the threshold every run is judged by besides its error budget: at least
// one task (or synchronous call) ended without failing (completed, cancelled). A
// run whose every create was refused (429s, capacity refusals: backpressure, not errors),
// whose tasks never ended, or whose every task failed or lost its result has not shown the
// target working: nothing to pass on.
const evidenceExpr = "tasks.done > 0"

// evidenceInterrupted is the note of the evidence threshold of a run a signal cut short,
// which judges nothing there (verdict): that no task ended may be the signal's doing.
const evidenceInterrupted = "not judged: the run was interrupted"

// reasonStopped is loadgen.ReasonStopped: a task whose outcome the run's own end cut off
// (its grace over, or a signal), on the reconciliation list (RunInfo.Unknown).
const reasonStopped = "run_stopped"

// judgedSummary is the summary the thresholds judge: s, but for a run a signal cut short,
// without the tasks the interruption cut off among the unknown (the run_stopped ones:
// RunInfo.Unknown; in a merge, those of the shards a signal stopped alone, RunInfo.cut):
// that their outcome is unknown is the signal's doing, not the target's, and the run exits
// 130, never 0, anyway (docs/ARCHITECTURE.md#exit-codes). cut is how many were left out; 0
// for s itself. A run (a shard) that ended as planned is judged on every unknown task: the
// scenario's grace was its to drain in.
func judgedSummary(info RunInfo, s *Summary) (js *Summary, cut int64) {
	cut = info.Unknown[reasonStopped]
	if info.cut != nil {
		cut = *info.cut
	}
	name := metrics.TasksUnknown.Name()
	if !s.Interrupted || cut <= 0 || s.Counters[name] <= 0 {
		return s, 0
	}
	cut = min(cut, s.Counters[name])
	c := *s
	c.Counters = maps.Clone(s.Counters)
	c.Counters[name] -= cut
	return &c, cut
}

// judged returns the thresholds a run is judged by, in summary order, with the source of
// each: ths (the scenario's), then, when errorBudget is not nil, the run's own two,
//
//	requests.errors_rate <= B%      B = *errorBudget; a run without any request fails
//	tasks.done > 0                  a task ended without failing (evidenceExpr)
func judged(ths []scenarios.Threshold, errorBudget *float64) ([]scenarios.Threshold, []string) {
	out := ths[:len(ths):len(ths)]
	sources := make([]string, len(ths), len(ths)+2)
	for i := range sources {
		sources[i] = SourceScenario
	}
	if errorBudget == nil {
		return out, sources
	}
	budget := scenarios.Threshold{Expr: "requests.errors_rate <= " + strconv.FormatFloat(*errorBudget, 'f', -1, 64) + "%"}
	out = append(out, budget, scenarios.Threshold{Expr: evidenceExpr})
	return out, append(sources, SourceErrorBudget, SourceEvidence)
}

// judgedAll returns every threshold info's run is judged by (judged), then its default SLOs
// (info.SLOs, source SourceSLO), with the source of each and its note ("" but for an SLO:
// what its limit was computed from).
func judgedAll(info RunInfo) (ths []scenarios.Threshold, sources, notes []string) {
	ths, sources = judged(info.Thresholds, info.ErrorBudget)
	notes = make([]string, len(ths))
	slos, sloNotes := judgedSLOs(info.SLOs)
	ths = append(ths[:len(ths):len(ths)], slos...)
	for range slos {
		sources = append(sources, SourceSLO)
	}
	return ths, sources, append(notes, sloNotes...)
}

// judge evaluates every threshold the run is judged by (judgedAll) over the run summarized
// by s: whole-run values from s, windows from info.Windows when set, else from windows.
//
//	no data       the metric had no sample in the run: the threshold fails, unless the
//	              scenario opted in with on_no_data: pass
//	abort_on_fail one failing window fails the threshold, whatever the whole-run value
func judge(info RunInfo, s *Summary, windows []metrics.Window) []ThresholdResult {
	ths, sources, notes := judgedAll(info)
	s, cut := judgedSummary(info, s)
	out := make([]ThresholdResult, 0, len(ths))
	for i, th := range ths {
		source := sources[i]
		t, err := ParseThreshold(th.Expr)
		if err != nil {
			out = append(out, ThresholdResult{Expr: strings.TrimSpace(th.Expr), Source: source,
				Note: notes[i], WorstWindow: -1, Error: err.Error()})
			continue
		}
		var r ThresholdResult
		wt := info.Windows
		switch {
		case source == SourceSLO && wt != nil && wt.deferred(t) != nil:
			r = t.result(s, wt.deferred(t).replay(t)) // the limit is known only now
		case source != SourceSLO && wt != nil && i < len(wt.ths) && wt.ths[i].ok:
			r = t.result(s, &wt.ths[i].acc) // tallied as the windows came
		default:
			r = t.Eval(s, windows)
		}
		r.Source, r.Note = source, notes[i]
		switch {
		case cut > 0 && t.src.counter == metrics.TasksUnknown && (t.src.kind == kindCounter || t.src.kind == kindRate):
			r.Note = strings.TrimPrefix(r.Note+"; "+strconv.FormatInt(cut, 10)+" tasks the interruption cut off not counted", "; ")
		case s.Interrupted && source == SourceEvidence:
			r.Note = evidenceInterrupted
		}
		if r.NoData && th.PassesOnNoData() {
			r.Pass, r.OnNoData = true, string(scenarios.NoDataPass)
		}
		if th.AbortOnFail {
			// abort_on_fail judges every window: one failing window fails the threshold
			// (it is the one that stopped the load).
			r.AbortOnFail = true
			r.Pass = r.Pass && r.WindowsFailed == 0
		}
		out = append(out, r)
	}
	return out
}
