package mockserver_test

// Tests of the modern era (2026-07-28 with the Tasks extension) on the mock server, in the
// harness's in-process, virtual-time style. Every request the modern client sends is
// validated with mcptest.ValidateMessage2026 and every reply with ValidateReply2026. Tests
// of a rule of docs/RULES.md are named after it.

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/mcp/mcptest"
	"github.com/tasksim/tasksim/mockserver"
)

// modernClient sends stateless requests of 2026-07-28: each carries its own _meta envelope
// and the headers E24 asks for.
type modernClient struct {
	h      *harness
	token  string
	tasks  bool   // declare the Tasks extension on every request
	form   bool   // declare form elicitation
	info   string // clientInfo.name; "" = "modern-harness"
	nextID int
	// edit, when set, changes each request before it is sent (headers under test).
	edit func(*http.Request)
}

func (h *harness) modern(opts ...func(*modernClient)) *modernClient {
	mc := &modernClient{h: h, tasks: true, form: true}
	for _, o := range opts {
		o(mc)
	}
	return mc
}

func undeclared(mc *modernClient) { mc.tasks = false }

func modernToken(tok string) func(*modernClient) {
	return func(mc *modernClient) { mc.token = tok }
}

// envelope is the request's _meta (E1, E2).
func (mc *modernClient) envelope() json.RawMessage {
	name := mc.info
	if name == "" {
		name = "modern-harness"
	}
	m := mcp.RequestMeta{ProtocolVersion: mcp.Version20260728, ClientInfo: &mcp.Implementation{Name: name, Version: "1"}}
	if mc.tasks {
		m.ClientCapabilities.DeclareTasks()
	}
	if mc.form {
		m.ClientCapabilities.Elicitation = &mcp.ElicitationCapability{Form: &mcp.Leaf{}}
	}
	b, err := json.Marshal(m)
	if err != nil {
		mc.h.t.Fatalf("envelope: %v", err)
	}
	return b
}

// body returns the whole request for method with params and the client's envelope.
func (mc *modernClient) body(method string, params map[string]any) []byte {
	mc.h.t.Helper()
	p := map[string]any{"_meta": mc.envelope()}
	for k, v := range params {
		p[k] = v
	}
	raw, err := json.Marshal(p)
	if err != nil {
		mc.h.t.Fatalf("params: %v", err)
	}
	mc.nextID++
	b := mcp.AppendRequest(nil, mcp.IntID(int64(mc.nextID)), method, raw)
	if err := mcptest.ValidateMessage2026(b); err != nil {
		mc.h.t.Fatalf("the test's own %s request fails the 2026-07-28 schema: %v\n%s", method, err, b)
	}
	return b
}

// postRaw POSTs body with the headers of method/params (E24) and returns status and body.
func (mc *modernClient) postRaw(body []byte) (int, http.Header, []byte) {
	mc.h.t.Helper()
	resp := mc.h.do(mc.request(context.Background(), body))
	return resp.Status, resp.Header, resp.all()
}

// request builds the POST of body with the headers of its method and params (E24), ctx its
// context: cancelling it plays a client that closes the connection.
func (mc *modernClient) request(ctx context.Context, body []byte) *http.Request {
	msg, perr := mcp.Decode(body)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if perr == nil {
		if h, err := mcp.HeadersFor(msg.Method, msg.Params); err == nil {
			req.Header.Set(mcp.HeaderProtocolVersion, h.ProtocolVersion)
			req.Header.Set(mcp.HeaderMethod, h.Method)
			if h.Name != "" {
				req.Header.Set(mcp.HeaderName, h.Name)
			}
		}
	}
	if mc.token != "" {
		req.Header.Set("Authorization", "Bearer "+mc.token)
	}
	if mc.edit != nil {
		mc.edit(req)
	}
	return req
}

// modernReply is a decoded reply to a modern request.
type modernReply struct {
	Status int
	Raw    []byte
	Result json.RawMessage
	Err    *mcp.Error
}

// do sends method and validates the reply against the 2026-07-28 schemas.
func (mc *modernClient) do(method string, params map[string]any) modernReply {
	mc.h.t.Helper()
	status, _, raw := mc.postRaw(mc.body(method, params))
	return decodeModern(mc.h.t, method, status, raw)
}

