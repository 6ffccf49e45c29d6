package mockserver_test

// Interop with an independent MCP implementation: the Streamable HTTP client of
// github.com/mark3labs/mcp-go v1.2.1, pinned to protocol 2025-11-25, drives a real
// mockserver.Server on a loopback port. Between the two sits wireTap, an http.RoundTripper
// that records what mcp-go sends and checks every JSON-RPC message our server returns
// (JSON replies and SSE events alike) against the official 2025-11-25 schema.
//
// These tests use real time, so they assert outcomes, never timings: every wait is a bounded
// poll under a context deadline of a few seconds.
//
// What mcp-go v1.2.1 can and cannot do here, with evidence from its source
// ($(go env GOMODCACHE)/github.com/mark3labs/mcp-go@v1.2.1):
//
//   - Client.CallTool cannot return a CreateTaskResult: it decodes every tools/call reply with
//     mcp.ParseCallToolResult (client/mrtr.go callToolOnce), which fails with "content is
//     missing" when the result has no "content" (mcp/utils.go). Task-augmented calls therefore
//     go through the transport's raw SendRequest with a transport.JSONRPCRequest, and the reply
//     is decoded into mcp-go's own mcp.CreateTaskResult.
//   - Client.GetTask, WaitForTask, TaskResult, CancelTask and ListTasks (client/client.go,
//     client/task_wait.go) work against our server and are used as they are.
//   - The input_required flow works: mcp-go's Streamable HTTP transport hands a server request
//     that arrives on a POST's SSE stream to the client's ElicitationHandler and POSTs the
//     answer back (client/transport/streamable_http.go handleSSEResponse,
//     handleIncomingRequest). mcp-go's TaskStatusInputRequired comment ("not yet implemented
//     in this SDK") is about its server side only.
//   - mcp-go does not add related-task _meta to its elicitation answers by itself (R31); the
//     handler below adds it, as an application using mcp-go would have to.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	mcptransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/tasksim/tasksim/internal/mcp/mcptest"
	"github.com/tasksim/tasksim/mockserver"
)

// interopWait bounds every wait of the interop tests. It is generous because a loaded CI
// machine may be slow; no assertion depends on how long anything takes.
const interopWait = 10 * time.Second

// interopConfig is the server configuration of the interop tests: short poll intervals so
// that mcp-go's WaitForTask, which honours pollInterval (R15), polls often.
func interopConfig() mockserver.Config {
	return mockserver.Config{PollInterval: 10 * time.Millisecond, DefaultDuration: 50 * time.Millisecond}
}

// startInterop starts a server on 127.0.0.1:0 and shuts it down when the test ends.
func startInterop(t *testing.T, cfg mockserver.Config) *mockserver.Server {
	t.Helper()
	srv, err := mockserver.NewServer(cfg)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), interopWait)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("server shutdown: %v", err)
		}
	})
	return srv
}

// waitCtx returns a context that ends after interopWait or with the test.
func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), interopWait)
	t.Cleanup(cancel)
	return ctx
}

// mcpGoConn is one mcp-go client connected to a server, with the tap on its wire.
type mcpGoConn struct {
	*mcpclient.Client
	tap   *wireTap
	rawID atomic.Int64
}

// dialMCPGo connects an mcp-go Streamable HTTP client pinned to 2025-11-25, with the bearer
// token if one is given, and initializes it. The client is closed (DELETE) when the test ends.
// mcpclient.WithProtocolVersion pins the version: without it mcp-go v1.2.1 first probes
// for 2026-07-28 with server/discover (see TestInteropUnpinnedClient).
func dialMCPGo(t *testing.T, srv *mockserver.Server, token string, opts ...mcpclient.ClientOption) (*mcpGoConn, *mcpgo.InitializeResult) {
	t.Helper()
	opts = append([]mcpclient.ClientOption{mcpclient.WithProtocolVersion(mcpgo.ProtocolVersion20251125)}, opts...)
	c, err := newMCPGo(t, srv, token, opts...)
	if err != nil {
		t.Fatalf("mcp-go client: %v", err)
	}
	res, err := c.Initialize(waitCtx(t), mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{
		ClientInfo: mcpgo.Implementation{Name: "tasksim-interop", Version: "1"},
	}})
	if err != nil {
		t.Fatalf("mcp-go Initialize: %v", err)
	}
	return c, res
}

