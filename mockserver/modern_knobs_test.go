package mockserver_test

// Every server knob, fault, tenant rule and insecure mode in the modern era (2026-07-28),
// one test each, in virtual time: what modernfaults.go says each becomes where the wire
// differs, and that the task core's knobs act on modern tasks as on legacy ones. Replies
// are validated against the 2026-07-28 schemas (decodeModern).

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/mcp/mcptest"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/scenarios"
)

// send POSTs method and returns the response unread (it may have been aborted).
func (mc *modernClient) send(method string, params map[string]any) *response {
	mc.h.t.Helper()
	return mc.h.do(mc.request(context.Background(), mc.body(method, params)))
}

// accept is the answer that resumes an input round.
var accept = map[string]any{"action": "accept", "content": map[string]any{"answer": "y"}}

// TestModernFaultResultCut: session_expiry, which cuts tasks/result streams in the legacy
// era, cuts the tasks/get reply that carries the result, and the tasks/update
// acknowledgement (after the answer is applied); a poll without payload is never cut.
func TestModernFaultResultCut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ev := metrics.NewEvents(0)
		h := modernServer(t, mockserver.Config{Events: ev, Faults: scenarios.ServerFaults{SessionExpiry: window(10*time.Second, 3*time.Second)}})
		t0 := time.Now()
		mc := h.modern()
		tk := mc.create("work", map[string]any{"duration_ms": 1000, "input_required": true})
		time.Sleep(500 * time.Millisecond)
		synctest.Wait()
		d := mc.get(tk.TaskID) // input requests: no outcome, not cut
		var key string
		for k := range d.InputRequests {
			key = k
		}
		r := mc.send("tasks/update", map[string]any{"taskId": tk.TaskID, "inputResponses": map[string]any{key: accept}})
		if r.all(); !r.Aborted {
			t.Fatalf("tasks/update inside the window: HTTP %d, want the connection cut", r.Status)
		}
		if got := mc.get(tk.TaskID); got.Status != mcp.StatusWorking {
			t.Fatalf("after the cut acknowledgement: %+v, want working: the answer was applied", got)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if r := mc.send("tasks/get", map[string]any{"taskId": tk.TaskID}); r.all() != nil || !r.Aborted {
			t.Fatalf("tasks/get of the result inside the window: HTTP %d, want the connection cut", r.Status)
		}
		time.Sleep(1500 * time.Millisecond) // the window [0, 3s) is over
		synctest.Wait()
		if got := mc.get(tk.TaskID); got.Status != mcp.StatusCompleted || got.Result == nil {
			t.Fatalf("after the window: %+v, want the result", got)
		}
		if n := h.srv.Stats().Faults.SessionExpiry; n != 2 {
			t.Fatalf("session_expiry counted %d, want 2", n)
		}
		wantEvents(t, ev, t0, "500ms session_expiry task", "1.5s session_expiry task")
	})
}

// TestModernFaultDuplicate: duplicate, which sends a tasks/result stream's reply twice in
// the legacy era, sends the tasks/get reply carrying the result as an SSE stream with the
// reply twice; a poll of a working task is plain JSON.
func TestModernFaultDuplicate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := modernServer(t, mockserver.Config{Faults: scenarios.ServerFaults{Duplicate: always}})
		mc := h.modern()
		tk := mc.create("work", map[string]any{"duration_ms": 100})
		mc.get(tk.TaskID)
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		r := mc.send("tasks/get", map[string]any{"taskId": tk.TaskID})
		if ct := r.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("Content-Type %q, want an SSE stream", ct)
		}
		first, ok1 := r.nextEvent()
		second, ok2 := r.nextEvent()
		if _, more := r.nextEvent(); !ok1 || !ok2 || more || string(first) != string(second) {
			t.Fatalf("events %s / %s (more: %v), want the reply exactly twice", first, second, more)
		}
		if d := decodeModern(t, "tasks/get", http.StatusOK, first); !strings.Contains(string(d.Result), `"status":"completed"`) {
			t.Fatalf("duplicated reply %s", first)
		}
		if n := h.srv.Stats().Faults.Duplicate; n != 1 {
			t.Fatalf("duplicate counted %d, want 1", n)
		}
	})
}

