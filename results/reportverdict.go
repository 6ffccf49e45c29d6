package results

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
)

// The verdict report.html leads with, its reason, and the gate and threshold rows it is
// drawn from.

// verdictView is the verdict as the page leads with it.
//
//	Word             when
//	FAIL             the summary's verdict is fail: Reason is the first failing gate or
//	                 threshold, More the others
//	INTERRUPTED      it passed, but a signal stopped the run early (exit code 130)
//	NOT TRUSTWORTHY  it passed, but the load generator fell behind its own schedule
//	PASS             it passed, whole and trustworthy
//	NO VERDICT       the summary's verdict is neither pass nor fail
//
// Notes hold what is true beside the word: an interrupted, aborted or untrustworthy
// failure.
type verdictView struct {
	Word, Class, Reason string
	More, Notes         []string
	Tally               string // how many gates and thresholds passed, failed, were skipped
}

// failure is one failing gate or threshold, as one line.
type failure struct{ what, detail string }

func (f failure) String() string {
	if f.detail == "" {
		return f.what
	}
	return f.what + ": " + f.detail
}

// verdict fills p.Verdict from s and the gate and threshold rows (built first).
func (p *reportPage) verdict(s *Summary) {
	var fails []failure
	for _, g := range p.Gates {
		if g.Class == "fail" {
			fails = append(fails, failure{g.Name + " gate failed", g.Why})
		}
	}
	for _, t := range p.Thresholds {
		if t.Class == "fail" {
			what := "threshold " + t.Expr + " failed"
			if t.SLO {
				what = "default SLO " + t.Expr + " failed"
			}
			fails = append(fails, failure{what, t.Why})
		}
	}
	v := &p.Verdict
	v.Tally = p.tally()
	interrupted := fmt.Sprintf("interrupted by a signal after %s s: the figures cover only the part of the run that happened", num(s.DurationS))
	untrusted := "not trustworthy: " + s.TrustNote
	switch {
	case s.Verdict == VerdictFail:
		v.Word, v.Class = "FAIL", "fail"
		if s.Merge != nil && s.Merge.Partial { // the reason (first when the only one), and said once
			fails = append(fails, failure{what: s.Merge.Note, detail: "part of the scenario passing is no pass"})
		}
		if len(fails) == 0 {
			fails = []failure{{what: "the summary's verdict is fail", detail: "no failing gate or threshold is recorded"}}
		}
		v.Reason = fails[0].String()
		for _, f := range fails[1:] {
			v.More = append(v.More, f.String())
		}
		if s.Aborted != "" {
			v.Notes = append(v.Notes, "load stopped early: "+s.Aborted)
		}
		if s.Interrupted {
			v.Notes = append(v.Notes, interrupted)
		}
		if !s.Trustworthy {
			v.Notes = append(v.Notes, untrusted)
		}
	case s.Verdict != VerdictPass:
		v.Word, v.Class = "NO VERDICT", "warn"
		v.Reason = fmt.Sprintf("the summary's verdict is %q, neither pass nor fail", s.Verdict)
	case s.Interrupted:
		v.Word, v.Class, v.Reason = "INTERRUPTED", "warn", interrupted+"; what was measured passed, but the run is not whole"
		if !s.Trustworthy {
			v.Notes = append(v.Notes, untrusted)
		}
	case !s.Trustworthy:
		v.Word, v.Class = "NOT TRUSTWORTHY", "warn"
		v.Reason = "gates and thresholds passed, but " + s.TrustNote
	default:
		v.Word, v.Class, v.Reason = "PASS", "pass", p.passReason()
	}
	if s.TLSUnverified {
		v.Notes = append(v.Notes, "TLS unverified (--insecure-skip-verify): the target's certificate was not checked; nothing proves which server answered")
	}
	if m := s.Merge; m != nil && m.Note != "" && !(m.Partial && v.Class == "fail") { // shards started late; a partial merge, unless its failure says it
		v.Notes = append(v.Notes, "merged shards: "+m.Note)
	}
}

// passReason says what passed: "the 2 evaluated gates passed; the 5 thresholds passed".
func (p *reportPage) passReason() string {
	gates := 0
	for _, g := range p.Gates {
		if g.Class == "pass" {
			gates++
		}
	}
	return passed(gates, "evaluated gate", "no gate was evaluated") + "; " +
		passed(len(p.Thresholds), "threshold", "no threshold was set")
}

// passed is "the 1 gate passed", "the 2 gates passed", or none when n is 0.
func passed(n int, what, none string) string {
	switch n {
	case 0:
		return none
	case 1:
		return "the " + what + " passed"
	}
	return "the " + strconv.Itoa(n) + " " + what + "s passed"
}

// tally counts the gates and thresholds by status: "gates: 1 failed, 1 passed, 2 not
// evaluated; thresholds: 3 of 5 failed (1 without data, allowed)".
func (p *reportPage) tally() string {
	n := map[string]int{}
	for _, g := range p.Gates {
		n[g.Class]++
	}
	var parts []string
	for _, c := range []struct{ class, word string }{{"fail", "failed"}, {"pass", "passed"}, {"na", "not evaluated"}} {
		if n[c.class] > 0 {
			parts = append(parts, strconv.Itoa(n[c.class])+" "+c.word)
		}
	}
	out := "gates: " + strings.Join(parts, ", ")
	failed, noData := 0, 0
	for _, t := range p.Thresholds {
		switch t.Class {
		case "fail":
			failed++
		case "na":
			noData++
		}
	}
	switch {
	case len(p.Thresholds) == 0:
		out += "; no threshold set"
	case failed == 0:
		out += fmt.Sprintf("; thresholds: all %d passed", len(p.Thresholds))
	default:
		out += fmt.Sprintf("; thresholds: %d of %d failed", failed, len(p.Thresholds))
	}
	if noData > 0 {
		out += fmt.Sprintf(" (%d without data, allowed)", noData)
	}
	return out
}

