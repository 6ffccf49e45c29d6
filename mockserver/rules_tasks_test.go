package mockserver_test

// Tests of the rules of docs/RULES.md (R1-R62) that bind the receiver (the mock
// server). Skipped rules are listed, with why, at the top of rules_test.go.

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/mcp/mcptest"
	"github.com/tasksim/tasksim/mockserver"
)

// ruleTenants is the token table of the tests of authorization binding.
var ruleTenants = map[string]string{"tok-alice": "alice", "tok-alice-2": "alice", "tok-bob": "bob"}

// ruleTaskIn creates a task of tool work on c and drives it into state: working,
// input_required, completed, failed (isError result), error (JSON-RPC error), cancelled or
// declined (failed by a declined elicitation). It returns the task as tasks/get sees it.
func ruleTaskIn(t testing.TB, c *client, state string) mcp.Task {
	t.Helper()
	args := map[string]any{"duration_ms": 1000}
	want := mcp.StatusCompleted
	switch state {
	case "working", "cancelled":
		args["duration_ms"] = 3_600_000
		want = mcp.StatusWorking
	case "input_required", "declined":
		args["duration_ms"], args["input_required"] = 2000, true
		want = mcp.StatusInputRequired
	case "failed", "error":
		args["outcome"] = state
		want = mcp.StatusFailed
	}
	tk := ruleCreate(t, c, mockserver.ToolWork, args, nil)
	switch state {
	case "cancelled":
		if got := ruleTaskOf(t, c.call("tasks/cancel", map[string]any{"taskId": tk.TaskID}), "CancelTaskResult"); got.Status != mcp.StatusCancelled {
			t.Fatalf("tasks/cancel: status %v", got.Status)
		}
		want = mcp.StatusCancelled
	case "declined":
		st := ruleStream(t, c, tk.TaskID)
		ruleAnswer(t, c, ruleNextMessage(t, st), mcp.ElicitDecline)
		ruleFinal(t, st)
		want = mcp.StatusFailed
	case "working":
	default:
		time.Sleep(time.Second)
		synctest.Wait()
	}
	return ruleWantStatus(t, c, tk.TaskID, want)
}

// ruleList fetches one tasks/list page and returns the ids, the nextCursor and whether the
// member was present.
func ruleList(t testing.TB, c *client, cursor *string) (ids []string, next string, hasNext bool, res json.RawMessage) {
	t.Helper()
	params := map[string]any{}
	if cursor != nil {
		params["cursor"] = *cursor
	}
	res = ruleOK(t, c.call("tasks/list", params))
	var lr mcp.ListTasksResult
	if err := json.Unmarshal(res, &lr); err != nil {
		t.Fatalf("tasks/list: %v: %s", err, res)
	}
	for _, tk := range lr.Tasks {
		ids = append(ids, tk.TaskID)
	}
	_, hasNext = ruleObject(t, res)["nextCursor"]
	return ids, lr.NextCursor, hasNext, res
}

// ruleListAll follows nextCursor to the end and returns every listed id.
func ruleListAll(t testing.TB, c *client) []string {
	t.Helper()
	var all []string
	var cur *string
	for range 1000 {
		ids, next, more, _ := ruleList(t, c, cur)
		all = append(all, ids...)
		if !more {
			return all
		}
		cur = &next
	}
	t.Fatal("tasks/list never ended")
	return nil
}