// newMCPGo builds and starts an mcp-go client without initializing it.
func newMCPGo(t *testing.T, srv *mockserver.Server, token string, opts ...mcpclient.ClientOption) (*mcpGoConn, error) {
	t.Helper()
	base := http.DefaultTransport.(*http.Transport).Clone()
	tap := &wireTap{base: base}
	topts := []mcptransport.StreamableHTTPCOption{
		mcptransport.WithHTTPBasicClient(&http.Client{Transport: tap}),
		mcptransport.WithHTTPLogger(slog.New(slog.DiscardHandler)),
	}
	if token != "" {
		topts = append(topts, mcptransport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	}
	tr, err := mcptransport.NewStreamableHTTP(srv.URL, topts...)
	if err != nil {
		return nil, err
	}
	c := &mcpGoConn{Client: mcpclient.NewClient(tr, opts...), tap: tap}
	// Cleanups run last-in first-out: the client closes (DELETE), then the tap reports.
	t.Cleanup(func() {
		for _, p := range tap.problemList() {
			t.Errorf("wire: %s", p)
		}
		checked, peer := tap.notes()
		for _, n := range peer {
			t.Logf("wire (mcp-go, not a failure of ours): %s", n)
		}
		t.Logf("wire: %d server messages checked against the 2025-11-25 schema", checked)
		base.CloseIdleConnections()
	})
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Start(waitCtx(t)); err != nil {
		return nil, err
	}
	return c, nil
}

// rawRequest sends one JSON-RPC request through mcp-go's transport, for what its typed API
// cannot express. The ids ("raw-N") never collide with the client's integer ids (H11).
func (c *mcpGoConn) rawRequest(ctx context.Context, method string, params any) (*mcptransport.JSONRPCResponse, error) {
	return c.GetTransport().SendRequest(ctx, mcptransport.JSONRPCRequest{
		JSONRPC: mcpgo.JSONRPC_VERSION,
		ID:      mcpgo.NewRequestId(fmt.Sprintf("raw-%d", c.rawID.Add(1))),
		Method:  method,
		Params:  params,
	})
}

// callAsTask sends a task-augmented tools/call (R11) and decodes the reply into mcp-go's
// CreateTaskResult.
func (c *mcpGoConn) callAsTask(t *testing.T, tool string, args map[string]any) mcpgo.Task {
	t.Helper()
	resp, err := c.rawRequest(waitCtx(t), string(mcpgo.MethodToolsCall), mcpgo.CallToolParams{
		Name: tool, Arguments: args, Task: &mcpgo.TaskParams{},
	})
	if err != nil {
		t.Fatalf("tools/call %s as a task: %v", tool, err)
	}
	if resp.Error != nil {
		t.Fatalf("tools/call %s as a task: JSON-RPC error %d: %s", tool, resp.Error.Code, resp.Error.Message)
	}
	var ctr mcpgo.CreateTaskResult
	if err := json.Unmarshal(resp.Result, &ctr); err != nil || ctr.Task.TaskId == "" {
		t.Fatalf("tools/call %s as a task: not a CreateTaskResult (%v): %s", tool, err, resp.Result)
	}
	return ctr.Task
}

// waitFor polls tasks/get with mcp-go until the task reaches one of want or the wait ends.
func (c *mcpGoConn) waitFor(t *testing.T, id string, want ...mcpgo.TaskStatus) *mcpgo.GetTaskResult {
	t.Helper()
	ctx := waitCtx(t)
	var last *mcpgo.GetTaskResult
	for ctx.Err() == nil {
		got, err := c.GetTask(ctx, mcpgo.GetTaskRequest{Params: mcpgo.GetTaskParams{TaskId: id}})
		if err != nil {
			t.Fatalf("tasks/get %s: %v", id, err)
		}
		if slices.Contains(want, got.Status) {
			return got
		}
		if got.Status.IsTerminal() {
			t.Fatalf("task %s ended %s (%q), want %v", id, got.Status, got.StatusMessage, want)
		}
		last = got
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Millisecond):
		}
	}
	t.Fatalf("task %s never reached %v within %v; last seen %+v", id, want, interopWait, last)
	return nil
}

// relatedTaskID reads io.modelcontextprotocol/related-task from mcp-go's parsed _meta.
func relatedTaskID(m *mcpgo.Meta) string {
	if m == nil {
		return ""
	}
	rt, _ := m.AdditionalFields[mcpgo.RelatedTaskMetaKey].(map[string]any)
	id, _ := rt["taskId"].(string)
	return id
}

func firstText(content []mcpgo.Content) string {
	for _, c := range content {
		if tc, ok := mcpgo.AsTextContent(c); ok {
			return tc.Text
		}
	}
	return ""
}

