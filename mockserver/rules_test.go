package mockserver_test

// The rules of docs/RULES.md as tests of the mock server: one table-driven test per rule of
// R1-R62 (rules_tasks_test.go, TestR<n>) and of H1-H11 (rules_http_test.go,
// TestH<n>), named after it. This file holds their shared helpers (all named rule*, beside
// harness_test.go) and three cross-cutting tables: TestBadInput, TestTTL, TestInputRequired.
//
// Rules without a test, and why:
//
//	R2, R3, R6, R7, R9  requestor obligations: which requests a client may task-augment. The
//	                    server's side of them is TestR4, TestR8, TestR10 and TestH1.
//	R15, R16, R20, R24  requestor obligations: polling, not depending on notifications,
//	R29, R33, R37, R58  opaque cursors, fetching before cancel, no related-task _meta on
//	                    tasks/* requests, calling tasks/result on input_required, logging.
//	R30                 an obligation on the sender of a cancellation; the mock never sends
//	                    one. That a client's notifications/cancelled does not cancel a task
//	                    is a row of TestR62.
//	R5                  a MAY; the mock's choice (reject a required tool called without
//	                    task) is TestR10.
//	R41                 the umbrella over H1-H11, which have their own tests.
//	R55, R57            the mock has no rate limit (it is a load target: backpressure is a
//	                    scenario fault) and no audit log, so there is nothing to observe.
//	R59                 the mock sends no notifications/progress at all; TestH6 and TestR21
//	                    assert the exact message sequence on the GET stream, so a stray
//	                    progress notification would fail them.
//
// Every test runs in a testing/synctest bubble: time is virtual, so every time below is
// asserted exactly.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/mcp/mcptest"
	"github.com/tasksim/tasksim/mockserver"
)

// ruleRun runs f as subtest name inside its own synctest bubble.
func ruleRun(t *testing.T, name string, f func(t *testing.T)) {
	t.Helper()
	t.Run(name, func(t *testing.T) { synctest.Test(t, f) })
}

// ruleSetup starts an in-process server with cfg and connects one client.
func ruleSetup(t *testing.T, cfg mockserver.Config, opts ...clientOpt) (*harness, *client) {
	t.Helper()
	h := newHarness(t, cfg)
	return h, h.connect(opts...)
}

// ruleUntil sleeps until t0+d of virtual time and lets every callback due by then run.
func ruleUntil(t0 time.Time, d time.Duration) {
	time.Sleep(time.Until(t0.Add(d)))
	synctest.Wait()
}

// ruleElapsed fails unless exactly want of virtual time has passed since t0.
func ruleElapsed(t testing.TB, t0 time.Time, want time.Duration, what string) {
	t.Helper()
	if got := time.Since(t0); got != want {
		t.Fatalf("%s after %v, want exactly %v", what, got, want)
	}
}

// ruleReq builds the POST of one request with the client's next id, without sending it, so
// that it can be sent from another goroutine or with another context.
func ruleReq(c *client, method string, params any) *http.Request {
	c.h.t.Helper()
	c.nextID++
	var p []byte
	if params != nil {
		var err error
		if p, err = json.Marshal(params); err != nil {
			c.h.t.Fatalf("marshal params: %v", err)
		}
	}
	return c.request(http.MethodPost, string(mcp.AppendRequest(nil, mcp.IntID(int64(c.nextID)), method, p)))
}

// ruleAsync serves req in the background: for requests whose status line is written late
// (a blocking tasks/result answered as JSON).
func ruleAsync(h *harness, req *http.Request) <-chan *response {
	ch := make(chan *response, 1)
	go func() { ch <- h.do(req) }()
	return ch
}

// ruleErr fails unless r is a JSON-RPC error with code whose message mentions every want.
func ruleErr(t testing.TB, r reply, code int, want ...string) {
	t.Helper()
	if r.Err == nil {
		t.Fatalf("got result %s, want JSON-RPC error %d", r.Raw, code)
	}
	if r.Err.Code != code {
		t.Fatalf("error code %d (%q), want %d", r.Err.Code, r.Err.Message, code)
	}
	for _, w := range want {
		if !strings.Contains(r.Err.Message, w) {
			t.Errorf("error message %q does not mention %q", r.Err.Message, w)
		}
	}
}

