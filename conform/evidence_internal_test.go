package conform

import (
	"context"
	"testing"

	"github.com/tasksim/tasksim/results"
)

// TestNoEvidenceIsNoPass: a case that ends with nothing failed and nothing seen to hold is
// skipped, saying so, never passed; one that saw something passes with what it saw.
func TestNoEvidenceIsNoPass(t *testing.T) {
	s := &suite{o: Options{Budget: DefaultBudget}}
	res := &results.Contract{}
	s.runCase(context.Background(), res, caseDef{id: "silent", run: func(*run) {}}, selection{})
	s.runCase(context.Background(), res, caseDef{id: "saw", run: func(r *run) { r.pass("saw it") }}, selection{})
	if c := res.Cases[0]; c.Verdict != results.CaseSkip || c.Message == "" {
		t.Errorf("a case with no evidence: %s %q, want a skip that says why", c.Verdict, c.Message)
	}
	if c := res.Cases[1]; c.Verdict != results.CasePass || c.Message != "saw it" {
		t.Errorf("a case with evidence: %s %q, want pass \"saw it\"", c.Verdict, c.Message)
	}
}
