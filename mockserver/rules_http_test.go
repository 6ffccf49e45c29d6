package mockserver_test

// Tests of the Streamable HTTP rules H1-H11 of docs/RULES.md, as the mock server
// must obey them (R41).

import (
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/mcp/mcptest"
	"github.com/tasksim/tasksim/mockserver"
)

// ruleInit POSTs initialize for protocol version v with client capabilities caps (JSON) and
// returns the validated reply and the MCP-Session-Id of the response.
func ruleInit(t testing.TB, h *harness, token, v, caps string) (reply, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":` + strconv.Quote(v) +
		`,"capabilities":` + caps + `,"clientInfo":{"name":"rules","version":"1"}}}`
	mcptest.Must(t, mcptest.ValidateMessage([]byte(body)))
	status, hdr, b := ruleRaw(t, h, ruleInitRequest(body, token), "initialize")
	if status != http.StatusOK {
		t.Fatalf("initialize: HTTP %d: %s", status, b)
	}
	return decodeReply(t, "initialize", b), hdr.Get("Mcp-Session-Id")
}

// ruleInitRequest builds an initialize POST without a session.
func ruleInitRequest(body, token string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

// ruleInitBody is a valid initialize request for 2025-11-25.
const ruleInitBody = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"rules","version":"1"}}}`

// ruleClient returns a client on session sid with negotiated version v, after sending
// notifications/initialized (which must get 202).
func ruleClient(t testing.TB, h *harness, sid, v, token string) *client {
	t.Helper()
	c := &client{h: h, sid: sid, version: v, token: token, accept: "application/json, text/event-stream"}
	if resp := c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.Status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: HTTP %d", resp.Status)
	}
	return c
}

// ruleRejected fails unless req gets HTTP status want with a JSON-RPC error body whose
// message mentions every msg.
func ruleRejected(t testing.TB, h *harness, req *http.Request, want int, msg ...string) http.Header {
	t.Helper()
	status, hdr, body := ruleRaw(t, h, req, "rejected")
	if status != want {
		t.Fatalf("%s: HTTP %d, want %d: %s", req.Method, status, want, body)
	}
	ruleErr(t, reply{Raw: body, Err: ruleRawErr(t, body)}, mcp.CodeInvalidRequest, msg...)
	return hdr
}

// TestH1 checks H1, docs/RULES.md#h1: Initialization (`basic/lifecycle.mdx`): the client POSTs
// `initialize` with its version, capabilities and `clientInfo`; the server echoes a version it
// supports or offers its newest; the client then sends `notifications/initialized` (answered 202).
// Before that, only `ping` (and server logging) may flow.
func TestH1(t *testing.T) {
	// Only a 2025-11-25 session gets the tasks capability; elsewhere tasks/* are unknown and task
	// is ignored (R4).
	tests := []struct {
		name  string
		ask   string
		want  string
		tasks bool
	}{
		{name: "2025-11-25", ask: "2025-11-25", want: "2025-11-25", tasks: true},
		{name: "2025-06-18", ask: "2025-06-18", want: "2025-06-18"},
		{name: "2025-03-26", ask: "2025-03-26", want: "2025-03-26"},
		{name: "2024-11-05", ask: "2024-11-05", want: "2024-11-05"},
		{name: "unknown version", ask: "2099-01-01", want: "2025-11-25", tasks: true},
		{name: "not a version", ask: "latest", want: "2025-11-25", tasks: true},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h := newHarness(t, mockserver.Config{})
			r, sid := ruleInit(t, h, "", tc.ask, `{"elicitation":{}}`)
			var res struct {
				ProtocolVersion string                     `json:"protocolVersion"`
				Capabilities    map[string]json.RawMessage `json:"capabilities"`
				ServerInfo      mcp.Implementation         `json:"serverInfo"`
			}
			_ = json.Unmarshal(ruleOK(t, r), &res)
			if res.ProtocolVersion != tc.want || res.ServerInfo.Name != "tasksim-mock" || sid == "" {
				t.Fatalf("protocolVersion %q, serverInfo %+v, session %q; want %q", res.ProtocolVersion, res.ServerInfo, sid, tc.want)
			}
			if _, has := res.Capabilities["tasks"]; has != tc.tasks {
				t.Fatalf("tasks capability present %v, want %v: %s", has, tc.tasks, r.Raw)
			}
			c := ruleClient(t, h, sid, tc.want, "")
			call := c.call("tools/call", map[string]any{"name": mockserver.ToolWorkTask, "arguments": map[string]any{"duration_ms": 0}, "task": map[string]any{}})
			_, isTask := ruleObject(t, ruleOK(t, call))["task"]
			wantCreated := uint64(0)
			if tc.tasks {
				wantCreated = 1
			}
			if isTask != tc.tasks || h.srv.Stats().TasksCreated != wantCreated {
				t.Fatalf("task-augmented call made a task: %v, want %v (R4): %s", isTask, tc.tasks, call.Raw)
			}
			for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel", "tasks/list"} {
				r := c.call(m, map[string]any{"taskId": "0123456789abcdef0123456789abcdef"})
				switch {
				case !tc.tasks:
					ruleErr(t, r, mcp.CodeMethodNotFound, strconv.Quote(m), tc.want)
				case m == "tasks/list": // not offered without an authorization context (R54)
					ruleErr(t, r, mcp.CodeMethodNotFound, "no authorization context")
				default:
					ruleErr(t, r, mcp.CodeInvalidParams, "not found")
				}
			}
		})
	}
	ruleRun(t, "no version", func(t *testing.T) {
		h := newHarness(t, mockserver.Config{})
		body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"","capabilities":{},"clientInfo":{"name":"rules","version":"1"}}}`
		_, hdr, b := ruleRaw(t, h, ruleInitRequest(body, ""), "initialize")
		ruleErr(t, decodeReply(t, "initialize", b), mcp.CodeInvalidParams, "protocolVersion is required")
		if hdr.Get("Mcp-Session-Id") != "" || h.srv.Stats().Sessions != 0 {
			t.Fatal("a failed initialize opened a session")
		}
	})
}

