package mockserver_test

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/scenarios"
)

// TestIdempotentCreateReplayR53: a create repeating its tenant's idempotency key starts no
// work: it gets the key's task as it is now (same taskId), from any session of the tenant;
// one effect in the ledger. The same key in another tenant is another key, and nothing of
// the first tenant's task shows (R52, R53). LookupKey finds the task by (tenant, key).
func TestIdempotentCreateReplayR53(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{Tokens: map[string]string{"ta": "alice", "ta2": "alice", "tb": "bob"}})
		a, a2, b := h.connect(withToken("ta")), h.connect(withToken("ta2")), h.connect(withToken("tb"))
		args := map[string]any{"duration_ms": 1000, "idempotency_key": "k"}
		first := a.createTask("work", args)
		again := a2.createTask("work", args)
		if again.TaskID != first.TaskID || again.Status != mcp.StatusWorking {
			t.Fatalf("replay: %s %s, want %s working", again.TaskID, again.Status, first.TaskID)
		}
		bobs := b.createTask("work", args)
		if bobs.TaskID == first.TaskID {
			t.Fatal("bob's create with alice's key got alice's task (R53)")
		}
		time.Sleep(time.Second)
		synctest.Wait()
		done := a.createTask("work", args)
		if done.TaskID != first.TaskID || done.Status != mcp.StatusCompleted {
			t.Fatalf("replay after the work: %s %s, want %s completed", done.TaskID, done.Status, first.TaskID)
		}
		s := h.srv.Stats()
		if s.TasksCreated != 2 || s.Effects != 2 || s.DuplicateEffects != 0 || s.IdempotentReplays != 2 {
			t.Errorf("stats: %d tasks, %d effects, %d duplicates, %d replays; want 2, 2, 0, 2",
				s.TasksCreated, s.Effects, s.DuplicateEffects, s.IdempotentReplays)
		}
		for _, l := range []struct {
			tenant, key, want string
		}{{"alice", "k", first.TaskID}, {"bob", "k", bobs.TaskID}, {"carol", "k", ""}, {"alice", "other", ""}, {"", "k", ""}} {
			if id, ok := h.srv.LookupKey(l.tenant, l.key); id != l.want || ok != (l.want != "") {
				t.Errorf("LookupKey(%q, %q) = %q %v, want %q", l.tenant, l.key, id, ok, l.want)
			}
		}
	})
}

// TestIdempotentKeyExpired: once the key's task is deleted (its ttl ran out, R46), a create
// repeating the key is refused with -32602 and its work never starts again; LookupKey
// still names the task. Without tokens the tenant is "".
func TestIdempotentKeyExpired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{})
		c := h.connect()
		tk := ruleCreate(t, c, "work", map[string]any{"duration_ms": 100, "idempotency_key": "k"}, map[string]any{"ttl": 1000})
		time.Sleep(2 * time.Second)
		synctest.Wait()
		r := c.call("tools/call", map[string]any{"name": "work", "arguments": map[string]any{"idempotency_key": "k"}, "task": map[string]any{}})
		ruleErr(t, r, mcp.CodeInvalidParams, "already used", tk.TaskID, "no longer exists")
		s := h.srv.Stats()
		if s.TasksCreated != 1 || s.Effects != 1 || s.IdempotentExpired != 1 || s.IdempotentReplays != 0 {
			t.Errorf("stats: %d tasks, %d effects, %d expired, %d replays; want 1, 1, 1, 0", s.TasksCreated, s.Effects, s.IdempotentExpired, s.IdempotentReplays)
		}
		if id, ok := h.srv.LookupKey("", "k"); !ok || id != tk.TaskID {
			t.Errorf("LookupKey after expiry = %q %v, want %s", id, ok, tk.TaskID)
		}
		// A new key starts new work.
		c.createTask("work", map[string]any{"duration_ms": 1, "idempotency_key": "k2"})
		if s := h.srv.Stats(); s.TasksCreated != 2 {
			t.Errorf("%d tasks after a new key, want 2", s.TasksCreated)
		}
	})
}

// TestLedgerWindow: a key is remembered while its task is stored, however short the window
// (a replay), then for the window after its task left the store (refused as expired), then
// forgotten: the key is new again, and its second effect is no duplicate the ledger can see
// (out of scope, docs/SERVER.md#ledger-window). /metrics and Stats count the forgotten key.
func TestLedgerWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{DefaultTTL: 10 * time.Second, MaxTTL: 10 * time.Second,
			LedgerWindow: 2 * time.Second, ReaperInterval: time.Second})
		c := h.connect()
		args := map[string]any{"duration_ms": 100, "idempotency_key": "k"}
		first := c.createTask("work", args)

		time.Sleep(5 * time.Second) // past the window, but the task is stored: replayed
		if again := c.createTask("work", args); again.TaskID != first.TaskID {
			t.Fatalf("create at 5s: task %s, want the key's task %s (stored, within its ttl)", again.TaskID, first.TaskID)
		}
		time.Sleep(6500 * time.Millisecond) // swept at 10 s (its ttl): the window runs from there
		r := c.call("tools/call", map[string]any{"name": "work", "arguments": args, "task": map[string]any{}})
		ruleErr(t, r, mcp.CodeInvalidParams, "already used", first.TaskID, "no longer exists")

		time.Sleep(3 * time.Second) // the window (to 12 s) has passed; the 13 s tick forgot the key
		synctest.Wait()
		if st := h.srv.Stats(); st.Ledger.Keys != 0 || st.Ledger.Forgotten != 1 || st.Ledger.Window != 2*time.Second {
			t.Fatalf("ledger %+v: want the key forgotten, window 2s", st.Ledger)
		}
		if _, ok := h.srv.LookupKey("", "k"); ok {
			t.Error("LookupKey finds a forgotten key")
		}
		renewed := c.createTask("work", args)
		time.Sleep(time.Second)
		synctest.Wait()
		st := h.srv.Stats()
		if renewed.TaskID == first.TaskID || st.TasksCreated != 2 || st.Effects != 2 || st.DuplicateEffects != 0 {
			t.Errorf("after the window: task %s (first %s), %d tasks, %d effects, %d duplicates; want a new task, 2, 2, 0",
				renewed.TaskID, first.TaskID, st.TasksCreated, st.Effects, st.DuplicateEffects)
		}
	})
}