// TestInteropInitializeAndTools checks the handshake (H1-H3) and tool negotiation
// (docs/RULES.md#capabilities) as mcp-go sees them.
func TestInteropInitializeAndTools(t *testing.T) {
	srv := startInterop(t, interopConfig())
	c, res := dialMCPGo(t, srv, "")
	ctx := waitCtx(t)

	if res.ProtocolVersion != mcpgo.ProtocolVersion20251125 || c.ProtocolVersion() != mcpgo.ProtocolVersion20251125 {
		t.Errorf("negotiated %q (client says %q), want 2025-11-25", res.ProtocolVersion, c.ProtocolVersion())
	}
	if c.GetSessionId() == "" {
		t.Error("mcp-go holds no session id after initialize (H2)")
	}
	// The capability leaves, as mcp-go parsed them (docs/RULES.md#capabilities). Without tokens
	// there is no authorization context, so tasks.list is not declared (R54).
	tc := c.GetServerCapabilities().Tasks
	switch {
	case tc == nil:
		t.Fatal("capabilities.tasks missing (R1)")
	case tc.Cancel == nil:
		t.Error("capabilities.tasks.cancel missing")
	case tc.Requests == nil || tc.Requests.Tools == nil || tc.Requests.Tools.Call == nil:
		t.Error("capabilities.tasks.requests.tools.call missing")
	case tc.List != nil:
		t.Error("capabilities.tasks.list declared without an authorization context (R54)")
	}
	if _, err := c.ListTasks(ctx, mcpgo.ListTasksRequest{}); !errors.Is(err, mcpgo.ErrMethodNotFound) {
		t.Errorf("tasks/list without tasks.list: err %v, want -32601", err)
	}

	tools, err := c.ListTools(ctx, mcpgo.ListToolsRequest{})
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	got := map[string]mcpgo.TaskSupport{}
	for _, tool := range tools.Tools {
		if tool.Execution != nil {
			got[tool.Name] = tool.Execution.TaskSupport
		}
	}
	want := map[string]mcpgo.TaskSupport{
		mockserver.ToolWork:     mcpgo.TaskSupportOptional,
		mockserver.ToolWorkTask: mcpgo.TaskSupportRequired,
		mockserver.ToolWorkSync: mcpgo.TaskSupportForbidden,
	}
	for name, ts := range want {
		if got[name] != ts {
			t.Errorf("tool %s: taskSupport %q as parsed by mcp-go, want %q", name, got[name], ts)
		}
	}

	// Plain calls through mcp-go's typed CallTool.
	call := func(name string, task *mcpgo.TaskParams) (*mcpgo.CallToolResult, error) {
		return c.CallTool(ctx, mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{
			Name: name, Arguments: map[string]any{"duration_ms": 50}, Task: task,
		}})
	}
	r, err := call(mockserver.ToolWorkSync, nil)
	if err != nil || r.IsError || !strings.Contains(firstText(r.Content), "completed") {
		t.Errorf("work_sync: %+v, %v; want a completed CallToolResult", r, err)
	}
	if _, err := call(mockserver.ToolWorkTask, nil); !errors.Is(err, mcpgo.ErrMethodNotFound) {
		t.Errorf("work_task without task: err %v, want -32601 (R10)", err)
	}
	if _, err := call(mockserver.ToolWorkSync, &mcpgo.TaskParams{}); !errors.Is(err, mcpgo.ErrMethodNotFound) {
		t.Errorf("work_sync with task: err %v, want -32601 (R8)", err)
	}
	// mcp-go limitation (see the file comment): the server creates the task, and the tap has
	// already checked the reply against CreateTaskResult, but CallTool cannot decode it.
	if _, err := call(mockserver.ToolWork, &mcpgo.TaskParams{}); err == nil {
		t.Log("mcp-go's CallTool now decodes a CreateTaskResult; callAsTask could use it")
	} else {
		t.Logf("mcp-go v1.2.1 CallTool on a CreateTaskResult: %v (expected, see the file comment)", err)
	}

	// What went over the wire: mcp-go asked for 2025-11-25 in initialize, our server echoed
	// it, and every later request carried it in MCP-Protocol-Version (H1, H3).
	ex := c.tap.exchanges()
	if len(ex) < 3 {
		t.Fatalf("tap saw %d exchanges, want initialize, initialized and more", len(ex))
	}
	if ex[0].rpcMethod != "initialize" || ex[0].initVersion != mcpgo.ProtocolVersion20251125 || ex[0].replyVersion != mcpgo.ProtocolVersion20251125 {
		t.Errorf("initialize: sent %q, server echoed %q; want 2025-11-25 both ways", ex[0].initVersion, ex[0].replyVersion)
	}
	for _, e := range ex[1:] {
		if e.protocolHeader != mcpgo.ProtocolVersion20251125 {
			t.Errorf("%s %s: MCP-Protocol-Version %q, want 2025-11-25 (H3)", e.httpMethod, e.rpcMethod, e.protocolHeader)
		}
		if e.session != c.GetSessionId() {
			t.Errorf("%s %s: session %q, want %q (H2)", e.httpMethod, e.rpcMethod, e.session, c.GetSessionId())
		}
	}
}