// TestH2 checks H2, docs/RULES.md#h2: Session management: the server may return `MCP-Session-Id`
// (visible ASCII, securely random) with the initialize reply; the client then sends it on every
// request, and a server that requires it answers 400 when it is missing.
func TestH2(t *testing.T) {
	ruleRun(t, "ids", func(t *testing.T) {
		h := newHarness(t, mockserver.Config{})
		var ids []string
		for range 16 {
			_, sid := ruleInit(t, h, "", mcp.Version20251125, `{}`)
			for _, ch := range []byte(sid) {
				if ch < 0x21 || ch > 0x7e {
					t.Fatalf("session id %q has byte %#x outside visible ASCII", sid, ch)
				}
			}
			if b, err := hex.DecodeString(sid); err != nil || len(b) < 16 || slices.Contains(ids, sid) {
				t.Fatalf("session id %q is not 128 random bits, or repeats", sid)
			}
			ids = append(ids, sid)
		}
		if slices.IsSorted(ids) { // 1 in 16! for random ids
			t.Fatalf("session ids increase with creation order: %v", ids)
		}
	})
	tests := []struct {
		name, method, body string
	}{
		{"request", http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
		{"notification", http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{"response", http.MethodPost, `{"jsonrpc":"2.0","id":"e-1","result":{"action":"decline"}}`},
		{"GET", http.MethodGet, ""},
		{"DELETE", http.MethodDelete, ""},
	}
	for _, tc := range tests {
		ruleRun(t, "without session id/"+tc.name, func(t *testing.T) {
			h, c := ruleSetup(t, mockserver.Config{})
			req := c.request(tc.method, tc.body)
			req.Header.Del("Mcp-Session-Id")
			req.Header.Set("Accept", "application/json, text/event-stream")
			ruleRejected(t, h, req, http.StatusBadRequest, "Mcp-Session-Id")
			rulePing(t, c)
		})
	}
}

// TestH3 checks H3, docs/RULES.md#h3: Protocol version header: after initialize every request
// carries `MCP-Protocol-Version` with the negotiated version; without it a server assumes
// `2025-03-26`; an invalid or unsupported value gets 400.
func TestH3(t *testing.T) {
	tests := []struct {
		name    string
		session string // negotiated version
		get     bool
		header  string // "-" leaves the header out
		want    int
		msg     string
	}{
		{name: "negotiated version", session: "2025-11-25", header: "2025-11-25", want: 200},
		{name: "no header", session: "2025-11-25", header: "-", want: 200},
		{name: "unknown version", session: "2025-11-25", header: "1999-01-01", want: 400, msg: `unsupported Mcp-Protocol-Version "1999-01-01"`},
		{name: "not a version", session: "2025-11-25", header: "latest", want: 400, msg: "unsupported"},
		{name: "older known version", session: "2025-11-25", header: "2025-06-18", want: 400, msg: "does not match the negotiated version 2025-11-25"},
		{name: "newer version on an older session", session: "2025-06-18", header: "2025-11-25", want: 400, msg: "does not match the negotiated version 2025-06-18"},
		{name: "GET, unknown version", session: "2025-11-25", get: true, header: "1999-01-01", want: 400, msg: "unsupported"},
		{name: "GET, negotiated version", session: "2025-11-25", get: true, header: "2025-11-25", want: 200},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h, c := ruleSetup(t, mockserver.Config{}, withVersion(tc.session))
			method, body := http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"ping"}`
			if tc.get {
				method, body = http.MethodGet, ""
			}
			req := c.request(method, body)
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.header == "-" {
				req.Header.Del("MCP-Protocol-Version")
			} else {
				req.Header.Set("MCP-Protocol-Version", tc.header)
			}
			if tc.want != http.StatusOK {
				ruleRejected(t, h, req, tc.want, tc.msg, "(H3)")
			} else if resp := h.do(req); resp.Status != http.StatusOK {
				t.Fatalf("HTTP %d: %s", resp.Status, resp.all())
			} else if !tc.get {
				ruleOK(t, decodeReply(t, "ping", resp.all()))
			}
			rulePing(t, c)
		})
	}
}

// TestH4 checks H4, docs/RULES.md#h4: Sending messages: one JSON-RPC message per POST, with
// `Accept: application/json, text/event-stream`; a notification or response gets 202; a request
// gets either one JSON object or an SSE stream that may carry related requests and notifications
// before the response, and clients handle both; the server closes the stream after the response.
func TestH4(t *testing.T) {
	tests := []struct {
		name string
		body string // a client message sent as is; "" for the request rows
		kind string // json, sse, sse-terminal
	}{
		{name: "initialized notification", body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{name: "unknown notification", body: `{"jsonrpc":"2.0","method":"notifications/whatever","params":{}}`},
		{name: "cancelled notification", body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`},
		{name: "response to no request", body: `{"jsonrpc":"2.0","id":"e-999","result":{"action":"accept","content":{"answer":"x"}}}`},
		{name: "error response", body: `{"jsonrpc":"2.0","id":"e-998","error":{"code":-32603,"message":"client failed"}}`},
		{name: "request answered as JSON", kind: "json"},
		{name: "blocking request answered as SSE", kind: "sse"},
		{name: "request on a terminal task answered as JSON", kind: "sse-terminal"},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			_, c := ruleSetup(t, mockserver.Config{})
			switch tc.kind {
			case "":
				mcptest.Must(t, mcptest.ValidateMessage([]byte(tc.body)))
				resp := c.send(tc.body)
				if b := resp.all(); resp.Status != http.StatusAccepted || len(b) != 0 {
					t.Fatalf("HTTP %d %q, want 202 with no body", resp.Status, b)
				}
			case "json":
				resp := c.start("tools/list", nil)
				if ct := resp.Header.Get("Content-Type"); resp.Status != http.StatusOK || ct != "application/json" {
					t.Fatalf("HTTP %d %s, want 200 application/json", resp.Status, ct)
				}
				ruleOK(t, decodeReply(t, "tools/list", resp.all()))
			case "sse":
				tk := ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 1000}, nil)
				ruleOK(t, ruleFinal(t, ruleStream(t, c, tk.TaskID))) // the stream closes after the reply
			case "sse-terminal":
				tk := ruleTaskIn(t, c, "completed")
				resp := c.start("tasks/result", map[string]any{"taskId": tk.TaskID})
				if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
					t.Fatalf("Content-Type %s, want application/json", ct)
				}
				ruleOK(t, decodeReply(t, "tasks/result", resp.all()))
			}
			rulePing(t, c)
		})
	}
}