func decodeModern(t testing.TB, method string, status int, raw []byte) modernReply {
	t.Helper()
	if err := mcptest.ValidateReply2026(method, raw); err != nil {
		t.Errorf("%s reply fails the 2026-07-28 schemas: %.600v", method, err)
	}
	msg, perr := mcp.Decode(raw)
	if perr != nil {
		t.Fatalf("%s: undecodable reply (HTTP %d) %s: %v", method, status, raw, perr)
	}
	r := modernReply{Status: status, Raw: raw, Result: msg.Result, Err: msg.Error}
	if r.Err == nil && status != http.StatusOK {
		t.Errorf("%s: a result with HTTP %d", method, status)
	}
	if r.Err != nil && status != mcp.HTTPStatus(r.Err.Code) {
		t.Errorf("%s: error %d with HTTP %d, want %d (E27)", method, r.Err.Code, status, mcp.HTTPStatus(r.Err.Code))
	}
	if r.Err == nil {
		var meta struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		_ = json.Unmarshal(r.Result, &meta)
		if _, ok := meta.Meta[mcp.MetaServerInfo]; !ok {
			t.Errorf("%s: result without %s in _meta (E6): %s", method, mcp.MetaServerInfo, raw)
		}
	}
	return r
}

// ok sends method and fails the test on an error reply.
func (mc *modernClient) ok(method string, params map[string]any) modernReply {
	mc.h.t.Helper()
	r := mc.do(method, params)
	if r.Err != nil {
		mc.h.t.Fatalf("%s: HTTP %d, error %d %s", method, r.Status, r.Err.Code, r.Err.Message)
	}
	return r
}

// wantError sends method and wants error code with its HTTP status.
func (mc *modernClient) wantError(method string, params map[string]any, code int) modernReply {
	mc.h.t.Helper()
	r := mc.do(method, params)
	if r.Err == nil || r.Err.Code != code {
		mc.h.t.Fatalf("%s: got %s, want error %d", method, r.Raw, code)
	}
	return r
}

// create calls tool with args and wants a CreateTaskResult (E45).
func (mc *modernClient) create(tool string, args map[string]any) mcp.TaskResult {
	mc.h.t.Helper()
	r := mc.ok("tools/call", map[string]any{"name": tool, "arguments": args})
	cr, q, err := mcp.ParseCallToolReply(r.Result, mc.tasks)
	if err != nil || cr.Task == nil || q != 0 {
		mc.h.t.Fatalf("tools/call %s: want a flat CreateTaskResult, got %s (quirks %v, %v)", tool, r.Raw, q, err)
	}
	return *cr.Task
}

// get polls the task once.
func (mc *modernClient) get(id string) mcp.TaskResult {
	mc.h.t.Helper()
	r := mc.ok("tasks/get", map[string]any{"taskId": id})
	tr, q, err := mcp.ParseGetTaskResult(r.Result)
	if err != nil || q != 0 {
		mc.h.t.Fatalf("tasks/get: %v (quirks %v): %s", err, q, r.Raw)
	}
	return tr
}

func modernServer(t *testing.T, cfg mockserver.Config) *harness {
	if cfg.Protocols == "" {
		cfg.Protocols = mockserver.ProtocolsBoth
	}
	return newHarness(t, cfg)
}