// TestModernFaultsPerRequest: http_5xx and reset hit modern POSTs as any other.
func TestModernFaultsPerRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := modernServer(t, mockserver.Config{Faults: scenarios.ServerFaults{Reset: window(10*time.Second, 2*time.Second)}})
		mc := h.modern()
		r := mc.send("server/discover", nil)
		if r.all(); !r.Aborted {
			t.Fatalf("reset: HTTP %d, want the connection closed", r.Status)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		mc.ok("server/discover", nil)
		h2 := modernServer(t, mockserver.Config{Faults: scenarios.ServerFaults{HTTP5xx: always}})
		if r := h2.modern().send("server/discover", nil); r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") != "1" {
			t.Fatalf("http_5xx: HTTP %d Retry-After %q", r.Status, r.Header.Get("Retry-After"))
		}
	})
}

// TestModernFaultsPerTask: early_expiry, stuck, effect_first and a restart that loses
// tasks act on modern tasks as on legacy ones.
func TestModernFaultsPerTask(t *testing.T) {
	t.Run("early_expiry", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := modernServer(t, mockserver.Config{Faults: scenarios.ServerFaults{EarlyExpiry: always}})
			mc := h.modern()
			tk := mc.create("work", map[string]any{"duration_ms": 100})
			time.Sleep(100 * time.Millisecond)
			synctest.Wait()
			mc.wantError("tasks/get", map[string]any{"taskId": tk.TaskID}, mcp.CodeInvalidParams)
			if st := h.srv.Stats(); st.Faults.EarlyExpiry != 1 || st.OrphanedTasks != 1 {
				t.Fatalf("early_expiry %d, orphaned %d", st.Faults.EarlyExpiry, st.OrphanedTasks)
			}
		})
	})
	t.Run("stuck and effect_first", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := modernServer(t, mockserver.Config{Faults: scenarios.ServerFaults{Stuck: always, EffectFirst: always}})
			mc := h.modern()
			tk := mc.create("work", map[string]any{"duration_ms": 100, "idempotency_key": "k"})
			time.Sleep(time.Minute)
			synctest.Wait()
			if got := mc.get(tk.TaskID); got.Status != mcp.StatusWorking {
				t.Fatalf("stuck: %+v", got)
			}
			mc.ok("tasks/cancel", map[string]any{"taskId": tk.TaskID})
			if st := h.srv.Stats(); st.Faults.Stuck != 1 || st.Faults.EffectFirst != 1 || st.EffectsAfterCancel != 1 || st.Effects != 1 {
				t.Fatalf("stuck %d, effect_first %d, effects %d, after cancel %d", st.Faults.Stuck, st.Faults.EffectFirst, st.Effects, st.EffectsAfterCancel)
			}
		})
	})
	t.Run("restart_loses_tasks", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := modernServer(t, mockserver.Config{Faults: scenarios.ServerFaults{RestartLosesTasks: true,
				Restart: scenarios.Schedule{At: []scenarios.Duration{scenarios.Duration(time.Second)}}}})
			mc := h.modern()
			tk := mc.create("work", map[string]any{"duration_ms": 5000})
			time.Sleep(time.Second)
			synctest.Wait()
			mc.wantError("tasks/get", map[string]any{"taskId": tk.TaskID}, mcp.CodeInvalidParams)
			if st := h.srv.Stats(); st.TasksLost != 1 {
				t.Fatalf("lost %d", st.TasksLost)
			}
		})
	})
}

// TestModernIdempotencyAndLedger: a repeated idempotency_key is answered with the key's
// task in the modern shape, its effect recorded once; non_idempotent starts it again (a
// ledger duplicate); a failing downstream fails the task with its error inline.
func TestModernIdempotencyAndLedger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := modernServer(t, mockserver.Config{})
		mc := h.modern()
		a := mc.create("work", map[string]any{"duration_ms": 100, "idempotency_key": "k1"})
		b := mc.create("work", map[string]any{"duration_ms": 100, "idempotency_key": "k1"})
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		if a.TaskID != b.TaskID {
			t.Fatalf("replay: %s, want %s", b.TaskID, a.TaskID)
		}
		if id, ok := h.srv.LookupKey("", "k1"); !ok || id != a.TaskID {
			t.Fatalf("LookupKey: %q %v", id, ok)
		}
		if st := h.srv.Stats(); st.IdempotentReplays != 1 || st.Effects != 1 || st.DuplicateEffects != 0 {
			t.Fatalf("replays %d, effects %d, duplicates %d", st.IdempotentReplays, st.Effects, st.DuplicateEffects)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		h := modernServer(t, mockserver.Config{Faults: scenarios.ServerFaults{NonIdempotent: true}})
		mc := h.modern()
		a := mc.create("work", map[string]any{"duration_ms": 100, "idempotency_key": "k1"})
		b := mc.create("work", map[string]any{"duration_ms": 100, "idempotency_key": "k1"})
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		if st := h.srv.Stats(); a.TaskID == b.TaskID || st.DuplicateEffects != 1 || st.Faults.NonIdempotent != 1 {
			t.Fatalf("non_idempotent: ids %s %s, duplicates %d", a.TaskID, b.TaskID, st.DuplicateEffects)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		h := modernServer(t, mockserver.Config{Downstream: mockserver.Downstream{Capacity: 1, FailureRate: 1,
			ServiceTime: scenarios.Dist{Kind: "fixed", Value: scenarios.Duration(50 * time.Millisecond)}}})
		mc := h.modern()
		tk := mc.create("work", map[string]any{"duration_ms": 100})
		time.Sleep(150 * time.Millisecond)
		synctest.Wait()
		got := mc.get(tk.TaskID)
		if got.Status != mcp.StatusFailed || got.Error == nil || h.srv.Stats().DownstreamFailures != 1 {
			t.Fatalf("downstream failure: %+v", got)
		}
	})
}

