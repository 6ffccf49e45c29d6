package mockserver_test

// Tests of the server faults (faults.go). Each fault is asserted exactly, with probability
// 1 or with windows in virtual time; TestFaultTriggerProbability covers the random path.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/scenarios"
)

// always fires at every opportunity.
var always = scenarios.Trigger{Probability: 1}

// window fires during the first w of every period.
func window(every, w time.Duration) scenarios.Trigger {
	return scenarios.Trigger{Every: scenarios.Duration(every), Window: scenarios.Duration(w)}
}

// wantEvents fails unless ev holds exactly the events want, in order (At as offsets from t0).
func wantEvents(t *testing.T, ev *metrics.Events, t0 time.Time, want ...string) {
	t.Helper()
	kept, dropped := ev.Kept()
	var got []string
	for _, e := range kept {
		if e.Source != "server" {
			t.Errorf("event %+v: source %q, want server", e, e.Source)
		}
		s := fmt.Sprintf("%v %s", e.At.Sub(t0), e.Kind)
		if e.Task != "" {
			s += " task"
		}
		got = append(got, s)
	}
	if dropped != 0 || strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("events %q (%d dropped), want %q", got, dropped, want)
	}
}

// TestFaultHTTP5xx: inside a window every POST is answered with the fault status and is not
// processed (no task); 503 carries Retry-After: 1, other statuses none.
func TestFaultHTTP5xx(t *testing.T) {
	for _, status := range []int{0, 502} {
		synctest.Test(t, func(t *testing.T) {
			ev := metrics.NewEvents(0)
			h := newHarness(t, mockserver.Config{Events: ev,
				Faults: scenarios.ServerFaults{HTTP5xx: window(10*time.Second, 2*time.Second), Status: status}})
			t0 := time.Now()
			if r := h.do(ruleInitRequest(ruleInitBody, "")); r.Status != cmpOr(status, 503) {
				t.Fatalf("initialize inside the window: HTTP %d, want %d", r.Status, cmpOr(status, 503))
			}
			ruleUntil(t0, 2*time.Second) // the window [0, 2s) is over
			c := h.connect()
			ruleUntil(t0, 10*time.Second) // the next window
			resp := c.start("tools/call", map[string]any{"name": "work", "arguments": map[string]any{}, "task": map[string]any{}})
			body := string(resp.all())
			want := cmpOr(status, 503)
			if resp.Status != want || !strings.Contains(body, "http_5xx") || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
				t.Fatalf("tools/call in the window: HTTP %d %s %q, want %d text/plain", resp.Status, resp.Header.Get("Content-Type"), body, want)
			}
			if ra := resp.Header.Get("Retry-After"); (want == 503) != (ra == "1") {
				t.Errorf("HTTP %d with Retry-After %q, want 1 exactly with 503", want, ra)
			}
			ruleUntil(t0, 12*time.Second)
			c.createTask("work", map[string]any{"duration_ms": 1})
			st := h.srv.Stats()
			if st.TasksCreated != 1 || st.Faults.HTTP5xx != 2 || st.Faults.Total() != 2 || st.Requests.Total(mcp.OpToolsCall) != 1 {
				t.Errorf("stats: %d tasks, faults %+v, %d tools/call counted; want 1 task (the one after the window), 2 http_5xx, 1 counted",
					st.TasksCreated, st.Faults, st.Requests.Total(mcp.OpToolsCall))
			}
			wantEvents(t, ev, t0, "0s http_5xx", "10s http_5xx")
		})
	}
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// TestFaultReset: a reset POST gets no reply at all (a transport error) and is not
// processed; GET is not a reset opportunity.
func TestFaultReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ev := metrics.NewEvents(0)
		h := newHarness(t, mockserver.Config{Events: ev, Faults: scenarios.ServerFaults{Reset: window(time.Minute, time.Second)}})
		t0 := time.Now()
		r := h.do(ruleInitRequest(ruleInitBody, ""))
		if b := r.all(); !r.Aborted || r.Status != 0 || len(b) != 0 {
			t.Fatalf("initialize in the window: aborted %v, HTTP %d, %q; want the connection closed with nothing written", r.Aborted, r.Status, b)
		}
		if st := h.srv.Stats(); st.Sessions != 0 || st.Faults.Reset != 1 {
			t.Fatalf("a reset initialize opened %d sessions (%d resets counted), want 0 (1)", st.Sessions, st.Faults.Reset)
		}
		ruleUntil(t0, time.Second)
		c := h.connect()
		ruleUntil(t0, time.Minute)
		r = c.start("tools/call", map[string]any{"name": "work", "arguments": map[string]any{}, "task": map[string]any{}})
		if r.all(); !r.Aborted {
			t.Fatalf("tools/call in the window: HTTP %d, want a reset", r.Status)
		}
		ruleGETStream(t, c) // GET is not a POST: served in the window
		if st := h.srv.Stats(); st.TasksCreated != 0 || st.Faults.Reset != 2 {
			t.Errorf("%d tasks, %d resets; want 0 and 2", st.TasksCreated, st.Faults.Reset)
		}
		wantEvents(t, ev, t0, "0s reset", "1m0s reset")
	})
}

