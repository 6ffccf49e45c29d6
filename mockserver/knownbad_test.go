package mockserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/mockserver"
)

// Each known-bad mode of knownbad.go breaks the rule it names: every test runs the same
// requests against the server with the mode off, where the rule holds, and with it on,
// where it is broken. Replies of a mode that breaks the schema on purpose are read with
// kbCall, which does not validate them.

// kbRun runs f twice, each in its own synctest bubble: with the mode off, then on.
func kbRun(t *testing.T, f func(t *testing.T, on bool)) {
	t.Helper()
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		t.Run(name, func(t *testing.T) { synctest.Test(t, func(t *testing.T) { f(t, on) }) })
	}
}

// kbCall sends a request and decodes its JSON reply without validating it against the
// schema. It asks for JSON only, so that a reply that waits is still one JSON object.
func kbCall(t testing.TB, c *client, method string, params any) reply {
	t.Helper()
	accept := c.accept
	c.accept = "application/json"
	resp := c.start(method, params)
	c.accept = accept
	body := resp.all()
	if resp.Status != http.StatusOK {
		t.Fatalf("%s: HTTP %d: %s", method, resp.Status, body)
	}
	msg, perr := mcp.Decode(body)
	if perr != nil {
		t.Fatalf("%s: undecodable reply %s: %v", method, body, perr)
	}
	return reply{Raw: body, Result: msg.Result, Err: msg.Error}
}

// kbHas reports whether the JSON object raw has member key.
func kbHas(t testing.TB, raw []byte, key string) bool {
	t.Helper()
	_, ok := ruleObject(t, raw)[key]
	return ok
}

// kbStatus reads a task's status through tasks/get without validating the reply.
func kbStatus(t testing.TB, c *client, id string) mcp.Status {
	t.Helper()
	var tk mcp.Task
	if err := json.Unmarshal(ruleOK(t, kbCall(t, c, "tasks/get", map[string]any{"taskId": id})), &tk); err != nil {
		t.Fatal(err)
	}
	return tk.Status
}

// TestKnownBadOn: On reports each mode, and the zero value has none.
func TestKnownBadOn(t *testing.T) {
	if (mockserver.KnownBad{}).On() {
		t.Error("KnownBad{}.On() = true")
	}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[mockserver.KnownBad]()) {
		if f.Type.Kind() != reflect.Bool { // KnownBad2026, whose modes are among the fields
			continue
		}
		var kb mockserver.KnownBad
		reflect.ValueOf(&kb).Elem().FieldByIndex(f.Index).SetBool(true)
		if !kb.On() {
			t.Errorf("KnownBad{%s: true}.On() = false", f.Name)
		}
	}
}

// blocking_get: tasks/get of a working task answers at once (R15, R16); with the mode it
// answers when the task ends, or never when the request ends first.
func TestKnownBadBlockingGet(t *testing.T) {
	kbRun(t, func(t *testing.T, on bool) {
		h, c := ruleSetup(t, mockserver.Config{KnownBad: mockserver.KnownBad{BlockingGet: on}})
		tk := ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 10_000}, nil)
		t0 := time.Now()
		got := ruleGet(t, c, tk.TaskID)
		want, after := mcp.StatusWorking, time.Duration(0)
		if on {
			want, after = mcp.StatusCompleted, 10*time.Second
		}
		if got.Status != want {
			t.Errorf("tasks/get: status %v, want %v", got.Status, want)
		}
		ruleElapsed(t, t0, after, "tasks/get answered")

		// A request that ends while it waits gets no reply.
		long := ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 60_000}, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		t0 = time.Now()
		resp := h.do(ruleReq(c, "tasks/get", map[string]any{"taskId": long.TaskID}).WithContext(ctx))
		body := resp.all()
		if on {
			ruleElapsed(t, t0, 3*time.Second, "the abandoned tasks/get returned")
			if len(body) != 0 {
				t.Errorf("abandoned tasks/get answered %s", body)
			}
		} else if !strings.Contains(string(body), `"status":"working"`) {
			t.Errorf("tasks/get: %s, want the working task at once", body)
		}
	})
}