// ruleOK fails unless r is a result and returns it.
func ruleOK(t testing.TB, r reply) json.RawMessage {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("got error %d %q, want a result", r.Err.Code, r.Err.Message)
	}
	return r.Result
}

// ruleTaskOf decodes a flattened task result after validating it against def.
func ruleTaskOf(t testing.TB, r reply, def string) mcp.Task {
	t.Helper()
	res := ruleOK(t, r)
	mcptest.Must(t, mcptest.Validate(def, res))
	var tk mcp.Task
	if err := json.Unmarshal(res, &tk); err != nil {
		t.Fatalf("%s: %v: %s", def, err, res)
	}
	return tk
}

// ruleCreate task-augments tools/call with task (params.task, {} when nil) and returns the
// task of the CreateTaskResult, validated as such (R11).
func ruleCreate(t testing.TB, c *client, tool string, args, task map[string]any) mcp.Task {
	t.Helper()
	if task == nil {
		task = map[string]any{}
	}
	r := c.call("tools/call", map[string]any{"name": tool, "arguments": args, "task": task})
	res := ruleOK(t, r)
	mcptest.Must(t, mcptest.Validate("CreateTaskResult", res))
	var ctr mcp.CreateTaskResult
	if err := json.Unmarshal(res, &ctr); err != nil || ctr.Task.TaskID == "" {
		t.Fatalf("not a CreateTaskResult: %s", r.Raw)
	}
	return ctr.Task
}

// ruleGet polls tasks/get and fails on an error.
func ruleGet(t testing.TB, c *client, id string) mcp.Task {
	t.Helper()
	return ruleTaskOf(t, c.call("tasks/get", map[string]any{"taskId": id}), "GetTaskResult")
}

// ruleWantStatus fails unless tasks/get reports status want.
func ruleWantStatus(t testing.TB, c *client, id string, want mcp.Status) mcp.Task {
	t.Helper()
	tk := ruleGet(t, c, id)
	if tk.Status != want {
		t.Fatalf("status %v (%q), want %v", tk.Status, tk.StatusMessage, want)
	}
	return tk
}

// ruleToolResult decodes a CallToolResult.
func ruleToolResult(t testing.TB, raw json.RawMessage) mcp.CallToolResult {
	t.Helper()
	mcptest.Must(t, mcptest.Validate("CallToolResult", raw))
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("CallToolResult: %v: %s", err, raw)
	}
	return res
}

// ruleText joins the text of a result's content blocks.
func ruleText(res mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// ruleObject decodes a JSON object into a map, to look at which members are present.
func ruleObject(t testing.TB, raw []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not a JSON object: %v: %s", err, raw)
	}
	return m
}

// ruleEvent is one raw SSE event.
type ruleEvent struct {
	ID, Data       string
	HasID, HasData bool
}

// ruleWait bounds every wait for a message in virtual time. The reaper's ticker keeps
// virtual time moving, so a message that never comes would otherwise spin until the test
// binary times out; every message the tests expect is due within seconds.
const ruleWait = 4 * time.Minute

// ruleRecv receives from ch within ruleWait of virtual time.
func ruleRecv[T any](t testing.TB, ch <-chan T) T {
	t.Helper()
	tm := time.NewTimer(ruleWait)
	defer tm.Stop()
	select {
	case v := <-ch:
		return v
	case <-tm.C:
		t.Fatalf("nothing arrived within %v", ruleWait)
		panic("unreachable")
	}
}