// TestModernBackpressure: a full server answers a modern create as WhenFull says, in the
// era's shape: refuse_429 with 429, Retry-After and a JSON-RPC error body; refuse_rpc with
// -32603 (HTTP 200, E27); queue with a queued statusMessage; raise_poll_interval with the
// raised pollIntervalMs.
func TestModernBackpressure(t *testing.T) {
	for _, tc := range []struct {
		when  string
		check func(t *testing.T, h *harness, mc *modernClient)
	}{
		{"refuse_429", func(t *testing.T, h *harness, mc *modernClient) {
			status, hdr, raw := mc.postRaw(mc.body("tools/call", map[string]any{"name": "work", "arguments": map[string]any{"duration_ms": 1000}}))
			r := decodeModernStatus(t, "tools/call", status, raw, http.StatusTooManyRequests)
			if r.Err == nil || r.Err.Code != mcp.CodeInternalError || hdr.Get("Retry-After") != "2" {
				t.Fatalf("HTTP %d Retry-After %q: %s", status, hdr.Get("Retry-After"), raw)
			}
		}},
		{"refuse_rpc", func(t *testing.T, h *harness, mc *modernClient) {
			r := mc.wantError("tools/call", map[string]any{"name": "work", "arguments": map[string]any{"duration_ms": 1000}}, mcp.CodeInternalError)
			if r.Status != http.StatusOK || !strings.Contains(r.Err.Message, "max_tasks") {
				t.Fatalf("HTTP %d %s", r.Status, r.Raw)
			}
		}},
		{"queue", func(t *testing.T, h *harness, mc *modernClient) {
			tk := mc.create("work", map[string]any{"duration_ms": 1000})
			if got := mc.get(tk.TaskID); !strings.Contains(got.StatusMessage, "queued (position 1)") {
				t.Fatalf("queued task: %+v", got)
			}
		}},
		{"raise_poll_interval", func(t *testing.T, h *harness, mc *modernClient) {
			tk := mc.create("work", map[string]any{"duration_ms": 1000})
			if got := mc.get(tk.TaskID); got.PollIntervalMs == nil || *got.PollIntervalMs != 7000 {
				t.Fatalf("while full: %+v, want pollIntervalMs 7000", got)
			}
		}},
	} {
		t.Run(tc.when, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				bp := mockserver.Backpressure{WhenFull: tc.when, RetryAfter: 1500 * time.Millisecond, RaisedPollInterval: 7 * time.Second}
				if tc.when == "queue" || tc.when == "raise_poll_interval" {
					bp.Workers = 1
					bp.Queue = 1
				} else {
					bp.MaxTasks = 1
				}
				h := modernServer(t, mockserver.Config{Backpressure: bp})
				mc := h.modern()
				mc.create("work", map[string]any{"duration_ms": 1000})
				tc.check(t, h, mc)
			})
		})
	}
}