// TestR1 checks R1 (Both, MUST), docs/RULES.md#r1: A party that supports task-augmented requests
// declares `capabilities.tasks` at initialization (MUST).
func TestR1(t *testing.T) {
	tests := []struct {
		name string
		cfg  mockserver.Config
		want string // capabilities.tasks, exactly: every leaf an object (docs/RULES.md#capabilities)
	}{
		{name: "without authorization context", want: `{"cancel":{},"requests":{"tools":{"call":{}}}}`},
		{name: "with tokens", cfg: mockserver.Config{Tokens: ruleTenants}, want: `{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h := newHarness(t, tc.cfg)
			r, _ := ruleInit(t, h, "tok-alice", mcp.Version20251125, `{}`)
			var res struct {
				Capabilities map[string]json.RawMessage `json:"capabilities"`
			}
			_ = json.Unmarshal(ruleOK(t, r), &res)
			if got := res.Capabilities["tasks"]; got == nil || !ruleJSONEqual(t, got, []byte(tc.want)) {
				t.Fatalf("capabilities.tasks %s, want %s", got, tc.want)
			}
		})
	}
}

// TestR4 checks R4 (Rcv, MUST), docs/RULES.md#r4: A receiver that did not declare tasks for a
// request type runs such requests normally and ignores any `task` (MUST).
func TestR4(t *testing.T) {
	tests := []struct {
		name    string
		version string
		tool    string
		task    any // params.task; nil leaves it out
	}{
		{name: "optional tool with task", version: mcp.Version20250618, tool: mockserver.ToolWork, task: map[string]any{}},
		{name: "required tool with task and ttl", version: mcp.Version20250618, tool: mockserver.ToolWorkTask, task: map[string]any{"ttl": 1000}},
		{name: "forbidden tool with task", version: mcp.Version20250618, tool: mockserver.ToolWorkSync, task: map[string]any{}},
		{name: "required tool without task", version: mcp.Version20250618, tool: mockserver.ToolWorkTask},
		{name: "2024-11-05 session", version: mcp.Version20241105, tool: mockserver.ToolWorkTask, task: map[string]any{}},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h, c := ruleSetup(t, mockserver.Config{}, withVersion(tc.version))
			if c.version != tc.version {
				t.Fatalf("negotiated %q, want %q", c.version, tc.version)
			}
			t0 := time.Now()
			params := map[string]any{"name": tc.tool, "arguments": map[string]any{"duration_ms": 1500}}
			if tc.task != nil {
				params["task"] = tc.task
			}
			res := ruleOK(t, c.call("tools/call", params))
			ruleElapsed(t, t0, 1500*time.Millisecond, "the synchronous reply")
			if _, ok := ruleObject(t, res)["task"]; ok {
				t.Fatalf("got a CreateTaskResult %s, want a plain CallToolResult", res)
			}
			tr := ruleToolResult(t, res)
			if tr.IsError || ruleText(tr) != "work completed in 1500 ms" {
				t.Fatalf("result %s, want the completed work", res)
			}
			if st := h.srv.Stats(); st.TasksCreated != 0 || st.Effects != 1 {
				t.Fatalf("%d tasks created, %d effects; want 0 and 1", st.TasksCreated, st.Effects)
			}
		})
	}
}

// TestR8 checks R8 (S, SHOULD), docs/RULES.md#r8: A server answers an augmented call of such a tool
// with `-32601` (SHOULD).
// (taskSupport absent or forbidden).
func TestR8(t *testing.T) {
	tests := []struct {
		name string
		task map[string]any
		args map[string]any
	}{
		{name: "empty task", task: map[string]any{}, args: map[string]any{"duration_ms": 10}},
		{name: "task with ttl", task: map[string]any{"ttl": 1000}},
		{name: "task asking for input", task: map[string]any{}, args: map[string]any{"input_required": true}},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h, c := ruleSetup(t, mockserver.Config{})
			r := c.call("tools/call", map[string]any{"name": mockserver.ToolWorkSync, "arguments": tc.args, "task": tc.task})
			ruleErr(t, r, mcp.CodeMethodNotFound, `"work_sync"`, "forbidden")
			time.Sleep(time.Minute)
			synctest.Wait()
			if st := h.srv.Stats(); st.TasksCreated != 0 || st.Effects != 0 {
				t.Fatalf("%d tasks created, %d effects; want none", st.TasksCreated, st.Effects)
			}
		})
	}
}

// TestR10 checks R10 (S, MUST), docs/RULES.md#r10: A server answers a call of a `required` tool
// without `task` with `-32601` (MUST; see [gap-2](#gap-2)).
func TestR10(t *testing.T) {
	tests := []struct {
		name   string
		params map[string]any
	}{
		{name: "no task member", params: map[string]any{"name": mockserver.ToolWorkTask}},
		{name: "task null", params: map[string]any{"name": mockserver.ToolWorkTask, "task": nil}},
		{name: "with arguments", params: map[string]any{"name": mockserver.ToolWorkTask, "arguments": map[string]any{"duration_ms": 0}}},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h, c := ruleSetup(t, mockserver.Config{})
			ruleErr(t, c.call("tools/call", tc.params), mcp.CodeMethodNotFound, `"work_task"`, "requires a task-augmented call")
			time.Sleep(time.Minute)
			synctest.Wait()
			if st := h.srv.Stats(); st.TasksCreated != 0 || st.Effects != 0 {
				t.Fatalf("%d tasks created, %d effects; want none", st.TasksCreated, st.Effects)
			}
		})
	}
}

// TestR11 checks R11 (Rcv, MUST/SHOULD), docs/RULES.md#r11: A receiver that accepts an augmented
// request answers it with `CreateTaskResult` (MUST), as soon as it can (SHOULD).
func TestR11(t *testing.T) {
	tests := []struct {
		name string
		tool string
		args map[string]any
		task map[string]any
	}{
		{name: "optional tool", tool: mockserver.ToolWork, args: map[string]any{"duration_ms": 60000}},
		{name: "required tool", tool: mockserver.ToolWorkTask, args: map[string]any{"duration_ms": 60000}},
		{name: "with ttl", tool: mockserver.ToolWork, args: map[string]any{"duration_ms": 86400000}, task: map[string]any{"ttl": 1000}},
		{name: "asking for input", tool: mockserver.ToolWorkTask, args: map[string]any{"duration_ms": 0, "input_required": true}},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h, c := ruleSetup(t, mockserver.Config{})
			t0 := time.Now()
			task := tc.task
			if task == nil {
				task = map[string]any{}
			}
			r := c.call("tools/call", map[string]any{"name": tc.tool, "arguments": tc.args, "task": task})
			ruleElapsed(t, t0, 0, "CreateTaskResult")
			res := ruleOK(t, r)
			mcptest.Must(t, mcptest.Validate("CreateTaskResult", res))
			m := ruleObject(t, res)
			if _, ok := m["task"]; !ok || m["taskId"] != nil || m["status"] != nil {
				t.Fatalf("result %s: the task must be nested under \"task\"", res)
			}
			if st := h.srv.Stats(); st.TasksCreated != 1 {
				t.Fatalf("%d tasks created, want 1", st.TasksCreated)
			}
		})
	}
}

// TestR12 checks R12 (Rcv, MUST), docs/RULES.md#r12: The receiver makes each task id: a string that
// no other task of that receiver shares (MUST).
func TestR12(t *testing.T) {
	tests := []struct {
		name   string
		cfg    mockserver.Config
		tokens []string // one client per entry
		perC   int
		task   map[string]any // params.task, with a taskId the requestor makes up
	}{
		{name: "one session", tokens: []string{""}, perC: 20},
		{name: "two sessions", tokens: []string{"", ""}, perC: 10},
		{name: "two tenants", cfg: mockserver.Config{Tokens: ruleTenants}, tokens: []string{"tok-alice", "tok-bob"}, perC: 10},
		{name: "requestor-made id ignored", tokens: []string{""}, perC: 2, task: map[string]any{"taskId": "mine"}},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h := newHarness(t, tc.cfg)
			seen := map[string]bool{}
			for _, tok := range tc.tokens {
				c := h.connect(withToken(tok))
				for range tc.perC {
					params := map[string]any{"name": mockserver.ToolWork, "task": map[string]any{},
						"_meta": json.RawMessage(mcp.RelatedTaskMeta("mine"))}
					if tc.task != nil {
						params["task"] = tc.task
					}
					res := ruleOK(t, c.call("tools/call", params))
					raw := ruleObject(t, ruleObject(t, res)["task"])["taskId"]
					var id string
					if err := json.Unmarshal(raw, &id); err != nil || id == "" {
						t.Fatalf("taskId %s, want a non-empty JSON string", raw)
					}
					if id == "mine" || seen[id] {
						t.Fatalf("taskId %q repeated or taken from the requestor", id)
					}
					seen[id] = true
				}
			}
		})
	}
}

// TestR13 checks R13 (Rcv, MUST), docs/RULES.md#r13: Every new task starts in `working` (MUST).
func TestR13(t *testing.T) {
	tests := []struct {
		name string
		tool string
		args map[string]any
	}{
		{name: "zero duration", tool: mockserver.ToolWork, args: map[string]any{"duration_ms": 0}},
		{name: "long work", tool: mockserver.ToolWork, args: map[string]any{"duration_ms": 5000}},
		{name: "input at once", tool: mockserver.ToolWork, args: map[string]any{"duration_ms": 0, "input_required": true}},
		{name: "failing at once", tool: mockserver.ToolWorkTask, args: map[string]any{"duration_ms": 0, "outcome": "failed"}},
		{name: "erring at once", tool: mockserver.ToolWorkTask, args: map[string]any{"duration_ms": 0, "outcome": "error"}},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			_, c := ruleSetup(t, mockserver.Config{})
			tk := ruleCreate(t, c, tc.tool, tc.args, nil)
			if tk.Status != mcp.StatusWorking {
				t.Fatalf("new task is %v, want working", tk.Status)
			}
		})
	}
}

// TestR14 checks R14 (Rcv, MUST), docs/RULES.md#r14: Tasks move only along the [state
// table](#state-machine); a terminal status never changes (MUST).
func TestR14(t *testing.T) {
	// allowed is the state table of docs/RULES.md#state-machine, written out here rather than taken
	// from package mcp.
	allowed := map[mcp.Status][]mcp.Status{
		mcp.StatusWorking:       {mcp.StatusInputRequired, mcp.StatusCompleted, mcp.StatusFailed, mcp.StatusCancelled},
		mcp.StatusInputRequired: {mcp.StatusWorking, mcp.StatusCompleted, mcp.StatusFailed, mcp.StatusCancelled},
	}
	const errTerminal = mcp.Status(0) // tasks/cancel answered -32602
	type step struct {
		at   time.Duration
		op   string // get, cancel, accept, decline (answer the elicitation read from the GET stream)
		want mcp.Status
	}
	W, IR, C, F, X := mcp.StatusWorking, mcp.StatusInputRequired, mcp.StatusCompleted, mcp.StatusFailed, mcp.StatusCancelled
	ms := time.Millisecond
	tests := []struct {
		name  string
		args  map[string]any
		steps []step
	}{
		{name: "working to completed", args: map[string]any{"duration_ms": 1000}, steps: []step{
			{0, "get", W}, {999 * ms, "get", W}, {1000 * ms, "get", C}, {1000 * ms, "cancel", errTerminal}, {10000 * ms, "get", C}}},
		{name: "working to failed", args: map[string]any{"duration_ms": 1000, "outcome": "failed"}, steps: []step{
			{0, "get", W}, {1000 * ms, "get", F}, {1000 * ms, "cancel", errTerminal}, {10000 * ms, "get", F}}},
		{name: "working to failed by error", args: map[string]any{"duration_ms": 1000, "outcome": "error"}, steps: []step{
			{0, "get", W}, {1000 * ms, "get", F}, {2000 * ms, "cancel", errTerminal}, {10000 * ms, "get", F}}},
		{name: "working to cancelled", args: map[string]any{"duration_ms": 1000}, steps: []step{
			{0, "get", W}, {500 * ms, "cancel", X}, {1000 * ms, "get", X}, {1000 * ms, "cancel", errTerminal}, {10000 * ms, "get", X}}},
		{name: "input_required to working to completed", args: map[string]any{"duration_ms": 2000, "input_required": true}, steps: []step{
			{0, "get", W}, {1000 * ms, "get", IR}, {1000 * ms, "accept", W}, {1999 * ms, "get", W}, {2000 * ms, "get", C}, {9000 * ms, "get", C}}},
		{name: "input_required to cancelled", args: map[string]any{"duration_ms": 2000, "input_required": true}, steps: []step{
			{1000 * ms, "get", IR}, {1500 * ms, "cancel", X}, {3000 * ms, "get", X}}},
		{name: "input_required to failed", args: map[string]any{"duration_ms": 2000, "input_required": true}, steps: []step{
			{1000 * ms, "get", IR}, {1000 * ms, "decline", F}, {3000 * ms, "get", F}}},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			_, c := ruleSetup(t, mockserver.Config{})
			get := ruleGETStream(t, c)
			t0 := time.Now()
			tk := ruleCreate(t, c, mockserver.ToolWork, tc.args, nil)
			last, lastUpdated := tk.Status, tk.LastUpdatedAt
			for _, s := range tc.steps {
				ruleUntil(t0, s.at)
				var got mcp.Task
				switch s.op {
				case "get":
					got = ruleGet(t, c, tk.TaskID)
				case "cancel":
					r := c.call("tasks/cancel", map[string]any{"taskId": tk.TaskID})
					if s.want == errTerminal {
						ruleErr(t, r, mcp.CodeInvalidParams, "already")
						continue
					}
					got = ruleTaskOf(t, r, "CancelTaskResult")
				default:
					ruleAnswer(t, c, ruleNextMessage(t, get), s.op)
					synctest.Wait()
					got = ruleGet(t, c, tk.TaskID)
				}
				if got.Status != s.want {
					t.Fatalf("at %v after %s: %v, want %v", s.at, s.op, got.Status, s.want)
				}
				if last.Terminal() && (got.Status != last || got.LastUpdatedAt != lastUpdated) {
					t.Fatalf("terminal %v (updated %s) changed to %v (updated %s)", last, lastUpdated, got.Status, got.LastUpdatedAt)
				}
				if got.Status != last && !slices.Contains(allowed[last], got.Status) {
					t.Fatalf("transition %v -> %v is not in the state table", last, got.Status)
				}
				last, lastUpdated = got.Status, got.LastUpdatedAt
			}
		})
	}
}

// TestR17 checks R17 (Rcv, MUST), docs/RULES.md#r17: `tasks/result` of a terminal task returns
// exactly what the original request would have: its result, or its JSON-RPC error (MUST).
func TestR17(t *testing.T) {
	tests := []struct {
		name   string
		args   map[string]any
		stream bool // wait on a tasks/result stream instead of fetching after the end
	}{
		{name: "completed", args: map[string]any{"duration_ms": 1000}},
		{name: "completed with payload", args: map[string]any{"duration_ms": 1000, "payload_bytes": 64}},
		{name: "isError result", args: map[string]any{"duration_ms": 1000, "outcome": "failed"}},
		{name: "JSON-RPC error", args: map[string]any{"duration_ms": 1000, "outcome": "error"}},
		{name: "completed, on the stream", args: map[string]any{"duration_ms": 1000}, stream: true},
		{name: "JSON-RPC error, on the stream", args: map[string]any{"duration_ms": 1000, "outcome": "error"}, stream: true},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			_, c := ruleSetup(t, mockserver.Config{})
			sync := c.call("tools/call", map[string]any{"name": mockserver.ToolWork, "arguments": tc.args})
			tk := ruleCreate(t, c, mockserver.ToolWork, tc.args, nil)
			var first reply
			if tc.stream {
				first = ruleFinal(t, ruleStream(t, c, tk.TaskID))
			} else {
				time.Sleep(time.Second)
				synctest.Wait()
				first = c.call("tasks/result", map[string]any{"taskId": tk.TaskID})
			}
			again := c.call("tasks/result", map[string]any{"taskId": tk.TaskID})
			for i, got := range []reply{first, again} {
				if sync.Err != nil {
					ruleErr(t, got, sync.Err.Code)
					if got.Err.Message != sync.Err.Message || string(got.Err.Data) != string(sync.Err.Data) {
						t.Fatalf("fetch %d: error %+v, want the call's %+v", i, got.Err, sync.Err)
					}
					continue
				}
				m := ruleObject(t, ruleOK(t, got))
				delete(m, "_meta")
				b, _ := json.Marshal(m)
				if !ruleJSONEqual(t, b, sync.Result) {
					t.Fatalf("fetch %d: payload %s, want the call's result %s", i, b, sync.Result)
				}
			}
		})
	}
}

// TestR18 checks R18 (Rcv, MUST), docs/RULES.md#r18: While a task is `working` or `input_required`,
// `tasks/result` does not answer: it waits for a terminal status (MUST).
func TestR18(t *testing.T) {
	tests := []struct {
		name   string
		accept string
		args   map[string]any
		answer time.Duration // answer the elicitation at this time (0: no input)
		end    time.Duration // when the task becomes terminal
	}{
		{name: "JSON reply", accept: "application/json", args: map[string]any{"duration_ms": 5000}, end: 5 * time.Second},
		{name: "SSE reply", accept: "application/json, text/event-stream", args: map[string]any{"duration_ms": 5000}, end: 5 * time.Second},
		{name: "through input_required", accept: "application/json, text/event-stream",
			args: map[string]any{"duration_ms": 2000, "input_required": true}, answer: 1500 * time.Millisecond, end: 2500 * time.Millisecond},
		{name: "failing task", accept: "application/json", args: map[string]any{"duration_ms": 3000, "outcome": "error"}, end: 3 * time.Second},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h, c := ruleSetup(t, mockserver.Config{})
			t0 := time.Now()
			tk := ruleCreate(t, c, mockserver.ToolWork, tc.args, nil)
			req := ruleReq(c, "tasks/result", map[string]any{"taskId": tk.TaskID})
			req.Header.Set("Accept", tc.accept)
			async := ruleAsync(h, req)
			var st *response
			if strings.Contains(tc.accept, "event-stream") {
				st = ruleRecv(t, async)
				rulePriming(t, st)
			}
			if tc.answer > 0 {
				m := ruleNextMessage(t, st)
				ruleUntil(t0, tc.answer)
				ruleAnswer(t, c, m, mcp.ElicitAccept)
			}
			ruleUntil(t0, tc.end-time.Millisecond)
			if st != nil {
				ruleQuiet(t, st, "tasks/result before the task ended")
			} else {
				select {
				case <-async:
					t.Fatal("tasks/result returned before the task ended")
				default:
				}
			}
			ruleUntil(t0, tc.end)
			var rep reply
			if st != nil {
				rep = ruleFinal(t, st)
			} else {
				resp := ruleRecv(t, async)
				rep = decodeReply(t, "tasks/result", resp.all())
			}
			ruleElapsed(t, t0, tc.end, "the tasks/result reply")
			if got := ruleGet(t, c, tk.TaskID); !got.Status.Terminal() {
				t.Fatalf("replied while the task is %v", got.Status)
			}
			if _, ok := tc.args["outcome"]; !ok {
				ruleOK(t, rep)
			}
		})
	}
}

// TestR19 checks R19 (Rcv, MUST), docs/RULES.md#r19: A successful `tasks/result` reply carries
// related-task `_meta` naming the task (MUST; see [gap-4](#gap-4)).
func TestR19(t *testing.T) {
	tests := []struct {
		name   string
		state  string
		stream bool
	}{
		{name: "completed", state: "completed"},
		{name: "isError result", state: "failed"},
		{name: "cancelled", state: "cancelled"},
		{name: "declined", state: "declined"},
		{name: "completed, on the stream", state: "working", stream: true},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			_, c := ruleSetup(t, mockserver.Config{})
			other := ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 10}, nil)
			var tk mcp.Task
			var rep reply
			if tc.stream {
				tk = ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 1000}, nil)
				rep = ruleFinal(t, ruleStream(t, c, tk.TaskID))
			} else {
				tk = ruleTaskIn(t, c, tc.state)
				rep = c.call("tasks/result", map[string]any{"taskId": tk.TaskID})
			}
			res := ruleToolResult(t, ruleOK(t, rep))
			if got := mcp.RelatedTaskID(res.Meta); got != tk.TaskID || got == other.TaskID {
				t.Fatalf("related-task %q, want %q: %s", got, tk.TaskID, rep.Raw)
			}
		})
	}
}

// TestR21 checks R21 (Rcv, SHOULD NOT), docs/RULES.md#r21: A status notification does not carry
// related-task `_meta` (SHOULD NOT).
func TestR21(t *testing.T) {
	tests := []struct {
		name  string
		state string
		want  []string // statuses notified, in order; "elicit" for the elicitation request
	}{
		{name: "completed", state: "completed", want: []string{"completed"}},
		{name: "failed", state: "failed", want: []string{"failed"}},
		{name: "cancelled", state: "cancelled", want: []string{"cancelled"}},
		{name: "input accepted", state: "input", want: []string{"input_required", "elicit", "working", "completed"}},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			_, c := ruleSetup(t, mockserver.Config{StatusNotifications: true})
			get := ruleGETStream(t, c)
			var tk mcp.Task
			if tc.state == "input" {
				tk = ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 2000, "input_required": true}, nil)
			} else {
				tk = ruleTaskIn(t, c, tc.state)
			}
			for _, want := range tc.want {
				m := ruleNextMessage(t, get)
				if want == "elicit" {
					ruleElicitation(t, m, tk.TaskID)
					ruleAnswer(t, c, m, mcp.ElicitAccept)
					continue
				}
				ruleStatusNote(t, m, tk.TaskID, want)
			}
			time.Sleep(time.Minute)
			synctest.Wait()
			ruleQuiet(t, get, "GET stream after the last status")
		})
	}
}

// ruleStatusNote checks that m is notifications/tasks/status for task id in status want,
// without related-task _meta (R21).
func ruleStatusNote(t testing.TB, m ruleMsg, id, want string) mcp.Task {
	t.Helper()
	if m.Method != "notifications/tasks/status" || m.ID != nil {
		t.Fatalf("got %s, want notifications/tasks/status", m.Raw)
	}
	mcptest.Must(t, mcptest.Validate("TaskStatusNotification", m.Raw))
	if meta, ok := ruleObject(t, m.Params)["_meta"]; ok && mcp.RelatedTaskID(meta) != "" {
		t.Fatalf("status notification carries related-task _meta (R21): %s", m.Raw)
	}
	var tk mcp.Task
	_ = json.Unmarshal(m.Params, &tk)
	if tk.TaskID != id || tk.Status.String() != want {
		t.Fatalf("notification for %s %v, want %s %s", tk.TaskID, tk.Status, id, want)
	}
	return tk
}

// TestR22 checks R22 (Rcv, SHOULD), docs/RULES.md#r22: `tasks/list` is paginated with cursors
// (SHOULD).
func TestR22(t *testing.T) {
	tests := []struct {
		name      string
		pageSize  int
		before    int // tasks created before the first page
		between   int // tasks created after the first page
		otherSess bool
		wantPages []int
	}{
		{name: "five by two", pageSize: 2, before: 5, wantPages: []int{2, 2, 1}},
		{name: "four by three", pageSize: 3, before: 4, wantPages: []int{3, 1}},
		{name: "three by one", pageSize: 1, before: 3, wantPages: []int{1, 1, 1}},
		{name: "tasks created between pages", pageSize: 2, before: 3, between: 2, wantPages: []int{2, 2, 1}},
		{name: "cursor used on another session", pageSize: 2, before: 4, otherSess: true, wantPages: []int{2, 2}},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h, c := ruleSetup(t, mockserver.Config{Tokens: ruleTenants, ListPageSize: tc.pageSize}, withToken("tok-alice"))
			var created []string
			mk := func(n int) {
				for range n {
					created = append(created, ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 60000}, nil).TaskID)
				}
			}
			mk(tc.before)
			var got []string
			var pages []int
			var cur *string
			for {
				ids, next, more, _ := ruleList(t, c, cur)
				got, pages = append(got, ids...), append(pages, len(ids))
				if len(pages) == 1 {
					mk(tc.between)
					if tc.otherSess {
						c = h.connect(withToken("tok-alice"))
					}
				}
				if !more {
					break
				}
				cur = &next
			}
			if !slices.Equal(pages, tc.wantPages) || !slices.Equal(got, created) {
				t.Fatalf("pages %v listing %v, want pages %v listing %v in creation order", pages, got, tc.wantPages, created)
			}
		})
	}
}

// TestR23 checks R23 (Rcv, MUST), docs/RULES.md#r23: A `tasks/list` page carries `nextCursor`
// whenever more tasks remain (MUST).
func TestR23(t *testing.T) {
	for n := range 6 {
		ruleRun(t, fmt.Sprintf("%d tasks by two", n), func(t *testing.T) {
			_, c := ruleSetup(t, mockserver.Config{Tokens: ruleTenants, ListPageSize: 2}, withToken("tok-alice"))
			for range n {
				ruleCreate(t, c, mockserver.ToolWork, nil, nil)
			}
			var cur *string
			for listed := 0; ; {
				ids, next, more, res := ruleList(t, c, cur)
				listed += len(ids)
				if remain := n - listed; more != (remain > 0) {
					t.Fatalf("after %d of %d tasks: nextCursor present %v (%s)", listed, n, more, res)
				}
				if !more {
					break
				}
				if next == "" {
					t.Fatal("nextCursor is empty")
				}
				cur = &next
			}
		})
	}
}

// TestR25 checks R25 (Rcv, MUST), docs/RULES.md#r25: Every task a requestor can read with
// `tasks/get` also appears in its `tasks/list` (MUST).
func TestR25(t *testing.T) {
	tests := []struct {
		name    string
		creator string // token of the creating client; "" is the checking client itself
		state   string
		expired bool // ttl 1000, checked at 1s
		want    bool // fetchable and listed by the checking client
	}{
		{name: "working", state: "working", want: true},
		{name: "input_required", state: "input_required", want: true},
		{name: "completed", state: "completed", want: true},
		{name: "failed", state: "failed", want: true},
		{name: "cancelled", state: "cancelled", want: true},
		{name: "created on another session of the tenant", creator: "tok-alice-2", state: "working", want: true},
		{name: "created by another tenant", creator: "tok-bob", state: "working", want: false},
		{name: "expired", state: "working", expired: true, want: false},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h, c := ruleSetup(t, mockserver.Config{Tokens: ruleTenants}, withToken("tok-alice"))
			maker := c
			if tc.creator != "" {
				maker = h.connect(withToken(tc.creator))
			}
			var id string
			if tc.expired {
				id = ruleCreate(t, maker, mockserver.ToolWork, map[string]any{"duration_ms": 60000}, map[string]any{"ttl": 1000}).TaskID
				time.Sleep(time.Second)
				synctest.Wait()
			} else {
				id = ruleTaskIn(t, maker, tc.state).TaskID
			}
			listed := slices.Contains(ruleListAll(t, c), id)
			fetched := c.call("tasks/get", map[string]any{"taskId": id}).Err == nil
			if listed != fetched || fetched != tc.want {
				t.Fatalf("fetchable %v, listed %v; want both %v", fetched, listed, tc.want)
			}
		})
	}
}

// TestR26 checks R26 (Rcv, MUST), docs/RULES.md#r26: `tasks/cancel` of a task already terminal is
// refused with `-32602` (Invalid params) (MUST).
func TestR26(t *testing.T) {
	tests := []struct{ state, want string }{
		{"completed", "already completed"},
		{"failed", "already failed"},
		{"error", "already failed"},
		{"cancelled", "already cancelled"},
		{"declined", "already failed"},
	}
	for _, tc := range tests {
		ruleRun(t, tc.state, func(t *testing.T) {
			_, c := ruleSetup(t, mockserver.Config{})
			before := ruleTaskIn(t, c, tc.state)
			time.Sleep(time.Second)
			synctest.Wait()
			ruleErr(t, c.call("tasks/cancel", map[string]any{"taskId": before.TaskID}), mcp.CodeInvalidParams, tc.want, before.TaskID)
			if after := ruleGet(t, c, before.TaskID); !ruleSame(after, before) {
				t.Fatalf("task changed by a rejected cancel: %+v, was %+v", after, before)
			}
		})
	}
}

// TestR27 checks R27 (Rcv, SHOULD/MUST), docs/RULES.md#r27: On a valid cancel the receiver tries to
// stop the work (SHOULD) and makes the task `cancelled` before it replies (MUST).
func TestR27(t *testing.T) {
	tests := []struct {
		name     string
		args     map[string]any
		cancelAt time.Duration
		stream   bool // a tasks/result stream is open
	}{
		{name: "working", args: map[string]any{"duration_ms": 1000, "idempotency_key": "k"}, cancelAt: 500 * time.Millisecond},
		{name: "working, tasks/result open", args: map[string]any{"duration_ms": 1000}, cancelAt: 500 * time.Millisecond, stream: true},
		{name: "input_required", args: map[string]any{"duration_ms": 2000, "input_required": true}, cancelAt: 1500 * time.Millisecond, stream: true},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h, c := ruleSetup(t, mockserver.Config{})
			t0 := time.Now()
			tk := ruleCreate(t, c, mockserver.ToolWork, tc.args, nil)
			var st *response
			if tc.stream {
				st = ruleStream(t, c, tk.TaskID)
			}
			ruleUntil(t0, tc.cancelAt)
			got := ruleTaskOf(t, c.call("tasks/cancel", map[string]any{"taskId": tk.TaskID}), "CancelTaskResult")
			if got.Status != mcp.StatusCancelled || got.StatusMessage == "" {
				t.Fatalf("cancel reply %v %q, want cancelled with a statusMessage", got.Status, got.StatusMessage)
			}
			if at, _ := mcp.ParseTime(got.LastUpdatedAt); !at.Equal(t0.Add(tc.cancelAt)) {
				t.Fatalf("lastUpdatedAt %s, want the cancel instant", got.LastUpdatedAt)
			}
			ruleWantStatus(t, c, tk.TaskID, mcp.StatusCancelled)
			if st != nil {
				var elicit *ruleMsg
				m := ruleNextMessage(t, st)
				if m.Method == "elicitation/create" {
					elicit = &m
					m = ruleNextMessage(t, st)
				}
				ruleElapsed(t, t0, tc.cancelAt, "the tasks/result reply of a cancelled task")
				res := ruleToolResult(t, ruleOK(t, decodeReply(t, "tasks/result", m.Raw)))
				if !res.IsError || !strings.Contains(ruleText(res), "cancelled") {
					t.Fatalf("payload of a cancelled task: %s", m.Raw)
				}
				if elicit != nil {
					ruleAnswer(t, c, *elicit, mcp.ElicitAccept) // too late: ignored
				}
			}
			ruleUntil(t0, time.Minute)
			ruleWantStatus(t, c, tk.TaskID, mcp.StatusCancelled)
			if eff := h.srv.Stats().Effects; eff != 0 {
				t.Fatalf("%d domain effects: the cancelled work went on", eff)
			}
		})
	}
}

// TestR28 checks R28 (Rcv, MUST), docs/RULES.md#r28: A cancelled task stays `cancelled` even if its
// work later completes or fails (MUST).
func TestR28(t *testing.T) {
	tests := []struct {
		name string
		args map[string]any
		late string // answer the elicitation after the cancel
	}{
		{name: "work would complete", args: map[string]any{"duration_ms": 1000}},
		{name: "work would fail", args: map[string]any{"duration_ms": 1000, "outcome": "failed"}},
		{name: "work would err", args: map[string]any{"duration_ms": 1000, "outcome": "error"}},
		{name: "input accepted late", args: map[string]any{"duration_ms": 400, "input_required": true}, late: mcp.ElicitAccept},
		{name: "input declined late", args: map[string]any{"duration_ms": 400, "input_required": true}, late: mcp.ElicitDecline},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h, c := ruleSetup(t, mockserver.Config{})
			get := ruleGETStream(t, c)
			t0 := time.Now()
			tk := ruleCreate(t, c, mockserver.ToolWork, tc.args, nil)
			var elicit ruleMsg
			if tc.late != "" {
				elicit = ruleNextMessage(t, get)
			}
			ruleUntil(t0, 300*time.Millisecond)
			cancelled := ruleTaskOf(t, c.call("tasks/cancel", map[string]any{"taskId": tk.TaskID}), "CancelTaskResult")
			if tc.late != "" {
				ruleAnswer(t, c, elicit, tc.late)
			}
			ruleUntil(t0, time.Minute)
			if got := ruleGet(t, c, tk.TaskID); !ruleSame(got, cancelled) {
				t.Fatalf("cancelled task changed to %+v, was %+v", got, cancelled)
			}
			res := ruleToolResult(t, ruleOK(t, c.call("tasks/result", map[string]any{"taskId": tk.TaskID})))
			if !res.IsError || !strings.Contains(ruleText(res), "cancelled") {
				t.Fatalf("payload of a cancelled task: %+v", res)
			}
			if eff := h.srv.Stats().Effects; eff != 0 {
				t.Fatalf("%d domain effects after the cancel", eff)
			}
		})
	}
}

// TestR31 checks R31 (Both, MUST), docs/RULES.md#r31: Any message that is part of a task's work
// (requests, responses, notifications) names the task in related-task `_meta` (MUST).
func TestR31(t *testing.T) {
	tests := []struct {
		name   string
		viaGET bool
		rounds int
	}{
		{name: "two tasks, each on its tasks/result stream", rounds: 1},
		{name: "two tasks, both on the GET stream", viaGET: true, rounds: 1},
		{name: "two tasks, two rounds each", rounds: 2},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			_, c := ruleSetup(t, mockserver.Config{})
			get := ruleGETStream(t, c)
			args := map[string]any{"duration_ms": 1000 * (tc.rounds + 1), "input_rounds": tc.rounds}
			ids := []string{ruleCreate(t, c, mockserver.ToolWork, args, nil).TaskID, ruleCreate(t, c, mockserver.ToolWork, args, nil).TaskID}
			streams := map[string]*response{}
			if !tc.viaGET {
				for _, id := range ids {
					streams[id] = ruleStream(t, c, id)
				}
			}
			for range tc.rounds {
				var msgs []ruleMsg
				if tc.viaGET {
					msgs = append(msgs, ruleNextMessage(t, get), ruleNextMessage(t, get))
				} else {
					msgs = append(msgs, ruleNextMessage(t, streams[ids[0]]), ruleNextMessage(t, streams[ids[1]]))
				}
				var got []string
				for _, m := range msgs {
					var p mcp.ElicitRequestParams
					_ = json.Unmarshal(m.Params, &p)
					id := mcp.RelatedTaskID(p.Meta)
					ruleElicitation(t, m, id)
					if !strings.Contains(p.Message, "task "+id+" ") {
						t.Fatalf("elicitation for task %s carries related-task %s", p.Message, id)
					}
					got = append(got, id)
					ruleAnswer(t, c, m, mcp.ElicitAccept)
				}
				slices.Sort(got)
				want := slices.Sorted(slices.Values(ids))
				if !slices.Equal(got, want) {
					t.Fatalf("elicitations for %v, want one for each of %v", got, want)
				}
			}
			for _, id := range ids {
				var rep reply
				if tc.viaGET {
					time.Sleep(time.Minute)
					rep = c.call("tasks/result", map[string]any{"taskId": id})
				} else {
					rep = ruleFinal(t, streams[id])
				}
				if got := mcp.RelatedTaskID(ruleToolResult(t, ruleOK(t, rep)).Meta); got != id {
					t.Fatalf("tasks/result of %s carries related-task %q", id, got)
				}
			}
		})
	}
}

// TestR32 checks R32 (Rcv, MUST), docs/RULES.md#r32: For `tasks/get`, `tasks/result` and
// `tasks/cancel` the receiver identifies the task by `params.taskId` and ignores any related-task
// `_meta` (MUST).
func TestR32(t *testing.T) {
	tests := []struct {
		name   string
		method string
		meta   string // "other" names another live task, "unknown" a made-up id
		noID   bool   // leave out params.taskId
	}{
		{name: "get, meta of another task", method: "tasks/get", meta: "other"},
		{name: "get, meta of an unknown task", method: "tasks/get", meta: "unknown"},
		{name: "result, meta of another task", method: "tasks/result", meta: "other"},
		{name: "cancel, meta of another task", method: "tasks/cancel", meta: "other"},
		{name: "cancel, meta of an unknown task", method: "tasks/cancel", meta: "unknown"},
		{name: "get, meta without taskId", method: "tasks/get", meta: "other", noID: true},
		{name: "cancel, meta without taskId", method: "tasks/cancel", meta: "other", noID: true},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			_, c := ruleSetup(t, mockserver.Config{})
			other := ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 60000}, nil)
			state := "completed"
			if tc.method == "tasks/cancel" {
				state = "working" // cancellable
			}
			target := ruleTaskIn(t, c, state)
			metaID := map[string]string{"other": other.TaskID, "unknown": "00000000000000000000000000000000"}[tc.meta]
			params := map[string]any{"taskId": target.TaskID, "_meta": json.RawMessage(mcp.RelatedTaskMeta(metaID))}
			if tc.noID {
				delete(params, "taskId")
				ruleErr(t, c.call(tc.method, params), mcp.CodeInvalidParams, "taskId is required")
				ruleWantStatus(t, c, other.TaskID, mcp.StatusWorking)
				return
			}
			r := c.call(tc.method, params)
			switch tc.method {
			case "tasks/result":
				if got := mcp.RelatedTaskID(ruleToolResult(t, ruleOK(t, r)).Meta); got != target.TaskID {
					t.Fatalf("payload of %s, want that of %s", got, target.TaskID)
				}
			default:
				if got := ruleTaskOf(t, r, "GetTaskResult"); got.TaskID != target.TaskID {
					t.Fatalf("answered for %s, want %s", got.TaskID, target.TaskID)
				}
			}
			ruleWantStatus(t, c, other.TaskID, mcp.StatusWorking)
		})
	}
}

// TestR34 checks R34 (Rcv, SHOULD NOT), docs/RULES.md#r34: A receiver leaves it off `tasks/get`,
// `tasks/list` and `tasks/cancel` results (SHOULD NOT send it).
func TestR34(t *testing.T) {
	tests := []struct{ name, method, state string }{
		{"get, working", "tasks/get", "working"},
		{"get, completed", "tasks/get", "completed"},
		{"get, input_required", "tasks/get", "input_required"},
		{"cancel", "tasks/cancel", "working"},
		{"list", "tasks/list", "completed"},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			_, c := ruleSetup(t, mockserver.Config{Tokens: ruleTenants}, withToken("tok-alice"))
			tk := ruleTaskIn(t, c, tc.state)
			var params map[string]any
			if tc.method != "tasks/list" {
				params = map[string]any{"taskId": tk.TaskID}
			}
			res := ruleOK(t, c.call(tc.method, params))
			objs := []json.RawMessage{res}
			if tc.method == "tasks/list" {
				var lr struct{ Tasks []json.RawMessage }
				_ = json.Unmarshal(res, &lr)
				if len(lr.Tasks) != 1 {
					t.Fatalf("listed %d tasks, want 1", len(lr.Tasks))
				}
				objs = append(objs, lr.Tasks...)
			}
			for _, o := range objs {
				if meta, ok := ruleObject(t, o)["_meta"]; ok && mcp.RelatedTaskID(meta) != "" {
					t.Fatalf("%s result carries related-task _meta: %s", tc.method, res)
				}
			}
		})
	}
}

// TestR35 checks R35 (Rcv, SHOULD), docs/RULES.md#r35: A receiver that needs the requestor's
// answers to go on moves the task to `input_required` (SHOULD).
func TestR35(t *testing.T) {
	tests := []struct {
		name     string
		args     map[string]any
		switches []time.Duration // instants the task must enter input_required
	}{
		{name: "one round", args: map[string]any{"duration_ms": 2000, "input_required": true}, switches: []time.Duration{time.Second}},
		{name: "two rounds", args: map[string]any{"duration_ms": 3000, "input_rounds": 2}, switches: []time.Duration{time.Second, 2 * time.Second}},
		{name: "three rounds", args: map[string]any{"duration_ms": 1000, "input_rounds": 3}, switches: []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, 750 * time.Millisecond}},
		{name: "at once", args: map[string]any{"duration_ms": 0, "input_required": true}, switches: []time.Duration{0}},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			_, c := ruleSetup(t, mockserver.Config{})
			get := ruleGETStream(t, c)
			t0 := time.Now()
			tk := ruleCreate(t, c, mockserver.ToolWork, tc.args, nil)
			for i, at := range tc.switches {
				if at > 0 {
					ruleUntil(t0, at-time.Millisecond)
					ruleWantStatus(t, c, tk.TaskID, mcp.StatusWorking)
				}
				ruleUntil(t0, at)
				got := ruleWantStatus(t, c, tk.TaskID, mcp.StatusInputRequired)
				if !strings.Contains(got.StatusMessage, fmt.Sprintf("waiting for input: round %d of %d", i+1, len(tc.switches))) {
					t.Errorf("statusMessage %q", got.StatusMessage)
				}
				if u, _ := mcp.ParseTime(got.LastUpdatedAt); !u.Equal(t0.Add(at)) {
					t.Errorf("lastUpdatedAt %s, want %v after creation", got.LastUpdatedAt, at)
				}
				ruleAnswer(t, c, ruleNextMessage(t, get), mcp.ElicitAccept)
			}
		})
	}
}

// TestR36 checks R36 (Rcv, MUST), docs/RULES.md#r36: The request it sends the requestor
// (elicitation, sampling) carries related-task `_meta` (MUST).
func TestR36(t *testing.T) {
	tests := []struct {
		name string
		via  string // result, get, redelivered
	}{
		{name: "on the tasks/result stream", via: "result"},
		{name: "on the GET stream", via: "get"},
		{name: "re-sent on a new tasks/result stream", via: "redelivered"},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h, c := ruleSetup(t, mockserver.Config{})
			other := ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 60000}, nil)
			tk := ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 2000, "input_required": true}, nil)
			var st *response
			switch tc.via {
			case "get":
				st = ruleGETStream(t, c)
			case "result":
				st = ruleStream(t, c, tk.TaskID)
			case "redelivered":
				req, cancel := ruleWithContext(ruleReq(c, "tasks/result", map[string]any{"taskId": tk.TaskID}))
				first := h.do(req)
				rulePriming(t, first)
				m := ruleNextMessage(t, first)
				ruleElicitation(t, m, tk.TaskID)
				cancel()
				synctest.Wait()
				st = ruleStream(t, c, tk.TaskID)
			}
			ruleElicitation(t, ruleNextMessage(t, st), tk.TaskID)
			ruleWantStatus(t, c, other.TaskID, mcp.StatusWorking)
		})
	}
}

// TestR38 checks R38 (Rcv, SHOULD), docs/RULES.md#r38: Once all needed input has arrived the task
// leaves `input_required`, usually for `working` (SHOULD).
func TestR38(t *testing.T) {
	tests := []struct {
		name    string
		rounds  int
		answers []string
		after   []mcp.Status // status right after each answer
	}{
		{name: "one round accepted", rounds: 1, answers: []string{"accept"}, after: []mcp.Status{mcp.StatusWorking}},
		{name: "two rounds accepted", rounds: 2, answers: []string{"accept", "accept"}, after: []mcp.Status{mcp.StatusWorking, mcp.StatusWorking}},
		{name: "declined", rounds: 1, answers: []string{"decline"}, after: []mcp.Status{mcp.StatusFailed}},
		{name: "answered with an error", rounds: 2, answers: []string{"accept", "error"}, after: []mcp.Status{mcp.StatusWorking, mcp.StatusFailed}},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			_, c := ruleSetup(t, mockserver.Config{})
			get := ruleGETStream(t, c)
			tk := ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 1000 * (tc.rounds + 1), "input_rounds": tc.rounds}, nil)
			for i, a := range tc.answers {
				m := ruleNextMessage(t, get)
				time.Sleep(300 * time.Millisecond) // the client takes its time
				synctest.Wait()
				ruleWantStatus(t, c, tk.TaskID, mcp.StatusInputRequired)
				at := time.Now()
				ruleAnswer(t, c, m, a)
				got := ruleWantStatus(t, c, tk.TaskID, tc.after[i])
				if u, _ := mcp.ParseTime(got.LastUpdatedAt); !u.Equal(at) {
					t.Errorf("lastUpdatedAt %s, want the answer instant %s", got.LastUpdatedAt, mcp.FormatTime(at))
				}
				if got.Status == mcp.StatusWorking && got.StatusMessage != "" {
					t.Errorf("working again but statusMessage still %q", got.StatusMessage)
				}
			}
		})
	}
}

// TestR39 checks R39 (C over HTTP, SHOULD), docs/RULES.md#r39: An HTTP client accepts task messages
// on any SSE stream, the GET stream included (SHOULD).
func TestR39(t *testing.T) {
	// The server side of R39 (docs/RULES.md#r39): an elicitation that no tasks/result
	// stream can carry goes out on the GET stream.
	tests := []struct {
		name   string
		result string // the tasks/result open when input is needed: "", "sse" or "json"
		onGET  bool   // the elicitation must come on the GET stream
	}{
		{name: "no tasks/result open", onGET: true},
		{name: "tasks/result stream open", result: "sse"},
		{name: "JSON-only tasks/result open", result: "json", onGET: true},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h, c := ruleSetup(t, mockserver.Config{})
			get := ruleGETStream(t, c)
			t0 := time.Now()
			tk := ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 2000, "input_required": true}, nil)
			var st *response
			var async <-chan *response
			switch tc.result {
			case "sse":
				st = ruleStream(t, c, tk.TaskID)
			case "json":
				req := ruleReq(c, "tasks/result", map[string]any{"taskId": tk.TaskID})
				req.Header.Set("Accept", "application/json")
				async = ruleAsync(h, req)
			}
			ruleUntil(t0, time.Second)
			ruleWantStatus(t, c, tk.TaskID, mcp.StatusInputRequired)
			on, quiet := get, st
			if !tc.onGET {
				on, quiet = st, get
			}
			m := ruleNextMessage(t, on)
			ruleElicitation(t, m, tk.TaskID)
			synctest.Wait()
			if quiet != nil {
				ruleQuiet(t, quiet, "the other stream")
			}
			ruleAnswer(t, c, m, mcp.ElicitAccept)
			ruleUntil(t0, 2*time.Second)
			ruleWantStatus(t, c, tk.TaskID, mcp.StatusCompleted)
			switch {
			case st != nil:
				ruleOK(t, ruleFinal(t, st))
			case async != nil:
				ruleOK(t, decodeReply(t, "tasks/result", ruleRecv(t, async).all()))
			}
		})
	}
}

// TestR40 checks R40 (S over HTTP, SHOULD NOT), docs/RULES.md#r40: An HTTP server avoids answering
// `tasks/get` with an SSE stream where it can (SHOULD NOT).
func TestR40(t *testing.T) {
	tests := []struct{ name, accept, state string }{
		{"working, JSON first", "application/json, text/event-stream", "working"},
		{"working, SSE first", "text/event-stream, application/json", "working"},
		{"input_required with a pending elicitation", "text/event-stream, application/json", "input_required"},
		{"completed", "application/json, text/event-stream", "completed"},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h, c := ruleSetup(t, mockserver.Config{})
			tk := ruleTaskIn(t, c, tc.state)
			req := ruleReq(c, "tasks/get", map[string]any{"taskId": tk.TaskID})
			req.Header.Set("Accept", tc.accept)
			status, hdr, body := ruleRaw(t, h, req, "tasks/get")
			if status != http.StatusOK || hdr.Get("Content-Type") != "application/json" {
				t.Fatalf("HTTP %d %s, want 200 application/json: %s", status, hdr.Get("Content-Type"), body)
			}
			if got := ruleTaskOf(t, decodeReply(t, "tasks/get", body), "GetTaskResult"); got.TaskID != tk.TaskID {
				t.Fatalf("got task %s", got.TaskID)
			}
		})
	}
}

// ruleISO8601 is the RFC 3339 profile of ISO 8601 that the schema's "ISO 8601 timestamp"
// means in practice.
var ruleISO8601 = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$`)

// ruleTaskViews are the task responses of R42 and R43: each source gives the task after it
// was created at t0 and completed or cancelled at 1.5s; want is lastUpdatedAt's offset.
var ruleTaskViews = []struct {
	src         string
	at          time.Duration // when the response is read
	wantUpdated time.Duration
}{
	{"CreateTaskResult", 0, 0},
	{"tasks/get working", time.Second, 0},
	{"tasks/get completed", 2 * time.Second, 1500 * time.Millisecond},
	{"tasks/cancel", 1200 * time.Millisecond, 1200 * time.Millisecond},
	{"tasks/list", 2 * time.Second, 1500 * time.Millisecond},
	{"notifications/tasks/status", 2 * time.Second, 1500 * time.Millisecond},
}

// ruleTaskView reads the task through src at t0+at.
func ruleTaskView(t *testing.T, src string, at time.Duration) (t0 time.Time, tk mcp.Task) {
	t.Helper()
	_, c := ruleSetup(t, mockserver.Config{Tokens: ruleTenants, StatusNotifications: true}, withToken("tok-alice"))
	get := ruleGETStream(t, c)
	t0 = time.Now()
	tk = ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 1500}, nil)
	ruleUntil(t0, at)
	switch {
	case src == "CreateTaskResult":
	case strings.HasPrefix(src, "tasks/get"):
		tk = ruleGet(t, c, tk.TaskID)
	case src == "tasks/cancel":
		tk = ruleTaskOf(t, c.call("tasks/cancel", map[string]any{"taskId": tk.TaskID}), "CancelTaskResult")
	case src == "tasks/list":
		var lr mcp.ListTasksResult
		_ = json.Unmarshal(ruleOK(t, c.call("tasks/list", nil)), &lr)
		if len(lr.Tasks) != 1 {
			t.Fatalf("listed %d tasks", len(lr.Tasks))
		}
		tk = lr.Tasks[0]
	default:
		tk = ruleStatusNote(t, ruleNextMessage(t, get), tk.TaskID, "completed")
	}
	return t0, tk
}