// TestInteropUnpinnedClient connects mcp-go with its defaults: it prefers 2026-07-28 and
// probes with server/discover (client/protocol.go negotiateModern), which our 2025-11-25
// server answers 400 for want of a session (H2); mcp-go then falls back to initialize and
// settles on 2025-11-25 with Tasks.
func TestInteropUnpinnedClient(t *testing.T) {
	srv := startInterop(t, interopConfig())
	c, err := newMCPGo(t, srv, "")
	if err != nil {
		t.Fatalf("mcp-go client: %v", err)
	}
	res, err := c.Initialize(waitCtx(t), mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{
		ClientInfo: mcpgo.Implementation{Name: "tasksim-interop", Version: "1"},
	}})
	if err != nil {
		t.Fatalf("mcp-go Initialize with default options: %v", err)
	}
	if res.ProtocolVersion != mcpgo.ProtocolVersion20251125 || c.GetServerCapabilities().Tasks == nil {
		t.Errorf("negotiated %q with tasks %v, want 2025-11-25 with Tasks", res.ProtocolVersion, c.GetServerCapabilities().Tasks)
	}
	ex := c.tap.exchanges()
	i := slices.IndexFunc(ex, func(e exchange) bool { return e.rpcMethod == "initialize" })
	if i < 0 || ex[i].initVersion != mcpgo.ProtocolVersion20251125 || ex[i].replyVersion != mcpgo.ProtocolVersion20251125 {
		t.Fatalf("no initialize for 2025-11-25 on the wire: %+v", ex)
	}
	for _, e := range ex[:i] {
		if e.rpcMethod != string(mcpgo.MethodServerDiscover) || e.status != http.StatusBadRequest {
			t.Errorf("before initialize: %s %s got HTTP %d, want server/discover rejected with 400 (H2)", e.httpMethod, e.rpcMethod, e.status)
		}
	}
	if _, err := c.ListTools(waitCtx(t), mcpgo.ListToolsRequest{}); err != nil {
		t.Errorf("ListTools after the fallback: %v", err)
	}
}

