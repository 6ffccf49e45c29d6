package mockserver_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/scenarios"
)

func bpFixed(d time.Duration) scenarios.Dist {
	return scenarios.Dist{Kind: scenarios.DistFixed, Value: scenarios.Duration(d)}
}

// TestDownstreamCapacityQueueRejections: Capacity operations run at once, QueueLimit wait,
// the next is rejected at once (its task fails with a JSON-RPC error); each slot's wait is
// recorded as downstream_wait; the task completes when its operation returns.
func TestDownstreamCapacityQueueRejections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := metrics.NewRecorder(1, time.Now())
		h := newHarness(t, mockserver.Config{Metrics: rec.Shard(0),
			Downstream: mockserver.Downstream{Capacity: 2, QueueLimit: 1, ServiceTime: bpFixed(time.Second)}})
		c := h.connect()
		var ids []string
		// Task i works i ms, so the five operations reach the downstream one by one, in order:
		// timers due at one instant fire in no defined order.
		for i := range 5 {
			ids = append(ids, c.createTask("work", map[string]any{"duration_ms": i, "idempotency_key": "k" + itoa(i)}).TaskID)
		}
		time.Sleep(4 * time.Millisecond)
		synctest.Wait() // the work ends: five operations went downstream at 0..4 ms
		s := h.srv.Stats()
		if s.DownstreamInFlight != 2 || s.DownstreamQueueDepth != 1 || s.DownstreamRejections != 2 {
			t.Fatalf("in flight %d, waiting %d, rejected %d; want 2, 1, 2", s.DownstreamInFlight, s.DownstreamQueueDepth, s.DownstreamRejections)
		}
		for i, id := range ids {
			st, msg := bpStatus(t, c, id)
			if i < 3 && (st != mcp.StatusWorking || !strings.HasPrefix(msg, "committing")) {
				t.Errorf("task %d: %s %q, want working, committing", i, st, msg)
			}
			if i >= 3 && (st != mcp.StatusFailed || !strings.Contains(msg, "downstream rejected")) {
				t.Errorf("task %d: %s %q, want failed by a rejection", i, st, msg)
			}
		}
		r := c.call("tasks/result", map[string]any{"taskId": ids[4]})
		if r.Err == nil || r.Err.Code != mcp.CodeInternalError || !strings.Contains(r.Err.Message, "downstream rejected") {
			t.Errorf("tasks/result of a rejected task: %s, want JSON-RPC error -32603", r.Raw)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		s = h.srv.Stats()
		if s.DownstreamInFlight != 1 || s.DownstreamQueueDepth != 0 {
			t.Errorf("at 1 s: in flight %d waiting %d, want 1 and 0", s.DownstreamInFlight, s.DownstreamQueueDepth)
		}
		for i := range 2 {
			if st, _ := bpStatus(t, c, ids[i]); st != mcp.StatusCompleted {
				t.Errorf("at 1 s task %d is %s, want completed", i, st)
			}
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if st, _ := bpStatus(t, c, ids[2]); st != mcp.StatusCompleted {
			t.Errorf("at 2 s task 2 is %s, want completed", st)
		}
		s = h.srv.Stats()
		if s.DownstreamInFlight != 0 || s.Effects != 3 || s.Ledger.Rejected != 2 || s.Ledger.Operations != 5 {
			t.Errorf("stats %+v, want idle, 3 effects, 2 rejected of 5 operations", s.BackpressureStats)
		}
		e, ok := h.srv.Effect("", "k2")
		if !ok || e.Applied != 1 || e.TaskID != ids[2] || e.Actor == "" || e.Tool != "work" || !strings.HasPrefix(e.Receipt, "ds-") {
			t.Errorf("ledger entry of k2: %+v, want one applied effect of task %s with actor, tool and receipt", e, ids[2])
		}
		rec.Flush(time.Now())
		snap := rec.Total()
		w := snap.Summary(metrics.DownstreamWait)
		if w.Count != 3 || w.Min != 0 || w.Max < 997 || w.Max > 999 {
			t.Errorf("downstream_wait count %d min %.1f max %.1f ms, want 3 values, 0 and 998 ms (queued at 2 ms, slot at 1 s)", w.Count, w.Min, w.Max)
		}
		if n := snap.Counters[metrics.DownstreamRejections]; n != 2 {
			t.Errorf("downstream_rejections %d, want 2", n)
		}
	})
}