// TestFaultResetOverTCP: over a real connection a reset is a transport error for the
// client: the connection closes with no response.
func TestFaultResetOverTCP(t *testing.T) {
	srv, err := mockserver.NewServer(mockserver.Config{Faults: scenarios.ServerFaults{Reset: always}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cl := &http.Client{Transport: &http.Transport{}}
	defer cl.CloseIdleConnections()
	resp, err := cl.Post(srv.URL, "application/json", strings.NewReader(ruleInitBody))
	if err == nil {
		resp.Body.Close()
		t.Fatalf("reset POST: HTTP %d, want a transport error", resp.StatusCode)
	}
	if n := srv.Stats().Faults.Reset; n == 0 {
		t.Errorf("no reset counted")
	}
}

// TestFaultSessionExpiryH8: a request naming a live session inside the window forgets the
// session and is answered 404 without being processed; the client initializes again (H8).
// The session's GET stream ends; tasks outlive the session (they are the tenant's).
func TestFaultSessionExpiryH8(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ev := metrics.NewEvents(0)
		h := newHarness(t, mockserver.Config{Events: ev, Faults: scenarios.ServerFaults{SessionExpiry: window(10*time.Second, time.Second)}})
		t0 := time.Now()
		if r := h.do(ruleInitRequest(ruleInitBody, "")); r.Status != http.StatusOK {
			t.Fatalf("initialize carries no session: HTTP %d, want 200", r.Status)
		}
		ruleUntil(t0, time.Second)
		c := h.connect()
		tk := c.createTask("work", map[string]any{"duration_ms": 60_000})
		get := ruleGETStream(t, c)
		ruleUntil(t0, 10*time.Second)
		r := c.start("tools/call", map[string]any{"name": "work", "arguments": map[string]any{}, "task": map[string]any{}})
		if b := r.all(); r.Status != http.StatusNotFound || !strings.Contains(string(b), "H8") {
			t.Fatalf("in the window: HTTP %d %s, want 404 (H8)", r.Status, b)
		}
		if _, ok := get.nextEvent(); ok {
			t.Error("the forgotten session's GET stream goes on")
		}
		if r := c.start("tasks/get", map[string]any{"taskId": tk.TaskID}); r.Status != http.StatusNotFound {
			t.Fatalf("the forgotten session again: HTTP %d, want 404", r.Status)
		}
		st := h.srv.Stats()
		if st.TasksCreated != 1 || st.Faults.SessionExpiry != 1 || st.Rejections.Of(http.StatusNotFound) != 1 {
			t.Errorf("%d tasks, %d expiries, %d 404 rejections; want 1, 1 and 1 (the request after the expiry)",
				st.TasksCreated, st.Faults.SessionExpiry, st.Rejections.Of(http.StatusNotFound))
		}
		ruleUntil(t0, 11*time.Second)
		c2 := h.connect()
		if got := ruleWantStatus(t, c2, tk.TaskID, mcp.StatusWorking); got.TaskID != tk.TaskID {
			t.Errorf("task %s after re-initializing, want %s", got.TaskID, tk.TaskID)
		}
		wantEvents(t, ev, t0, "10s session_expiry")
	})
}