// TestInteropTaskLifecycle creates tasks through mcp-go's transport and follows them with
// mcp-go's task API to each ending (R11, R13, R17, R19, R50, R51).
func TestInteropTaskLifecycle(t *testing.T) {
	srv := startInterop(t, interopConfig())
	c, _ := dialMCPGo(t, srv, "")
	ctx := waitCtx(t)

	tk := c.callAsTask(t, mockserver.ToolWorkTask, map[string]any{"duration_ms": 100})
	if tk.Status != mcpgo.TaskStatusWorking {
		t.Errorf("new task status %q, want working (R13)", tk.Status)
	}
	if tk.TTL == nil || *tk.TTL <= 0 || tk.PollInterval == nil || *tk.PollInterval != 10 {
		t.Errorf("new task ttl %v pollInterval %v; want a positive ttl and pollInterval 10", tk.TTL, tk.PollInterval)
	}
	done, err := c.WaitForTask(ctx, mcpgo.GetTaskRequest{Params: mcpgo.GetTaskParams{TaskId: tk.TaskId}}, 5*time.Millisecond)
	if err != nil {
		t.Fatalf("WaitForTask: %v", err)
	}
	if done.Status != mcpgo.TaskStatusCompleted || done.TaskId != tk.TaskId || done.CreatedAt != tk.CreatedAt || done.LastUpdatedAt == "" {
		t.Errorf("finished task %+v, want completed with the same id and createdAt", done.Task)
	}
	res, err := c.TaskResult(ctx, mcpgo.TaskResultRequest{Params: mcpgo.TaskResultParams{TaskId: tk.TaskId}})
	if err != nil {
		t.Fatalf("TaskResult: %v", err)
	}
	if res.IsError || !strings.Contains(firstText(res.Content), "completed") {
		t.Errorf("tasks/result %+v, want the completed CallToolResult (R17)", res)
	}
	if got := relatedTaskID(res.Meta); got != tk.TaskId {
		t.Errorf("tasks/result related-task %q, want %q (R19)", got, tk.TaskId)
	}

	// tasks/result on a working task blocks until the task ends (R18); mcp-go just waits.
	tk = c.callAsTask(t, mockserver.ToolWork, map[string]any{"duration_ms": 150})
	res, err = c.TaskResult(ctx, mcpgo.TaskResultRequest{Params: mcpgo.TaskResultParams{TaskId: tk.TaskId}})
	if err != nil || res.IsError || relatedTaskID(res.Meta) != tk.TaskId {
		t.Errorf("blocking tasks/result: %+v, %v; want the completed result (R18)", res, err)
	}

	// isError:true ends failed with a diagnostic statusMessage, and tasks/result is still a
	// success reply holding that result (R50, R51, docs/RULES.md#state-machine).
	tk = c.callAsTask(t, mockserver.ToolWork, map[string]any{"duration_ms": 50, "outcome": "failed"})
	failed := c.waitFor(t, tk.TaskId, mcpgo.TaskStatusFailed)
	if failed.StatusMessage == "" {
		t.Error("failed task has no statusMessage (R50)")
	}
	res, err = c.TaskResult(ctx, mcpgo.TaskResultRequest{Params: mcpgo.TaskResultParams{TaskId: tk.TaskId}})
	if err != nil || !res.IsError {
		t.Errorf("tasks/result of a failed task: %+v, %v; want a result with isError true", res, err)
	}

	// A JSON-RPC error outcome comes back from tasks/result as that same error (R17).
	tk = c.callAsTask(t, mockserver.ToolWork, map[string]any{"duration_ms": 50, "outcome": "error"})
	c.waitFor(t, tk.TaskId, mcpgo.TaskStatusFailed)
	if _, err := c.TaskResult(ctx, mcpgo.TaskResultRequest{Params: mcpgo.TaskResultParams{TaskId: tk.TaskId}}); !errors.Is(err, mcpgo.ErrInternalError) {
		t.Errorf("tasks/result of an error outcome: err %v, want -32603 (R17)", err)
	}

	// Unknown ids are -32602 for get, result and cancel (R46).
	const unknown = "00000000000000000000000000000000"
	if _, err := c.GetTask(ctx, mcpgo.GetTaskRequest{Params: mcpgo.GetTaskParams{TaskId: unknown}}); !errors.Is(err, mcpgo.ErrInvalidParams) {
		t.Errorf("tasks/get of an unknown id: err %v, want -32602 (R46)", err)
	}
	if _, err := c.TaskResult(ctx, mcpgo.TaskResultRequest{Params: mcpgo.TaskResultParams{TaskId: unknown}}); !errors.Is(err, mcpgo.ErrInvalidParams) {
		t.Errorf("tasks/result of an unknown id: err %v, want -32602 (R46)", err)
	}
}

// TestInteropCancel cancels a long task with mcp-go's CancelTask (R27, R28) and checks that a
// second cancel is -32602 (R26).
func TestInteropCancel(t *testing.T) {
	srv := startInterop(t, interopConfig())
	c, _ := dialMCPGo(t, srv, "")
	ctx := waitCtx(t)

	// The task would run for a minute; it is cancelled long before, and Shutdown stops it.
	tk := c.callAsTask(t, mockserver.ToolWork, map[string]any{"duration_ms": 60_000})
	cancelled, err := c.CancelTask(ctx, mcpgo.CancelTaskRequest{Params: mcpgo.CancelTaskParams{TaskId: tk.TaskId}})
	if err != nil {
		t.Fatalf("CancelTask: %v", err)
	}
	if cancelled.Status != mcpgo.TaskStatusCancelled || cancelled.TaskId != tk.TaskId {
		t.Errorf("tasks/cancel returned %+v, want the task already cancelled (R27)", cancelled.Task)
	}
	got, err := c.GetTask(ctx, mcpgo.GetTaskRequest{Params: mcpgo.GetTaskParams{TaskId: tk.TaskId}})
	if err != nil || got.Status != mcpgo.TaskStatusCancelled {
		t.Errorf("tasks/get after cancel: %+v, %v; want cancelled (R28)", got, err)
	}

	// The second cancel, typed and raw: the code must be exactly -32602 (R26).
	if _, err := c.CancelTask(ctx, mcpgo.CancelTaskRequest{Params: mcpgo.CancelTaskParams{TaskId: tk.TaskId}}); !errors.Is(err, mcpgo.ErrInvalidParams) {
		t.Errorf("second CancelTask: err %v, want -32602 (R26)", err)
	}
	resp, err := c.rawRequest(ctx, string(mcpgo.MethodTasksCancel), mcpgo.CancelTaskParams{TaskId: tk.TaskId})
	if err != nil || resp.Error == nil || resp.Error.Code != mcpgo.INVALID_PARAMS {
		t.Errorf("second raw tasks/cancel: %+v, %v; want error -32602 (R26)", resp, err)
	}

	// tasks/result of a cancelled task is unspecified (docs/RULES.md#gap-1); tasksim answers
	// with an isError result that still carries related-task _meta.
	res, err := c.TaskResult(ctx, mcpgo.TaskResultRequest{Params: mcpgo.TaskResultParams{TaskId: tk.TaskId}})
	if err != nil || !res.IsError || relatedTaskID(res.Meta) != tk.TaskId {
		t.Errorf("tasks/result of a cancelled task: %+v, %v; want an isError result with related-task _meta", res, err)
	}
}