// no_poll_interval: every task object carries pollInterval (R15), or none does: the create
// reply, tasks/get, tasks/list, tasks/cancel and notifications/tasks/status.
func TestKnownBadNoPollInterval(t *testing.T) {
	kbRun(t, func(t *testing.T, on bool) {
		cfg := mockserver.Config{Tokens: twoTenants, StatusNotifications: true, KnownBad: mockserver.KnownBad{NoPollInterval: on}}
		_, c := ruleSetup(t, cfg, withToken("ta"))
		get := ruleGETStream(t, c)
		r := c.call("tools/call", map[string]any{"name": "work", "arguments": map[string]any{"duration_ms": 60_000}, "task": map[string]any{}})
		created := ruleObject(t, ruleOK(t, r))["task"]
		id := ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 60_000}, nil).TaskID
		_, _, _, list := ruleList(t, c, nil)
		var lr struct{ Tasks []json.RawMessage }
		if err := json.Unmarshal(list, &lr); err != nil || len(lr.Tasks) != 2 {
			t.Fatalf("tasks/list: %s", list)
		}
		cancelled := ruleOK(t, c.call("tasks/cancel", map[string]any{"taskId": id}))
		note := ruleNextMessage(t, get)
		if note.Method != "notifications/tasks/status" {
			t.Fatalf("GET stream: %s, want a status notification", note.Raw)
		}
		objects := map[string][]byte{
			"the create reply": created, "tasks/get": ruleOK(t, c.call("tasks/get", map[string]any{"taskId": id})),
			"tasks/list": lr.Tasks[0], "tasks/cancel": cancelled, "notifications/tasks/status": note.Params,
		}
		for where, obj := range objects {
			if has := kbHas(t, obj, "pollInterval"); has == on {
				t.Errorf("%s: pollInterval present %v: %s", where, has, obj)
			}
		}
	})
}

// missing_fields: task objects carry createdAt, lastUpdatedAt and ttl (R42-R44), or lack all
// three.
func TestKnownBadMissingFields(t *testing.T) {
	kbRun(t, func(t *testing.T, on bool) {
		_, c := ruleSetup(t, mockserver.Config{KnownBad: mockserver.KnownBad{MissingFields: on}})
		r := kbCall(t, c, "tools/call", map[string]any{"name": "work", "arguments": map[string]any{"duration_ms": 60_000}, "task": map[string]any{}})
		created := ruleObject(t, ruleOK(t, r))["task"]
		var tk mcp.Task
		if err := json.Unmarshal(created, &tk); err != nil || tk.TaskID == "" {
			t.Fatalf("create reply %s", r.Raw)
		}
		got := ruleOK(t, kbCall(t, c, "tasks/get", map[string]any{"taskId": tk.TaskID}))
		if !on {
			checkReply(t, "tasks/get", kbCall(t, c, "tasks/get", map[string]any{"taskId": tk.TaskID}).Raw)
		}
		for _, obj := range [][]byte{created, got} {
			for _, f := range []string{"createdAt", "lastUpdatedAt", "ttl"} {
				if has := kbHas(t, obj, f); has == on {
					t.Errorf("%s present %v: %s", f, has, obj)
				}
			}
			if !kbHas(t, obj, "pollInterval") || !kbHas(t, obj, "status") {
				t.Errorf("the other fields are gone too: %s", obj)
			}
		}
	})
}

// cancel_terminal_ok: tasks/cancel of a completed task is refused with -32602 (R26), or
// answered with the task as it is.
func TestKnownBadCancelTerminalOK(t *testing.T) {
	kbRun(t, func(t *testing.T, on bool) {
		_, c := ruleSetup(t, mockserver.Config{KnownBad: mockserver.KnownBad{CancelTerminalOK: on}})
		tk := ruleTaskIn(t, c, "completed")
		r := c.call("tasks/cancel", map[string]any{"taskId": tk.TaskID})
		if !on {
			ruleErr(t, r, mcp.CodeInvalidParams, "already completed")
			return
		}
		if got := ruleTaskOf(t, r, "CancelTaskResult"); got.Status != mcp.StatusCompleted {
			t.Errorf("tasks/cancel: status %v, want the task as it is (completed)", got.Status)
		}
		ruleWantStatus(t, c, tk.TaskID, mcp.StatusCompleted)
	})
}