// TestFaultRestart: at each scheduled instant (each of At, every Every) every session is
// forgotten: requests get 404 (H8), streams end; tasks survive unless RestartLosesTasks,
// which deletes them (tasks/get -32602, R46) and stops their work (no effect ever).
func TestFaultRestart(t *testing.T) {
	for _, lose := range []bool{false, true} {
		ruleRun(t, fmt.Sprintf("loses tasks %v", lose), func(t *testing.T) {
			ev := metrics.NewEvents(0)
			sec := func(n int) scenarios.Duration { return scenarios.Duration(time.Duration(n) * time.Second) }
			h := newHarness(t, mockserver.Config{Events: ev, DefaultTTL: time.Hour, Faults: scenarios.ServerFaults{
				Restart: scenarios.Schedule{At: []scenarios.Duration{sec(7), sec(3), sec(3)}, Every: sec(5)}, RestartLosesTasks: lose}})
			t0 := time.Now()
			c := h.connect()
			tk := c.createTask("work", map[string]any{"duration_ms": 2500, "idempotency_key": "k"})
			slow := c.createTask("work", map[string]any{"duration_ms": 4000})
			stream := ruleStream(t, c, slow.TaskID)
			get := ruleGETStream(t, c)
			ruleUntil(t0, 3*time.Second-time.Millisecond)
			ruleWantStatus(t, c, tk.TaskID, mcp.StatusCompleted)
			ruleUntil(t0, 3*time.Second)
			if r := c.start("tasks/get", map[string]any{"taskId": tk.TaskID}); r.Status != http.StatusNotFound {
				t.Fatalf("after the restart at 3 s: HTTP %d, want 404", r.Status)
			}
			if _, ok := stream.nextEvent(); ok {
				t.Error("a tasks/result stream outlived the restart")
			}
			if _, ok := get.nextEvent(); ok {
				t.Error("a GET stream outlived the restart")
			}
			c = h.connect()
			if !lose {
				ruleWantStatus(t, c, tk.TaskID, mcp.StatusCompleted)
				ruleUntil(t0, 4*time.Second)
				ruleWantStatus(t, c, slow.TaskID, mcp.StatusCompleted)
			} else {
				for _, id := range []string{tk.TaskID, slow.TaskID} {
					if _, e := c.get(id); e == nil || e.Code != mcp.CodeInvalidParams {
						t.Fatalf("tasks/get of a task lost in the restart: %v, want -32602", e)
					}
				}
				// The key survives in the ledger: the create is not run again.
				r := c.call("tools/call", map[string]any{"name": "work", "arguments": map[string]any{"idempotency_key": "k"}, "task": map[string]any{}})
				ruleErr(t, r, mcp.CodeInvalidParams, "already used", tk.TaskID)
			}
			ruleUntil(t0, 15*time.Second)
			st := h.srv.Stats()
			wantLost, wantEffects := uint64(0), uint64(2)
			if lose {
				wantLost, wantEffects = 2, 1 // slow's work was stopped at 3 s
			}
			if st.Faults.Restart != 5 || st.Sessions != 0 || st.TasksLost != wantLost || st.Effects != wantEffects {
				t.Errorf("at 15 s: %d restarts, %d sessions, %d lost, %d effects; want 5, 0, %d, %d",
					st.Faults.Restart, st.Sessions, st.TasksLost, st.Effects, wantLost, wantEffects)
			}
			if lose && (st.TasksLive != 0 || st.TasksExpired != 0) {
				t.Errorf("%d tasks retained, %d expired; want 0 and 0 (lost is not expired)", st.TasksLive, st.TasksExpired)
			}
			wantEvents(t, ev, t0, "3s restart", "5s restart", "7s restart", "10s restart", "15s restart")
		})
	}
}

