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
func contractGate(c *Contract) Gate[ContractEvidence] {
	if c == nil {
		return Gate[ContractEvidence]{Pass: true, Evidence: ContractEvidence{Reason: contractNotRun}}
	}
	ev := ContractEvidence{
		CasesPassed:  c.Counts.Pass,
		CasesFailed:  c.Counts.Fail,
		CasesSkipped: c.Counts.Skip,
		Failed:       []ContractFailure{},
		Skipped:      []ContractSkip{},
		TasksCreated: len(c.Created),
		LeftBehind:   nonNilSlice(c.LeftBehind),
	}
	var rules []string
	for _, k := range c.Cases {
		switch k.Verdict {
		case CaseFail:
			ev.Failed = append(ev.Failed, ContractFailure{ID: k.ID, Rules: nonNilSlice(k.Broken), Message: k.Message})
			rules = append(rules, k.Broken...)
		case CasePass:
		default:
			ev.Skipped = append(ev.Skipped, ContractSkip{ID: k.ID, Reason: k.Message, Enable: k.Enable})
		}
	}
	slices.Sort(rules)
	ev.RulesBroken = nonNilSlice(slices.Compact(rules))
	if len(c.Notes) > 0 {
		ev.SuiteNotes = c.Notes
	}
	pass := c.Verdict == VerdictPass
	if !pass && len(ev.Failed) == 0 {
		if c.Counts.Pass == 0 {
			ev.Failure = "no case ran: every case was skipped, and a suite that ran nothing shows nothing"
		} else {
			ev.Failure = fmt.Sprintf("the suite's verdict is %q", c.Verdict)
		}
	}
	return Gate[ContractEvidence]{Pass: pass, Evaluated: true, Evidence: ev}
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