// cancel_not_final: a cancelled task stays cancelled when its work ends (R28, R14), or
// takes the work's outcome.
func TestKnownBadCancelNotFinal(t *testing.T) {
	for _, outcome := range []mcp.Status{mcp.StatusCompleted, mcp.StatusFailed} {
		t.Run(outcome.String(), func(t *testing.T) {
			kbRun(t, func(t *testing.T, on bool) {
				h, c := ruleSetup(t, mockserver.Config{KnownBad: mockserver.KnownBad{CancelNotFinal: on}})
				t0 := time.Now()
				tk := ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 10_000, "outcome": outcome.String()}, nil)
				ruleUntil(t0, 2*time.Second)
				if got := ruleTaskOf(t, c.call("tasks/cancel", map[string]any{"taskId": tk.TaskID}), "CancelTaskResult"); got.Status != mcp.StatusCancelled {
					t.Fatalf("tasks/cancel: status %v, want cancelled", got.Status)
				}
				ruleWantStatus(t, c, tk.TaskID, mcp.StatusCancelled)
				ruleUntil(t0, 10*time.Second)
				want := mcp.StatusCancelled
				if on {
					want = outcome
				}
				ruleWantStatus(t, c, tk.TaskID, want)
				wantEffects := uint64(0)
				if on && outcome == mcp.StatusCompleted {
					wantEffects = 1
				}
				if eff := h.srv.Stats().Effects; eff != wantEffects {
					t.Errorf("%d domain effects, want %d", eff, wantEffects)
				}
			})
		})
	}
}

// early_result: tasks/result of a working task waits for the end (R18), or answers at once
// with an empty result naming the task, and the task goes on.
func TestKnownBadEarlyResult(t *testing.T) {
	kbRun(t, func(t *testing.T, on bool) {
		_, c := ruleSetup(t, mockserver.Config{KnownBad: mockserver.KnownBad{EarlyResult: on}})
		t0 := time.Now()
		tk := ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 10_000}, nil)
		r := c.call("tasks/result", map[string]any{"taskId": tk.TaskID})
		res := ruleToolResult(t, ruleOK(t, r))
		if got := mcp.RelatedTaskID(res.Meta); got != tk.TaskID {
			t.Errorf("related-task %q, want %q: %s", got, tk.TaskID, r.Raw)
		}
		if !on {
			ruleElapsed(t, t0, 10*time.Second, "tasks/result answered")
			if !strings.Contains(ruleText(res), "work completed") {
				t.Errorf("tasks/result %s, want the work's result", r.Raw)
			}
			return
		}
		ruleElapsed(t, t0, 0, "tasks/result answered")
		if len(res.Content) != 0 || res.IsError || !strings.Contains(string(r.Result), `"content":[]`) {
			t.Errorf("tasks/result %s, want an empty CallToolResult", r.Raw)
		}
		ruleWantStatus(t, c, tk.TaskID, mcp.StatusWorking)
		ruleUntil(t0, 10*time.Second)
		ruleWantStatus(t, c, tk.TaskID, mcp.StatusCompleted)
	})
}

// no_related_meta: the tasks/result reply names its task in related-task _meta (R19), or
// does not.
func TestKnownBadNoRelatedMeta(t *testing.T) {
	kbRun(t, func(t *testing.T, on bool) {
		_, c := ruleSetup(t, mockserver.Config{KnownBad: mockserver.KnownBad{NoRelatedMeta: on}})
		for _, state := range []string{"completed", "failed", "cancelled"} {
			tk := ruleTaskIn(t, c, state)
			r := c.call("tasks/result", map[string]any{"taskId": tk.TaskID})
			res := ruleToolResult(t, ruleOK(t, r))
			want := tk.TaskID
			if on {
				want = ""
			}
			if got := mcp.RelatedTaskID(res.Meta); got != want || kbHas(t, r.Result, "_meta") == on {
				t.Errorf("%s: tasks/result %s, want related-task %q", state, r.Raw, want)
			}
		}
	})
}