// TestH5 checks H5, docs/RULES.md#h5: SSE polling: a new stream starts with an event that has an id
// and empty data; the server may then drop the connection, after a `retry:` field the client
// honours before reconnecting; a dropped connection is never a cancellation.
func TestH5(t *testing.T) {
	tests := []struct {
		name   string
		stream string // get, result, result-input
		events int    // events after the priming one
	}{
		{name: "GET stream", stream: "get", events: 1},
		{name: "tasks/result stream", stream: "result", events: 1},
		{name: "tasks/result stream with an elicitation", stream: "result-input", events: 2},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h, c := ruleSetup(t, mockserver.Config{StatusNotifications: true})
			args := map[string]any{"duration_ms": 1000}
			if tc.stream == "result-input" {
				args["input_required"] = true
			}
			var resp *response
			if tc.stream == "get" {
				req := c.request(http.MethodGet, "")
				req.Header.Set("Accept", "text/event-stream")
				resp = h.do(req)
			}
			tk := ruleCreate(t, c, mockserver.ToolWork, args, nil)
			if resp == nil {
				resp = c.start("tasks/result", map[string]any{"taskId": tk.TaskID})
			}
			rulePriming(t, resp)
			for i := range tc.events {
				ev, ok := ruleNextEvent(t, resp)
				if !ok || !ev.HasID || ev.ID == "" || ev.Data == "" {
					t.Fatalf("event %d after priming: %+v (ended %v), want an id and data", i+1, ev, !ok)
				}
				mcptest.Must(t, mcptest.ValidateMessage([]byte(ev.Data)))
				if strings.Contains(ev.Data, "elicitation/create") {
					var raw struct {
						ID     json.RawMessage `json:"id"`
						Params json.RawMessage `json:"params"`
					}
					_ = json.Unmarshal([]byte(ev.Data), &raw)
					ruleAnswer(t, c, ruleMsg{ID: raw.ID, Params: raw.Params}, mcp.ElicitAccept)
				}
			}
		})
	}
}