// ruleNextEvent reads the next SSE event of r, priming events included; ok is false when
// the stream ended. The test fails if nothing comes within ruleWait.
func ruleNextEvent(t testing.TB, r *response) (ruleEvent, bool) {
	t.Helper()
	for {
		if i := bytes.Index(r.rest, []byte("\n\n")); i >= 0 {
			block := string(r.rest[:i])
			r.rest = r.rest[i+2:]
			var ev ruleEvent
			for _, line := range strings.Split(block, "\n") {
				name, val, _ := strings.Cut(line, ":")
				val = strings.TrimPrefix(val, " ")
				switch name {
				case "id":
					ev.ID, ev.HasID = val, true
				case "data":
					if ev.HasData {
						ev.Data += "\n"
					}
					ev.Data, ev.HasData = ev.Data+val, true
				}
			}
			return ev, true
		}
		tm := time.NewTimer(ruleWait)
		select {
		case chunk, more := <-r.body:
			tm.Stop()
			if !more {
				return ruleEvent{}, false
			}
			r.rest = append(r.rest, chunk...)
		case <-tm.C:
			t.Fatalf("no SSE event within %v", ruleWait)
		}
	}
}

// rulePriming reads the first event of a new stream, which must be the priming event: an
// id and an empty data field (H5).
func rulePriming(t testing.TB, r *response) ruleEvent {
	t.Helper()
	ev, ok := ruleNextEvent(t, r)
	if !ok {
		t.Fatal("SSE stream ended before its priming event")
	}
	if !ev.HasID || ev.ID == "" || !ev.HasData || ev.Data != "" {
		t.Fatalf("first event %+v, want a priming event with an id and empty data (H5)", ev)
	}
	return ev
}

// ruleMsg is one JSON-RPC message read from an SSE stream.
type ruleMsg struct {
	Raw     []byte
	EventID string
	ID      json.RawMessage
	Method  string
	Params  json.RawMessage
	Result  json.RawMessage
	Error   *mcp.Error
}

// ruleNextMessage reads the next message of r (skipping priming events), validated against
// the schema as a JSON-RPC message; the test fails if the stream ends first.
func ruleNextMessage(t testing.TB, r *response) ruleMsg {
	t.Helper()
	for {
		ev, ok := ruleNextEvent(t, r)
		if !ok {
			t.Fatal("SSE stream ended, want another message")
		}
		if ev.Data == "" {
			continue
		}
		raw := []byte(ev.Data)
		if err := mcptest.ValidateMessage(raw); err != nil {
			t.Errorf("streamed message fails the 2025-11-25 schema: %v", err)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  *mcp.Error      `json:"error"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("streamed message: %v: %s", err, raw)
		}
		return ruleMsg{Raw: raw, EventID: ev.ID, ID: m.ID, Method: m.Method, Params: m.Params, Result: m.Result, Error: m.Error}
	}
}

// ruleQuiet fails if r has anything to read right now; call it after synctest.Wait.
func ruleQuiet(t testing.TB, r *response, what string) {
	t.Helper()
	if len(bytes.TrimSpace(r.rest)) > 0 {
		t.Fatalf("%s: unexpected data %q", what, r.rest)
	}
	select {
	case b, ok := <-r.body:
		if ok {
			t.Fatalf("%s: unexpected data %q", what, b)
		}
	default:
	}
}

// ruleEnded fails unless the stream r ends with no further event (H4: once the response
// has been sent, the stream is closed).
func ruleEnded(t testing.TB, r *response) {
	t.Helper()
	if ev, ok := ruleNextEvent(t, r); ok {
		t.Fatalf("stream goes on after the response: %+v", ev)
	}
}

// ruleStream opens a tasks/result SSE stream on task id and reads its priming event.
func ruleStream(t testing.TB, c *client, id string) *response {
	t.Helper()
	resp := c.start("tasks/result", map[string]any{"taskId": id})
	if resp.Status != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("tasks/result: HTTP %d %s, want 200 text/event-stream: %s", resp.Status, resp.Header.Get("Content-Type"), resp.all())
	}
	rulePriming(t, resp)
	return resp
}

// ruleGETStream opens the session's GET stream (H6) and reads its priming event.
func ruleGETStream(t testing.TB, c *client) *response {
	t.Helper()
	req := c.request(http.MethodGet, "")
	req.Header.Set("Accept", "text/event-stream")
	resp := c.h.do(req)
	if resp.Status != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET: HTTP %d %s, want 200 text/event-stream: %s", resp.Status, resp.Header.Get("Content-Type"), resp.all())
	}
	rulePriming(t, resp)
	return resp
}

// ruleFinal reads the next message of a tasks/result stream, which must be the reply
// (validated as a tasks/result reply), and checks that the stream then ends.
func ruleFinal(t testing.TB, r *response) reply {
	t.Helper()
	m := ruleNextMessage(t, r)
	if m.Method != "" {
		t.Fatalf("got %s on the stream, want the tasks/result reply", m.Raw)
	}
	rep := decodeReply(t, "tasks/result", m.Raw)
	ruleEnded(t, r)
	return rep
}

// ruleElicitation checks that m is a form-mode elicitation/create for task taskID with
// related-task _meta (R31, R36), valid ElicitRequest, and returns its params.
func ruleElicitation(t testing.TB, m ruleMsg, taskID string) mcp.ElicitRequestParams {
	t.Helper()
	if m.Method != "elicitation/create" || len(m.ID) == 0 {
		t.Fatalf("got %s, want an elicitation/create request", m.Raw)
	}
	mcptest.Must(t, mcptest.Validate("ElicitRequest", m.Raw))
	var p mcp.ElicitRequestParams
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatalf("elicitation params: %v", err)
	}
	if p.Mode != "form" {
		t.Errorf("elicitation mode %q, want form", p.Mode)
	}
	if got := mcp.RelatedTaskID(p.Meta); got != taskID {
		t.Fatalf("elicitation related-task %q, want %q (R36): %s", got, taskID, m.Raw)
	}
	return p
}

// ruleAnswer POSTs the client's answer to the elicitation m: action accept, decline or
// cancel as an ElicitResult with related-task _meta, or "error" as a JSON-RPC error. The
// server must reply 202 with no body (H4).
func ruleAnswer(t testing.TB, c *client, m ruleMsg, action string) {
	t.Helper()
	var p mcp.ElicitRequestParams
	_ = json.Unmarshal(m.Params, &p)
	var body []byte
	if action == "error" {
		body = []byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32603,"message":"client could not show the form"}}`)
	} else {
		res := map[string]any{"action": action, "_meta": json.RawMessage(mcp.RelatedTaskMeta(mcp.RelatedTaskID(p.Meta)))}
		if action == mcp.ElicitAccept {
			res["content"] = map[string]any{"answer": "yes"}
		}
		rb, _ := json.Marshal(res)
		mcptest.Must(t, mcptest.Validate("ElicitResult", rb))
		body = []byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + string(rb) + `}`)
	}
	mcptest.Must(t, mcptest.ValidateMessage(body))
	resp := c.send(string(body))
	if b := resp.all(); resp.Status != http.StatusAccepted || len(b) != 0 {
		t.Fatalf("answer to %s: HTTP %d %q, want 202 with no body (H4)", m.ID, resp.Status, b)
	}
}