// TestInteropTenants binds tasks to bearer-token tenants (R52, R53) and pages tasks/list with
// mcp-go's cursor-following ListTasks (R22-R25).
func TestInteropTenants(t *testing.T) {
	cfg := interopConfig()
	cfg.Tokens = map[string]string{"tok-alice": "alice", "tok-bob": "bob"}
	cfg.ListPageSize = 2
	srv := startInterop(t, cfg)
	alice, _ := dialMCPGo(t, srv, "tok-alice")
	bob, _ := dialMCPGo(t, srv, "tok-bob")
	ctx := waitCtx(t)

	if tc := alice.GetServerCapabilities().Tasks; tc == nil || tc.List == nil {
		t.Error("capabilities.tasks.list missing although tasks are bound to tenants (R54)")
	}
	for _, e := range alice.tap.exchanges() {
		if e.auth != "Bearer tok-alice" {
			t.Errorf("%s %s: Authorization %q, want the bearer token on every request", e.httpMethod, e.rpcMethod, e.auth)
		}
	}

	var mine []string
	for range 3 {
		mine = append(mine, alice.callAsTask(t, mockserver.ToolWork, map[string]any{"duration_ms": 50}).TaskId)
	}
	// With a page size of 2 the first page must point at the next one (R23).
	page, err := alice.ListTasksByPage(ctx, mcpgo.ListTasksRequest{})
	if err != nil || len(page.Tasks) != 2 || page.NextCursor == "" {
		t.Errorf("first tasks/list page: %+v, %v; want 2 tasks and a nextCursor (R23)", page, err)
	}
	all, err := alice.ListTasks(ctx, mcpgo.ListTasksRequest{})
	if err != nil {
		t.Fatalf("alice ListTasks: %v", err)
	}
	var listed []string
	for _, tk := range all.Tasks {
		listed = append(listed, tk.TaskId)
	}
	slices.Sort(listed)
	want := slices.Sorted(slices.Values(mine))
	if !slices.Equal(listed, want) {
		t.Errorf("alice lists %v, want her tasks %v (R25)", listed, want)
	}

	// Bob sees none of them, and cannot get, fetch or cancel them (R53): -32602, as for an
	// unknown id, so that existence does not leak (docs/RULES.md#gap-11).
	theirs, err := bob.ListTasks(ctx, mcpgo.ListTasksRequest{})
	if err != nil {
		t.Fatalf("bob ListTasks: %v", err)
	}
	for _, tk := range theirs.Tasks {
		if slices.Contains(mine, tk.TaskId) {
			t.Errorf("bob lists alice's task %s (R53)", tk.TaskId)
		}
	}
	if _, err := bob.GetTask(ctx, mcpgo.GetTaskRequest{Params: mcpgo.GetTaskParams{TaskId: mine[0]}}); !errors.Is(err, mcpgo.ErrInvalidParams) {
		t.Errorf("bob tasks/get of alice's task: err %v, want -32602 (R53)", err)
	}
	if _, err := bob.TaskResult(ctx, mcpgo.TaskResultRequest{Params: mcpgo.TaskResultParams{TaskId: mine[0]}}); !errors.Is(err, mcpgo.ErrInvalidParams) {
		t.Errorf("bob tasks/result of alice's task: err %v, want -32602 (R53)", err)
	}
	if _, err := bob.CancelTask(ctx, mcpgo.CancelTaskRequest{Params: mcpgo.CancelTaskParams{TaskId: mine[1]}}); !errors.Is(err, mcpgo.ErrInvalidParams) {
		t.Errorf("bob tasks/cancel of alice's task: err %v, want -32602 (R53)", err)
	}
	// Bob's failed cancel left alice's task alone.
	if got, err := alice.WaitForTask(ctx, mcpgo.GetTaskRequest{Params: mcpgo.GetTaskParams{TaskId: mine[1]}}, 5*time.Millisecond); err != nil || got.Status != mcpgo.TaskStatusCompleted {
		t.Errorf("alice's task after bob's cancel: %+v, %v; want completed", got, err)
	}

	// A client without a token is turned away with 401 (H10), which mcp-go reports as such.
	anon, err := newMCPGo(t, srv, "", mcpclient.WithProtocolVersion(mcpgo.ProtocolVersion20251125))
	if err != nil {
		t.Fatalf("mcp-go client: %v", err)
	}
	if _, err := anon.Initialize(ctx, mcpgo.InitializeRequest{}); !errors.Is(err, mcptransport.ErrAuthorizationRequired) {
		t.Errorf("initialize without a token: err %v, want mcp-go's ErrAuthorizationRequired", err)
	}
}