// TestEraClassification: one endpoint, each request in its era (docs/RULES.md#era-detection),
// for servers of both eras, modern only and legacy only.
func TestEraClassification(t *testing.T) {
	tools := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	modernTools := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	modernHeaders := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
	for _, tc := range []struct {
		name      string
		protocols mockserver.Protocols
		httpVerb  string
		body      string
		headers   map[string]string
		status    int
		code      int // 0: a result
		modern    bool
	}{
		{"both/modern envelope", mockserver.ProtocolsBoth, "POST", modernTools, modernHeaders, 200, 0, true},
		{"both/initialize", mockserver.ProtocolsBoth, "POST", initialize, nil, 200, 0, false},
		{"both/modern header without envelope", mockserver.ProtocolsBoth, "POST", tools, modernHeaders, 400, mcp.CodeInvalidParams, true},
		{"both/initialize with modern header", mockserver.ProtocolsBoth, "POST", initialize,
			map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "initialize"}, 400, mcp.CodeHeaderMismatch, true},
		{"both/modern envelope without headers", mockserver.ProtocolsBoth, "POST", modernTools, nil, 400, mcp.CodeHeaderMismatch, true},
		{"both/legacy without session", mockserver.ProtocolsBoth, "POST", tools, nil, 400, mcp.CodeInvalidRequest, false},
		{"legacy/modern envelope: no session", mockserver.ProtocolsLegacy, "POST", modernTools, modernHeaders, 400, mcp.CodeInvalidRequest, false},
		{"legacy/initialize", mockserver.ProtocolsLegacy, "POST", initialize, nil, 200, 0, false},
		{"modern/modern envelope", mockserver.ProtocolsModern, "POST", modernTools, modernHeaders, 200, 0, true},
		{"modern/initialize (E35)", mockserver.ProtocolsModern, "POST", initialize, nil, 400, mcp.CodeUnsupportedProtocolVersion, true},
		{"modern/legacy request", mockserver.ProtocolsModern, "POST", tools, nil, 400, mcp.CodeHeaderMismatch, true},
		{"modern/GET (E30)", mockserver.ProtocolsModern, "GET", "", nil, 405, -1, false},
		{"modern/DELETE (E30)", mockserver.ProtocolsModern, "DELETE", "", nil, 405, -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, mockserver.Config{Protocols: tc.protocols})
			c := &client{h: h, accept: "application/json, text/event-stream", headers: tc.headers}
			resp := h.do(c.request(tc.httpVerb, tc.body))
			body := resp.all()
			if resp.Status != tc.status {
				t.Fatalf("HTTP %d, want %d: %s", resp.Status, tc.status, body)
			}
			if tc.code == -1 {
				return
			}
			if tc.modern {
				method := "tools/list"
				if strings.Contains(tc.body, "initialize") {
					method = "initialize"
				}
				if err := mcptest.ValidateReply2026(method, body); err != nil {
					t.Errorf("fails the 2026-07-28 schemas: %.600v", err)
				}
			}
			msg, perr := mcp.Decode(body)
			if perr != nil {
				t.Fatalf("undecodable: %s", body)
			}
			switch {
			case tc.code == 0 && msg.Error != nil:
				t.Fatalf("error %s, want a result", body)
			case tc.code != 0 && (msg.Error == nil || msg.Error.Code != tc.code):
				t.Fatalf("%s, want error %d", body, tc.code)
			}
			if tc.code == mcp.CodeUnsupportedProtocolVersion {
				var d mcp.UnsupportedProtocolVersionData
				if err := json.Unmarshal(msg.Error.Data, &d); err != nil || len(d.Supported) != 1 || d.Supported[0] != mcp.Version20260728 || d.Requested != "2025-11-25" {
					t.Fatalf("data %s, want supported [2026-07-28], requested 2025-11-25 (E35)", msg.Error.Data)
				}
			}
		})
	}
}

