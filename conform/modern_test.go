package conform_test

import (
	"testing"

	"github.com/tasksim/tasksim/conform"
	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/results"
)

// TestModernMockPasses: against the mock answering only 2026-07-28, the era is detected and
// every modern case passes, the isolation case too with a second identity.
func TestModernMockPasses(t *testing.T) {
	cfg, a, b := tenants()
	cfg.Protocols = mockserver.ProtocolsModern
	res := runSuite(t, cfg, conform.Options{Target: &loadgen.Target{Header: a}, Other: b})
	dump(t, res)
	for _, k := range res.Cases {
		if k.Verdict != results.CasePass {
			t.Errorf("%s: %s (%s)", k.ID, k.Verdict, k.Message)
		}
	}
	if len(res.Cases) != len(conform.ModernCases()) || res.Verdict != results.VerdictPass || res.Protocol != conform.ProtocolModern {
		t.Errorf("%d verdicts for %d cases, verdict %s, protocol %q", len(res.Cases), len(conform.ModernCases()), res.Verdict, res.Protocol)
	}
}