// elicitor is an mcp-go ElicitationHandler that answers every request with action and
// records what it was asked.
type elicitor struct {
	action mcpgo.ElicitationResponseAction
	mu     sync.Mutex
	seen   []mcpgo.ElicitationRequest
}

func (e *elicitor) Elicit(_ context.Context, req mcpgo.ElicitationRequest) (*mcpgo.ElicitationResult, error) {
	e.mu.Lock()
	e.seen = append(e.seen, req)
	e.mu.Unlock()
	res := &mcpgo.ElicitationResult{ElicitationResponse: mcpgo.ElicitationResponse{Action: e.action}}
	if e.action == mcpgo.ElicitationResponseActionAccept {
		res.Content = map[string]any{"answer": "EMEA"}
	}
	// R31: the answer belongs to the task's work, so it carries related-task _meta.
	if id := relatedTaskID(req.Params.Meta); id != "" {
		res.Meta = mcpgo.WithRelatedTask(id)
	}
	return res, nil
}

func (e *elicitor) requests() []mcpgo.ElicitationRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.seen)
}

// TestInteropElicitation runs the input_required flow (docs/RULES.md#input-required-flow) with
// mcp-go's elicitation handler: the client sees input_required, calls tasks/result at once (R37),
// answers the elicitation/create that arrives on that stream, and gets the final payload on it.
func TestInteropElicitation(t *testing.T) {
	srv := startInterop(t, interopConfig())
	for _, tc := range []struct {
		action mcpgo.ElicitationResponseAction
		want   mcpgo.TaskStatus
	}{
		{mcpgo.ElicitationResponseActionAccept, mcpgo.TaskStatusCompleted},
		{mcpgo.ElicitationResponseActionDecline, mcpgo.TaskStatusFailed},
	} {
		t.Run(string(tc.action), func(t *testing.T) {
			h := &elicitor{action: tc.action}
			c, _ := dialMCPGo(t, srv, "", mcpclient.WithElicitationHandler(h))
			ctx := waitCtx(t)

			tk := c.callAsTask(t, mockserver.ToolWork, map[string]any{"duration_ms": 100, "input_required": true})
			c.waitFor(t, tk.TaskId, mcpgo.TaskStatusInputRequired) // R35
			res, err := c.TaskResult(ctx, mcpgo.TaskResultRequest{Params: mcpgo.TaskResultParams{TaskId: tk.TaskId}})
			if err != nil {
				t.Fatalf("tasks/result through the input round: %v", err)
			}
			if relatedTaskID(res.Meta) != tk.TaskId || res.IsError != (tc.want == mcpgo.TaskStatusFailed) {
				t.Errorf("tasks/result %+v; want isError %v and related-task %s", res, tc.want == mcpgo.TaskStatusFailed, tk.TaskId)
			}
			got := h.requests()
			if len(got) != 1 {
				t.Fatalf("the handler was asked %d times, want once", len(got))
			}
			if p := got[0].Params; p.Mode != mcpgo.ElicitationModeForm || relatedTaskID(p.Meta) != tk.TaskId || !strings.Contains(p.Message, tk.TaskId) {
				t.Errorf("elicitation/create params %+v; want form mode with related-task %s (R36)", p, tk.TaskId)
			}
			end, err := c.GetTask(ctx, mcpgo.GetTaskRequest{Params: mcpgo.GetTaskParams{TaskId: tk.TaskId}})
			if err != nil || end.Status != tc.want {
				t.Errorf("task after the %s answer: %+v, %v; want %s", tc.action, end, err, tc.want)
			}
			// The elicitation request travelled on the tasks/result stream, not the GET one.
			var sawStream bool
			for _, e := range c.tap.exchanges() {
				sawStream = sawStream || (e.rpcMethod == "tasks/result" && e.contentType == "text/event-stream")
			}
			if !sawStream {
				t.Error("tasks/result on an input_required task was not answered with an SSE stream")
			}
		})
	}
}

// wireTap records mcp-go's HTTP requests and checks our server's replies against the schema.
type wireTap struct {
	base http.RoundTripper

	mu        sync.Mutex
	ex        []exchange
	checked   int      // server messages validated against the schema
	problems  []string // our server's: reported as test errors
	peerNotes []string // mcp-go's messages that fail the schema: logged, not failed
}