// TestFaultDuplicate: on a tasks/result stream chosen by the fault, the response comes twice,
// as two events with distinct ids (H7), then the stream ends; a JSON reply is not a stream.
func TestFaultDuplicate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ev := metrics.NewEvents(0)
		h := newHarness(t, mockserver.Config{Events: ev, Faults: scenarios.ServerFaults{Duplicate: always}})
		t0 := time.Now()
		c := h.connect()
		tk := c.createTask("work", map[string]any{"duration_ms": 1000})
		st := ruleStream(t, c, tk.TaskID)
		first := ruleNextMessage(t, st)
		second := ruleNextMessage(t, st)
		ruleEnded(t, st)
		if string(first.Raw) != string(second.Raw) || first.EventID == second.EventID || first.Result == nil {
			t.Fatalf("events %s (id %s) and %s (id %s), want one result twice with two ids",
				first.Raw, first.EventID, second.Raw, second.EventID)
		}
		ruleElapsed(t, t0, time.Second, "the reply")
		// Terminal now: tasks/result answers as JSON, once.
		if r := c.call("tasks/result", map[string]any{"taskId": tk.TaskID}); r.Err != nil {
			t.Fatalf("tasks/result: %s", r.Raw)
		}
		if n := h.srv.Stats().Faults.Duplicate; n != 1 {
			t.Errorf("%d duplicates counted, want 1", n)
		}
		wantEvents(t, ev, t0, "1s duplicate task")
	})
}

// TestFaultEarlyExpiry: the task is deleted the instant it turns terminal (completed or
// cancelled), long before its ttl: tasks/get and tasks/result answer -32602 (R46), a
// tasks/result stream waiting on it gets -32602, and it counts as expired and orphaned.
func TestFaultEarlyExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ev := metrics.NewEvents(0)
		rec := metrics.NewRecorder(1, time.Now())
		h := newHarness(t, mockserver.Config{Events: ev, Metrics: rec.Shard(0), DefaultTTL: time.Hour,
			Faults: scenarios.ServerFaults{EarlyExpiry: always}})
		t0 := time.Now()
		c := h.connect()
		done := c.createTask("work", map[string]any{"duration_ms": 1000})
		cancelled := c.createTask("work", map[string]any{"duration_ms": 60_000})
		st := ruleStream(t, c, done.TaskID)
		ruleUntil(t0, 500*time.Millisecond)
		if got := ruleTaskOf(t, c.call("tasks/cancel", map[string]any{"taskId": cancelled.TaskID}), "CancelTaskResult"); got.Status != mcp.StatusCancelled {
			t.Fatalf("cancel reply %s, want cancelled", got.Status)
		}
		ruleErr(t, c.call("tasks/get", map[string]any{"taskId": cancelled.TaskID}), mcp.CodeInvalidParams, "not found")
		ruleWantStatus(t, c, done.TaskID, mcp.StatusWorking)
		ruleUntil(t0, time.Second)
		r := ruleFinal(t, st)
		ruleErr(t, r, mcp.CodeInvalidParams, "deleted before its result was fetched")
		ruleErr(t, c.call("tasks/get", map[string]any{"taskId": done.TaskID}), mcp.CodeInvalidParams, "not found")
		ruleErr(t, c.call("tasks/result", map[string]any{"taskId": done.TaskID}), mcp.CodeInvalidParams, "not found")
		s := h.srv.Stats()
		if s.TasksLive != 0 || s.TasksExpired != 2 || s.OrphanedTasks != 2 || s.Faults.EarlyExpiry != 2 || s.MaxCleanupLag != 0 {
			t.Errorf("stats: %d live, %d expired, %d orphaned, %d early, max lag %v; want 0, 2, 2, 2, 0",
				s.TasksLive, s.TasksExpired, s.OrphanedTasks, s.Faults.EarlyExpiry, s.MaxCleanupLag)
		}
		rec.Flush(time.Now())
		if n := rec.Total().Counters[metrics.OrphanedTasks]; n != 2 {
			t.Errorf("orphaned_tasks %d, want 2", n)
		}
		ruleUntil(t0, time.Hour+time.Second) // the reaper meets their ttl: nothing more to delete
		if s := h.srv.Stats(); s.TasksExpired != 2 || s.OrphanedTasks != 2 {
			t.Errorf("after the ttl: %d expired, %d orphaned; want 2 and 2", s.TasksExpired, s.OrphanedTasks)
		}
		wantEvents(t, ev, t0, "500ms early_expiry task", "1s early_expiry task")
	})
}

