package mockserver_test

// FuzzHandler drives the mock server's HTTP handler with arbitrary requests. Each iteration
// runs inside a testing/synctest bubble with its own in-process server, closed at the end:
// a goroutine still blocked when the bubble ends (a handler that ignores its request's
// context, a stream that never closes) makes synctest fail, which is the leak check.
//
// The inputs are the HTTP method, the body and the headers the server reads (Content-Type,
// Accept, Mcp-Session-Id, MCP-Protocol-Version, Origin, Authorization), plus two selectors:
//
//	session % 4    Mcp-Session-Id sent
//	  0            none
//	  1            a live session, from an initialize done in the iteration
//	  2            the fuzzed sessionID string
//	  3            a session that was initialized, then ended with DELETE (H8)
//	setup & 3      the task that "$TASK" in the body stands for (live sessions only)
//	  0            completed
//	  1            working, for a minute
//	  2            input_required, with an elicitation pending as id "e-1"
//	  3            cancelled
//	setup & 4      tokens configured: tenant "alice" has token "tok-a" (the setup uses it)
//
// Asserted for every response: the handler does not panic; status >= 400 comes with
// Content-Type application/json and a body that is a JSON-RPC error response valid against
// the 2025-11-25 schema, with an integer code; a 200 JSON body is one valid JSON-RPC message
// (and a valid reply to its method); every SSE event is; 202 has no body; every task the
// server reports has a ttl that is null or in [0, MaxTTL] (R45, R56) and a pollInterval >= 0.

import (
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/internal/mcp/mcptest"
	"github.com/tasksim/tasksim/mockserver"
)

// fzMaxTTL is the MaxTTL of the fuzzed server.
const fzMaxTTL = time.Hour