// TestH6 checks H6, docs/RULES.md#h6: Listening: a GET with `Accept: text/event-stream` opens the
// server-to-client stream, or gets 405; it carries requests and notifications not tied to a client
// request, responses only when resuming; each message goes on exactly one stream.
func TestH6(t *testing.T) {
	// 406 without Accept text/event-stream; status notifications go only to the owning session.
	accepts := []struct {
		accept string
		want   int
	}{
		{"application/json", http.StatusNotAcceptable},
		{"", http.StatusNotAcceptable},
		{"text/html, application/json", http.StatusNotAcceptable},
		{"text/event-stream", http.StatusOK},
		{"application/json, text/event-stream;q=0.9", http.StatusOK},
		{"text/*", http.StatusOK},
	}
	for _, tc := range accepts {
		ruleRun(t, "Accept "+strconv.Quote(tc.accept), func(t *testing.T) {
			h, c := ruleSetup(t, mockserver.Config{})
			req := c.request(http.MethodGet, "")
			req.Header.Set("Accept", tc.accept)
			if tc.want != http.StatusOK {
				ruleRejected(t, h, req, tc.want, "text/event-stream")
				return
			}
			resp := h.do(req)
			if resp.Status != tc.want || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("HTTP %d %s", resp.Status, resp.Header.Get("Content-Type"))
			}
			rulePriming(t, resp)
		})
	}

	routes := []struct {
		name     string
		cfg      mockserver.Config
		input    bool
		sameUser bool     // the second session has the first one's token
		twoGETs  bool     // the first session has two GET streams
		want     []string // messages on the owner's GET stream
	}{
		{name: "owner only", cfg: mockserver.Config{StatusNotifications: true}, input: true,
			want: []string{"input_required", "elicit", "working", "completed"}},
		{name: "owner only, same tenant", cfg: mockserver.Config{StatusNotifications: true, Tokens: ruleTenants}, sameUser: true,
			want: []string{"completed"}},
		{name: "notifications off", want: nil},
		{name: "two GET streams of one session", cfg: mockserver.Config{StatusNotifications: true}, twoGETs: true,
			want: []string{"completed"}},
	}
	for _, tc := range routes {
		ruleRun(t, tc.name, func(t *testing.T) {
			h, a := ruleSetup(t, tc.cfg, withToken("tok-alice"))
			tok := "tok-bob"
			if tc.sameUser {
				tok = "tok-alice-2"
			}
			b := h.connect(withToken(tok))
			aGET, bGET := ruleGETStream(t, a), ruleGETStream(t, b)
			var a2GET *response
			if tc.twoGETs {
				a2GET = ruleGETStream(t, a)
			}
			args := map[string]any{"duration_ms": 1000}
			if tc.input {
				args = map[string]any{"duration_ms": 2000, "input_required": true}
			}
			tk := ruleCreate(t, a, mockserver.ToolWork, args, nil)
			if a2GET != nil { // after the task ended, read from whichever of the two streams got its message
				time.Sleep(time.Minute)
				synctest.Wait()
				if len(a2GET.body) > 0 {
					aGET, a2GET = a2GET, aGET
				}
			}
			for _, w := range tc.want {
				m := ruleNextMessage(t, aGET)
				if m.Method == "" {
					t.Fatalf("a response on the GET stream: %s", m.Raw)
				}
				if w == "elicit" {
					ruleElicitation(t, m, tk.TaskID)
					ruleAnswer(t, a, m, mcp.ElicitAccept)
					continue
				}
				ruleStatusNote(t, m, tk.TaskID, w)
			}
			time.Sleep(time.Minute)
			synctest.Wait()
			ruleWantStatus(t, a, tk.TaskID, mcp.StatusCompleted)
			ruleQuiet(t, aGET, "owner's GET stream")
			ruleQuiet(t, bGET, "other session's GET stream")
			if a2GET != nil {
				ruleQuiet(t, a2GET, "owner's second GET stream")
			}
		})
	}

	ruleRun(t, "an elicitation sent on the GET stream is not sent again on a tasks/result stream", func(t *testing.T) {
		_, c := ruleSetup(t, mockserver.Config{})
		get := ruleGETStream(t, c)
		t0 := time.Now()
		tk := ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 2000, "input_required": true}, nil)
		m := ruleNextMessage(t, get)
		ruleElicitation(t, m, tk.TaskID)
		ruleUntil(t0, 1200*time.Millisecond)
		st := ruleStream(t, c, tk.TaskID) // R37: a client calls tasks/result on input_required
		synctest.Wait()
		ruleQuiet(t, st, "tasks/result stream while the GET stream holds the elicitation")
		ruleAnswer(t, c, m, mcp.ElicitAccept)
		ruleOK(t, ruleFinal(t, st))
		ruleElapsed(t, t0, 2200*time.Millisecond, "the final payload")
	})
}