// is_error_completed: a result with isError true ends the task failed (R51), or completed;
// tasks/result returns that result either way.
func TestKnownBadIsErrorCompleted(t *testing.T) {
	kbRun(t, func(t *testing.T, on bool) {
		_, c := ruleSetup(t, mockserver.Config{KnownBad: mockserver.KnownBad{IsErrorCompleted: on}})
		t0 := time.Now()
		tk := ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 1000, "outcome": "failed"}, nil)
		ruleUntil(t0, time.Second)
		want := mcp.StatusFailed
		if on {
			want = mcp.StatusCompleted
		}
		ruleWantStatus(t, c, tk.TaskID, want)
		if res := ruleToolResult(t, ruleOK(t, c.call("tasks/result", map[string]any{"taskId": tk.TaskID}))); !res.IsError {
			t.Errorf("tasks/result: isError false, want the tool's isError result")
		}
		// A JSON-RPC error still fails the task: only isError results are misjudged.
		tk = ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 1000, "outcome": "error"}, nil)
		ruleUntil(t0, 2*time.Second)
		ruleWantStatus(t, c, tk.TaskID, mcp.StatusFailed)
	})
}

// list_without_auth: without an authorization context tasks.list is not declared and
// tasks/list is unknown (R54), or both are offered; with tokens the mode changes nothing.
func TestKnownBadListWithoutAuth(t *testing.T) {
	kbRun(t, func(t *testing.T, on bool) {
		for _, tokens := range []map[string]string{nil, twoTenants} {
			h := newHarness(t, mockserver.Config{Tokens: tokens, KnownBad: mockserver.KnownBad{ListWithoutAuth: on}})
			token := ""
			if tokens != nil {
				token = "ta"
			}
			r, sid := ruleInit(t, h, token, mcp.Version20251125, `{}`)
			var init mcp.InitializeResult
			if err := json.Unmarshal(ruleOK(t, r), &init); err != nil || init.Capabilities.Tasks == nil {
				t.Fatalf("initialize: %s", r.Raw)
			}
			offered := on || tokens != nil
			if declared := init.Capabilities.Tasks.List != nil; declared != offered {
				t.Errorf("tokens %v: tasks.list declared %v, want %v", tokens != nil, declared, offered)
			}
			c := ruleClient(t, h, sid, mcp.Version20251125, token)
			tk := ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 60_000}, nil)
			if !offered {
				ruleErr(t, c.call("tasks/list", map[string]any{}), mcp.CodeMethodNotFound, "R54")
				continue
			}
			if ids, _, _, _ := ruleList(t, c, nil); len(ids) != 1 || ids[0] != tk.TaskID {
				t.Errorf("tokens %v: tasks/list %v, want [%s]", tokens != nil, ids, tk.TaskID)
			}
		}
	})
}

// list_truncated: a tasks/list page carries nextCursor while more tasks remain (R23), or
// never does.
func TestKnownBadListTruncated(t *testing.T) {
	kbRun(t, func(t *testing.T, on bool) {
		_, c := ruleSetup(t, mockserver.Config{Tokens: twoTenants, ListPageSize: 2, KnownBad: mockserver.KnownBad{ListTruncated: on}}, withToken("ta"))
		for range 3 {
			ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 60_000}, nil)
		}
		ids, _, more, res := ruleList(t, c, nil)
		if len(ids) != 2 || more == on {
			t.Errorf("tasks/list %s: %d tasks, nextCursor %v; want 2 tasks and nextCursor %v", res, len(ids), more, !on)
		}
	})
}