// gateRow is one gate: Why says which figures failed it, why it was not evaluated, or
// what a pass did not check.
type gateRow struct {
	Name, Status, Class, Why string
	Evidence                 evidence
}

// gateFailKeys are the evidence keys whose value decides a gate: a number above 0, a
// non-empty text or list, or false fails it. A gate this list does not know shows its
// evidence without a named cause.
var gateFailKeys = map[string][]string{
	GateHard:          {"invalid_transitions", "duplicate_effects", "cross_tenant_leaks", "planted_secrets"},
	GateRecovery:      {"second_creates", "tasks_accounted", "accounting"},
	GateCancellation:  {"cancels_broken"},
	GateCompatibility: {"failures"},
	GateContract:      {"cases_failed", "rules_broken", "failure"},
	GateRollback:      {"failures"},
}

// gateRowOf shows the gate g. A gate not evaluated keeps its reason as Why, out of its
// evidence; a failing one marks the evidence that failed it.
func gateRowOf(g namedGate) gateRow {
	name, ev := g.name, maps.Clone(g.evidence)
	row := gateRow{Name: name, Status: "pass", Class: "pass"}
	switch {
	case !g.evaluated:
		row.Status, row.Class = "not evaluated", "na"
		row.Why = "not evaluated"
		if r, ok := ev["reason"].(string); ok && r != "" {
			row.Why += ": " + r
			delete(ev, "reason")
		}
	case !g.pass:
		row.Status, row.Class = "FAIL", "fail"
		failing := map[string]bool{}
		var why []string
		for _, k := range gateFailKeys[name] {
			if t, bad := failingValue(ev[k]); bad {
				failing[k] = true
				if k == "failures" { // sentences already: no label
					why = append(why, t)
				} else {
					why = append(why, k+" "+t)
				}
			}
		}
		row.Why = strings.Join(why, ", ")
		if row.Why == "" {
			row.Why = "see its evidence"
		}
		row.Evidence = viewObject(ev, failing)
		return row
	default:
		if nc, ok := ev["not_checked"].([]any); ok && len(nc) > 0 {
			row.Why = "not checked: " + listText(nc)
		}
	}
	row.Evidence = viewObject(ev, nil)
	return row
}

// failingValue says whether an evidence value fails its gate (see gateFailKeys), and how
// to name it.
func failingValue(v any) (string, bool) {
	switch x := v.(type) {
	case float64:
		return num(x), x > 0
	case bool:
		return strconv.FormatBool(x), !x
	case string:
		return x, x != ""
	case []any:
		if len(x) == 0 {
			return "", false
		}
		t := cellText(x[0])
		if len(x) > 1 {
			t += fmt.Sprintf(" (and %d more)", len(x)-1)
		}
		return t, true
	}
	return "", false
}

// thresholdRow is one threshold. Why is what a failure shows in the verdict.
type thresholdRow struct {
	Expr, Value, Status, Class, Windows, Why string
	SLO                                      bool // a default SLO (source slo)
}

// thresholdRowOf shows the threshold result r (an element of summary.json's thresholds).
// A threshold with no data (no_data, or a null value: ThresholdResult.UnmarshalJSON) failed
// unless its scenario allowed that (on_no_data: pass): it then passed and says "no data
// (allowed)".
func thresholdRowOf(r ThresholdResult, ts *timeseries) thresholdRow {
	row := thresholdRow{Expr: r.Expr, Value: exactText(r.Value, r.Unit), Status: "pass", Class: "pass",
		SLO: r.Source == SourceSLO}
	if !r.Pass {
		row.Status, row.Class = "FAIL", "fail"
	}
	switch {
	case r.Error != "":
		row.Value, row.Windows, row.Why = "-", r.Error, r.Error
		return row
	case r.NoData:
		row.Value = "no data"
		if row.Class == "pass" {
			row.Status, row.Class = "no data (allowed)", "na"
			row.Windows = "nothing was measured; the scenario allows that (on_no_data: pass)"
		} else {
			row.Windows = "nothing was measured: a threshold without data fails"
		}
		row.Why = "no data"
		return row
	}
	if r.WindowsEvaluated > 0 && r.WorstWindow >= 0 { // -1: no worst window recorded
		row.Windows = fmt.Sprintf("%d of %d windows failed; worst %s in window %d%s", r.WindowsFailed,
			r.WindowsEvaluated, exactText(r.WorstValue, r.Unit), r.WorstWindow, windowSpan(ts, r.WorstWindow))
	} else {
		row.Windows = "whole run only"
	}
	row.Why = "value " + row.Value
	if row.SLO && r.Note != "" {
		row.Why += " (" + r.Note + ")"
	}
	if r.WindowsFailed > 0 {
		row.Why += "; " + row.Windows
	}
	return row
}

// windowSpan is " (1-2 s)": when window i of timeseries.csv ran, or "" when unknown.
func windowSpan(ts *timeseries, i int) string {
	if ts == nil || i < 0 {
		return ""
	}
	x := ts.col("t_s")
	if i >= len(x) {
		return ""
	}
	from := 0.0
	if i > 0 {
		from = x[i-1]
	}
	return " (" + num(from) + "-" + num(x[i]) + " s)"
}