const (
	fzInit     = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"fuzz","version":"1"}}}`
	fzVersion  = "2025-11-25"
	fzBothMT   = "application/json, text/event-stream"
	fzJSON     = "application/json"
	fzTokenHdr = "Bearer tok-a"
)

func FuzzHandler(f *testing.F) {
	type seed struct {
		method  string
		body    string
		ct      string
		accept  string
		session uint8
		sid     string
		version string
		origin  string
		auth    string
		setup   uint8
	}
	post := func(body string, session, setup uint8) seed {
		return seed{"POST", body, fzJSON, fzBothMT, session, "", fzVersion, "", "", setup}
	}
	seeds := []seed{
		post(fzInit, 0, 0),
		post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 1, 0),
		post(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 1, 0),
		post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"work","arguments":{"duration_ms":50},"task":{"ttl":60000}}}`, 1, 0),
		post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"work_sync","arguments":{"duration_ms":50}}}`, 1, 0),
		post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"greet","arguments":{"name":"x"}}}`, 1, 0),
		post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow_compute","arguments":{"seconds":0.05,"label":"x"},"task":{}}}`, 1, 0),
		post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"multi_input","arguments":{},"task":{}}}`, 1, 0),
		post(`{"jsonrpc":"2.0","id":"g","method":"tasks/get","params":{"taskId":"$TASK"}}`, 1, 1),
		post(`{"jsonrpc":"2.0","id":"r","method":"tasks/result","params":{"taskId":"$TASK"}}`, 1, 0),
		post(`{"jsonrpc":"2.0","id":"r","method":"tasks/result","params":{"taskId":"$TASK"}}`, 1, 1),
		post(`{"jsonrpc":"2.0","id":"r","method":"tasks/result","params":{"taskId":"$TASK"}}`, 1, 2),
		post(`{"jsonrpc":"2.0","id":"e-1","result":{"action":"accept","content":{"answer":"x"}}}`, 1, 2),
		post(`{"jsonrpc":"2.0","id":"c","method":"tasks/cancel","params":{"taskId":"$TASK"}}`, 1, 3),
		post(`{"jsonrpc":"2.0","id":"c","method":"tasks/cancel","params":{"taskId":"$TASK"}}`, 1, 1),
		{"POST", `{"jsonrpc":"2.0","id":"l","method":"tasks/list","params":{"cursor":"dHNsMQAAAAAAAAAA"}}`, fzJSON, fzBothMT, 1, "", fzVersion, "", fzTokenHdr, 4},
		{"POST", `{"jsonrpc":"2.0","id":"l","method":"tasks/list"}`, fzJSON, fzBothMT, 1, "", fzVersion, "", "Bearer nope", 5},
		post(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`, 1, 0),
		post(`{"jsonrpc":"2.0","id":1,"method":"ping"`, 1, 0),
		post(`{"jsonrpc":"2.0","id":1e400,"method":"tools/call","params":{"name":"work","arguments":{"duration_ms":99999999999999999999999},"task":{"ttl":1e300}}}`, 1, 0),
		post(`{"jsonrpc":"2.0","id":9223372036854775807,"method":"tools/call","params":{"name":"work","arguments":{"duration_ms":1},"task":{"ttl":9007199254740992}}}`, 1, 0),
		post(`{"jsonrpc":"2.0","id":null,"method":"tasks/get","params":{"taskId":"$TASK"}}`, 1, 0),
		post(`{"jsonrpc":"1.0","id":1,"method":"ping"}`, 1, 0),
		post("{\"jsonrpc\":\"2.0\",\"id\":\"\u00e9\u2028\U0001F600\",\"method\":\"t\u00e2sks/g\u00e9t\",\"params\":{\"taskId\":\"\u2603\xff\"}}", 1, 0),
		{"GET", "", "", "text/event-stream", 1, "", fzVersion, "", "", 0},
		{"DELETE", "", "", "", 1, "", fzVersion, "", "", 0},
		{"PUT", fzInit, fzJSON, fzBothMT, 0, "", "", "", "", 0},
		post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`, 3, 0),
		{"POST", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, fzJSON, fzBothMT, 2, "no-such-session", fzVersion, "", "", 0},
		{"POST", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, fzJSON, fzBothMT, 1, "", "1999-01-01", "", "", 0},
		{"POST", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "text/plain", fzBothMT, 1, "", fzVersion, "", "", 0},
		{"POST", fzInit, fzJSON, fzBothMT, 0, "", "", "https://evil.example", "", 0},
		{"POST", fzInit, fzJSON, fzBothMT, 0, "", "", "http://localhost:3000", "", 4},
	}
	for _, s := range seeds {
		f.Add(s.method, []byte(s.body), s.ct, s.accept, s.session, s.sid, s.version, s.origin, s.auth, s.setup)
	}
	_ = mcptest.ValidateMessage([]byte(`{}`)) // compile the schema outside any bubble

	f.Fuzz(func(t *testing.T, method string, body []byte, ct, accept string, session uint8, sid, version, origin, auth string, setup uint8) {
		synctest.Test(t, func(t *testing.T) {
			fz := newFuzzRun(t, setup&4 != 0)
			defer fz.srv.Close()

			var live, task string
			if m := session % 4; m == 1 || m == 3 {
				live = fz.initialize()
				if live != "" && bytes.Contains(body, []byte("$TASK")) {
					task = fz.task(live, setup&3)
				}
				if m == 3 && live != "" {
					fz.deleteSession(live)
				}
			}
			if task != "" {
				body = bytes.ReplaceAll(body, []byte("$TASK"), []byte(task))
			}
			req := fz.newRequest(method, body)
			setHeader(req, "Content-Type", ct)
			setHeader(req, "Accept", accept)
			setHeader(req, "Mcp-Protocol-Version", version)
			setHeader(req, "Origin", origin)
			setHeader(req, "Authorization", auth)
			switch session % 4 {
			case 1, 3:
				setHeader(req, "Mcp-Session-Id", live)
			case 2:
				setHeader(req, "Mcp-Session-Id", sid)
			}
			rec := fz.serve(req)
			checkFuzzResponse(t, rpcMethodOf(body), rec)
		})
	})
}

// fuzzRun is one iteration's server and the setup requests made on it.
type fuzzRun struct {
	t     *testing.T
	srv   *mockserver.Server
	bound bool
}

func newFuzzRun(t *testing.T, bound bool) *fuzzRun {
	cfg := mockserver.Config{MaxTTL: fzMaxTTL, PollInterval: 100 * time.Millisecond, Fixtures: true}
	if bound {
		cfg.Tokens = map[string]string{"tok-a": "alice", "tok-b": "bob"}
		cfg.ListPageSize = 1
	}
	srv, err := mockserver.NewHandlerServer(cfg)
	if err != nil {
		t.Fatalf("NewHandlerServer: %v", err)
	}
	return &fuzzRun{t: t, srv: srv, bound: bound}
}

// newRequest builds a request on the MCP endpoint whose context serve cancels. A method
// that is not a valid HTTP token becomes POST, since net/http never delivers such a request.
func (fz *fuzzRun) newRequest(method string, body []byte) *http.Request {
	req, err := http.NewRequest(method, "http://127.0.0.1/mcp", bytes.NewReader(body))
	if err != nil {
		req = httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
	}
	req.RemoteAddr = "127.0.0.1:1234"
	return req
}

// serve runs req to completion. A request still blocked once every goroutine of the bubble
// is (tasks/result on a live task, a GET stream) gets a minute of virtual time to finish and
// is then abandoned by cancelling its context; the handler must then return, or the bubble
// deadlocks and synctest fails the test.
func (fz *fuzzRun) serve(req *http.Request) *httptest.ResponseRecorder {
	ctx, cancel := context.WithCancel(req.Context())
	defer cancel()
	req = req.WithContext(ctx)
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fz.srv.Handler().ServeHTTP(rec, req)
	}()
	synctest.Wait()
	select {
	case <-done:
		return rec
	default:
	}
	time.Sleep(time.Minute)
	synctest.Wait()
	select {
	case <-done:
	default:
		cancel()
		<-done
	}
	return rec
}

// setup sends a well-formed POST and checks its reply like any other.
func (fz *fuzzRun) setup(sid, body string) *httptest.ResponseRecorder {
	req := fz.newRequest(http.MethodPost, []byte(body))
	req.Header.Set("Content-Type", fzJSON)
	req.Header.Set("Accept", fzJSON)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", fzVersion)
	}
	if fz.bound {
		req.Header.Set("Authorization", fzTokenHdr)
	}
	rec := fz.serve(req)
	checkFuzzResponse(fz.t, rpcMethodOf([]byte(body)), rec)
	return rec
}

// initialize opens a session and returns its id.
func (fz *fuzzRun) initialize() string {
	rec := fz.setup("", fzInit)
	sid := rec.Header().Get("Mcp-Session-Id")
	if rec.Code != http.StatusOK || sid == "" {
		fz.t.Fatalf("setup initialize: HTTP %d, session %q: %s", rec.Code, sid, rec.Body)
	}
	if rec := fz.setup(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); rec.Code != http.StatusAccepted {
		fz.t.Fatalf("setup notifications/initialized: HTTP %d", rec.Code)
	}
	return sid
}

// task creates the task "$TASK" stands for and brings it to the state kind selects.
func (fz *fuzzRun) task(sid string, kind uint8) string {
	args := map[uint8]string{
		0: `{"duration_ms":10}`,
		1: `{"duration_ms":60000}`,
		2: `{"duration_ms":2000,"input_required":true}`,
		3: `{"duration_ms":60000}`,
	}[kind]
	rec := fz.setup(sid, `{"jsonrpc":"2.0","id":"setup-1","method":"tools/call","params":{"name":"work","arguments":`+args+`,"task":{}}}`)
	var r struct {
		Result struct {
			Task struct {
				TaskID string `json:"taskId"`
			} `json:"task"`
		} `json:"result"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil || r.Result.Task.TaskID == "" {
		fz.t.Fatalf("setup tools/call: HTTP %d: %s", rec.Code, rec.Body)
	}
	id := r.Result.Task.TaskID
	switch kind {
	case 0, 2:
		time.Sleep(1500 * time.Millisecond) // completed, or halfway: input_required
		synctest.Wait()
	case 3:
		fz.setup(sid, `{"jsonrpc":"2.0","id":"setup-2","method":"tasks/cancel","params":{"taskId":"`+id+`"}}`)
	}
	return id
}