// TestFaultStuck: a stuck task's work never ends: it stays working past its duration until
// cancelled (R27) or until its ttl runs out (then -32602, R46); no effect is applied.
func TestFaultStuck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ev := metrics.NewEvents(0)
		h := newHarness(t, mockserver.Config{Events: ev, Faults: scenarios.ServerFaults{Stuck: always}})
		t0 := time.Now()
		c := h.connect()
		a := c.createTask("work", map[string]any{"duration_ms": 1000, "idempotency_key": "a"})
		b := ruleCreate(t, c, "work", map[string]any{"duration_ms": 1000}, map[string]any{"ttl": 10_000})
		ruleUntil(t0, 9*time.Second)
		ruleWantStatus(t, c, a.TaskID, mcp.StatusWorking)
		ruleWantStatus(t, c, b.TaskID, mcp.StatusWorking)
		if got := ruleTaskOf(t, c.call("tasks/cancel", map[string]any{"taskId": a.TaskID}), "CancelTaskResult"); got.Status != mcp.StatusCancelled {
			t.Fatalf("cancel: %s", got.Status)
		}
		ruleUntil(t0, 10*time.Second)
		ruleErr(t, c.call("tasks/get", map[string]any{"taskId": b.TaskID}), mcp.CodeInvalidParams, "not found")
		s := h.srv.Stats()
		if s.Effects != 0 || s.Faults.Stuck != 2 || s.TasksExpired != 1 || s.OrphanedTasks != 0 {
			t.Errorf("stats: %d effects, %d stuck, %d expired, %d orphaned; want 0, 2, 1, 0", s.Effects, s.Faults.Stuck, s.TasksExpired, s.OrphanedTasks)
		}
		wantEvents(t, ev, t0, "0s stuck task", "0s stuck task")
	})
}

// TestFaultStuckQueued: a stuck task holds its worker; a stuck task cancelled while queued
// never started, so the fault never took effect.
func TestFaultStuckQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{Backpressure: mockserver.Backpressure{Workers: 1, Queue: 1},
			Faults: scenarios.ServerFaults{Stuck: always}})
		c := h.connect()
		a := c.createTask("work", map[string]any{"duration_ms": 10})
		b := c.createTask("work", map[string]any{"duration_ms": 10})
		time.Sleep(time.Minute)
		synctest.Wait()
		if _, msg := bpStatus(t, c, b.TaskID); !strings.HasPrefix(msg, "queued") {
			t.Fatalf("second task %q, want still queued behind the stuck one", msg)
		}
		c.call("tasks/cancel", map[string]any{"taskId": b.TaskID})
		c.call("tasks/cancel", map[string]any{"taskId": a.TaskID})
		if n := h.srv.Stats().Faults.Stuck; n != 1 {
			t.Errorf("%d stuck, want 1 (the queued one never started)", n)
		}
	})
}