// wrong_error_codes: each refusal of the tasks methods is -32602 (R46, R47, R26) and each
// taskSupport refusal -32601 (R8, R10); with the mode -32603 and -32602. Other codes stay.
func TestKnownBadWrongErrorCodes(t *testing.T) {
	kbRun(t, func(t *testing.T, on bool) {
		_, c := ruleSetup(t, mockserver.Config{Tokens: twoTenants, KnownBad: mockserver.KnownBad{WrongErrorCodes: on}}, withToken("ta"))
		done := ruleTaskIn(t, c, "completed")
		unknown := map[string]any{"taskId": "0123456789abcdef0123456789abcdef"}
		tests := []struct {
			what, method string
			params       any
			off, on      int
		}{
			{"tasks/get of an unknown id", "tasks/get", unknown, mcp.CodeInvalidParams, mcp.CodeInternalError},
			{"tasks/get without taskId", "tasks/get", map[string]any{}, mcp.CodeInvalidParams, mcp.CodeInternalError},
			{"tasks/result of an unknown id", "tasks/result", unknown, mcp.CodeInvalidParams, mcp.CodeInternalError},
			{"tasks/cancel of an unknown id", "tasks/cancel", unknown, mcp.CodeInvalidParams, mcp.CodeInternalError},
			{"tasks/cancel of a terminal task", "tasks/cancel", map[string]any{"taskId": done.TaskID}, mcp.CodeInvalidParams, mcp.CodeInternalError},
			{"tasks/list with a bad cursor", "tasks/list", map[string]any{"cursor": "nope"}, mcp.CodeInvalidParams, mcp.CodeInternalError},
			{"a forbidden tool with task", "tools/call", map[string]any{"name": "work_sync", "arguments": map[string]any{}, "task": map[string]any{}},
				mcp.CodeMethodNotFound, mcp.CodeInvalidParams},
			{"a required tool without task", "tools/call", map[string]any{"name": "work_task", "arguments": map[string]any{}},
				mcp.CodeMethodNotFound, mcp.CodeInvalidParams},
			{"an unknown tool", "tools/call", map[string]any{"name": "nope"}, mcp.CodeInvalidParams, mcp.CodeInvalidParams},
			{"an unknown method", "tasks/nope", map[string]any{}, mcp.CodeMethodNotFound, mcp.CodeMethodNotFound},
		}
		for _, tc := range tests {
			want := tc.off
			if on {
				want = tc.on
			}
			r := c.call(tc.method, tc.params)
			if r.Err == nil || r.Err.Code != want {
				t.Errorf("%s: %s, want error %d", tc.what, r.Raw, want)
			}
		}
		// A tasks/result that waited, then found its task gone, answers on its SSE stream.
		tk := ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 60_000}, map[string]any{"ttl": 5000})
		st := ruleStream(t, c, tk.TaskID)
		want := mcp.CodeInvalidParams
		if on {
			want = mcp.CodeInternalError
		}
		if r := ruleFinal(t, st); r.Err == nil || r.Err.Code != want {
			t.Errorf("tasks/result of a task that expired while it waited: %s, want error %d", r.Raw, want)
		}
	})
}

// no_task_support_check: a forbidden tool called with task and a required one called without
// get -32601 (R8, R10), or are served: a task, a plain result.
func TestKnownBadNoTaskSupportCheck(t *testing.T) {
	kbRun(t, func(t *testing.T, on bool) {
		_, c := ruleSetup(t, mockserver.Config{KnownBad: mockserver.KnownBad{NoTaskSupportCheck: on}})
		forbidden := c.call("tools/call", map[string]any{"name": "work_sync", "arguments": map[string]any{"duration_ms": 0}, "task": map[string]any{}})
		required := c.call("tools/call", map[string]any{"name": "work_task", "arguments": map[string]any{"duration_ms": 0}})
		if !on {
			ruleErr(t, forbidden, mcp.CodeMethodNotFound, "R8")
			ruleErr(t, required, mcp.CodeMethodNotFound, "R10")
			return
		}
		var ctr mcp.CreateTaskResult
		if err := json.Unmarshal(ruleOK(t, forbidden), &ctr); err != nil || ctr.Task.TaskID == "" || ctr.Task.Status != mcp.StatusWorking {
			t.Errorf("work_sync with task: %s, want a CreateTaskResult", forbidden.Raw)
		}
		if res := ruleToolResult(t, ruleOK(t, required)); !strings.Contains(ruleText(res), "work completed") {
			t.Errorf("work_task without task: %s, want its CallToolResult", required.Raw)
		}
	})
}