func (fz *fuzzRun) deleteSession(sid string) {
	req := fz.newRequest(http.MethodDelete, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	if fz.bound {
		req.Header.Set("Authorization", fzTokenHdr)
	}
	if rec := fz.serve(req); rec.Code != http.StatusOK {
		fz.t.Fatalf("setup DELETE: HTTP %d: %s", rec.Code, rec.Body)
	}
}

// setHeader sets h to v unless v is empty or could not travel in an HTTP/1.1 header, which
// net/http would reject before the handler.
func setHeader(req *http.Request, h, v string) {
	if v == "" {
		return
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return
		}
	}
	req.Header.Set(h, v)
}

// rpcMethodOf returns the method of a request body, "" when it is not one.
func rpcMethodOf(body []byte) string {
	var peek struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(body, &peek) != nil || len(peek.ID) == 0 {
		return ""
	}
	return peek.Method
}

// checkFuzzResponse asserts the contract of the file comment on one response.
func checkFuzzResponse(t *testing.T, rpcMethod string, rec *httptest.ResponseRecorder) {
	t.Helper()
	body := rec.Body.Bytes()
	ct := rec.Header().Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	switch {
	case rec.Code >= 400:
		if mt != "application/json" {
			t.Fatalf("HTTP %d with Content-Type %q, want application/json: %q", rec.Code, ct, body)
		}
		checkErrorBody(t, rec.Code, body)
	case rec.Code == http.StatusAccepted:
		if len(body) != 0 {
			t.Fatalf("HTTP 202 with a body: %q", body)
		}
	case rec.Code == http.StatusOK && mt == "application/json":
		checkMessage(t, rpcMethod, body)
	case rec.Code == http.StatusOK && mt == "text/event-stream":
		for _, data := range sseData(t, body) {
			checkMessage(t, rpcMethod, data)
		}
	case rec.Code == http.StatusOK && ct == "" && len(body) == 0: // DELETE
	default:
		t.Fatalf("unexpected HTTP %d with Content-Type %q: %q", rec.Code, ct, body)
	}
}