// TestFaultEffectFirst: the domain effect is applied when the work starts. A cancel during
// the work still makes the task cancelled (R27: a cancel is a request, not a rollback), the
// effect stays, and the ledger counts it after-cancel once; an uncancelled task completes
// with its one effect. With and without the downstream model.
func TestFaultEffectFirst(t *testing.T) {
	for _, capacity := range []int{0, 1} {
		ruleRun(t, fmt.Sprintf("capacity %d", capacity), func(t *testing.T) {
			ev := metrics.NewEvents(0)
			h := newHarness(t, mockserver.Config{Events: ev, Faults: scenarios.ServerFaults{EffectFirst: always},
				Downstream: mockserver.Downstream{Capacity: capacity, ServiceTime: bpFixed(100 * time.Millisecond)}})
			t0 := time.Now()
			c := h.connect()
			a := c.createTask("work", map[string]any{"duration_ms": 1000, "idempotency_key": "a"})
			ruleUntil(t0, 100*time.Millisecond) // the downstream, if any, applied a's effect
			b := c.createTask("work", map[string]any{"duration_ms": 1000, "idempotency_key": "b"})
			failing := c.createTask("work", map[string]any{"duration_ms": 1000, "outcome": "failed", "idempotency_key": "f"})
			ruleUntil(t0, 300*time.Millisecond)
			if s := h.srv.Stats(); s.Effects != 2 {
				t.Fatalf("at 300 ms: %d effects, want 2 (a and b: applied when their work started)", s.Effects)
			}
			ruleWantStatus(t, c, a.TaskID, mcp.StatusWorking)
			if got := ruleTaskOf(t, c.call("tasks/cancel", map[string]any{"taskId": a.TaskID}), "CancelTaskResult"); got.Status != mcp.StatusCancelled {
				t.Fatalf("cancel after the effect: %s, want cancelled", got.Status)
			}
			ruleUntil(t0, 5*time.Second)
			ruleWantStatus(t, c, a.TaskID, mcp.StatusCancelled)
			ruleWantStatus(t, c, b.TaskID, mcp.StatusCompleted)
			ruleWantStatus(t, c, failing.TaskID, mcp.StatusFailed)
			s := h.srv.Stats()
			if s.Effects != 2 || s.EffectsAfterCancel != 1 || s.DuplicateEffects != 0 || s.Faults.EffectFirst != 2 {
				t.Errorf("stats: %d effects, %d after cancel, %d duplicates, %d effect_first; want 2, 1, 0, 2",
					s.Effects, s.EffectsAfterCancel, s.DuplicateEffects, s.Faults.EffectFirst)
			}
			if e, ok := h.srv.Effect("", "a"); !ok || e.Applied != 1 || !e.AfterCancel || e.TaskID != a.TaskID {
				t.Errorf("ledger of a: %+v, want one effect of the cancelled task, after cancel", e)
			}
			if e, ok := h.srv.Effect("", "b"); !ok || e.Applied != 1 || e.AfterCancel {
				t.Errorf("ledger of b: %+v, want one effect, not after cancel", e)
			}
			if _, ok := h.srv.Effect("", "f"); ok {
				t.Error("work planned to fail reached the ledger")
			}
			wantEvents(t, ev, t0, "0s effect_first task", "100ms effect_first task")
		})
	}
}

// TestFaultEffectFirstDownstream: the effect_first operation is with the downstream: a
// cancel before it returns is counted after-cancel by the ledger (once); work that ends
// before its operation returns completes when it does; a failed operation fails the task at
// once, its work unfinished.
func TestFaultEffectFirstDownstream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{Faults: scenarios.ServerFaults{EffectFirst: always},
			Downstream: mockserver.Downstream{Capacity: 10, ServiceTime: bpFixed(2 * time.Second)}})
		t0 := time.Now()
		c := h.connect()
		quick := c.createTask("work", map[string]any{"duration_ms": 1000, "idempotency_key": "q"})
		cancelled := c.createTask("work", map[string]any{"duration_ms": 1000, "idempotency_key": "c"})
		ruleUntil(t0, 500*time.Millisecond)
		c.call("tasks/cancel", map[string]any{"taskId": cancelled.TaskID})
		ruleUntil(t0, 1500*time.Millisecond)
		if got := ruleWantStatus(t, c, quick.TaskID, mcp.StatusWorking); !strings.HasPrefix(got.StatusMessage, "committing") {
			t.Errorf("work done, operation out: %q, want committing", got.StatusMessage)
		}
		ruleUntil(t0, 2*time.Second)
		ruleWantStatus(t, c, quick.TaskID, mcp.StatusCompleted)
		s := h.srv.Stats()
		if s.Effects != 2 || s.EffectsAfterCancel != 1 {
			t.Errorf("%d effects, %d after cancel; want 2 and 1", s.Effects, s.EffectsAfterCancel)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{Faults: scenarios.ServerFaults{EffectFirst: always},
			Downstream: mockserver.Downstream{Capacity: 1, FailureRate: 1, ServiceTime: bpFixed(100 * time.Millisecond)}})
		t0 := time.Now()
		c := h.connect()
		tk := c.createTask("work", map[string]any{"duration_ms": 1000})
		ruleUntil(t0, 100*time.Millisecond)
		if got := ruleWantStatus(t, c, tk.TaskID, mcp.StatusFailed); !strings.Contains(got.StatusMessage, "failed") {
			t.Errorf("statusMessage %q", got.StatusMessage)
		}
		if s := h.srv.Stats(); s.Effects != 0 || s.Ledger.Failed != 1 {
			t.Errorf("ledger %+v, want one failed operation", s.Ledger)
		}
	})
}