// TestR42 checks R42 (Rcv, MUST), docs/RULES.md#r42: Every task response carries an RFC 3339
// `createdAt` (MUST).
func TestR42(t *testing.T) {
	for _, tc := range ruleTaskViews {
		ruleRun(t, tc.src, func(t *testing.T) {
			t0, tk := ruleTaskView(t, tc.src, tc.at)
			if !ruleISO8601.MatchString(tk.CreatedAt) {
				t.Fatalf("createdAt %q is not ISO 8601", tk.CreatedAt)
			}
			if at, err := mcp.ParseTime(tk.CreatedAt); err != nil || !at.Equal(t0) {
				t.Fatalf("createdAt %s, want the creation instant %s", tk.CreatedAt, mcp.FormatTime(t0))
			}
		})
	}
}

// TestR43 checks R43 (Rcv, MUST), docs/RULES.md#r43: Every task response carries an RFC 3339
// `lastUpdatedAt` (MUST; see [gap-7](#gap-7)).
func TestR43(t *testing.T) {
	for _, tc := range ruleTaskViews {
		ruleRun(t, tc.src, func(t *testing.T) {
			t0, tk := ruleTaskView(t, tc.src, tc.at)
			if !ruleISO8601.MatchString(tk.LastUpdatedAt) {
				t.Fatalf("lastUpdatedAt %q is not ISO 8601", tk.LastUpdatedAt)
			}
			if at, err := mcp.ParseTime(tk.LastUpdatedAt); err != nil || !at.Equal(t0.Add(tc.wantUpdated)) {
				t.Fatalf("lastUpdatedAt %s, want %v after creation", tk.LastUpdatedAt, tc.wantUpdated)
			}
		})
	}
}

