package loadgen_test

// Interop with the official Go SDK, github.com/modelcontextprotocol/go-sdk v1.8.0: its
// mcp.Server with one tool behind its StreamableHTTPHandler, on a loopback httptest
// listener in this process. It is the one registry-reachable server that speaks 2026-07-28
// (server/discover, the _meta envelope, resultType, the SEP-2243 headers), but it has no
// Tasks at all: not the extension io.modelcontextprotocol/tasks (its ROADMAP.md lists
// SEP-1686 as to do; no tasks/* method in its source) and no 2025-11-25 capabilities.tasks.
// So these tests drive the path of a modern server without the extension: plain tools/call
// with fallback sync, refused with fallback refuse.
//
// What go-sdk v1.8.0 does, with evidence from its source
// ($(go env GOMODCACHE)/github.com/modelcontextprotocol/go-sdk@v1.8.0/mcp):
//
//   - Only the stateless HTTP handler serves 2026-07-28: StreamableServerTransport's
//     SupportsProtocolVersion accepts a version >= 2026-07-28 only when Stateless
//     (streamable.go:868-876), and server/discover lists the versions the transport
//     supports (filterSupportedVersions, server.go:962-977). Stateless, it serves both
//     eras (supportedVersions 2026-07-28 and the four session versions).
//   - Stateful (the default), it still answers a server/discover sent in 2026-07-28, with
//     HTTP 200 and a DiscoverResult whose supportedVersions do not list 2026-07-28, where
//     docs/RULES.md#e9 wants -32022 with HTTP 400. TestGoSDKStatefulDiscover pins this;
//     tasksim reads it as the -32022 it should have been and falls back to initialize.
//   - A tool whose handler returns an error answers a CallToolResult with isError
//     (ToolHandlerFor, tool.go), not a JSON-RPC error: counted failed by the sync path.
//   - A tool may answer input_required (MRTR, mrtr.go): the tool "deploy" does, and
//     TestGoSDKInputRounds holds tasksim's answers to E15 and E16.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/mcp/mcptest"
	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/metrics"
)

// gosdkName is the serverInfo name the go-sdk servers here give.
const gosdkName = "go-sdk-interop"

// gosdkArgs are the arguments of the go-sdk tool "work": it works duration_ms, honouring
// its context, and fails (a handler error) when outcome is "error".
type gosdkArgs struct {
	DurationMs int    `json:"duration_ms,omitempty"`
	Outcome    string `json:"outcome,omitempty"`
}

// gosdkTap watches what crosses the wire of a stateless go-sdk server: requests by method,
// the envelope version and extensions they declare, and every request and reply checked
// against the official schemas of 2026-07-28 (the requests are tasksim's, the replies the
// go-sdk's).
type gosdkTap struct {
	h http.Handler

	mu        sync.Mutex
	methods   map[string]int
	extension int      // requests declaring io.modelcontextprotocol/tasks
	bad       []string // schema or header problems, tasksim's and the go-sdk's
}