// TestH7 checks H7, docs/RULES.md#h7: Resumability: event ids, when used, are unique across the
// session's streams; a client resumes with a GET carrying `Last-Event-ID`, and the server replays
// only later events of that same stream.
func TestH7(t *testing.T) {
	tests := []struct {
		name   string
		reopen bool // the GET stream is dropped and opened again
	}{
		{name: "GET and two tasks/result streams"},
		{name: "reopened GET stream", reopen: true},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h, c := ruleSetup(t, mockserver.Config{StatusNotifications: true})
			var ids []string
			drain := func(r *response, n int) { // n events, or to the end when n < 0
				for i := 0; n < 0 || i < n; i++ {
					ev, ok := ruleNextEvent(t, r)
					if !ok {
						if n >= 0 {
							t.Fatalf("stream ended after %d of %d events", i, n)
						}
						return
					}
					if !ev.HasID {
						t.Fatalf("event without id: %+v", ev)
					}
					ids = append(ids, ev.ID)
					if strings.Contains(ev.Data, "elicitation/create") {
						var raw struct {
							ID     json.RawMessage `json:"id"`
							Params json.RawMessage `json:"params"`
						}
						_ = json.Unmarshal([]byte(ev.Data), &raw)
						ruleAnswer(t, c, ruleMsg{ID: raw.ID, Params: raw.Params}, mcp.ElicitAccept)
					}
				}
			}
			req, cancel := ruleWithContext(c.request(http.MethodGet, ""))
			req.Header.Set("Accept", "text/event-stream")
			get := h.do(req)
			if tc.reopen {
				ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 1000}, nil)
				drain(get, 2) // priming, completed
				cancel()
				drain(get, -1)
				req := c.request(http.MethodGet, "")
				req.Header.Set("Accept", "text/event-stream")
				get = h.do(req)
				ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 1000}, nil)
				drain(get, 2) // priming, completed
			} else {
				args := map[string]any{"duration_ms": 2000, "input_required": true}
				a := ruleCreate(t, c, mockserver.ToolWork, args, nil)
				b := ruleCreate(t, c, mockserver.ToolWork, args, nil)
				sa := c.start("tasks/result", map[string]any{"taskId": a.TaskID})
				sb := c.start("tasks/result", map[string]any{"taskId": b.TaskID})
				drain(sa, -1) // priming, elicitation, reply
				drain(sb, -1)
				drain(get, 7) // priming, input_required x2, working x2, completed x2
			}
			seen := map[string]bool{}
			for _, id := range ids {
				if seen[id] {
					t.Fatalf("event id %q used twice in one session: %v", id, ids)
				}
				seen[id] = true
			}
			cancel()
		})
	}
}