// TestLedgerWindowDefault: without server.ledger.window the window is the largest ttl
// granted so far, at least the default ttl and at most the max ttl.
func TestLedgerWindowDefault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{DefaultTTL: 30 * time.Second, MaxTTL: time.Minute})
		c := h.connect()
		if w := h.srv.Stats().Ledger.Window; w != 30*time.Second {
			t.Errorf("window before any task: %v, want the default ttl 30s", w)
		}
		ruleCreate(t, c, "work", map[string]any{"duration_ms": 1}, map[string]any{"ttl": 45000})
		if w := h.srv.Stats().Ledger.Window; w != 45*time.Second {
			t.Errorf("window after a 45s ttl: %v, want 45s", w)
		}
		ruleCreate(t, c, "work", map[string]any{"duration_ms": 1}, map[string]any{"ttl": 3600000}) // clamped to 1m
		if w := h.srv.Stats().Ledger.Window; w != time.Minute {
			t.Errorf("window after a clamped ttl: %v, want the max ttl 1m", w)
		}
	})
}

// TestIdempotentReplayWhenFull: a replay is answered even when the server is full, and is
// not a refusal; concurrent creates with one key make one task, and all get its id.
func TestIdempotentReplayWhenFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{Backpressure: mockserver.Backpressure{Workers: 2}})
		c := h.connect()
		args := map[string]any{"duration_ms": 1000, "idempotency_key": "k"}
		first := c.createTask("work", args)
		c.createTask("work", map[string]any{"duration_ms": 1000}) // the server is full now
		if got := c.createTask("work", args); got.TaskID != first.TaskID {
			t.Fatalf("replay on a full server: %s, want %s", got.TaskID, first.TaskID)
		}
		if s := h.srv.Stats(); s.Refusals.Total() != 0 || s.IdempotentReplays != 1 {
			t.Errorf("%d refusals, %d replays; want 0 and 1", s.Refusals.Total(), s.IdempotentReplays)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{Backpressure: mockserver.Backpressure{Workers: 1, Queue: 20}})
		const n = 20
		clients := make([]*client, n)
		for i := range clients {
			clients[i] = h.connect()
		}
		ids := make([]string, n)
		var wg sync.WaitGroup
		for i, c := range clients {
			wg.Go(func() {
				ids[i] = c.createTask("work", map[string]any{"duration_ms": 10, "idempotency_key": "race"}).TaskID
			})
		}
		wg.Wait()
		for _, id := range ids {
			if id != ids[0] {
				t.Fatalf("concurrent creates with one key got ids %v, want one", ids)
			}
		}
		time.Sleep(time.Second)
		synctest.Wait()
		s := h.srv.Stats()
		if s.TasksCreated != 1 || s.Effects != 1 || s.IdempotentReplays != n-1 || s.TasksActive != 0 || s.QueueDepth != 0 {
			t.Errorf("stats: %d tasks, %d effects, %d replays, %d active, %d queued; want 1, 1, %d, 0, 0",
				s.TasksCreated, s.Effects, s.IdempotentReplays, s.TasksActive, s.QueueDepth, n-1)
		}
	})
}

// TestNonIdempotentKnownBad: with non_idempotent a repeated key starts the work again: a
// new task, a second effect (a ledger duplicate, the hard gate's evidence), a fault event;
// LookupKey finds nothing.
func TestNonIdempotentKnownBad(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ev := metrics.NewEvents(0)
		h := newHarness(t, mockserver.Config{Events: ev, Faults: scenarios.ServerFaults{NonIdempotent: true}})
		t0 := time.Now()
		c := h.connect()
		args := map[string]any{"duration_ms": 10, "idempotency_key": "k"}
		a := c.createTask("work", args)
		time.Sleep(time.Second)
		b := c.createTask("work", args)
		if a.TaskID == b.TaskID {
			t.Fatal("non_idempotent replayed the create")
		}
		time.Sleep(time.Second)
		synctest.Wait()
		s := h.srv.Stats()
		if s.TasksCreated != 2 || s.Effects != 2 || s.DuplicateEffects != 1 || s.Faults.NonIdempotent != 1 || s.IdempotentReplays != 0 {
			t.Errorf("stats: %d tasks, %d effects, %d duplicates, %d faults, %d replays; want 2, 2, 1, 1, 0",
				s.TasksCreated, s.Effects, s.DuplicateEffects, s.Faults.NonIdempotent, s.IdempotentReplays)
		}
		if id, ok := h.srv.LookupKey("", "k"); ok {
			t.Errorf("LookupKey = %s with non_idempotent, want nothing", id)
		}
		wantEvents(t, ev, t0, "1s non_idempotent task")
	})
}