// TestDownstreamFailureRate: with FailureRate p, the failed share of N operations lies in
// the binomial 99% interval, each failure fails its task with a JSON-RPC error, and the
// same seed gives the same failures.
func TestDownstreamFailureRate(t *testing.T) {
	const n, p = 1000, 0.1
	run := func(seed uint64) (failed uint64) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, mockserver.Config{Seed: seed,
				Downstream: mockserver.Downstream{Capacity: 10, FailureRate: p, ServiceTime: bpFixed(time.Millisecond)}})
			c := h.connect()
			var ids []string
			for range n {
				ids = append(ids, c.createTask("work", map[string]any{"duration_ms": 0}).TaskID)
			}
			time.Sleep(time.Second)
			synctest.Wait()
			s := h.srv.Stats()
			failed = s.DownstreamFailures
			if s.Ledger.Failed != failed || s.Effects != n-failed {
				t.Errorf("ledger %+v, want %d failed and the rest applied", s.Ledger, failed)
			}
			var fails uint64
			for _, id := range ids[:100] {
				if st, msg := bpStatus(t, c, id); st == mcp.StatusFailed {
					fails++
					if !strings.Contains(msg, "downstream operation ds-") {
						t.Errorf("failed task statusMessage %q", msg)
					}
				}
			}
			if fails == 0 || fails == 100 {
				t.Errorf("%d of the first 100 tasks failed", fails)
			}
		})
		return failed
	}
	lo, hi := binom99(n, p)
	a := run(7)
	if a < uint64(lo) || a > uint64(hi) {
		t.Errorf("%d of %d operations failed, want within the 99%% interval [%d, %d]", a, n, lo, hi)
	}
	if b := run(7); b != a {
		t.Errorf("same seed: %d then %d failures", a, b)
	}
}

// TestDownstreamStallWindow: an operation that starts inside a stall window waits for its
// end; those behind it queue and drain once it is over.
func TestDownstreamStallWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := metrics.NewRecorder(1, time.Now())
		h := newHarness(t, mockserver.Config{Metrics: rec.Shard(0), Downstream: mockserver.Downstream{
			Capacity: 1, ServiceTime: bpFixed(100 * time.Millisecond),
			StallWindows: []mockserver.Window{{Start: time.Second, Duration: 2 * time.Second}},
		}})
		c := h.connect()
		before := c.createTask("work", map[string]any{"duration_ms": 0})
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		if st, _ := bpStatus(t, c, before.TaskID); st != mcp.StatusCompleted {
			t.Fatalf("before the window: %s at 100 ms, want completed", st)
		}
		time.Sleep(1400 * time.Millisecond) // 1.5 s: inside the window
		a := c.createTask("work", map[string]any{"duration_ms": 0})
		b := c.createTask("work", map[string]any{"duration_ms": 1}) // 1 ms later: a is first
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if s := h.srv.Stats(); s.DownstreamInFlight != 1 || s.DownstreamQueueDepth != 1 {
			t.Fatalf("in the window: %d in flight, %d waiting; want 1 and 1", s.DownstreamInFlight, s.DownstreamQueueDepth)
		}
		time.Sleep(1598 * time.Millisecond) // 3.099 s
		synctest.Wait()
		if st, _ := bpStatus(t, c, a.TaskID); st != mcp.StatusWorking {
			t.Fatalf("at 3.099 s: %s, want working (window end 3 s + 100 ms service)", st)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if st, _ := bpStatus(t, c, a.TaskID); st != mcp.StatusCompleted {
			t.Fatalf("at 3.1 s: %s, want completed", st)
		}
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		if st, _ := bpStatus(t, c, b.TaskID); st != mcp.StatusCompleted {
			t.Fatalf("at 3.2 s: %s, want completed", st)
		}
		rec.Flush(time.Now())
		if w := rec.Total().Summary(metrics.DownstreamWait); w.Count != 3 || w.Max < 1598 || w.Max > 1600 {
			t.Errorf("downstream_wait count %d max %.1f ms, want 3 values, max 1599 ms (b queued at 1.501 s, slot at 3.1 s)", w.Count, w.Max)
		}
	})
}

// TestLedgerDuplicates: a reused idempotency key applied twice is one duplicate, distinct
// keys are none, the key is per tenant; with and without the downstream model. A correct
// server never starts a key's work twice (idempotency_test.go), so the duplicates come from
// the known-bad mode non_idempotent, which is what the ledger is there to catch.
func TestLedgerDuplicates(t *testing.T) {
	for _, capacity := range []int{0, 1} {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, mockserver.Config{
				Tokens:     map[string]string{"ta": "alice", "tb": "bob"},
				Downstream: mockserver.Downstream{Capacity: capacity, ServiceTime: bpFixed(10 * time.Millisecond)},
				Faults:     scenarios.ServerFaults{NonIdempotent: true},
			})
			a, b := h.connect(withToken("ta")), h.connect(withToken("tb"))
			for _, k := range []string{"x", "y", "z"} {
				a.createTask("work", map[string]any{"duration_ms": 10, "idempotency_key": k})
			}
			b.createTask("work", map[string]any{"duration_ms": 10, "idempotency_key": "x"}) // another tenant's x
			time.Sleep(time.Second)
			synctest.Wait()
			if s := h.srv.Stats(); s.DuplicateEffects != 0 || s.Effects != 4 {
				t.Fatalf("capacity %d: distinct keys: %d duplicates of %d effects, want 0 of 4", capacity, s.DuplicateEffects, s.Effects)
			}
			a.createTask("work", map[string]any{"duration_ms": 10, "idempotency_key": "x"})
			c2 := h.connect(withToken("ta"))
			c2.createTask("work", map[string]any{"duration_ms": 10, "idempotency_key": "x"})
			time.Sleep(time.Second)
			synctest.Wait()
			if s := h.srv.Stats(); s.DuplicateEffects != 2 || s.Effects != 6 {
				t.Errorf("capacity %d: key x reused twice: %d duplicates of %d effects, want 2 of 6", capacity, s.DuplicateEffects, s.Effects)
			}
			if e, _ := h.srv.Effect("alice", "x"); e.Applied != 3 || e.Operations != 3 {
				t.Errorf("capacity %d: alice/x %+v, want 3 applied", capacity, e)
			}
			if e, _ := h.srv.Effect("bob", "x"); e.Applied != 1 {
				t.Errorf("capacity %d: bob/x %+v, want 1 applied", capacity, e)
			}
			if s := h.srv.Stats(); s.Faults.NonIdempotent != 2 || s.IdempotentReplays != 0 {
				t.Errorf("capacity %d: %d non_idempotent faults, %d replays; want 2 and 0", capacity, s.Faults.NonIdempotent, s.IdempotentReplays)
			}
			if id, ok := h.srv.LookupKey("alice", "x"); ok {
				t.Errorf("capacity %d: LookupKey found %s with non_idempotent on, want nothing", capacity, id)
			}
		})
	}
}