// TestModernRateLimits: tasks/get and creates are rate-limited per client, which in this
// era is the bearer token, and per tenant; over the limit, 429 with Retry-After and a
// JSON-RPC error.
func TestModernRateLimits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := modernServer(t, mockserver.Config{Tokens: map[string]string{"tok-a1": "acme", "tok-a2": "acme", "tok-b": "globex"},
			Backpressure: mockserver.Backpressure{GetRatePerClient: 1, CreateRatePerTenant: 1}})
		a1, a2, b := h.modern(modernToken("tok-a1")), h.modern(modernToken("tok-a2")), h.modern(modernToken("tok-b"))
		tk := a1.create("work", map[string]any{"duration_ms": 5000})
		a1.get(tk.TaskID)
		status, hdr, raw := a1.postRaw(a1.body("tasks/get", map[string]any{"taskId": tk.TaskID}))
		if r := decodeModernStatus(t, "tasks/get", status, raw, http.StatusTooManyRequests); r.Err == nil || hdr.Get("Retry-After") != "1" {
			t.Fatalf("second get of token a1: %s", raw)
		}
		a2.get(tk.TaskID) // another token of the tenant: another client
		status, _, raw = a2.postRaw(a2.body("tools/call", map[string]any{"name": "work", "arguments": map[string]any{"duration_ms": 10}}))
		decodeModernStatus(t, "tools/call", status, raw, http.StatusTooManyRequests) // acme's create bucket is empty
		b.create("work", map[string]any{"duration_ms": 10})                          // globex's is not
		time.Sleep(time.Second)
		synctest.Wait()
		a1.get(tk.TaskID)
		if n := h.srv.Stats().RateLimited; n != 2 {
			t.Fatalf("rate limited %d, want 2", n)
		}
	})
}

// TestModernRequestKnobs: reply latency by method name (tasks/update too), the per_tool
// pollInterval policy, the ttl policy and the reaper act on modern requests and tasks.
func TestModernRequestKnobs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := modernServer(t, mockserver.Config{
			Latency:    map[string]scenarios.Dist{"tasks/update": {Kind: "fixed", Value: scenarios.Duration(300 * time.Millisecond)}},
			Poll:       mockserver.PollPolicy{Kind: "per_tool", PerTool: map[string]time.Duration{"work_task": 1500 * time.Millisecond}},
			DefaultTTL: 2 * time.Second, ReaperInterval: 100 * time.Millisecond,
		})
		mc := h.modern()
		tk := mc.create("work_task", map[string]any{"duration_ms": 5000})
		if tk.PollIntervalMs == nil || *tk.PollIntervalMs != 1500 || tk.TTLMs == nil || *tk.TTLMs != 2000 {
			t.Fatalf("create: %+v, want pollIntervalMs 1500 and ttlMs 2000", tk)
		}
		start := time.Now()
		mc.ok("tasks/update", map[string]any{"taskId": tk.TaskID, "inputResponses": map[string]any{}})
		if d := time.Since(start); d != 300*time.Millisecond {
			t.Fatalf("tasks/update answered after %v, want 300ms", d)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		mc.wantError("tasks/get", map[string]any{"taskId": tk.TaskID}, mcp.CodeInvalidParams)
		if st := h.srv.Stats(); st.TasksExpired != 1 {
			t.Fatalf("expired %d", st.TasksExpired)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		h := modernServer(t, mockserver.Config{UnlimitedTTL: true})
		if tk := h.modern().create("work", map[string]any{"duration_ms": 10}); tk.TTLMs != nil {
			t.Fatalf("null_ttl: ttlMs %v, want null", *tk.TTLMs)
		}
	})
}