// checkErrorBody asserts that body is exactly one JSON-RPC error response with an integer code.
func checkErrorBody(t *testing.T, status int, body []byte) {
	t.Helper()
	if err := mcptest.ValidateMessage(body); err != nil {
		t.Fatalf("HTTP %d body is not a valid JSON-RPC message: %v", status, err)
	}
	if err := mcptest.Validate("JSONRPCErrorResponse", body); err != nil {
		t.Fatalf("HTTP %d body is not a JSON-RPC error response: %v", status, err)
	}
	var e struct {
		Error struct {
			Code json.Number `json:"code"`
		} `json:"error"`
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&e); err != nil || e.Error.Code == "" || strings.ContainsAny(string(e.Error.Code), ".eE") {
		t.Fatalf("HTTP %d error code %q is not an integer (%v): %s", status, e.Error.Code, err, body)
	}
}

// checkMessage asserts that b is a valid JSON-RPC message and, when it is the reply to a
// request for rpcMethod, a valid reply whose tasks are sane.
func checkMessage(t *testing.T, rpcMethod string, b []byte) {
	t.Helper()
	if err := mcptest.ValidateMessage(b); err != nil {
		t.Fatalf("invalid JSON-RPC message: %v", err)
	}
	var m struct {
		Method *string         `json:"method"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("undecodable message %q: %v", b, err)
	}
	if m.Method != nil {
		return // a server request or notification on a stream
	}
	if err := mcptest.ValidateReply(rpcMethod, b); err != nil {
		t.Fatalf("invalid %s reply: %v", rpcMethod, err)
	}
	if len(m.Result) > 0 {
		checkTasks(t, rpcMethod, m.Result)
	}
}

// fzTask is the part of a task checkTasks reads.
type fzTask struct {
	TaskID       string   `json:"taskId"`
	TTL          *float64 `json:"ttl"`
	PollInterval *float64 `json:"pollInterval"`
}

// checkTasks asserts that every task in a result has a ttl that is null or in [0, MaxTTL]
// (R45, R56) and a non-negative pollInterval.
func checkTasks(t *testing.T, rpcMethod string, result []byte) {
	t.Helper()
	var tasks []fzTask
	var err error
	switch rpcMethod {
	case "tools/call":
		var r struct {
			Task *fzTask `json:"task"`
		}
		if err = json.Unmarshal(result, &r); r.Task != nil {
			tasks = append(tasks, *r.Task)
		}
	case "tasks/get", "tasks/cancel":
		var tk fzTask
		err = json.Unmarshal(result, &tk)
		tasks = append(tasks, tk)
	case "tasks/list":
		var r struct {
			Tasks []fzTask `json:"tasks"`
		}
		err = json.Unmarshal(result, &r)
		tasks = r.Tasks
	}
	if err != nil {
		t.Fatalf("%s result: %v", rpcMethod, err)
	}
	for _, tk := range tasks {
		if tk.TTL != nil && (*tk.TTL < 0 || *tk.TTL > float64(fzMaxTTL.Milliseconds())) {
			t.Fatalf("%s: task %s has ttl %v, want null or within [0, %d] (R45, R56)", rpcMethod, tk.TaskID, *tk.TTL, fzMaxTTL.Milliseconds())
		}
		if tk.PollInterval != nil && *tk.PollInterval < 0 {
			t.Fatalf("%s: task %s has pollInterval %v", rpcMethod, tk.TaskID, *tk.PollInterval)
		}
	}
}

// sseData splits an SSE body into the data of its events, leaving out priming events (H5).
func sseData(t *testing.T, body []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for ev := range strings.SplitSeq(string(body), "\n\n") {
		if ev == "" {
			continue
		}
		var data []byte
		for line := range strings.SplitSeq(ev, "\n") {
			switch {
			case strings.HasPrefix(line, "data:"):
				data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")...)
			case strings.HasPrefix(line, "id:"), strings.HasPrefix(line, "retry:"), strings.HasPrefix(line, "event:"):
			default:
				t.Fatalf("malformed SSE line %q in %q", line, body)
			}
		}
		if len(data) > 0 {
			out = append(out, data)
		}
	}
	return out
}