// TestH8 checks H8, docs/RULES.md#h8: Session expiry: a request with an ended session id gets 404,
// and the client starts over with an `initialize` that carries no session header.
func TestH8(t *testing.T) {
	tests := []struct {
		name    string
		ended   bool // the session was DELETEd; else the id was never issued
		method  string
		body    string
		replyTo string
	}{
		{name: "unknown session, request", method: http.MethodPost, body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{name: "unknown session, GET", method: http.MethodGet},
		{name: "unknown session, DELETE", method: http.MethodDelete},
		{name: "ended session, request", ended: true, method: http.MethodPost, body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{name: "ended session, notification", ended: true, method: http.MethodPost, body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{name: "ended session, GET", ended: true, method: http.MethodGet},
		{name: "ended session, DELETE", ended: true, method: http.MethodDelete},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h, c := ruleSetup(t, mockserver.Config{})
			old := c.sid
			if tc.ended {
				if s, _, b := ruleRaw(t, h, c.request(http.MethodDelete, ""), ""); s != http.StatusOK {
					t.Fatalf("DELETE: HTTP %d %s", s, b)
				}
			} else {
				c.sid = "0123456789abcdef0123456789abcdef"
			}
			req := c.request(tc.method, tc.body)
			req.Header.Set("Accept", "application/json, text/event-stream")
			ruleRejected(t, h, req, http.StatusNotFound, "session not found")
			c2 := h.connect()
			if c2.sid == old || c2.sid == "" {
				t.Fatalf("new session id %q", c2.sid)
			}
			rulePing(t, c2)
		})
	}
}

// TestH9 checks H9, docs/RULES.md#h9: Session end: a client that is done sends DELETE with its
// session id; the server may answer 405.
func TestH9(t *testing.T) {
	// The session ends; its tasks, bound to the authorization context, outlive it.
	tests := []struct {
		name string
		sid  string // "" sends the session's own id; "-" sends none
		want int
		msg  string
	}{
		{name: "ends the session", want: http.StatusOK},
		{name: "without a session id", sid: "-", want: http.StatusBadRequest, msg: "missing Mcp-Session-Id header"},
		{name: "unknown session", sid: "feedfacefeedfacefeedfacefeedface", want: http.StatusNotFound, msg: "session not found"},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h, a := ruleSetup(t, mockserver.Config{})
			b := h.connect()
			get := ruleGETStream(t, a)
			tk := ruleCreate(t, a, mockserver.ToolWork, map[string]any{"duration_ms": 1000}, nil)
			req := a.request(http.MethodDelete, "")
			switch tc.sid {
			case "-":
				req.Header.Del("Mcp-Session-Id")
			case "":
			default:
				req.Header.Set("Mcp-Session-Id", tc.sid)
			}
			if tc.want != http.StatusOK {
				ruleRejected(t, h, req, tc.want, tc.msg)
				rulePing(t, a)
				if n := h.srv.Stats().Sessions; n != 2 {
					t.Fatalf("%d sessions, want 2", n)
				}
				return
			}
			if s, _, body := ruleRaw(t, h, req, ""); s != tc.want {
				t.Fatalf("DELETE: HTTP %d %s", s, body)
			}
			if n := h.srv.Stats().Sessions; n != 1 {
				t.Fatalf("%d sessions after DELETE, want 1", n)
			}
			ruleEnded(t, get)
			ruleRejected(t, h, a.request(http.MethodPost, `{"jsonrpc":"2.0","id":9,"method":"ping"}`), http.StatusNotFound, "session not found")
			rulePing(t, b)
			ruleWantStatus(t, b, tk.TaskID, mcp.StatusWorking)
			time.Sleep(time.Second)
			synctest.Wait()
			ruleWantStatus(t, b, tk.TaskID, mcp.StatusCompleted)
		})
	}
}