// TestE8Discover: server/discover names the versions, the extension with {}, and the server
// (E6, E8, E11).
func TestE8Discover(t *testing.T) {
	h := modernServer(t, mockserver.Config{})
	r := h.modern().ok("server/discover", nil)
	var d struct {
		ResultType        string   `json:"resultType"`
		SupportedVersions []string `json:"supportedVersions"`
		Capabilities      struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(r.Result, &d); err != nil {
		t.Fatal(err)
	}
	if d.ResultType != "complete" || d.SupportedVersions[0] != mcp.Version20260728 || !strings.Contains(strings.Join(d.SupportedVersions, ","), mcp.Version20251125) {
		t.Fatalf("discover: %s", r.Raw)
	}
	if ext, ok := d.Capabilities.Extensions[mcp.ExtTasks]; !ok || string(ext) != "{}" {
		t.Fatalf("capabilities.extensions[%q] = %s, want {}", mcp.ExtTasks, ext)
	}
	only := newHarness(t, mockserver.Config{Protocols: mockserver.ProtocolsModern}).modern().ok("server/discover", nil)
	if !strings.Contains(string(only.Raw), `"supportedVersions":["2026-07-28"]`) {
		t.Fatalf("a modern-only server lists only 2026-07-28: %s", only.Raw)
	}
}

// TestE11ToolsList: tools/list in the modern shape, resultType complete, without the
// taskSupport the era dropped.
func TestE11ToolsList(t *testing.T) {
	h := modernServer(t, mockserver.Config{})
	r := h.modern().ok("tools/list", nil)
	if !strings.HasPrefix(string(r.Result), `{"resultType":"complete"`) || strings.Contains(string(r.Result), "taskSupport") {
		t.Fatalf("tools/list: %s", r.Result)
	}
}

// TestE26HeaderMismatch: headers that contradict the body get -32020 with 400, before the
// envelope is read.
func TestE26HeaderMismatch(t *testing.T) {
	h := modernServer(t, mockserver.Config{})
	mc := h.modern()
	mc.edit = func(r *http.Request) { r.Header.Set(mcp.HeaderMethod, "tools/call") }
	mc.wantError("tools/list", nil, mcp.CodeHeaderMismatch)
	mc.edit = func(r *http.Request) { r.Header.Set(mcp.HeaderName, "other") }
	mc.wantError("tasks/get", map[string]any{"taskId": "abc"}, mcp.CodeHeaderMismatch)
	// -32020 wins over -32022 (docs/RULES.md#era-detection).
	mc.edit = func(r *http.Request) { r.Header.Del(mcp.HeaderMethod) }
	status, _, raw := mc.postRaw([]byte(`{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2027-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	if r := decodeModern(t, "tools/list", status, raw); r.Err == nil || r.Err.Code != mcp.CodeHeaderMismatch {
		t.Fatalf("got %s, want -32020", raw)
	}
}

// TestE3MissingMeta: an envelope without clientCapabilities gets -32602 with 400.
func TestE3MissingMeta(t *testing.T) {
	h := modernServer(t, mockserver.Config{})
	status, _, raw := h.modern().postRaw([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`))
	if r := decodeModern(t, "tools/list", status, raw); r.Err == nil || r.Err.Code != mcp.CodeInvalidParams || status != 400 {
		t.Fatalf("HTTP %d %s, want 400 -32602", status, raw)
	}
}

// TestE9UnsupportedVersion: a version the server does not serve gets -32022 naming the
// supported ones.
func TestE9UnsupportedVersion(t *testing.T) {
	h := modernServer(t, mockserver.Config{})
	status, _, raw := h.modern().postRaw([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2027-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	r := decodeModern(t, "tools/list", status, raw)
	if r.Err == nil || r.Err.Code != mcp.CodeUnsupportedProtocolVersion || !strings.Contains(string(r.Err.Data), `"supported":["2026-07-28"]`) {
		t.Fatalf("got %s, want -32022 with data.supported", raw)
	}
}

// TestE27E37RemovedAndUnknownMethods: what the era removed is as unknown as a made-up
// method: -32601 with 404.
func TestE27E37RemovedAndUnknownMethods(t *testing.T) {
	h := modernServer(t, mockserver.Config{})
	mc := h.modern()
	for _, m := range []string{"ping", "tasks/result", "tasks/list", "initialize", "no/such"} {
		params := map[string]any{}
		if m == "tasks/result" {
			params["taskId"] = "x"
		}
		if r := mc.wantError(m, params, mcp.CodeMethodNotFound); r.Status != http.StatusNotFound {
			t.Errorf("%s: HTTP %d, want 404", m, r.Status)
		}
	}
}

// TestE44WorkTaskNeedsExtension: work_task from a request without the extension gets
// -32021 naming it in data.requiredCapabilities.
func TestE44WorkTaskNeedsExtension(t *testing.T) {
	h := modernServer(t, mockserver.Config{})
	r := h.modern(undeclared).wantError("tools/call", map[string]any{"name": "work_task"}, mcp.CodeMissingRequiredClientCapability)
	var d mcp.MissingRequiredClientCapabilityData
	if err := json.Unmarshal(r.Err.Data, &d); err != nil || !d.RequiredCapabilities.DeclaresTasks() || r.Status != 400 {
		t.Fatalf("HTTP %d, data %s: want 400 naming %s", r.Status, r.Err.Data, mcp.ExtTasks)
	}
}

// TestE39NoTaskUndeclared: work runs synchronously for a request without the extension,
// and work_sync never becomes a task; a legacy params.task changes nothing (E37).
func TestE39NoTaskUndeclared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := modernServer(t, mockserver.Config{})
		for _, tc := range []struct {
			mc   *modernClient
			tool string
		}{{h.modern(undeclared), "work"}, {h.modern(), "work_sync"}, {h.modern(undeclared), "work_sync"}} {
			r := tc.mc.ok("tools/call", map[string]any{"name": tc.tool, "arguments": map[string]any{"duration_ms": 10}, "task": map[string]any{"ttl": 1000}})
			cr, _, err := mcp.ParseCallToolReply(r.Result, tc.mc.tasks)
			if err != nil || cr.ResultType != mcp.ResultComplete || cr.Call == nil || cr.Call.IsError {
				t.Fatalf("%s (declared %v): %s, want a complete CallToolResult", tc.tool, tc.mc.tasks, r.Raw)
			}
		}
		if n := h.srv.Stats().TasksCreated; n != 0 {
			t.Fatalf("%d tasks created, want none", n)
		}
	})
}

