package mockserver_test

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/scenarios"
)

// opKeys are the idempotency keys (or, without one, the task ids) of ops, sorted.
func opKeys(ops []mockserver.ReconciledOp) []string {
	var out []string
	for _, o := range ops {
		out = append(out, o.Key+"/"+o.Status)
	}
	slices.Sort(out)
	return out
}

// TestRollBackReconciles: at the switch four tasks are in flight; afterwards one completes
// (applied), one fails and one is cancelled (not applied), one is still running (unknown);
// a task that ended before the switch is not in flight; a create after the switch is
// counted. In virtual time, exact.
func TestRollBackReconciles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{})
		c := h.connect()
		if h.srv.Reconcile() != nil {
			t.Fatal("a reconciliation before any rollback")
		}
		c.createTask("work", map[string]any{"duration_ms": 10, "idempotency_key": "before"})
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		c.createTask("work", map[string]any{"duration_ms": 1000, "idempotency_key": "done"})
		c.createTask("work", map[string]any{"duration_ms": 1000, "outcome": "failed", "idempotency_key": "failed"})
		cancelled := c.createTask("work", map[string]any{"duration_ms": 1000, "idempotency_key": "cancelled"})
		c.createTask("work", map[string]any{"duration_ms": 60000, "idempotency_key": "running"})

		h.srv.RollBack(time.Now(), false)
		h.srv.RollBack(time.Now().Add(time.Hour), false) // a second switch changes nothing
		c.call("tasks/cancel", map[string]any{"taskId": cancelled.TaskID})
		c.createTask("work", map[string]any{"duration_ms": 10, "idempotency_key": "after"})
		time.Sleep(2 * time.Second)
		synctest.Wait()

		r := h.srv.Reconcile()
		if r.InFlight != 4 || r.CreatesAfter != 1 || r.TasksLost != 0 {
			t.Errorf("in flight %d, creates after %d, lost %d; want 4, 1, 0", r.InFlight, r.CreatesAfter, r.TasksLost)
		}
		for _, c := range []struct {
			name string
			got  []mockserver.ReconciledOp
			want []string
		}{
			{"applied", r.Applied, []string{"done/completed"}},
			{"not applied", r.NotApplied, []string{"cancelled/cancelled", "failed/failed"}},
			{"unknown", r.Unknown, []string{"running/working"}},
		} {
			if got := opKeys(c.got); !slices.Equal(got, c.want) {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
			}
		}
	})
}

// TestRollBackReconcilesPastTheWindow: the keys of the operations in flight at the switch
// outlive the ledger window (ledger.go's pin), so the reconciliation at the end of a long
// drill still finds their effects after their tasks and windows are gone.
func TestRollBackReconcilesPastTheWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{DefaultTTL: 2 * time.Second, MaxTTL: 2 * time.Second,
			LedgerWindow: time.Second, ReaperInterval: time.Second})
		c := h.connect()
		c.createTask("work", map[string]any{"duration_ms": 100, "idempotency_key": "done"})
		h.srv.RollBack(time.Now(), false)
		time.Sleep(10 * time.Second) // the task expired at 2 s, its window ended at 3 s
		synctest.Wait()
		r := h.srv.Reconcile()
		if got := opKeys(r.Applied); !slices.Equal(got, []string{"done/completed"}) || len(r.NotApplied)+len(r.Unknown) != 0 {
			t.Errorf("applied %v, not applied %v, unknown %v; want done/completed applied", got, opKeys(r.NotApplied), opKeys(r.Unknown))
		}
		if st := h.srv.Stats(); st.Ledger.Keys != 1 || st.Ledger.Forgotten != 0 {
			t.Errorf("ledger %+v: want the drill's key kept", st.Ledger)
		}
	})
}

// TestRollBackRestartLosesTasks: a rollback that restarts a server without durable
// storage loses the tasks in flight: their operations are unknown, "lost", and counted.
func TestRollBackRestartLosesTasks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{Faults: scenarios.ServerFaults{RestartLosesTasks: true}})
		c := h.connect()
		a := c.createTask("work", map[string]any{"duration_ms": 1000, "idempotency_key": "a"})
		c.createTask("work", map[string]any{"duration_ms": 1000})
		h.srv.RollBack(time.Now(), true)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		r := h.srv.Reconcile()
		if r.InFlight != 2 || r.TasksLost != 2 || len(r.Applied) != 0 || len(r.NotApplied) != 0 || len(r.Unknown) != 2 {
			t.Fatalf("reconciliation %+v: want 2 in flight, both lost and unknown", r)
		}
		if got := opKeys(r.Unknown); !slices.Equal(got, []string{"/lost", "a/lost"}) {
			t.Errorf("unknown %v", got)
		}
		if r.Unknown[0].TaskID == "" || (r.Unknown[0].Key == "a") != (r.Unknown[0].TaskID == a.TaskID) {
			t.Errorf("unknown ops %+v: each names its task", r.Unknown)
		}
	})
}
