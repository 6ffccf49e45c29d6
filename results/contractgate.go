package results

import (
	"fmt"
	"slices"
)

// contractNotRun is the contract gate's reason when the suite did not run.
const contractNotRun = "the contract suite did not run (scenario contract: true, or run --contract)"

// contractGate is the contract gate, the verdict of the contract suite (`tasksim conform`)
// run inside a run:
//
//	not evaluated  without a Contract: the suite did not run
//	evaluated      pass = c.Verdict == "pass": no case failed and at least one ran
//	               (Contract.Count)
//
// Its evidence: cases_passed, cases_failed, cases_skipped; failed, one {id, rules,
// message} per failed case; rules_broken, the rules of docs/RULES.md the failed cases
// name, sorted; skipped, one {id, reason, enable} per skipped case; tasks_created, and
// left_behind, the ids of the tasks the suite created and could not bring to an end (an
// operator may have to clean them up); suite_notes, what the suite could not do as asked.
// A failing verdict without a failed case (every case skipped) says why in "failure".
// The cases themselves, with their exchanges, are Summary.Contract.
func contractGate(c *Contract) Gate {
	if c == nil {
		return notEvaluated(contractNotRun)
	}
	// Entries are maps, as every evidence object: summary.json read back and written
	// again gives the same bytes (keys sorted).
	failed := []map[string]any{}
	skipped := []map[string]any{}
	var rules []string
	for _, k := range c.Cases {
		switch k.Verdict {
		case CaseFail:
			failed = append(failed, map[string]any{"id": k.ID, "rules": nonNilSlice(k.Broken), "message": k.Message})
			rules = append(rules, k.Broken...)
		case CasePass:
		default:
			skip := map[string]any{"id": k.ID, "reason": k.Message}
			if k.Enable != "" {
				skip["enable"] = k.Enable
			}
			skipped = append(skipped, skip)
		}
	}
	slices.Sort(rules)
	ev := map[string]any{
		"cases_passed":  c.Counts.Pass,
		"cases_failed":  c.Counts.Fail,
		"cases_skipped": c.Counts.Skip,
		"failed":        failed,
		"rules_broken":  nonNilSlice(slices.Compact(rules)),
		"skipped":       skipped,
		"tasks_created": len(c.Created),
		"left_behind":   nonNilSlice(c.LeftBehind),
	}
	if len(c.Notes) > 0 {
		ev["suite_notes"] = c.Notes
	}
	pass := c.Verdict == VerdictPass
	if !pass && len(failed) == 0 {
		if c.Counts.Pass == 0 {
			ev["failure"] = "no case ran: every case was skipped, and a suite that ran nothing shows nothing"
		} else {
			ev["failure"] = fmt.Sprintf("the suite's verdict is %q", c.Verdict)
		}
	}
	return Gate{Pass: pass, Evaluated: true, Evidence: ev}
}

// normalized returns a copy of c whose lists are never null in JSON (nil when c is).
func (c *Contract) normalized() *Contract {
	if c == nil {
		return nil
	}
	n := *c
	n.Cases = make([]ContractCase, len(c.Cases))
	for i, k := range c.Cases {
		k.Rules = nonNilSlice(k.Rules)
		k.Broken = nonNilSlice(k.Broken)
		if k.Evidence == nil {
			k.Evidence = []Exchange{}
		}
		n.Cases[i] = k
	}
	n.Created, n.LeftBehind, n.Notes = nonNilSlice(c.Created), nonNilSlice(c.LeftBehind), nonNilSlice(c.Notes)
	return &n
}