// TestFaultTriggerProbability: with probability p the share of opportunities that fire
// lies in the binomial 99% interval; the same seed gives the same decisions, another seed
// others, and turning another fault on does not shift them (a stream per fault).
func TestFaultTriggerProbability(t *testing.T) {
	const n, p = 400, 0.3
	run := func(seed uint64, f scenarios.ServerFaults) (stuck string) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, mockserver.Config{Seed: seed, Faults: f})
			c := h.connect()
			var ids []string
			for range n {
				ids = append(ids, c.createTask("work", map[string]any{"duration_ms": 1}).TaskID)
			}
			time.Sleep(time.Second)
			synctest.Wait()
			var b strings.Builder
			for _, id := range ids {
				st, _ := bpStatus(t, c, id)
				b.WriteByte("01"[btoi(st == mcp.StatusWorking)])
			}
			stuck = b.String()
			if got := h.srv.Stats().Faults.Stuck; got != uint64(strings.Count(stuck, "1")) {
				t.Errorf("Stats.Faults.Stuck %d, %d tasks working", got, strings.Count(stuck, "1"))
			}
		})
		return stuck
	}
	stuckOnly := scenarios.ServerFaults{Stuck: scenarios.Trigger{Probability: p}}
	a := run(7, stuckOnly)
	if k := strings.Count(a, "1"); k < lo99(n, p) || k > hi99(n, p) {
		t.Errorf("%d of %d tasks stuck at p=%v, want within [%d, %d]", k, n, p, lo99(n, p), hi99(n, p))
	}
	if b := run(7, stuckOnly); b != a {
		t.Error("the same seed gave other decisions")
	}
	both := stuckOnly
	both.EffectFirst = scenarios.Trigger{Probability: 0.5}
	if b := run(7, both); b != a {
		t.Error("turning effect_first on shifted the stuck decisions")
	}
	if b := run(8, stuckOnly); b == a {
		t.Error("another seed gave the same decisions")
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func lo99(n int, p float64) int { lo, _ := binom99(n, p); return lo }
func hi99(n int, p float64) int { _, hi := binom99(n, p); return hi }

// TestFaultConfigValidate: programmatic configs are checked like scenario files.
func TestFaultConfigValidate(t *testing.T) {
	bad := mockserver.Config{Faults: scenarios.ServerFaults{
		HTTP5xx: scenarios.Trigger{Probability: 1.5},
		Status:  418,
		Reset:   scenarios.Trigger{Every: scenarios.Duration(time.Second)},
		Restart: scenarios.Schedule{At: []scenarios.Duration{-1}},
	}}
	err := bad.Validate()
	for _, want := range []string{"faults.http_5xx.probability", "faults.status", "faults.reset.window", "faults.restart.at[0]"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want a problem with %s", err, want)
		}
	}
	ok := mockserver.Config{Faults: scenarios.Default().Faults.Server}
	if err := ok.Validate(); err != nil {
		t.Errorf("scenarios.Default()'s faults: %v", err)
	}
}