// TestE45E46CreateTaskResult: work and work_task become tasks for a declaring request; the
// reply is flat with resultType "task", and the task is readable at once.
func TestE45E46CreateTaskResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := modernServer(t, mockserver.Config{PollInterval: 250 * time.Millisecond, DefaultTTL: time.Minute})
		mc := h.modern()
		for _, tool := range []string{"work", "work_task"} {
			tk := mc.create(tool, map[string]any{"duration_ms": 1000})
			if tk.ResultType != mcp.ResultTask || tk.Status != mcp.StatusWorking || tk.PollIntervalMs == nil || *tk.PollIntervalMs != 250 ||
				tk.TTLMs == nil || *tk.TTLMs != 60000 {
				t.Fatalf("%s: %+v", tool, tk)
			}
			if got := mc.get(tk.TaskID); got.Status != mcp.StatusWorking || got.ResultType != mcp.ResultComplete {
				t.Fatalf("%s: tasks/get right after creation: %+v (E46, E51)", tool, got)
			}
		}
	})
}

// TestE65TasksNeedExtension: every tasks/* request declares the extension (-32021), and an
// unknown task id is -32602.
func TestE65TasksNeedExtension(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := modernServer(t, mockserver.Config{})
		tk := h.modern().create("work", map[string]any{"duration_ms": 1000})
		un := h.modern(undeclared)
		un.wantError("tasks/get", map[string]any{"taskId": tk.TaskID}, mcp.CodeMissingRequiredClientCapability)
		un.wantError("tasks/update", map[string]any{"taskId": tk.TaskID, "inputResponses": map[string]any{"k": map[string]any{"action": "accept"}}}, mcp.CodeMissingRequiredClientCapability)
		un.wantError("tasks/cancel", map[string]any{"taskId": tk.TaskID}, mcp.CodeMissingRequiredClientCapability)
		mc := h.modern()
		mc.wantError("tasks/get", map[string]any{"taskId": "no-such-task"}, mcp.CodeInvalidParams)
		mc.wantError("tasks/cancel", map[string]any{"taskId": "no-such-task"}, mcp.CodeInvalidParams)
		mc.wantError("tasks/update", map[string]any{"taskId": "no-such-task", "inputResponses": map[string]any{}}, mcp.CodeInvalidParams)
	})
}

// TestE67TenantBinding: another tenant's task is as unknown as a missing one, for every
// task method.
func TestE67TenantBinding(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := modernServer(t, mockserver.Config{Tokens: map[string]string{"tok-a": "alice", "tok-b": "bob"}})
		tk := h.modern(modernToken("tok-a")).create("work", map[string]any{"duration_ms": 1000})
		bob := h.modern(modernToken("tok-b"))
		bob.wantError("tasks/get", map[string]any{"taskId": tk.TaskID}, mcp.CodeInvalidParams)
		bob.wantError("tasks/cancel", map[string]any{"taskId": tk.TaskID}, mcp.CodeInvalidParams)
		bob.wantError("tasks/update", map[string]any{"taskId": tk.TaskID, "inputResponses": map[string]any{}}, mcp.CodeInvalidParams)
		if got := h.modern(modernToken("tok-a")).get(tk.TaskID); got.Status != mcp.StatusWorking {
			t.Fatalf("alice's own task: %+v (bob's cancel must not have touched it)", got)
		}
		status, _, _ := h.modern().postRaw(h.modern().body("tasks/get", map[string]any{"taskId": tk.TaskID}))
		if status != http.StatusUnauthorized {
			t.Fatalf("without a token: HTTP %d, want 401", status)
		}
	})
}