// TestR44 checks R44 (Rcv, MUST), docs/RULES.md#r44: `tasks/get` replies carry the granted `ttl`,
// or `null` for unlimited (MUST).
func TestR44(t *testing.T) {
	tests := []struct {
		name string
		cfg  mockserver.Config
		task map[string]any
		want string // the ttl member, verbatim
	}{
		{name: "default", cfg: mockserver.Config{DefaultTTL: 90 * time.Second}, want: "90000"},
		{name: "requested", task: map[string]any{"ttl": 2500}, want: "2500"},
		{name: "clamped", cfg: mockserver.Config{MaxTTL: time.Minute, DefaultTTL: time.Minute}, task: map[string]any{"ttl": 120000}, want: "60000"},
		{name: "unlimited", cfg: mockserver.Config{UnlimitedTTL: true}, want: "null"},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			_, c := ruleSetup(t, tc.cfg)
			tk := ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 1000}, tc.task)
			for _, at := range []string{"working", "completed"} {
				res := ruleOK(t, c.call("tasks/get", map[string]any{"taskId": tk.TaskID}))
				if got, ok := ruleObject(t, res)["ttl"]; !ok || string(got) != tc.want {
					t.Fatalf("%s: ttl member %q (present %v), want %s", at, got, ok, tc.want)
				}
				time.Sleep(time.Second)
				synctest.Wait()
			}
		})
	}
}