// never_expire: a task whose ttl has passed is gone, -32602 (R46); with the mode it is
// still answered, with the ttl it was granted.
func TestKnownBadNeverExpire(t *testing.T) {
	kbRun(t, func(t *testing.T, on bool) {
		h, c := ruleSetup(t, mockserver.Config{Tokens: twoTenants, KnownBad: mockserver.KnownBad{NeverExpire: on}}, withToken("ta"))
		t0 := time.Now()
		tk := ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 0}, map[string]any{"ttl": 1000})
		ruleUntil(t0, 5*time.Second)
		r := c.call("tasks/get", map[string]any{"taskId": tk.TaskID})
		listed, _, _, _ := ruleList(t, c, nil)
		if !on {
			ruleErr(t, r, mcp.CodeInvalidParams, "not found")
			if len(listed) != 0 || h.srv.Stats().TasksExpired != 1 {
				t.Errorf("an expired task is listed (%v) or not counted expired (%d)", listed, h.srv.Stats().TasksExpired)
			}
			return
		}
		got := ruleTaskOf(t, r, "GetTaskResult")
		if got.Status != mcp.StatusCompleted || got.TTL == nil || *got.TTL != 1000 {
			t.Errorf("tasks/get of the expired task: %s", r.Raw)
		}
		if len(listed) != 1 || h.srv.Stats().TasksExpired != 0 || h.srv.Stats().TasksLive != 1 {
			t.Errorf("listed %v, %d expired, %d live; want it kept", listed, h.srv.Stats().TasksExpired, h.srv.Stats().TasksLive)
		}
	})
}

// lost_session_400: a request on an unknown or ended session gets 404 (H8), or 400.
func TestKnownBadLostSession400(t *testing.T) {
	kbRun(t, func(t *testing.T, on bool) {
		h, c := ruleSetup(t, mockserver.Config{KnownBad: mockserver.KnownBad{LostSession400: on}})
		want := http.StatusNotFound
		if on {
			want = http.StatusBadRequest
		}
		unknown := *c
		unknown.sid = "0123456789abcdef0123456789abcdef"
		ruleRejected(t, h, unknown.request(http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"ping"}`), want, "session not found")
		ruleRejected(t, h, unknown.request(http.MethodDelete, ""), want, "session not found")
		if s, _, b := ruleRaw(t, h, c.request(http.MethodDelete, ""), ""); s != http.StatusOK {
			t.Fatalf("DELETE: HTTP %d %s", s, b)
		}
		ruleRejected(t, h, c.request(http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"ping"}`), want, "session not found")
		get := c.request(http.MethodGet, "")
		get.Header.Set("Accept", "text/event-stream")
		ruleRejected(t, h, get, want, "session not found")
	})
}

// sessionless: after initialize a request without Mcp-Session-Id gets 400 (H2), or is
// served; the task it creates is the tenant's, as any other.
func TestKnownBadSessionless(t *testing.T) {
	kbRun(t, func(t *testing.T, on bool) {
		h, c := ruleSetup(t, mockserver.Config{KnownBad: mockserver.KnownBad{Sessionless: on}})
		bare := *c
		bare.sid = ""
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","arguments":{"duration_ms":0},"task":{}}}`
		if !on {
			ruleRejected(t, h, bare.request(http.MethodPost, body), http.StatusBadRequest, "missing Mcp-Session-Id")
			return
		}
		tk := ruleCreate(t, &bare, mockserver.ToolWork, map[string]any{"duration_ms": 0}, nil)
		synctest.Wait()
		ruleWantStatus(t, c, tk.TaskID, mcp.StatusCompleted)
		ruleWantStatus(t, &bare, tk.TaskID, mcp.StatusCompleted)
		if n := h.srv.Stats().Sessions; n != 1 {
			t.Errorf("%d sessions, want the one initialized", n)
		}
	})
}

// any_version: initialize answers a version the server speaks (H1), or echoes the client's.
func TestKnownBadAnyVersion(t *testing.T) {
	kbRun(t, func(t *testing.T, on bool) {
		h := newHarness(t, mockserver.Config{KnownBad: mockserver.KnownBad{AnyVersion: on}})
		c := h.connect(withVersion("2099-01-01"))
		want := mcp.Version20251125
		if on {
			want = "2099-01-01"
		}
		if c.version != want {
			t.Errorf("initialize for 2099-01-01: protocolVersion %q, want %q", c.version, want)
		}
		rulePing(t, c) // the session takes the version it was told in MCP-Protocol-Version
		ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 0}, nil)
		if old := h.connect(withVersion(mcp.Version20250618)); old.version != mcp.Version20250618 {
			t.Errorf("initialize for %s: protocolVersion %q", mcp.Version20250618, old.version)
		}
	})
}