// TestH10 checks H10, docs/RULES.md#h10: Security (*Security Warning*; `basic/authorization.mdx`):
// the server validates `Origin` (403 if invalid) and binds to 127.0.0.1 when local; an invalid or
// expired token gets 401 with `WWW-Authenticate`, insufficient scope 403.
func TestH10(t *testing.T) {
	origins := []struct {
		origin  string
		allowed []string
		want    int
	}{
		{origin: "https://evil.example", want: 403},
		{origin: "http://localhost.evil.example", want: 403},
		{origin: "http://127.0.0.1.evil.example", want: 403},
		{origin: "null", want: 403},
		{origin: "file:///home/user/page.html", want: 403},
		{origin: "https://app.example:8443", allowed: []string{"https://app.example"}, want: 403},
		{origin: "http://localhost:5173", want: 200},
		{origin: "http://127.0.0.1:8080", want: 200},
		{origin: "http://[::1]:3000", want: 200},
		{origin: "https://app.example", allowed: []string{"https://app.example"}, want: 200},
	}
	for _, tc := range origins {
		ruleRun(t, "Origin "+tc.origin, func(t *testing.T) {
			h, c := ruleSetup(t, mockserver.Config{AllowedOrigins: tc.allowed})
			init := ruleInitRequest(ruleInitBody, "")
			init.Header.Set("Origin", tc.origin)
			ping := c.request(http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
			ping.Header.Set("Origin", tc.origin)
			for method, req := range map[string]*http.Request{"initialize": init, "ping": ping} {
				if tc.want == http.StatusForbidden {
					ruleRejected(t, h, req, tc.want, "origin", "not allowed")
					continue
				}
				if s, _, b := ruleRaw(t, h, req, method); s != tc.want {
					t.Fatalf("%s: HTTP %d, want %d: %s", method, s, tc.want, b)
				}
			}
			rulePing(t, c)
		})
	}
	auths := []struct {
		name string
		auth string // the Authorization header; "" leaves it out
		want int
	}{
		{name: "no Authorization", want: 401},
		{name: "unknown token", auth: "Bearer forged", want: 401},
		{name: "empty bearer", auth: "Bearer ", want: 401},
		{name: "Basic scheme", auth: "Basic dG9rLWFsaWNlOg==", want: 401},
		{name: "valid token", auth: "Bearer tok-alice", want: 200},
		{name: "lower-case scheme", auth: "bearer tok-alice", want: 200},
	}
	for _, tc := range auths {
		ruleRun(t, tc.name, func(t *testing.T) {
			h, c := ruleSetup(t, mockserver.Config{Tokens: ruleTenants}, withToken("tok-alice"))
			get := c.request(http.MethodGet, "")
			get.Header.Set("Accept", "text/event-stream")
			reqs := []struct {
				method string
				req    *http.Request
			}{
				{"initialize", ruleInitRequest(ruleInitBody, "")},
				{"ping", c.request(http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)},
				{"GET", get},
				{"DELETE", c.request(http.MethodDelete, "")},
			}
			for _, r := range reqs {
				req := r.req
				req.Header.Del("Authorization")
				if tc.auth != "" {
					req.Header.Set("Authorization", tc.auth)
				}
				if tc.want == http.StatusUnauthorized {
					hdr := ruleRejected(t, h, req, tc.want, "bearer token")
					if wa := hdr.Get("WWW-Authenticate"); !strings.HasPrefix(wa, "Bearer ") {
						t.Fatalf("%s: WWW-Authenticate %q, want a Bearer challenge", req.Method, wa)
					}
					continue
				}
				if req.Method == http.MethodGet {
					if resp := h.do(req); resp.Status != tc.want {
						t.Fatalf("GET: HTTP %d", resp.Status)
					}
					continue
				}
				if s, _, b := ruleRaw(t, h, req, r.method); s != tc.want {
					t.Fatalf("%s: HTTP %d, want %d: %s", r.method, s, tc.want, b)
				}
			}
		})
	}
}

// ruleIntCode matches an integer JSON-RPC error code (H11).
var ruleIntCode = regexp.MustCompile(`^-?[0-9]+$`)

// TestH11 checks H11, docs/RULES.md#h11: JSON-RPC (`basic/index.mdx`): a request id is a string or
// an integer, never `null`, never reused by its sender within a session; notifications have no id
// and no reply; error codes are integers.
func TestH11(t *testing.T) {
	tests := []struct {
		name string
		id   string // JSON text; "" sends a notification
		msg  string // the rejection's message; "" when the id is valid
	}{
		{name: "string", id: `"abc"`},
		{name: "empty string", id: `""`},
		{name: "string with escapes", id: `"a\"b\u00e9"`},
		{name: "integer", id: `42`},
		{name: "negative integer", id: `-7`},
		{name: "zero", id: `0`},
		{name: "large integer", id: `9007199254740993`},
		{name: "null", id: `null`, msg: `"id" must not be null`},
		{name: "fraction", id: `1.5`, msg: "must be a string or an integer"},
		{name: "exponent", id: `1e3`, msg: "must be a string or an integer"},
		{name: "boolean", id: `true`, msg: "must be a string or an integer"},
		{name: "object", id: `{}`, msg: "must be a string or an integer"},
		{name: "notification", id: ""},
	}
	for _, tc := range tests {
		ruleRun(t, tc.name, func(t *testing.T) {
			h, c := ruleSetup(t, mockserver.Config{})
			body := `{"jsonrpc":"2.0","method":"ping"}`
			if tc.id != "" {
				body = `{"jsonrpc":"2.0","id":` + tc.id + `,"method":"ping"}`
			}
			status, _, b := ruleRaw(t, h, c.request(http.MethodPost, body), "ping")
			switch {
			case tc.id == "":
				if status != http.StatusAccepted || len(b) != 0 {
					t.Fatalf("notification: HTTP %d %q, want 202 and no reply", status, b)
				}
			case tc.msg == "":
				if status != http.StatusOK || string(ruleObject(t, b)["id"]) != tc.id {
					t.Fatalf("HTTP %d %s, want 200 echoing id %s", status, b, tc.id)
				}
				ruleOK(t, decodeReply(t, "ping", b))
			default:
				if status != http.StatusBadRequest {
					t.Fatalf("HTTP %d, want 400: %s", status, b)
				}
				ruleErr(t, reply{Raw: b, Err: ruleRawErr(t, b)}, mcp.CodeInvalidRequest, tc.msg)
				code := ruleObject(t, ruleObject(t, b)["error"])["code"]
				if !ruleIntCode.Match(code) {
					t.Fatalf("error code %s is not an integer", code)
				}
				if _, has := ruleObject(t, b)["id"]; has {
					t.Fatalf("reply echoes an unreadable id: %s", b)
				}
			}
			rulePing(t, c)
		})
	}
}