// TestR45 checks R45 (Rcv, MAY), docs/RULES.md#r45: A receiver may grant another `ttl` than
// requested, delete a task once its `ttl` (counted from creation) has passed whatever its status,
// and advertise a `pollInterval` that may change (MAY; clients must tolerate all three).
func TestR45(t *testing.T) {
	// All three are MAYs; the mock does each as configured.
	tests := []struct {
		name     string
		cfg      mockserver.Config
		task     map[string]any
		args     map[string]any
		wantTTL  int64
		deleteAt time.Duration // 0: not deleted within the test
		stream   bool          // a tasks/result stream is open when the task is deleted
	}{
		{name: "requested ttl overridden", cfg: mockserver.Config{MaxTTL: 10 * time.Second, DefaultTTL: time.Second},
			task: map[string]any{"ttl": 60000}, args: map[string]any{"duration_ms": 1000}, wantTTL: 10000, deleteAt: 10 * time.Second},
		{name: "working task deleted", task: map[string]any{"ttl": 2000}, args: map[string]any{"duration_ms": 60000}, wantTTL: 2000, deleteAt: 2 * time.Second},
		{name: "working task deleted under a tasks/result stream", task: map[string]any{"ttl": 2000},
			args: map[string]any{"duration_ms": 60000}, wantTTL: 2000, deleteAt: 2 * time.Second, stream: true},
		{name: "input_required task deleted", task: map[string]any{"ttl": 1500},
			args: map[string]any{"duration_ms": 2000, "input_required": true}, wantTTL: 1500, deleteAt: 1500 * time.Millisecond},
		{name: "completed task deleted", task: map[string]any{"ttl": 3000}, args: map[string]any{"duration_ms": 1000}, wantTTL: 3000, deleteAt: 3 * time.Second},
		{name: "pollInterval as configured", cfg: mockserver.Config{PollInterval: 2500 * time.Millisecond},
			task: map[string]any{"ttl": 5000}, args: map[string]any{"duration_ms": 1000}, wantTTL: 5000},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			_, c := ruleSetup(t, tc.cfg)
			wantPoll := mcp.Ms(1000)
			if tc.cfg.PollInterval > 0 {
				wantPoll = mcp.Ms(tc.cfg.PollInterval.Milliseconds())
			}
			t0 := time.Now()
			tk := ruleCreate(t, c, mockserver.ToolWork, tc.args, tc.task)
			for _, got := range []mcp.Task{tk, ruleGet(t, c, tk.TaskID)} {
				if got.TTL == nil || int64(*got.TTL) != tc.wantTTL || got.PollInterval == nil || *got.PollInterval != wantPoll {
					t.Fatalf("ttl %v pollInterval %v, want %d and %d", got.TTL, got.PollInterval, tc.wantTTL, wantPoll)
				}
			}
			if tc.deleteAt == 0 {
				return
			}
			var st *response
			if tc.stream {
				st = ruleStream(t, c, tk.TaskID)
			}
			ruleUntil(t0, tc.deleteAt-time.Millisecond)
			ruleGet(t, c, tk.TaskID)
			ruleUntil(t0, tc.deleteAt)
			ruleErr(t, c.call("tasks/get", map[string]any{"taskId": tk.TaskID}), mcp.CodeInvalidParams, "not found")
			if st != nil {
				ruleErr(t, ruleFinal(t, st), mcp.CodeInvalidParams, "expired")
			}
		})
	}
}