// TestModernInsecureModes: each insecure mode has its modern form, which an isolation probe
// of the era sees: no_tenant_check, session_bound (bound to clientInfo), predictable_ids and
// echo_secrets; revocations and the injection canary act on modern replies too.
func TestModernInsecureModes(t *testing.T) {
	tokens := map[string]string{"tok-a": "alice", "tok-b": "bob"}
	t.Run("no_tenant_check", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := listenServer(t, mockserver.Config{Tokens: tokens, Insecure: mockserver.Insecure{NoTenantCheck: true}})
			tk := h.modern(modernToken("tok-a")).create("work", map[string]any{"duration_ms": 5000})
			bob := h.modern(modernToken("tok-b"))
			bob.get(tk.TaskID) // the leak an isolation probe reports
			ls := bob.listenTasks(tk.TaskID)
			if ids := ls.ack(); len(ids) != 1 {
				t.Fatalf("listen of a foreign task: ack %v, want it agreed (the leak)", ids)
			}
			ls.cancel()
			bob.ok("tasks/cancel", map[string]any{"taskId": tk.TaskID})
		})
	})
	t.Run("session_bound", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := modernServer(t, mockserver.Config{Tokens: tokens, Insecure: mockserver.Insecure{SessionBound: true}})
			tk := h.modern(modernToken("tok-a")).create("work", map[string]any{"duration_ms": 5000})
			h.modern(modernToken("tok-b")).get(tk.TaskID) // another tenant, the same clientInfo: read
			other := h.modern(modernToken("tok-a"), func(mc *modernClient) { mc.info = "another-client" })
			other.wantError("tasks/get", map[string]any{"taskId": tk.TaskID}, mcp.CodeInvalidParams) // the same tenant, another clientInfo: lost
		})
	})
	t.Run("predictable_ids and echo_secrets and inject", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := modernServer(t, mockserver.Config{Inject: true, Insecure: mockserver.Insecure{PredictableIDs: true, EchoSecrets: true}})
			mc := h.modern()
			a := mc.create("work", map[string]any{"duration_ms": 10, "input_required": true})
			b := mc.create("work", map[string]any{"duration_ms": 10})
			if a.TaskID != strings.Repeat("0", 31)+"1" || b.TaskID != strings.Repeat("0", 31)+"2" {
				t.Fatalf("ids %s %s, want the sequence", a.TaskID, b.TaskID)
			}
			time.Sleep(5 * time.Millisecond)
			synctest.Wait()
			d := mc.get(a.TaskID)
			for k := range d.InputRequests {
				mc.ok("tasks/update", map[string]any{"taskId": a.TaskID, "inputResponses": map[string]any{k: map[string]any{"action": "accept", "content": map[string]any{"answer": "tsk-secret-1"}}}})
			}
			time.Sleep(10 * time.Millisecond)
			synctest.Wait()
			got := mc.get(a.TaskID)
			if !strings.Contains(got.StatusMessage, `"duration_ms":10`) || !strings.Contains(got.StatusMessage, "tsk-secret-1") || !strings.Contains(got.StatusMessage, mockserver.InjectionPrefix) {
				t.Fatalf("statusMessage %q: want the arguments, the answer and the canary", got.StatusMessage)
			}
			if !strings.Contains(string(got.Result), mockserver.InjectionPrefix) {
				t.Fatalf("result %s: want the canary", got.Result)
			}
		})
	})
	t.Run("revocations", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := listenServer(t, mockserver.Config{Tokens: tokens, Revocations: []mockserver.Revocation{
				{Tenant: "alice", At: time.Second, Scope: mockserver.RevokeResults}, {Tenant: "bob", At: time.Second}}})
			alice, bob := h.modern(modernToken("tok-a")), h.modern(modernToken("tok-b"))
			tk := alice.create("work", map[string]any{"duration_ms": 100})
			working := alice.create("work", map[string]any{"duration_ms": 5000})
			time.Sleep(time.Second)
			synctest.Wait()
			alice.get(working.TaskID) // no result in the reply: the scope is not needed
			status, hdr, raw := alice.postRaw(alice.body("tasks/get", map[string]any{"taskId": tk.TaskID}))
			if status != http.StatusForbidden || !strings.Contains(hdr.Get("WWW-Authenticate"), "insufficient_scope") {
				t.Fatalf("tasks/get of a result after the results scope was revoked: HTTP %d %s", status, raw)
			}
			if err := mcptest.ValidateReply2026("tasks/get", raw); err != nil {
				t.Errorf("403 body: %v", err)
			}
			status, _, _ = alice.postRaw(alice.body("subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": []string{working.TaskID}}}))
			if status != http.StatusForbidden {
				t.Fatalf("listen for tasks after the results scope was revoked: HTTP %d, want 403", status)
			}
			if status, _, _ := bob.postRaw(bob.body("server/discover", nil)); status != http.StatusUnauthorized {
				t.Fatalf("revoked token: HTTP %d, want 401", status)
			}
		})
	})
}

// TestModernMetricsCount: modern requests count under their own ops and the modern era;
// their sum with the legacy era's is Stats.Requests.
func TestModernMetricsCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := modernServer(t, mockserver.Config{})
		mc := h.modern()
		mc.ok("server/discover", nil)
		tk := mc.create("work", map[string]any{"duration_ms": 10})
		mc.ok("tasks/update", map[string]any{"taskId": tk.TaskID, "inputResponses": map[string]any{}})
		h.connect().get(tk.TaskID)
		st := h.srv.Stats()
		for op, want := range map[mcp.Op]uint64{mcp.OpServerDiscover: 1, mcp.OpToolsCall: 1, mcp.OpTasksUpdate: 1, mcp.OpTasksGet: 0} {
			if got := st.ModernRequests[op][mockserver.OutcomeOK]; got != want {
				t.Errorf("modern %s ok = %d, want %d", op.MetricName(), got, want)
			}
		}
		if st.Requests[mcp.OpTasksGet][mockserver.OutcomeOK] != 1 || st.Requests[mcp.OpInitialize][mockserver.OutcomeOK] != 1 || st.Requests.Total(mcp.OpUnknown) != 0 {
			t.Errorf("all eras: %v", st.Requests)
		}
	})
}