// ruleRaw sends req and returns the status, the headers and the whole body; a JSON-RPC
// body is validated as a reply to method. An SSE body is not read (it may never end).
func ruleRaw(t testing.TB, h *harness, req *http.Request, method string) (int, http.Header, []byte) {
	t.Helper()
	resp := h.do(req)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp.Status, resp.Header, nil
	}
	body := resp.all()
	if len(body) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		checkReply(t, method, body)
	}
	return resp.Status, resp.Header, body
}

// ruleRawErr decodes the JSON-RPC error of a rejected HTTP request.
func ruleRawErr(t testing.TB, body []byte) *mcp.Error {
	t.Helper()
	msg, perr := mcp.Decode(body)
	if perr != nil || msg.Error == nil {
		t.Fatalf("body %q is not a JSON-RPC error response", body)
	}
	return msg.Error
}

// rulePing checks that the session still serves requests.
func rulePing(t testing.TB, c *client) {
	t.Helper()
	if res := ruleOK(t, c.call("ping", nil)); string(res) != "{}" {
		t.Fatalf("ping result %s, want {}", res)
	}
}

// ruleMs returns a pointer to n, for expected ttls.
func ruleMs(n int64) *int64 { return &n }

// TestBadInput: malformed or invalid input gets the right HTTP status and JSON-RPC code with
// a message that says what was wrong, and the server keeps serving (R49, H4, H11).
func TestBadInput(t *testing.T) {
	tests := []struct {
		name        string
		maxBody     int64
		contentType string // "" is application/json
		body        string
		wantHTTP    int
		wantCode    int
		wantID      string // the echoed id, "" when the request's id could not be read
		wantMsg     []string
	}{
		{name: "malformed JSON", body: `{"jsonrpc":"2.0","id":1,"method":"ping"`,
			wantHTTP: 400, wantCode: mcp.CodeParseError, wantMsg: []string{"not valid JSON"}},
		{name: "empty body", body: ``,
			wantHTTP: 400, wantCode: mcp.CodeParseError, wantMsg: []string{"empty body"}},
		{name: "batch", body: `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
			wantHTTP: 400, wantCode: mcp.CodeInvalidRequest, wantMsg: []string{"batches are not supported"}},
		{name: "wrong jsonrpc version", body: `{"jsonrpc":"1.0","id":1,"method":"ping"}`,
			wantHTTP: 400, wantCode: mcp.CodeInvalidRequest, wantID: "1", wantMsg: []string{`"jsonrpc" must be "2.0"`}},
		{name: "unknown method", body: `{"jsonrpc":"2.0","id":1,"method":"tasks/delete","params":{"taskId":"x"}}`,
			wantHTTP: 200, wantCode: mcp.CodeMethodNotFound, wantID: "1", wantMsg: []string{`"tasks/delete"`}},
		{name: "invalid params", body: `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":7}}`,
			wantHTTP: 200, wantCode: mcp.CodeInvalidParams, wantID: "2", wantMsg: []string{"tasks/get", "taskId"}},
		{name: "unknown tool", body: `{"jsonrpc":"2.0","id":"t","method":"tools/call","params":{"name":"nope","arguments":{}}}`,
			wantHTTP: 200, wantCode: mcp.CodeInvalidParams, wantID: `"t"`, wantMsg: []string{`unknown tool "nope"`}},
		{name: "unknown argument", body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"work","arguments":{"duration":5}}}`,
			wantHTTP: 200, wantCode: mcp.CodeInvalidParams, wantID: "3", wantMsg: []string{`"work"`, `unknown field "duration"`}},
		{name: "bad argument values", body: `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"work","arguments":{"outcome":"maybe","duration_ms":-1}}}`,
			wantHTTP: 200, wantCode: mcp.CodeInvalidParams, wantID: "4", wantMsg: []string{"outcome", `"maybe"`, "duration_ms", "-1"}},
		{name: "body over MaxBodyBytes", maxBody: 512, body: `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"_meta":{"pad":"` + strings.Repeat("x", 600) + `"}}}`,
			wantHTTP: 413, wantCode: mcp.CodeInvalidRequest, wantMsg: []string{"exceeds the limit of 512 bytes"}},
		{name: "non-JSON Content-Type", contentType: "text/plain", body: `{"jsonrpc":"2.0","id":6,"method":"ping"}`,
			wantHTTP: 415, wantCode: mcp.CodeInvalidRequest, wantMsg: []string{"Content-Type", `"text/plain"`}},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h, c := ruleSetup(t, mockserver.Config{MaxBodyBytes: tc.maxBody})
			req := c.request(http.MethodPost, tc.body)
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			status, hdr, body := ruleRaw(t, h, req, "bad input")
			if status != tc.wantHTTP {
				t.Fatalf("HTTP %d, want %d: %s", status, tc.wantHTTP, body)
			}
			if ct := hdr.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
			e := ruleRawErr(t, body)
			ruleErr(t, reply{Raw: body, Err: e}, tc.wantCode, tc.wantMsg...)
			id := ruleObject(t, body)["id"]
			if string(id) != tc.wantID {
				t.Errorf("reply id %s, want %q", id, tc.wantID)
			}
			rulePing(t, c)
		})
	}
}

// TestTTL: the granted ttl (default, requested, clamped, unlimited), deletion by the reaper
// within ReaperInterval of expiry, -32602 for a purged id, and the counters of Stats (R44,
// R45, R46, R56).
func TestTTL(t *testing.T) {
	tests := []struct {
		name   string
		cfg    mockserver.Config
		task   map[string]any // params.task
		args   map[string]any
		fetch  time.Duration // fetch the result at this time (0: never)
		lookup bool          // tasks/get at the expiry instant deletes the task at once
		// want
		ttl      *int64        // nil: null
		goneAt   time.Duration // deleted at this time (the first reaper tick at or after expiry)
		lag      time.Duration
		orphaned uint64
	}{
		{name: "default ttl", cfg: mockserver.Config{DefaultTTL: 10 * time.Second, ReaperInterval: 4 * time.Second},
			args: map[string]any{"duration_ms": 1000}, ttl: ruleMs(10000), goneAt: 12 * time.Second, lag: 2 * time.Second, orphaned: 1},
		{name: "requested ttl", cfg: mockserver.Config{ReaperInterval: 4 * time.Second}, task: map[string]any{"ttl": 5000},
			args: map[string]any{"duration_ms": 1000}, fetch: time.Second, ttl: ruleMs(5000), goneAt: 8 * time.Second, lag: 3 * time.Second},
		{name: "requested ttl clamped to MaxTTL", cfg: mockserver.Config{DefaultTTL: 5 * time.Second, MaxTTL: 6 * time.Second, ReaperInterval: 4 * time.Second},
			task: map[string]any{"ttl": 3600000}, args: map[string]any{"duration_ms": 1000}, ttl: ruleMs(6000), goneAt: 8 * time.Second, lag: 2 * time.Second, orphaned: 1},
		{name: "working task expires", cfg: mockserver.Config{ReaperInterval: 4 * time.Second}, task: map[string]any{"ttl": 2000},
			args: map[string]any{"duration_ms": 60000}, ttl: ruleMs(2000), goneAt: 4 * time.Second, lag: 2 * time.Second},
		{name: "failed task never fetched", cfg: mockserver.Config{ReaperInterval: 4 * time.Second}, task: map[string]any{"ttl": 3000},
			args: map[string]any{"duration_ms": 1000, "outcome": "failed"}, ttl: ruleMs(3000), goneAt: 4 * time.Second, lag: time.Second, orphaned: 1},
		{name: "failed task fetched", cfg: mockserver.Config{ReaperInterval: 4 * time.Second}, task: map[string]any{"ttl": 3000},
			args: map[string]any{"duration_ms": 1000, "outcome": "error"}, fetch: 2 * time.Second, ttl: ruleMs(3000), goneAt: 4 * time.Second, lag: time.Second},
		{name: "expiry on a reaper tick", cfg: mockserver.Config{ReaperInterval: 4 * time.Second}, task: map[string]any{"ttl": 8000},
			args: map[string]any{"duration_ms": 1000}, ttl: ruleMs(8000), goneAt: 8 * time.Second, orphaned: 1},
		{name: "lookup at expiry deletes at once", cfg: mockserver.Config{ReaperInterval: 4 * time.Second}, task: map[string]any{"ttl": 3000},
			args: map[string]any{"duration_ms": 1000}, lookup: true, ttl: ruleMs(3000), goneAt: 3 * time.Second, orphaned: 1},
		{name: "UnlimitedTTL gives null and is never reaped", cfg: mockserver.Config{UnlimitedTTL: true, ReaperInterval: time.Hour},
			args: map[string]any{"duration_ms": 1000}, ttl: nil},
		{name: "UnlimitedTTL still clamps a requested ttl", cfg: mockserver.Config{UnlimitedTTL: true, DefaultTTL: 5 * time.Second, MaxTTL: 6 * time.Second, ReaperInterval: 4 * time.Second},
			task: map[string]any{"ttl": 10000000}, args: map[string]any{"duration_ms": 1000}, ttl: ruleMs(6000), goneAt: 8 * time.Second, lag: 2 * time.Second, orphaned: 1},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h, c := ruleSetup(t, tc.cfg)
			t0 := time.Now()
			tk := ruleCreate(t, c, mockserver.ToolWork, tc.args, tc.task)
			checkTTL := func(where string, got *mcp.Ms, raw []byte) {
				t.Helper()
				switch {
				case tc.ttl == nil && got != nil:
					t.Fatalf("%s: ttl %d, want null", where, *got)
				case tc.ttl != nil && (got == nil || int64(*got) != *tc.ttl):
					t.Fatalf("%s: ttl %v, want %d", where, got, *tc.ttl)
				}
				if raw != nil {
					if v, ok := ruleObject(t, raw)["ttl"]; !ok || (tc.ttl == nil && string(v) != "null") {
						t.Fatalf("%s: ttl member %q, want it present (null when unlimited, R44)", where, v)
					}
				}
			}
			checkTTL("CreateTaskResult", tk.TTL, nil)
			r := c.call("tasks/get", map[string]any{"taskId": tk.TaskID})
			checkTTL("tasks/get", ruleTaskOf(t, r, "GetTaskResult").TTL, r.Result)

			if tc.fetch > 0 {
				ruleUntil(t0, tc.fetch)
				c.call("tasks/result", map[string]any{"taskId": tk.TaskID})
			}
			if tc.ttl == nil {
				ruleUntil(t0, 1000*time.Hour)
				got := ruleGet(t, c, tk.TaskID)
				checkTTL("tasks/get after 1000h", got.TTL, nil)
				if st := h.srv.Stats(); st.TasksLive != 1 || st.TasksExpired != 0 {
					t.Fatalf("after 1000h: %d live, %d expired; want 1 and 0", st.TasksLive, st.TasksExpired)
				}
				return
			}
			ruleUntil(t0, tc.goneAt-time.Millisecond)
			if st := h.srv.Stats(); st.TasksLive != 1 || st.TasksExpired != 0 {
				t.Fatalf("at %v: %d live, %d expired; want 1 and 0", tc.goneAt-time.Millisecond, st.TasksLive, st.TasksExpired)
			}
			ruleUntil(t0, tc.goneAt)
			if tc.lookup {
				ruleErr(t, c.call("tasks/get", map[string]any{"taskId": tk.TaskID}), mcp.CodeInvalidParams, tk.TaskID)
			}
			st := h.srv.Stats()
			if st.TasksLive != 0 || st.TasksExpired != 1 || st.OrphanedTasks != tc.orphaned || st.MaxCleanupLag != tc.lag {
				t.Fatalf("at %v: live %d, expired %d, orphaned %d, cleanup lag %v; want 0, 1, %d, %v",
					tc.goneAt, st.TasksLive, st.TasksExpired, st.OrphanedTasks, st.MaxCleanupLag, tc.orphaned, tc.lag)
			}
			if st.MaxCleanupLag >= tc.cfg.ReaperInterval {
				t.Fatalf("cleanup lag %v is not within ReaperInterval %v", st.MaxCleanupLag, tc.cfg.ReaperInterval)
			}
			for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
				ruleErr(t, c.call(m, map[string]any{"taskId": tk.TaskID}), mcp.CodeInvalidParams, "not found", tk.TaskID)
			}
			if st := h.srv.Stats(); st.TasksCreated != 1 {
				t.Fatalf("TasksCreated %d, want 1", st.TasksCreated)
			}
		})
	}
}

// TestInputRequired walks the input_required flow of docs/RULES.md#input-required-flow: working ->
// input_required -> elicitation/create (related-task _meta) on the tasks/result SSE stream ->
// the client answers with a separate POST (202) -> working -> completed, with the final
// payload on the same stream; a refusal ends the task failed (R35, R36, R38).
func TestInputRequired(t *testing.T) {
	tests := []struct {
		name     string
		args     map[string]any
		phase    time.Duration // length of one phase of work
		answers  []string      // per round: accept, decline, cancel or error
		want     mcp.Status
		wantText string // in the final payload's text
	}{
		{name: "accept", args: map[string]any{"duration_ms": 2000, "input_required": true}, phase: time.Second,
			answers: []string{"accept"}, want: mcp.StatusCompleted, wantText: "work completed in 2000 ms"},
		{name: "decline ends failed", args: map[string]any{"duration_ms": 2000, "input_required": true}, phase: time.Second,
			answers: []string{"decline"}, want: mcp.StatusFailed, wantText: "input round 1 answered with decline"},
		{name: "cancel action ends failed", args: map[string]any{"duration_ms": 2000, "input_required": true}, phase: time.Second,
			answers: []string{"cancel"}, want: mcp.StatusFailed, wantText: "input round 1 answered with cancel"},
		{name: "error response ends failed", args: map[string]any{"duration_ms": 2000, "input_required": true}, phase: time.Second,
			answers: []string{"error"}, want: mcp.StatusFailed, wantText: "input round 1 answered with error"},
		{name: "two rounds", args: map[string]any{"duration_ms": 3000, "input_rounds": 2}, phase: time.Second,
			answers: []string{"accept", "accept"}, want: mcp.StatusCompleted, wantText: "work completed in 3000 ms"},
		{name: "second round declined", args: map[string]any{"duration_ms": 3000, "input_rounds": 2}, phase: time.Second,
			answers: []string{"accept", "decline"}, want: mcp.StatusFailed, wantText: "input round 2 answered with decline"},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h, c := ruleSetup(t, mockserver.Config{})
			t0 := time.Now()
			tk := ruleCreate(t, c, mockserver.ToolWork, tc.args, nil)
			st := ruleStream(t, c, tk.TaskID)
			rounds := len(tc.answers)
			var seen []string // elicitation ids
			for i, action := range tc.answers {
				at := tc.phase * time.Duration(i+1)
				ruleUntil(t0, at-time.Millisecond)
				ruleWantStatus(t, c, tk.TaskID, mcp.StatusWorking)
				ruleQuiet(t, st, "tasks/result stream before input is needed")

				m := ruleNextMessage(t, st)
				ruleElapsed(t, t0, at, "elicitation/create")
				p := ruleElicitation(t, m, tk.TaskID)
				if round := fmt.Sprintf("(round %d of %d)", i+1, rounds); !strings.Contains(p.Message, round) {
					t.Errorf("elicitation message %q does not say %q", p.Message, round)
				}
				for _, id := range seen {
					if id == string(m.ID) {
						t.Fatalf("elicitation id %s reused (H11)", m.ID)
					}
				}
				seen = append(seen, string(m.ID))
				got := ruleWantStatus(t, c, tk.TaskID, mcp.StatusInputRequired)
				if !strings.Contains(got.StatusMessage, fmt.Sprintf("round %d of %d", i+1, rounds)) {
					t.Errorf("input_required statusMessage %q does not name round %d", got.StatusMessage, i+1)
				}

				ruleAnswer(t, c, m, action)
				synctest.Wait()
				if action != mcp.ElicitAccept {
					ruleWantStatus(t, c, tk.TaskID, tc.want)
					break
				}
				ruleWantStatus(t, c, tk.TaskID, mcp.StatusWorking) // R38
			}
			final := ruleFinal(t, st)
			if tc.want == mcp.StatusCompleted {
				ruleElapsed(t, t0, tc.phase*time.Duration(rounds+1), "final payload")
			}
			res := ruleToolResult(t, ruleOK(t, final))
			if res.IsError != (tc.want != mcp.StatusCompleted) {
				t.Errorf("isError %v for a %v task", res.IsError, tc.want)
			}
			if got := ruleText(res); !strings.Contains(got, tc.wantText) {
				t.Errorf("payload text %q does not contain %q", got, tc.wantText)
			}
			if got := mcp.RelatedTaskID(res.Meta); got != tk.TaskID {
				t.Errorf("payload related-task %q, want %q (R19)", got, tk.TaskID)
			}
			ruleWantStatus(t, c, tk.TaskID, tc.want)
			wantEffects := uint64(0)
			if tc.want == mcp.StatusCompleted {
				wantEffects = 1
			}
			if eff := h.srv.Stats().Effects; eff != wantEffects {
				t.Errorf("%d domain effects for a %v task, want %d", eff, tc.want, wantEffects)
			}
		})
	}
}

// ruleJSONEqual compares two JSON values ignoring member order.
func ruleJSONEqual(t testing.TB, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%v: %s", err, a)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return reflect.DeepEqual(va, vb)
}

// ruleWithContext returns req bound to a cancellable context.
func ruleWithContext(req *http.Request) (*http.Request, context.CancelFunc) {
	ctx, cancel := context.WithCancel(req.Context())
	return req.WithContext(ctx), cancel
}