// TestEffectAfterCancel: cancel is not rollback. Cancelled while its operation is with the
// downstream, the task stays cancelled and the effect still happens (counted); cancelled
// during its work, before the operation was sent, nothing happens.
func TestEffectAfterCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{Downstream: mockserver.Downstream{Capacity: 1, ServiceTime: bpFixed(2 * time.Second)}})
		c := h.connect()
		inFlight := c.createTask("work", map[string]any{"duration_ms": 0, "idempotency_key": "sent"})
		early := c.createTask("work", map[string]any{"duration_ms": 1000, "idempotency_key": "early"})
		synctest.Wait()
		for _, id := range []string{inFlight.TaskID, early.TaskID} {
			if r := c.call("tasks/cancel", map[string]any{"taskId": id}); r.Err != nil {
				t.Fatalf("cancel: %v", r.Err)
			}
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if st, _ := bpStatus(t, c, inFlight.TaskID); st != mcp.StatusCancelled {
			t.Errorf("task whose effect happened after its cancel: %s, want cancelled", st)
		}
		s := h.srv.Stats()
		if s.EffectsAfterCancel != 1 || s.Effects != 1 {
			t.Errorf("effects %d after cancel %d, want 1 and 1", s.Effects, s.EffectsAfterCancel)
		}
		if e, ok := h.srv.Effect("", "sent"); !ok || !e.AfterCancel {
			t.Errorf("ledger entry %+v, want applied after cancel", e)
		}
		if _, ok := h.srv.Effect("", "early"); ok {
			t.Errorf("a task cancelled during its work reached the ledger")
		}
	})
}

// TestDownstreamSyncCall: a synchronous call's work goes through the downstream too, and a
// downstream failure is its JSON-RPC error.
func TestDownstreamSyncCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{Downstream: mockserver.Downstream{Capacity: 1, FailureRate: 1, ServiceTime: bpFixed(time.Second)}})
		c := h.connect()
		t0 := time.Now()
		r := c.call("tools/call", map[string]any{"name": "work_sync", "arguments": map[string]any{"duration_ms": 500, "idempotency_key": "s"}})
		if r.Err == nil || !strings.Contains(r.Err.Message, "downstream operation failed") {
			t.Fatalf("sync call: %s, want a downstream failure", r.Raw)
		}
		if d := time.Since(t0); d != 1500*time.Millisecond {
			t.Errorf("sync call took %v, want 1.5 s (work + service)", d)
		}
		if e, ok := h.srv.Effect("", "s"); !ok || e.Applied != 0 || e.Operations != 1 {
			t.Errorf("ledger %+v, want one failed operation", e)
		}
	})
}

// TestDownstreamStallProbability: with StallProbability p, the share of operations held an
// extra StallDuration lies in the binomial 99% interval.
func TestDownstreamStallProbability(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n, p = 1000, 0.2
		h := newHarness(t, mockserver.Config{Seed: 3, Downstream: mockserver.Downstream{Capacity: n,
			ServiceTime: bpFixed(time.Millisecond), StallProbability: p, StallDuration: 10 * time.Second}})
		c := h.connect()
		for range n {
			c.createTask("work", map[string]any{"duration_ms": 0})
		}
		time.Sleep(time.Second)
		synctest.Wait()
		stalled := h.srv.Stats().DownstreamInFlight // the others returned after 1 ms
		if lo, hi := binom99(n, p); stalled < int64(lo) || stalled > int64(hi) {
			t.Errorf("%d of %d operations stalled, want within [%d, %d]", stalled, n, lo, hi)
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if s := h.srv.Stats(); s.DownstreamInFlight != 0 || s.Effects != n {
			t.Errorf("after the stalls: %d in flight, %d effects; want 0 and %d", s.DownstreamInFlight, s.Effects, n)
		}
	})
}
