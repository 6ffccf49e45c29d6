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