func (g *gosdkTap) fail(format string, args ...any) {
	if len(g.bad) < 10 {
		g.bad = append(g.bad, strings.TrimSpace(strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", " ")))
	}
}

func (g *gosdkTap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var req struct {
		Method string `json:"method"`
		ID     any    `json:"id"`
		Params struct {
			Name string `json:"name"`
			Meta struct {
				Version string `json:"io.modelcontextprotocol/protocolVersion"`
				Caps    struct {
					Extensions map[string]any `json:"extensions"`
				} `json:"io.modelcontextprotocol/clientCapabilities"`
			} `json:"_meta"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &req)
	rec := httptest.NewRecorder()
	g.h.ServeHTTP(rec, r)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())

	g.mu.Lock()
	defer g.mu.Unlock()
	if g.methods == nil {
		g.methods = map[string]int{}
	}
	g.methods[req.Method]++
	if req.Params.Meta.Version == "" {
		return // a request of 2025-11-25 (the probe's initialize): not checked here
	}
	if _, ok := req.Params.Meta.Caps.Extensions[mcp.ExtTasks]; ok {
		g.extension++
	}
	if err := mcptest.ValidateMessage2026(body); err != nil {
		g.fail("tasksim's %s request: %v", req.Method, err)
	}
	if got := r.Header.Get("Mcp-Protocol-Version"); got != req.Params.Meta.Version {
		g.fail("%s sent with MCP-Protocol-Version %q, _meta says %q (E24)", req.Method, got, req.Params.Meta.Version)
	}
	if got := r.Header.Get(mcp.HeaderMethod); got != req.Method {
		g.fail("%s sent with Mcp-Method %q (E24)", req.Method, got)
	}
	if req.Method == mcp.MethodToolsCall && r.Header.Get(mcp.HeaderName) != req.Params.Name {
		g.fail("tools/call of %q sent with Mcp-Name %q (E24)", req.Params.Name, r.Header.Get(mcp.HeaderName))
	}
	if req.ID == nil {
		return // a notification: 202, no reply
	}
	reply, err := replyOf(rec)
	if err != nil {
		g.fail("go-sdk's reply to %s: %v", req.Method, err)
		return
	}
	if err := mcptest.ValidateReply2026(req.Method, reply); err != nil {
		g.fail("go-sdk's reply to %s: %v", req.Method, err)
	}
	var meta struct {
		Result struct {
			Meta struct {
				ServerInfo *mcp.Implementation `json:"io.modelcontextprotocol/serverInfo"`
			} `json:"_meta"`
		} `json:"result"`
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(reply, &meta) == nil && meta.Error == nil &&
		(meta.Result.Meta.ServerInfo == nil || meta.Result.Meta.ServerInfo.Name != gosdkName) {
		g.fail("go-sdk's reply to %s has no serverInfo %q in _meta (E6)", req.Method, gosdkName)
	}
}

// check fails t with the problems seen, and returns the methods counted so far.
func (g *gosdkTap) check(t *testing.T) map[string]int {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, b := range g.bad {
		t.Error(b)
	}
	return maps.Clone(g.methods)
}

// replyOf is the one JSON-RPC response of a recorded reply: the body of an
// application/json reply, or the data of the SSE event that carries an id.
func replyOf(rec *httptest.ResponseRecorder) ([]byte, error) {
	body := rec.Body.Bytes()
	if !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
		return body, nil
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		var msg struct {
			ID     any    `json:"id"`
			Method string `json:"method"`
		}
		if json.Unmarshal([]byte(data), &msg) == nil && msg.ID != nil && msg.Method == "" {
			return []byte(strings.TrimSpace(data)), nil
		}
	}
	return nil, errors.New("an SSE stream (HTTP " + http.StatusText(rec.Code) + ") without a response")
}

// startGoSDK serves a go-sdk v1.8.0 server with the tool "work" on a loopback listener,
// stateless or not, and returns its endpoint and the tap in front of it.
func startGoSDK(t *testing.T, stateless bool) (string, *gosdkTap) {
	t.Helper()
	s := gosdk.NewServer(&gosdk.Implementation{Name: gosdkName, Version: "1.8.0"}, nil)
	gosdk.AddTool(s, &gosdk.Tool{Name: "work", Description: "works duration_ms, fails when outcome is error"},
		func(ctx context.Context, _ *gosdk.CallToolRequest, a gosdkArgs) (*gosdk.CallToolResult, any, error) {
			select {
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			case <-time.After(time.Duration(a.DurationMs) * time.Millisecond):
			}
			if a.Outcome == "error" {
				return nil, nil, errors.New("tool broke")
			}
			return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: "done"}}}, nil, nil
		})
	// deploy asks for a confirmation first (MRTR): done once it comes back accepted, with
	// the requestState it was given; an isError result otherwise, saying what was missing.
	gosdk.AddTool(s, &gosdk.Tool{Name: "deploy", Description: "asks for a confirmation, then deploys"},
		func(_ context.Context, req *gosdk.CallToolRequest, _ struct{}) (*gosdk.CallToolResult, any, error) {
			p := req.Params
			if len(p.InputResponses) == 0 {
				return &gosdk.CallToolResult{
					InputRequests: gosdk.InputRequestMap{"confirm": &gosdk.ElicitParams{Message: "Deploy?",
						RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}}},
					RequestState: "deploy-state-1",
				}, nil, nil
			}
			answer, _ := p.InputResponses["confirm"].(*gosdk.ElicitResult)
			switch {
			case p.RequestState != "deploy-state-1":
				return gosdkError("requestState %q, want it echoed", p.RequestState), nil, nil
			case answer == nil:
				return gosdkError("no answer to confirm in %v", p.InputResponses), nil, nil
			case answer.Action != "accept":
				return gosdkError("not confirmed: %s", answer.Action), nil, nil
			}
			return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: "deployed"}}}, nil, nil
		})
	h := gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s },
		&gosdk.StreamableHTTPOptions{Stateless: stateless})
	tap := &gosdkTap{h: h}
	var handler http.Handler = tap
	if !stateless {
		handler = h // the session's GET stream must not be buffered by the tap
	}
	srv := httptest.NewServer(handler) // 127.0.0.1, a port of the kernel's choosing
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp", tap
}

// probeGoSDK probes url as `tasksim run` does (the era found, ProbeWith) for the tool work.
func probeGoSDK(t *testing.T, url string) (*client.Target, *client.Manifest) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	target := &client.Target{
		URL:        url,
		Client:     client.NewHTTPClient(8),
		ClientInfo: mcp.Implementation{Name: "tasksim-test", Version: "1"},
	}
	t.Cleanup(target.Client.CloseIdleConnections)
	m, err := client.ProbeWith(ctx, target, client.ProbeOptions{Tool: "work", CreateTask: true})
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	return target, m
}

// runGoSDK runs cfg against target as decided in m, to the end of its grace.
func runGoSDK(t *testing.T, target *client.Target, m *client.Manifest, cfg loadgen.Config) *metrics.Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Duration+cfg.Grace+10*time.Second)
	defer cancel()
	rec := metrics.NewRecorder(1, time.Now())
	eng, err := loadgen.New(cfg, target, m, rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the run outlived duration + grace + 10 s: %v", ctx.Err())
	}
	if v := eng.Violations(); len(v) != 0 {
		t.Errorf("violations %+v, want none", v)
	}
	rec.Flush(time.Now())
	return rec.Total()
}

func gosdkConfig(args map[string]any) loadgen.Config {
	return loadgen.Config{
		Tool:     "work",
		Args:     args,
		Clients:  3,
		Duration: time.Second,
		Grace:    3 * time.Second,
		Fallback: client.FallbackSync,
		Seed:     1,
	}
}

// TestGoSDKModernWithoutExtension: the stateless go-sdk is found to speak 2026-07-28 (and
// 2025-11-25), is spoken to in 2026-07-28 since it has tasks in neither era, and takes plain
// tools/call with fallback sync: its results counted completed, or failed for an isError
// result, no task and no call declaring the extension (E39); with fallback refuse the run
// is refused before it starts. Every request tasksim sends and every reply the go-sdk
// gives validates against the schemas of 2026-07-28.
func TestGoSDKModernWithoutExtension(t *testing.T) {
	url, tap := startGoSDK(t, true)
	target, m := probeGoSDK(t, url)

	if m.Era != client.ProtocolModern || m.ProtocolVersion != mcp.Version20260728 || m.EraFallback != "" ||
		!slices.Equal(m.Eras, []string{client.ProtocolModern, client.ProtocolLegacy}) || m.EraDetection != "server/discover answered" {
		t.Errorf("era %q protocol %q eras %q detection %q fallback %q: want 2026-07-28 of both eras, told by server/discover, no fallback",
			m.Era, m.ProtocolVersion, m.Eras, m.EraDetection, m.EraFallback)
	}
	if m.Tasks.Extension || m.Tasks.Declared || m.Server.Name != gosdkName || m.SessionID || !m.Session.Stateless {
		t.Errorf("tasks %+v server %+v session %v %+v: want no extension, %s, stateless", m.Tasks, m.Server, m.SessionID, m.Session, gosdkName)
	}
	notes := strings.Join(m.Notes, "; ")
	if !strings.Contains(notes, "has tasks in neither") || !strings.Contains(notes, "does not advertise the Tasks extension") {
		t.Errorf("notes %q: want the era choice and the task not created explained", notes)
	}
	probed := tap.check(t)
	if probed[mcp.MethodServerDiscover] != 1 || probed[mcp.MethodInitialize] != 1 || probed[mcp.MethodToolsCall] != 0 {
		t.Errorf("the probe sent %v: want one server/discover, one initialize (tasks in 2025-11-25?) and no tools/call (no extension to create a task with)", probed)
	}

	if err := m.Decide(client.FallbackRefuse); err == nil || !strings.Contains(err.Error(), "does not advertise the Tasks extension") {
		t.Errorf("fallback refuse: %v, want the run refused naming the extension", err)
	}
	if err := m.Decide(client.FallbackSync); err != nil {
		t.Fatalf("decide sync: %v", err)
	}
	if m.AsTask || !strings.Contains(m.Fallback, mcp.ExtTasks) {
		t.Errorf("as_task %v fallback %q: want sync, naming the extension", m.AsTask, m.Fallback)
	}

	for _, tc := range []struct {
		name string
		args map[string]any
		want metrics.Counter
	}{
		{"completed", map[string]any{"duration_ms": 100}, metrics.TasksCompleted},
		{"isError", map[string]any{"duration_ms": 20, "outcome": "error"}, metrics.TasksFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tap.check(t)
			snap := runGoSDK(t, target, m, gosdkConfig(tc.args))
			calls := snap.RequestCount(mcp.OpToolsCall)
			if calls == 0 || snap.Counters[tc.want] != calls {
				t.Errorf("%d tools/call, %s %d: want every call counted so", calls, tc.want, snap.Counters[tc.want])
			}
			for _, c := range []metrics.Counter{metrics.TasksCreated, metrics.TasksCompleted, metrics.TasksFailed, metrics.TasksCancelled, metrics.TasksUnknown} {
				if c != tc.want && snap.Counters[c] != 0 {
					t.Errorf("%s = %d, want 0", c, snap.Counters[c])
				}
			}
			noProtocolTrouble(t, snap, nil)
			after := tap.check(t)
			for method, n := range after {
				if d := n - before[method]; d != 0 && method != mcp.MethodToolsCall {
					t.Errorf("the run sent %d %s: a run of plain calls in 2026-07-28 sends only tools/call", d, method)
				}
			}
			if d := int64(after[mcp.MethodToolsCall] - before[mcp.MethodToolsCall]); d != calls {
				t.Errorf("the go-sdk saw %d tools/call, tasksim counted %d", d, calls)
			}
		})
	}
	tap.mu.Lock()
	defer tap.mu.Unlock()
	if tap.extension != 0 {
		t.Errorf("%d requests declared %s to a server that does not advertise it (E39)", tap.extension, mcp.ExtTasks)
	}
}

// TestGoSDKStatefulDiscover: the go-sdk's default, stateful handler serves only session
// versions, yet answers a server/discover sent in 2026-07-28 with HTTP 200 and a
// DiscoverResult that does not list 2026-07-28: a finding against E9 (-32022 with HTTP 400
// wanted), pinned here. tasksim reads it as that -32022, falls back to initialize (said in
// era_fallback), and runs plain calls in 2025-11-25.
func TestGoSDKStatefulDiscover(t *testing.T) {
	url, _ := startGoSDK(t, false)

	// The finding, on the wire.
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{`+
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set(mcp.HeaderMethod, mcp.MethodServerDiscover)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	rec.Code = resp.StatusCode
	for k, v := range resp.Header {
		rec.Header()[k] = v
	}
	_, _ = io.Copy(rec.Body, resp.Body)
	resp.Body.Close()
	reply, err := replyOf(rec)
	var d struct {
		Result struct {
			SupportedVersions []string `json:"supportedVersions"`
		} `json:"result"`
	}
	if err != nil || json.Unmarshal(reply, &d) != nil {
		t.Fatalf("server/discover: HTTP %d, %v: %s", resp.StatusCode, err, rec.Body)
	}
	if resp.StatusCode != http.StatusOK || len(d.Result.SupportedVersions) == 0 || slices.Contains(d.Result.SupportedVersions, mcp.Version20260728) {
		t.Errorf("server/discover in 2026-07-28: HTTP %d, supportedVersions %q. The go-sdk v1.8.0 stateful handler answered 200 without 2026-07-28 (E9 finding); if it now refuses with -32022 the finding is fixed: update this test",
			resp.StatusCode, d.Result.SupportedVersions)
	}

	target, m := probeGoSDK(t, url)
	if m.Era != client.ProtocolLegacy || !slices.Equal(m.Eras, []string{client.ProtocolLegacy}) ||
		!strings.Contains(m.EraDetection, "do not list it (E9 wants -32022)") || !strings.Contains(m.EraFallback, m.EraDetection) {
		t.Errorf("era %q eras %q detection %q fallback %q: want 2025-11-25, the fallback said with the E9 finding", m.Era, m.Eras, m.EraDetection, m.EraFallback)
	}
	if !m.SessionID || m.Tasks.Declared || m.Server.Name != gosdkName {
		t.Errorf("session %v tasks %+v server %+v: want a session, no tasks, %s", m.SessionID, m.Tasks, m.Server, gosdkName)
	}
	if err := m.Decide(client.FallbackSync); err != nil || m.AsTask {
		t.Fatalf("decide sync: %v, as_task %v", err, m.AsTask)
	}
	snap := runGoSDK(t, target, m, gosdkConfig(map[string]any{"duration_ms": 100}))
	calls := snap.RequestCount(mcp.OpToolsCall)
	if calls == 0 || snap.Counters[metrics.TasksCompleted] != calls || snap.Counters[metrics.TasksCreated] != 0 {
		t.Errorf("%d tools/call, %d completed, %d tasks: want plain calls, all completed", calls, snap.Counters[metrics.TasksCompleted], snap.Counters[metrics.TasksCreated])
	}
	if snap.RequestCount(mcp.OpInitialize) == 0 {
		t.Error("no initialize counted: the run did not speak 2025-11-25")
	}
	noProtocolTrouble(t, snap, nil)
}

// gosdkError is an isError result saying what went wrong.
func gosdkError(format string, args ...any) *gosdk.CallToolResult {
	return &gosdk.CallToolResult{IsError: true, Content: []gosdk.Content{&gosdk.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

// TestGoSDKInputRounds: a go-sdk tool that asks for input before it runs (MRTR,
// docs/RULES.md#e15): tasksim answers each round by the input policy and retries the call
// with inputResponses and the requestState echoed (E16), every request and reply valid
// against the schemas. Accepted, every call completes in two tools/call; declined, the tool
// says so with an isError result, counted failed.
func TestGoSDKInputRounds(t *testing.T) {
	url, tap := startGoSDK(t, true)
	for _, tc := range []struct {
		name  string
		input loadgen.InputPolicy
		want  metrics.Counter
	}{
		{"accepted", loadgen.InputPolicy{Accept: 1}, metrics.TasksCompleted},
		{"declined", loadgen.InputPolicy{Decline: 1}, metrics.TasksFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target, m := probeGoSDK(t, url)
			m.Tool = "deploy"
			if err := m.Decide(client.FallbackSync); err != nil {
				t.Fatal(err)
			}
			cfg := gosdkConfig(nil)
			cfg.Tool, cfg.Input = "deploy", tc.input
			snap := runGoSDK(t, target, m, cfg)
			done := snap.Counters[tc.want]
			if done == 0 || snap.RequestCount(mcp.OpToolsCall) != 2*done || snap.Counters[metrics.Elicitations] != done {
				t.Errorf("%s %d, tools/call %d, input requests answered %d: want two calls and one answer per call",
					tc.want, done, snap.RequestCount(mcp.OpToolsCall), snap.Counters[metrics.Elicitations])
			}
			if n := snap.Counters[metrics.TasksUnknown] + snap.ErrorCount(mcp.OpToolsCall); n != 0 {
				t.Errorf("%d unknown outcomes or failed requests, want none", n)
			}
			tap.check(t)
		})
	}
}
