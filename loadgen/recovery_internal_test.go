package loadgen

import (
	"strconv"
	"testing"
	"testing/synctest"
	"time"
)

// TestListReconcilerBounded: tasks/list reconciliation knows every id learned within its
// horizon, and over a long run holds at most two horizons of them, not every task the run
// created (issue 27: the load generator's per-task state is bounded too).
func TestListReconcilerBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const span = 8 * time.Second // horizon 10s
		l := newListReconciler(span)
		const perSecond = 100
		peak := 0
		for s := range 3600 { // an hour at 100 tasks a second
			for i := range perSecond {
				l.learn(strconv.Itoa(s*perSecond + i))
			}
			peak = max(peak, l.size())
			time.Sleep(time.Second)
		}
		if limit := 2 * perSecond * int(l.horizon/time.Second); peak > limit {
			t.Errorf("held %d ids at the peak, want at most two horizons' worth (%d)", peak, limit)
		}
		// Every id of the last horizon is still known.
		l.mu.Lock()
		defer l.mu.Unlock()
		for s := 3600 - int(l.horizon/time.Second); s < 3600; s++ {
			if id := strconv.Itoa(s * perSecond); !l.knowsLocked(id) {
				t.Fatalf("id %s, learned %ds before the end (horizon %v), is forgotten", id, 3600-s, l.horizon)
			}
		}
	})
}

// TestListReconcilerKeepsWhatAnOpenCreateNeeds: while a create sent long ago is not settled
// (its retries and its reconciliation's pages can outlast any horizon), no id it could
// claim is forgotten; once it settles, the generations turn again and the memory is bounded.
func TestListReconcilerKeepsWhatAnOpenCreateNeeds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newListReconciler(8 * time.Second) // horizon 10s
		sent := time.Now()
		l.sent(sent)
		time.Sleep(500 * time.Millisecond)
		l.learn("x") // created after the send: a candidate of its reconciliation
		for s := range 120 {
			l.learn(strconv.Itoa(s))
			time.Sleep(time.Second)
		}
		l.mu.Lock()
		kept := l.knowsLocked("x")
		l.mu.Unlock()
		if !kept {
			t.Fatal("an id the unsettled create could claim was forgotten")
		}
		l.settled(sent)
		for s := range 60 {
			l.learn("after-" + strconv.Itoa(s))
			time.Sleep(time.Second)
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.knowsLocked("x") || len(l.known)+len(l.older) > 2*int(l.horizon/time.Second)+2 {
			t.Errorf("after the create settled: x known %v, %d ids held; want x gone and at most two horizons", l.knowsLocked("x"), len(l.known)+len(l.older))
		}
	})
}