// input_no_meta: the elicitation/create of input_required names its task in related-task
// _meta (R36), or does not.
func TestKnownBadInputNoMeta(t *testing.T) {
	kbRun(t, func(t *testing.T, on bool) {
		_, c := ruleSetup(t, mockserver.Config{KnownBad: mockserver.KnownBad{InputNoMeta: on}})
		tk := ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 2000, "input_required": true}, nil)
		st := ruleStream(t, c, tk.TaskID)
		m := ruleNextMessage(t, st)
		if m.Method != "elicitation/create" {
			t.Fatalf("got %s, want elicitation/create", m.Raw)
		}
		var p mcp.ElicitRequestParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			t.Fatal(err)
		}
		want := tk.TaskID
		if on {
			want = ""
		}
		if got := mcp.RelatedTaskID(p.Meta); got != want || kbHas(t, m.Params, "_meta") == on {
			t.Errorf("elicitation/create %s, want related-task %q", m.Raw, want)
		}
		ruleAnswer(t, c, m, mcp.ElicitAccept) // the task goes on as usual
		if r := ruleFinal(t, st); r.Err != nil {
			t.Errorf("tasks/result: %s", r.Raw)
		}
	})
}

// ignore_task_param: a task-augmented call of the optional tool creates a task (R11); with
// the mode it runs as a plain call and answers its CallToolResult.
func TestKnownBadIgnoreTaskParam(t *testing.T) {
	kbRun(t, func(t *testing.T, on bool) {
		_, c := ruleSetup(t, mockserver.Config{KnownBad: mockserver.KnownBad{IgnoreTaskParam: on}})
		r := c.call("tools/call", map[string]any{"name": "work", "arguments": map[string]any{"duration_ms": 0}, "task": map[string]any{}})
		var ctr mcp.CreateTaskResult
		isTask := json.Unmarshal(ruleOK(t, r), &ctr) == nil && ctr.Task.TaskID != ""
		if isTask == on {
			t.Errorf("work with task: %s; want a CreateTaskResult %v", r.Raw, !on)
		}
		if on && !strings.Contains(ruleText(ruleToolResult(t, ruleOK(t, r))), "work completed") {
			t.Errorf("work with task: %s, want its CallToolResult", r.Raw)
		}
		// The required tool still makes a task: only the optional one is misjudged.
		ruleCreate(t, c, mockserver.ToolWorkTask, map[string]any{"duration_ms": 0}, nil)
	})
}

// refuse_task_param: a server without Tasks ignores a task parameter and runs the call
// (R4); with the mode it refuses the call with -32602.
func TestKnownBadRefuseTaskParam(t *testing.T) {
	kbRun(t, func(t *testing.T, on bool) {
		_, c := ruleSetup(t, mockserver.Config{NoTasks: true, KnownBad: mockserver.KnownBad{RefuseTaskParam: on}})
		r := c.call("tools/call", map[string]any{"name": "work", "arguments": map[string]any{"duration_ms": 0}, "task": map[string]any{}})
		if on {
			ruleErr(t, r, mcp.CodeInvalidParams, "not supported")
			return
		}
		if !strings.Contains(ruleText(ruleToolResult(t, ruleOK(t, r))), "work completed") {
			t.Errorf("work with task, no Tasks: %s, want its CallToolResult", r.Raw)
		}
	})
}

// self_cancel: a task whose work ends completes; with the mode it ends cancelled, though
// nobody cancelled it (R27).
func TestKnownBadSelfCancel(t *testing.T) {
	kbRun(t, func(t *testing.T, on bool) {
		_, c := ruleSetup(t, mockserver.Config{KnownBad: mockserver.KnownBad{SelfCancel: on}})
		t0 := time.Now()
		tk := ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 1000}, nil)
		ruleUntil(t0, time.Second)
		want := mcp.StatusCompleted
		if on {
			want = mcp.StatusCancelled
		}
		ruleWantStatus(t, c, tk.TaskID, want)
	})
}