// TestE50Lifecycle: create, poll while working, then the inline result with resultType
// "complete" on the result itself.
func TestE50Lifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := modernServer(t, mockserver.Config{})
		mc := h.modern()
		tk := mc.create("work_task", map[string]any{"duration_ms": 5000})
		time.Sleep(4999 * time.Millisecond)
		if got := mc.get(tk.TaskID); got.Status != mcp.StatusWorking || got.Result != nil {
			t.Fatalf("at 4.999s: %+v", got)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		got := mc.get(tk.TaskID)
		if got.Status != mcp.StatusCompleted {
			t.Fatalf("at 5s: %+v", got)
		}
		if !strings.HasPrefix(string(got.Result), `{"resultType":"complete"`) {
			t.Fatalf("inline result %s: want resultType complete first", got.Result)
		}
		var res mcp.CallToolResult
		if err := json.Unmarshal(got.Result, &res); err != nil || res.IsError || res.Meta != nil {
			t.Fatalf("inline result %s: want a plain CallToolResult without related-task _meta", got.Result)
		}
		if h.srv.Stats().OrphanedTasks != 0 {
			t.Fatal("orphaned")
		}
	})
}

// TestE49Outcomes: an isError result is completed, carried in result; a JSON-RPC error is
// failed, carried in error, with a statusMessage.
func TestE49Outcomes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := modernServer(t, mockserver.Config{})
		mc := h.modern()
		isErr := mc.create("work", map[string]any{"duration_ms": 10, "outcome": "failed"})
		rpcErr := mc.create("work", map[string]any{"duration_ms": 10, "outcome": "error"})
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		got := mc.get(isErr.TaskID)
		var res mcp.CallToolResult
		if got.Status != mcp.StatusCompleted || json.Unmarshal(got.Result, &res) != nil || !res.IsError {
			t.Fatalf("outcome failed: %+v %s, want completed with an isError result (E49)", got, got.Result)
		}
		got = mc.get(rpcErr.TaskID)
		if got.Status != mcp.StatusFailed || got.Error == nil || got.Error.Code != mcp.CodeInternalError || got.StatusMessage == "" {
			t.Fatalf("outcome error: %+v, want failed with the JSON-RPC error and a statusMessage (E49)", got)
		}
	})
}

// TestE55E58InputRequired: the input_required argument asks through inputRequests; a
// tasks/update that answers nothing known is acknowledged and changes nothing (E58), the
// right key resumes the work, and a key answered once is never asked or taken again (E57).
func TestE55E58InputRequired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := modernServer(t, mockserver.Config{})
		mc := h.modern()
		tk := mc.create("work_task", map[string]any{"duration_ms": 2000, "input_rounds": 2})
		time.Sleep(700 * time.Millisecond)
		synctest.Wait()
		got := mc.get(tk.TaskID)
		if got.Status != mcp.StatusInputRequired || len(got.InputRequests) != 1 {
			t.Fatalf("after the first phase: %+v, want input_required with one input request (E50)", got)
		}
		var key string
		for k, req := range got.InputRequests {
			key = k
			if req.Method != mcp.MethodElicit {
				t.Fatalf("input request %s: method %q", k, req.Method)
			}
		}
		accept := map[string]any{"action": "accept", "content": map[string]any{"answer": "yes"}}
		r := mc.ok("tasks/update", map[string]any{"taskId": tk.TaskID, "inputResponses": map[string]any{"not-a-key": accept}})
		if string(r.Result) == "" || !strings.HasPrefix(string(r.Result), `{"resultType":"complete"`) {
			t.Fatalf("ack %s", r.Raw)
		}
		if again := mc.get(tk.TaskID); again.Status != mcp.StatusInputRequired || again.InputRequests[key].Method == "" {
			t.Fatalf("after an unknown key: %+v, want still input_required with %q (E58)", again, key)
		}
		mc.ok("tasks/update", map[string]any{"taskId": tk.TaskID, "inputResponses": map[string]any{key: accept}})
		if w := mc.get(tk.TaskID); w.Status != mcp.StatusWorking {
			t.Fatalf("after the answer: %+v, want working", w)
		}
		mc.ok("tasks/update", map[string]any{"taskId": tk.TaskID, "inputResponses": map[string]any{key: map[string]any{"action": "decline"}}})
		time.Sleep(700 * time.Millisecond)
		synctest.Wait()
		second := mc.get(tk.TaskID)
		if second.Status != mcp.StatusInputRequired {
			t.Fatalf("second round: %+v", second)
		}
		if _, reused := second.InputRequests[key]; reused {
			t.Fatalf("key %q asked again (E57)", key)
		}
		for k := range second.InputRequests {
			mc.ok("tasks/update", map[string]any{"taskId": tk.TaskID, "inputResponses": map[string]any{k: accept}})
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if done := mc.get(tk.TaskID); done.Status != mcp.StatusCompleted || done.Result == nil {
			t.Fatalf("end: %+v", done)
		}
	})
}