// TestR46 checks R46 (Rcv, MUST), docs/RULES.md#r46: `tasks/get`, `tasks/result` and `tasks/cancel`
// answer `-32602` for a `taskId` that is malformed or names no task (MUST); a purged task is simply
// unknown.
func TestR46(t *testing.T) {
	cases := []struct {
		name   string
		params func(foreign, purged string) any
		want   []string
	}{
		{"unknown", func(_, _ string) any { return map[string]any{"taskId": "0123456789abcdef0123456789abcdef"} }, []string{"not found", "0123456789abcdef0123456789abcdef"}},
		{"empty", func(_, _ string) any { return map[string]any{"taskId": ""} }, []string{"taskId is required"}},
		{"missing", func(_, _ string) any { return map[string]any{} }, []string{"taskId is required"}},
		{"not a string", func(_, _ string) any { return map[string]any{"taskId": 7} }, []string{"taskId"}},
		{"another tenant's", func(f, _ string) any { return map[string]any{"taskId": f} }, []string{"not found"}},
		{"purged", func(_, p string) any { return map[string]any{"taskId": p} }, []string{"not found"}},
	}
	for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		for _, tc := range cases {
			ruleRun(t, method+"/"+tc.name, func(t *testing.T) {
				h, c := ruleSetup(t, mockserver.Config{Tokens: ruleTenants}, withToken("tok-alice"))
				bob := h.connect(withToken("tok-bob"))
				foreign := ruleCreate(t, bob, mockserver.ToolWork, map[string]any{"duration_ms": 60000}, nil).TaskID
				purged := ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 10}, map[string]any{"ttl": 500}).TaskID
				time.Sleep(2 * time.Second)
				synctest.Wait()
				ruleErr(t, c.call(method, tc.params(foreign, purged)), mcp.CodeInvalidParams, tc.want...)
				ruleWantStatus(t, bob, foreign, mcp.StatusWorking)
			})
		}
	}
}

// TestR47 checks R47 (Rcv, MUST), docs/RULES.md#r47: An invalid or unknown `tasks/list` cursor gets
// `-32602` (MUST).
func TestR47(t *testing.T) {
	tests := []struct {
		name   string
		cursor any
	}{
		{"not base64", "!!!"},
		{"base64 of something else", "aGVsbG8gd29ybGQ"},
		{"empty", ""},
		{"tampered tag", "dHNsMgAAAAAAAAAB"},
		{"not a string", 5},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			_, c := ruleSetup(t, mockserver.Config{Tokens: ruleTenants}, withToken("tok-alice"))
			ruleCreate(t, c, mockserver.ToolWork, nil, nil)
			ruleErr(t, c.call("tasks/list", map[string]any{"cursor": tc.cursor}), mcp.CodeInvalidParams, "cursor")
			if ids := ruleListAll(t, c); len(ids) != 1 {
				t.Fatalf("listing after the error: %v", ids)
			}
		})
	}
}