// exchange is one HTTP request as mcp-go sent it and how the server answered.
type exchange struct {
	httpMethod     string
	rpcMethod      string // "" for GET, DELETE and client responses
	protocolHeader string // MCP-Protocol-Version sent
	session        string // Mcp-Session-Id sent
	auth           string // Authorization sent
	initVersion    string // params.protocolVersion of an initialize request
	status         int
	contentType    string
	replyVersion   string // result.protocolVersion of an initialize reply
}

func (w *wireTap) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	out := req.Clone(req.Context())
	if body != nil {
		out.Body = io.NopCloser(bytes.NewReader(body))
	}
	var peek struct {
		Method string `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &peek)
	if peek.Method == "" && len(body) > 0 { // mcp-go's answer to a server request
		if err := mcptest.ValidateMessage(body); err != nil {
			w.mu.Lock()
			w.peerNotes = append(w.peerNotes, fmt.Sprintf("mcp-go sent a message that fails the schema: %v", err))
			w.mu.Unlock()
		}
	}
	e := exchange{
		httpMethod:     req.Method,
		rpcMethod:      peek.Method,
		protocolHeader: req.Header.Get("Mcp-Protocol-Version"),
		session:        req.Header.Get("Mcp-Session-Id"),
		auth:           req.Header.Get("Authorization"),
	}
	if peek.Method == "initialize" {
		e.initVersion = peek.Params.ProtocolVersion
	}
	resp, err := w.base.RoundTrip(out)
	if err != nil {
		return nil, err
	}
	e.status = resp.StatusCode
	e.contentType, _, _ = mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case e.contentType == "application/json":
		b, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			return nil, err
		}
		resp.Body = io.NopCloser(bytes.NewReader(b))
		w.checkReply(e.rpcMethod, b)
		if peek.Method == "initialize" {
			var r struct {
				Result struct {
					ProtocolVersion string `json:"protocolVersion"`
				} `json:"result"`
			}
			_ = json.Unmarshal(b, &r)
			e.replyVersion = r.Result.ProtocolVersion
		}
	case e.contentType == "text/event-stream":
		resp.Body = &sseTap{rc: resp.Body, w: w, method: e.rpcMethod}
	case resp.StatusCode >= 400:
		w.problem("%s %s: HTTP %d without a JSON body", req.Method, e.rpcMethod, resp.StatusCode)
	}
	w.mu.Lock()
	w.ex = append(w.ex, e)
	w.mu.Unlock()
	return resp, nil
}

// checkReply validates one JSON-RPC message from the server: a reply to method, or, when
// it carries a method, a server request or notification.
func (w *wireTap) checkReply(method string, b []byte) {
	var peek struct {
		Method *string `json:"method"`
	}
	_ = json.Unmarshal(b, &peek)
	var err error
	if peek.Method != nil || method == "" {
		err = mcptest.ValidateMessage(b)
	} else {
		err = mcptest.ValidateReply(method, b)
	}
	w.mu.Lock()
	w.checked++
	w.mu.Unlock()
	if err != nil {
		w.problem("server message in reply to %q fails the 2025-11-25 schema: %v", method, err)
	}
}

func (w *wireTap) problem(format string, args ...any) {
	w.mu.Lock()
	w.problems = append(w.problems, fmt.Sprintf(format, args...))
	w.mu.Unlock()
}

func (w *wireTap) problemList() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.problems)
}

func (w *wireTap) notes() (checked int, peer []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.checked, slices.Clone(w.peerNotes)
}

func (w *wireTap) exchanges() []exchange {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.ex)
}

// sseTap passes an SSE body through to mcp-go and validates each event's data as it goes.
type sseTap struct {
	rc     io.ReadCloser
	w      *wireTap
	method string
	buf    []byte
}

func (s *sseTap) Read(p []byte) (int, error) {
	n, err := s.rc.Read(p)
	s.buf = append(s.buf, p[:n]...)
	for {
		i := bytes.Index(s.buf, []byte("\n\n"))
		if i < 0 {
			break
		}
		var data []byte
		for line := range strings.SplitSeq(string(s.buf[:i]), "\n") {
			if v, ok := strings.CutPrefix(line, "data:"); ok {
				data = append(data, strings.TrimPrefix(v, " ")...)
			}
		}
		s.buf = s.buf[i+2:]
		if len(data) > 0 { // an empty data field is the priming event (H5)
			s.w.checkReply(s.method, data)
		}
	}
	return n, err
}

func (s *sseTap) Close() error { return s.rc.Close() }