// TestE56DeclinedInput: a declined input request ends the work; the tool's isError result is
// completed in this era (E49).
func TestE56DeclinedInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := modernServer(t, mockserver.Config{})
		mc := h.modern()
		tk := mc.create("work", map[string]any{"duration_ms": 1000, "input_required": true})
		time.Sleep(500 * time.Millisecond)
		synctest.Wait()
		got := mc.get(tk.TaskID)
		for k := range got.InputRequests {
			mc.ok("tasks/update", map[string]any{"taskId": tk.TaskID, "inputResponses": map[string]any{k: map[string]any{"action": "decline"}}})
		}
		end := mc.get(tk.TaskID)
		var res mcp.CallToolResult
		if end.Status != mcp.StatusCompleted || json.Unmarshal(end.Result, &res) != nil || !res.IsError {
			t.Fatalf("after decline: %+v %s", end, end.Result)
		}
	})
}

// TestE60CancelAck: tasks/cancel is an empty acknowledgement; the task is then cancelled,
// and cancelling it again (terminal) is acknowledged too.
func TestE60CancelAck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := modernServer(t, mockserver.Config{})
		mc := h.modern()
		tk := mc.create("work", map[string]any{"duration_ms": 5000})
		for range 2 {
			r := mc.ok("tasks/cancel", map[string]any{"taskId": tk.TaskID})
			var ack map[string]json.RawMessage
			if err := json.Unmarshal(r.Result, &ack); err != nil || string(ack["resultType"]) != `"complete"` || ack["taskId"] != nil {
				t.Fatalf("cancel ack %s: want an empty result", r.Result)
			}
			if got := mc.get(tk.TaskID); got.Status != mcp.StatusCancelled {
				t.Fatalf("after cancel: %+v", got)
			}
		}
		time.Sleep(6 * time.Second)
		synctest.Wait()
		if got := mc.get(tk.TaskID); got.Status != mcp.StatusCancelled {
			t.Fatalf("cancelled is final: %+v", got)
		}
	})
}

// TestE38OneStore: a task created on a legacy session is served by modern tasks/get, and its
// legacy input round is answered by tasks/update: the eras share one task core.
func TestE38OneStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := modernServer(t, mockserver.Config{})
		c := h.connect()
		tk := c.createTask("work", map[string]any{"duration_ms": 1000, "input_required": true})
		mc := h.modern()
		time.Sleep(500 * time.Millisecond)
		synctest.Wait()
		got := mc.get(tk.TaskID)
		if got.Status != mcp.StatusInputRequired {
			t.Fatalf("modern view of a legacy task: %+v", got)
		}
		for k := range got.InputRequests {
			mc.ok("tasks/update", map[string]any{"taskId": tk.TaskID, "inputResponses": map[string]any{k: map[string]any{"action": "accept", "content": map[string]any{"answer": "x"}}}})
		}
		time.Sleep(500 * time.Millisecond)
		synctest.Wait()
		if lt, _ := c.get(tk.TaskID); lt.Status != mcp.StatusCompleted {
			t.Fatalf("legacy view after a modern answer: %+v", lt)
		}
	})
}

// TestEraKnownBadAnyVersion: with any_version a session may hold a version that looks
// modern (2099-01-01); its requests, which carry it in MCP-Protocol-Version, stay in the
// legacy era on a server of both eras, as on a legacy-only one.
func TestEraKnownBadAnyVersion(t *testing.T) {
	h := modernServer(t, mockserver.Config{KnownBad: mockserver.KnownBad{AnyVersion: true}})
	c := h.connect(withVersion("2099-01-01"))
	if c.version != "2099-01-01" {
		t.Fatalf("version %q", c.version)
	}
	rulePing(t, c)
	ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 0}, nil)
}