// TestR48 checks R48 (Rcv, MUST), docs/RULES.md#r48: Internal failures get `-32603` (MUST).
func TestR48(t *testing.T) {
	tests := []struct {
		name string
		how  string
		want string
	}{
		{name: "synchronous call", how: "sync", want: "simulated internal error"},
		{name: "tasks/result of a task that erred", how: "task", want: "simulated internal error"},
		{name: "server closing under a synchronous call", how: "close", want: "shutting down"},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h, c := ruleSetup(t, mockserver.Config{})
			var r reply
			switch tc.how {
			case "sync":
				r = c.call("tools/call", map[string]any{"name": mockserver.ToolWork, "arguments": map[string]any{"outcome": "error"}})
			case "task":
				tk := ruleTaskIn(t, c, "error")
				r = c.call("tasks/result", map[string]any{"taskId": tk.TaskID})
			case "close":
				async := ruleAsync(h, ruleReq(c, "tools/call", map[string]any{"name": mockserver.ToolWork, "arguments": map[string]any{"duration_ms": 60000}}))
				time.Sleep(time.Second)
				synctest.Wait()
				h.srv.Close()
				r = decodeReply(t, "tools/call", ruleRecv(t, async).all())
			}
			ruleErr(t, r, mcp.CodeInternalError, tc.want)
		})
	}
}

// TestR49 checks R49 (Rcv, SHOULD), docs/RULES.md#r49: Error messages say what went wrong (SHOULD).
func TestR49(t *testing.T) {
	tests := []struct {
		name    string
		version string
		tokens  bool
		method  string
		params  any
		code    int
		want    []string
	}{
		{name: "unknown task", method: "tasks/get", params: map[string]any{"taskId": "feedface"}, code: mcp.CodeInvalidParams, want: []string{"task not found", `"feedface"`}},
		{name: "tasks/get without params", method: "tasks/get", code: mcp.CodeInvalidParams, want: []string{"taskId is required"}},
		{name: "tools/call without params", method: "tools/call", code: mcp.CodeInvalidParams, want: []string{"name is required"}},
		{name: "forbidden tool as task", method: "tools/call", params: map[string]any{"name": "work_sync", "task": map[string]any{}}, code: mcp.CodeMethodNotFound, want: []string{`"work_sync"`, "taskSupport forbidden"}},
		{name: "required tool without task", method: "tools/call", params: map[string]any{"name": "work_task"}, code: mcp.CodeMethodNotFound, want: []string{`"work_task"`, "taskSupport required"}},
		{name: "negative ttl", method: "tools/call", params: map[string]any{"name": "work", "task": map[string]any{"ttl": -1}}, code: mcp.CodeInvalidParams, want: []string{"task.ttl must not be negative", "-1"}},
		{name: "input on a synchronous call", method: "tools/call", params: map[string]any{"name": "work", "arguments": map[string]any{"input_required": true}}, code: mcp.CodeInvalidParams, want: []string{"input_required needs a task-augmented call"}},
		{name: "bad cursor", tokens: true, method: "tasks/list", params: map[string]any{"cursor": "zz"}, code: mcp.CodeInvalidParams, want: []string{"invalid tasks/list cursor", `"zz"`}},
		{name: "tasks/list without binding", method: "tasks/list", code: mcp.CodeMethodNotFound, want: []string{"no authorization context"}},
		{name: "tasks method on an old session", version: mcp.Version20250618, method: "tasks/get", params: map[string]any{"taskId": "x"}, code: mcp.CodeMethodNotFound, want: []string{`"tasks/get"`, "2025-06-18"}},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			cfg := mockserver.Config{}
			if tc.tokens {
				cfg.Tokens = ruleTenants
			}
			v := tc.version
			if v == "" {
				v = mcp.Version20251125
			}
			_, c := ruleSetup(t, cfg, withToken("tok-alice"), withVersion(v))
			ruleErr(t, c.call(tc.method, tc.params), tc.code, tc.want...)
		})
	}
}

// TestR50 checks R50 (Rcv, SHOULD), docs/RULES.md#r50: `tasks/get` of a `failed` task carries a
// diagnostic `statusMessage` (SHOULD).
func TestR50(t *testing.T) {
	tests := []struct {
		name  string
		state string
		opts  []clientOpt
		want  string
	}{
		{name: "isError result", state: "failed", want: "simulated tool failure"},
		{name: "JSON-RPC error", state: "error", want: "simulated internal error"},
		{name: "declined input", state: "declined", want: "input round 1 answered with decline"},
		{name: "no elicitation capability", state: "no-elicitation", opts: []clientOpt{withoutElicitation()}, want: "did not declare form elicitation"},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			_, c := ruleSetup(t, mockserver.Config{}, tc.opts...)
			var id string
			if tc.state == "no-elicitation" {
				id = ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 2000, "input_required": true}, nil).TaskID
				time.Sleep(time.Second)
				synctest.Wait()
			} else {
				id = ruleTaskIn(t, c, tc.state).TaskID
			}
			got := ruleWantStatus(t, c, id, mcp.StatusFailed)
			if !strings.Contains(got.StatusMessage, tc.want) {
				t.Fatalf("statusMessage %q, want it to mention %q", got.StatusMessage, tc.want)
			}
		})
	}
}

// TestR51 checks R51 (Rcv, should), docs/RULES.md#r51: A tool task whose result has `isError: true`
// ends `failed` (should, lower case in the spec).
func TestR51(t *testing.T) {
	tests := []struct {
		outcome string
		want    mcp.Status
		isError bool
	}{
		{"failed", mcp.StatusFailed, true},
		{"completed", mcp.StatusCompleted, false},
	}
	for _, tc := range tests {
		ruleRun(t, tc.outcome, func(t *testing.T) {
			_, c := ruleSetup(t, mockserver.Config{})
			tk := ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 1000, "outcome": tc.outcome}, nil)
			time.Sleep(time.Second)
			synctest.Wait()
			ruleWantStatus(t, c, tk.TaskID, tc.want)
			if res := ruleToolResult(t, ruleOK(t, c.call("tasks/result", map[string]any{"taskId": tk.TaskID}))); res.IsError != tc.isError {
				t.Fatalf("isError %v, want %v", res.IsError, tc.isError)
			}
		})
	}
}

// TestR52 checks R52 (Rcv, MUST), docs/RULES.md#r52: When requests carry an authorization context,
// every task is bound to it, not to the session (MUST).
func TestR52(t *testing.T) {
	// The tenant of the bearer token owns the task, not the session that created it.
	tests := []struct {
		name  string
		token string
		drop  bool // DELETE the creating session first
	}{
		{name: "same token, same session", token: "tok-alice"},
		{name: "same token, another session", token: "tok-alice"},
		{name: "another token of the tenant", token: "tok-alice-2"},
		{name: "after the creating session ended", token: "tok-alice", drop: true},
	}
	for i, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h, c := ruleSetup(t, mockserver.Config{Tokens: ruleTenants}, withToken("tok-alice"))
			tk := ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 1000}, nil)
			if tc.drop {
				if s, _, _ := ruleRaw(t, h, c.request(http.MethodDelete, ""), ""); s != http.StatusOK {
					t.Fatalf("DELETE: HTTP %d", s)
				}
			}
			other := c
			if i > 0 {
				other = h.connect(withToken(tc.token))
			}
			ruleWantStatus(t, other, tk.TaskID, mcp.StatusWorking)
			if ids := ruleListAll(t, other); !slices.Equal(ids, []string{tk.TaskID}) {
				t.Fatalf("listed %v", ids)
			}
			time.Sleep(time.Second)
			synctest.Wait()
			if res := ruleToolResult(t, ruleOK(t, other.call("tasks/result", map[string]any{"taskId": tk.TaskID}))); res.IsError {
				t.Fatal("result isError")
			}
		})
	}
}

// TestR53 checks R53 (Rcv, MUST), docs/RULES.md#r53: With binding, `tasks/get`, `tasks/result` and
// `tasks/cancel` from another context are refused, and `tasks/list` shows only the caller's tasks
// (MUST; code: [gap-11](#gap-11)).
func TestR53(t *testing.T) {
	const unknown = "0123456789abcdef0123456789abcdef"
	tests := []string{"tasks/get", "tasks/result", "tasks/cancel", "tasks/list", "elicitation answer"}
	for _, op := range tests {
		ruleRun(t, op, func(t *testing.T) {
			h, alice := ruleSetup(t, mockserver.Config{Tokens: ruleTenants}, withToken("tok-alice"))
			bob := h.connect(withToken("tok-bob"))
			mine := ruleCreate(t, bob, mockserver.ToolWork, nil, nil).TaskID
			tk := ruleCreate(t, alice, mockserver.ToolWork, map[string]any{"duration_ms": 2000, "input_required": true}, nil)
			switch op {
			case "tasks/list":
				if ids := ruleListAll(t, bob); !slices.Equal(ids, []string{mine}) {
					t.Fatalf("bob lists %v, want only his %s", ids, mine)
				}
			case "elicitation answer":
				st := ruleStream(t, alice, tk.TaskID)
				m := ruleNextMessage(t, st)
				ruleAnswer(t, bob, m, mcp.ElicitAccept)
				synctest.Wait()
				ruleWantStatus(t, alice, tk.TaskID, mcp.StatusInputRequired)
				ruleAnswer(t, alice, m, mcp.ElicitAccept)
				ruleWantStatus(t, alice, tk.TaskID, mcp.StatusWorking)
				return
			default:
				foreign := bob.call(op, map[string]any{"taskId": tk.TaskID})
				ruleErr(t, foreign, mcp.CodeInvalidParams)
				missing := bob.call(op, map[string]any{"taskId": unknown})
				if a, b := strings.ReplaceAll(foreign.Err.Message, tk.TaskID, "ID"), strings.ReplaceAll(missing.Err.Message, unknown, "ID"); a != b {
					t.Fatalf("a foreign task is told apart from a missing one: %q vs %q", a, b)
				}
			}
			ruleWantStatus(t, alice, tk.TaskID, mcp.StatusWorking)
		})
	}
}

