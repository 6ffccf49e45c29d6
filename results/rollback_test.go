package results

import (
	"slices"
	"testing"
)

// TestRollbackGate: each failure condition of the rollback gate alone fails it, naming
// itself; a clean drill passes; a drill without a switch is not evaluated.
func TestRollbackGate(t *testing.T) {
	budget := 5.0
	clean := func() *Rollback {
		return &Rollback{Trigger: "at 2s", AtS: 2, ServerCreatesAfter: 0, PreSwitch: 10, Settled: 9, Listed: 1,
			DrainS: 1.25, FallbackCalls: 100, FallbackErrors: 5,
			Reconciliation: &Reconciliation{InFlight: 10, Applied: make([]ReconciledOp, 25)}}
	}
	for _, tc := range []struct {
		name   string
		edit   func(*Rollback)
		failed string // "" = pass
	}{
		{"clean", func(*Rollback) {}, ""},
		{"creates after the switch", func(r *Rollback) { r.CreatesAfter = 1 }, "the clients sent task-augmented creates after the switch"},
		{"server created after", func(r *Rollback) { r.ServerCreatesAfter = 2 }, "the embedded server created tasks after the switch"},
		{"external target", func(r *Rollback) { r.ServerCreatesAfter, r.Reconciliation = -1, nil }, ""},
		{"nothing in flight", func(r *Rollback) { r.PreSwitch, r.Settled, r.Listed = 0, 0, 0 }, "no task was in flight at the switch: the drill rehearsed no watcher"},
		{"lost tasks", func(r *Rollback) { r.Settled, r.Unlisted = 8, 1 }, "tasks running at the switch vanished before their ttl (tasks/get -32602; the clients count them lost, and the recovery gate lists them for reconciliation): the server lost them, and whether their work happened is unknown"},
		{"fallback errors", func(r *Rollback) { r.FallbackErrors = 6 }, "the fallback path's error rate exceeds the error budget"},
		{"no fallback", func(r *Rollback) { r.FallbackCalls, r.FallbackErrors, r.Refused = 0, 0, 40 }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := clean()
			tc.edit(r)
			g := rollbackGate(RunInfo{Rollback: r, ErrorBudget: &budget})
			failures := g.Evidence.Failures
			if !g.Evaluated || g.Pass != (tc.failed == "") || (tc.failed != "" && !slices.Equal(failures, []string{tc.failed})) {
				t.Errorf("gate pass %v evaluated %v, failures %q; want failure %q", g.Pass, g.Evaluated, failures, tc.failed)
			}
		})
	}
	g := rollbackGate(RunInfo{Rollback: clean(), ErrorBudget: &budget})
	rc := g.Evidence.Reconciliation
	if rc.Applied != 25 || len(rc.AppliedSample) != rollbackSample || *g.Evidence.DrainS != 1.25 || *g.Evidence.FallbackErrorsRate != 5.0 {
		t.Errorf("evidence %v", g.Evidence)
	}
	for _, r := range []*Rollback{nil, {}} {
		if g := rollbackGate(RunInfo{Rollback: r}); g.Evaluated || !g.Pass || g.Evidence.Reason == "" {
			t.Errorf("rollback %+v: gate %+v, want not evaluated with a reason", r, g)
		}
	}
}