// TestR54 checks R54 (Rcv, MUST/SHOULD/SHOULD NOT), docs/RULES.md#r54: Without binding, task ids
// are cryptographically random and unguessable (MUST), the limitation is documented (SHOULD), and
// `tasks.list` is not declared (SHOULD NOT).
func TestR54(t *testing.T) {
	tests := []struct {
		name  string
		bound bool
	}{{"without tokens", false}, {"with tokens", true}}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			cfg := mockserver.Config{}
			if tc.bound {
				cfg.Tokens = ruleTenants
			}
			h := newHarness(t, cfg)
			r, sid := ruleInit(t, h, "tok-alice", mcp.Version20251125, `{}`)
			var res mcp.InitializeResult
			_ = json.Unmarshal(ruleOK(t, r), &res)
			if hasList := res.Capabilities.Tasks != nil && res.Capabilities.Tasks.List != nil; hasList != tc.bound {
				t.Fatalf("tasks.list declared %v, want %v", hasList, tc.bound)
			}
			c := ruleClient(t, h, sid, mcp.Version20251125, "tok-alice")
			if !tc.bound {
				if !strings.Contains(res.Instructions, "not bound") || !strings.Contains(res.Instructions, "128-bit") {
					t.Errorf("instructions %q do not document the missing binding", res.Instructions)
				}
				ruleErr(t, c.call("tasks/list", nil), mcp.CodeMethodNotFound, "no authorization context")
			}
			var ids []string
			for range 64 {
				id := ruleCreate(t, c, mockserver.ToolWork, nil, nil).TaskID
				if b, err := hex.DecodeString(id); err != nil || len(b) < 16 || slices.Contains(ids, id) {
					t.Fatalf("task id %q is not 128 random bits in hex, or repeats", id)
				}
				ids = append(ids, id)
			}
			// 64 random ids come out sorted with probability 1/64!: a counter or a clock would.
			if slices.IsSorted(ids) {
				t.Fatalf("task ids increase with creation order: %v", ids[:4])
			}
		})
	}
}

// TestR56 checks R56 (Rcv, SHOULD), docs/RULES.md#r56: A receiver caps concurrent tasks per
// requestor and the maximum `ttl`, documents both, purges expired tasks promptly and monitors its
// resources (SHOULD).
func TestR56(t *testing.T) {
	// The mock caps ttl (Config.MaxTTL): a requested ttl is clamped, and a granted ttl is kept to.
	tests := []struct {
		name      string
		unlimited bool
		ttl       int64
		want      int64
		goneAt    time.Duration // reaped by then (ReaperInterval 1s)
	}{
		{name: "one ms", ttl: 1, want: 1, goneAt: time.Second},
		{name: "at the cap", ttl: 60000, want: 60000, goneAt: time.Minute},
		{name: "over the cap", ttl: 60001, want: 60000, goneAt: time.Minute},
		{name: "ten years", ttl: 315_360_000_000, want: 60000, goneAt: time.Minute},
		{name: "beyond time.Duration", ttl: 10_000_000_000_000, want: 60000, goneAt: time.Minute},
		{name: "largest exact JSON integer", ttl: 1<<53 - 1, want: 60000, goneAt: time.Minute},
		{name: "zero", ttl: 0, want: 0, goneAt: time.Second},
		{name: "over the cap with UnlimitedTTL", unlimited: true, ttl: 1_000_000_000, want: 60000, goneAt: time.Minute},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h, c := ruleSetup(t, mockserver.Config{MaxTTL: time.Minute, DefaultTTL: time.Minute, UnlimitedTTL: tc.unlimited})
			t0 := time.Now()
			tk := ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 0}, map[string]any{"ttl": tc.ttl})
			if tk.TTL == nil || int64(*tk.TTL) != tc.want {
				t.Fatalf("granted ttl %v, want %d", tk.TTL, tc.want)
			}
			ruleUntil(t0, tc.goneAt)
			if st := h.srv.Stats(); st.TasksLive != 0 || st.TasksExpired != 1 {
				t.Fatalf("after %v: %d live, %d expired; want the task reaped", tc.goneAt, st.TasksLive, st.TasksExpired)
			}
		})
	}
	ruleRun(t, "negative", func(t *testing.T) {
		_, c := ruleSetup(t, mockserver.Config{})
		ruleErr(t, c.call("tools/call", map[string]any{"name": "work", "task": map[string]any{"ttl": -5}}), mcp.CodeInvalidParams, "ttl")
	})
}

// TestR60 checks R60 (S, MUST NOT), docs/RULES.md#r60: A server never sends an elicitation mode the
// client did not declare; such a request gets `-32602` from the client (MUST NOT).
func TestR60(t *testing.T) {
	tests := []struct {
		name  string
		caps  *mcp.ElicitationCapability // nil: no elicitation capability
		asked bool                       // form elicitation may be sent
	}{
		{name: "no elicitation capability"},
		{name: "url mode only", caps: &mcp.ElicitationCapability{URL: mcp.On()}},
		{name: "empty elicitation object means form", caps: &mcp.ElicitationCapability{}, asked: true},
		{name: "form declared", caps: &mcp.ElicitationCapability{Form: mcp.On()}, asked: true},
		{name: "form and url declared", caps: &mcp.ElicitationCapability{Form: mcp.On(), URL: mcp.On()}, asked: true},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			_, c := ruleSetup(t, mockserver.Config{}, func(_ *client, p *mcp.InitializeParams) { p.Capabilities.Elicitation = tc.caps })
			get := ruleGETStream(t, c)
			tk := ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 2000, "input_required": true}, nil)
			st := ruleStream(t, c, tk.TaskID)
			m := ruleNextMessage(t, st)
			synctest.Wait()
			ruleQuiet(t, get, "GET stream")
			if tc.asked {
				ruleElicitation(t, m, tk.TaskID)
				return
			}
			if m.Method != "" {
				t.Fatalf("sent %s to a client without form elicitation", m.Raw)
			}
			res := ruleToolResult(t, ruleOK(t, decodeReply(t, "tasks/result", m.Raw)))
			if !res.IsError {
				t.Fatal("the task did not fail")
			}
			got := ruleWantStatus(t, c, tk.TaskID, mcp.StatusFailed)
			if !strings.Contains(got.StatusMessage, "did not declare form elicitation") {
				t.Fatalf("statusMessage %q", got.StatusMessage)
			}
		})
	}
}

// TestR61 checks R61 (S, MUST NOT/MUST), docs/RULES.md#r61: Form mode never asks for secrets;
// secrets go through URL mode (MUST NOT / MUST).
func TestR61(t *testing.T) {
	secretish := []string{"password", "passwd", "secret", "token", "api key", "apikey", "credential", "credit card", "ssn", "private key"}
	for _, rounds := range []int{1, 2} {
		ruleRun(t, fmt.Sprintf("%d rounds", rounds), func(t *testing.T) {
			_, c := ruleSetup(t, mockserver.Config{})
			tk := ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 3000, "input_rounds": rounds}, nil)
			st := ruleStream(t, c, tk.TaskID)
			for range rounds {
				m := ruleNextMessage(t, st)
				p := ruleElicitation(t, m, tk.TaskID)
				text := strings.ToLower(p.Message + string(p.RequestedSchema))
				for _, s := range secretish {
					if strings.Contains(text, s) {
						t.Fatalf("form elicitation asks for %q: %s", s, m.Raw)
					}
				}
				if strings.Contains(string(p.RequestedSchema), `"format":"password"`) {
					t.Fatalf("form field of format password: %s", p.RequestedSchema)
				}
				ruleAnswer(t, c, m, mcp.ElicitAccept)
			}
			ruleOK(t, ruleFinal(t, st))
		})
	}
}

// TestR62 checks R62 (Req, MAY), docs/RULES.md#r62: A requestor may drop the SSE stream of a
// `tasks/get` or `tasks/result` at any time; dropping it cancels nothing (MAY).
func TestR62(t *testing.T) {
	tests := []struct {
		name   string
		accept string
		input  bool
		how    string // "context": the request's context ends; "notification": notifications/cancelled
	}{
		{name: "JSON tasks/result dropped", accept: "application/json", how: "context"},
		{name: "SSE tasks/result dropped", accept: "application/json, text/event-stream", how: "context"},
		{name: "SSE tasks/result dropped after an elicitation", accept: "application/json, text/event-stream", input: true, how: "context"},
		{name: "tasks/result cancelled by notification", accept: "application/json, text/event-stream", how: "notification"},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h, c := ruleSetup(t, mockserver.Config{})
			t0 := time.Now()
			args := map[string]any{"duration_ms": 3000, "idempotency_key": "once"}
			if tc.input {
				args["input_required"] = true
			}
			tk := ruleCreate(t, c, mockserver.ToolWork, args, nil)
			req, cancel := ruleWithContext(ruleReq(c, "tasks/result", map[string]any{"taskId": tk.TaskID}))
			defer cancel()
			req.Header.Set("Accept", tc.accept)
			async := ruleAsync(h, req)
			var dropped *response // the tasks/result response, once its status line is out
			var first ruleMsg
			if tc.input {
				dropped = ruleRecv(t, async)
				rulePriming(t, dropped)
				first = ruleNextMessage(t, dropped)
				ruleElicitation(t, first, tk.TaskID)
			}
			ruleUntil(t0, 2*time.Second)
			if tc.how == "notification" {
				resp := c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + fmt.Sprint(c.nextID) + `,"reason":"client gave up"}}`)
				if resp.Status != http.StatusAccepted {
					t.Fatalf("notifications/cancelled: HTTP %d", resp.Status)
				}
			} else {
				cancel()
			}
			synctest.Wait()
			want := mcp.StatusWorking
			if tc.input {
				want = mcp.StatusInputRequired
			}
			ruleWantStatus(t, c, tk.TaskID, want)
			if tc.how == "context" {
				if dropped == nil {
					dropped = ruleRecv(t, async) // a JSON reply's status line is written when the handler returns
				}
				if b := dropped.all(); strings.Contains(string(b), `"result"`) {
					t.Fatalf("a reply was written on the dropped request: %s", b)
				}
			}
			if tc.input {
				st := ruleStream(t, c, tk.TaskID)
				again := ruleNextMessage(t, st)
				if string(again.ID) != string(first.ID) {
					t.Fatalf("re-sent elicitation has id %s, want %s", again.ID, first.ID)
				}
				ruleAnswer(t, c, again, mcp.ElicitAccept)
				ruleUntil(t0, 3500*time.Millisecond)
				ruleOK(t, ruleFinal(t, st))
			} else {
				ruleUntil(t0, 3*time.Second)
				ruleWantStatus(t, c, tk.TaskID, mcp.StatusCompleted)
			}
			if res := ruleToolResult(t, ruleOK(t, c.call("tasks/result", map[string]any{"taskId": tk.TaskID}))); res.IsError {
				t.Fatalf("result isError: %+v", res)
			}
			if st := h.srv.Stats(); st.Effects != 1 {
				t.Fatalf("%d domain effects, want 1", st.Effects)
			}
		})
	}
}

// ruleSame reports whether two tasks have the same wire form.
func ruleSame(a, b mcp.Task) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
