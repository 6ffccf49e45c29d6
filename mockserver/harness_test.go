package mockserver_test

// The harness drives the mock server's handler in-process through a streaming
// ResponseWriter built on channels, so tests run inside testing/synctest bubbles (virtual
// time, no sockets) and can read an SSE stream while answering on another request. Every
// JSON-RPC message the server sends is validated against the official 2025-11-25 schema.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/mcp/mcptest"
	"github.com/tasksim/tasksim/mockserver"
)

// harness is one in-process server.
type harness struct {
	t   testing.TB
	srv *mockserver.Server
}

// newHarness starts an in-process server (no port) and closes it when the test ends.
func newHarness(t testing.TB, cfg mockserver.Config) *harness {
	t.Helper()
	srv, err := mockserver.NewHandlerServer(cfg)
	if err != nil {
		t.Fatalf("NewHandlerServer: %v", err)
	}
	t.Cleanup(srv.Close)
	return &harness{t: t, srv: srv}
}

// response is the server's answer to one HTTP request, readable while the handler runs.
type response struct {
	Status int
	Header http.Header
	body   chan []byte   // chunks written by the handler, closed when it returns
	done   chan struct{} // closed when the handler returns
	rest   []byte

	// Aborted is the transport error of a connection closed without a complete reply: the
	// handler panicked with http.ErrAbortHandler (the reset fault), as net/http would close
	// the connection. Status is 0 when nothing had been written. Read it after the body
	// ended (all, or nextEvent reporting the end).
	Aborted bool

	gone     chan struct{} // closed by hangUp
	hangOnce sync.Once
}

// hangUp plays a client that closed the connection without the server noticing (the
// request context stays alive): every later write of the handler fails.
func (r *response) hangUp() { r.hangOnce.Do(func() { close(r.gone) }) }

// pipeWriter is a http.ResponseWriter + http.Flusher that hands each write to the reader.
type pipeWriter struct {
	h       http.Header
	once    sync.Once
	started chan struct{}
	resp    *response
}

func (w *pipeWriter) Header() http.Header { return w.h }
func (w *pipeWriter) WriteHeader(code int) {
	w.once.Do(func() {
		w.resp.Status = code
		w.resp.Header = w.h.Clone()
		close(w.started)
	})
}
func (w *pipeWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	select {
	case <-w.resp.gone:
		return 0, io.ErrClosedPipe
	default:
	}
	select {
	case w.resp.body <- bytes.Clone(b):
		return len(b), nil
	case <-w.resp.gone:
		return 0, io.ErrClosedPipe
	}
}
func (w *pipeWriter) Flush() {}

// abort ends the response as a connection closed by the server: Status 0 if no status line
// was written.
func (w *pipeWriter) abort() {
	w.resp.Aborted = true
	w.once.Do(func() {
		w.resp.Header = w.h.Clone()
		close(w.started)
	})
}

// do serves req in a goroutine and returns as soon as the status line is known, or the
// handler aborted the connection (Aborted).
func (h *harness) do(req *http.Request) *response {
	resp := &response{body: make(chan []byte, 64), done: make(chan struct{}), gone: make(chan struct{})}
	w := &pipeWriter{h: http.Header{}, started: make(chan struct{}), resp: resp}
	go func() {
		defer close(resp.done)
		defer close(resp.body)
		defer func() {
			if v := recover(); v != nil {
				if v != http.ErrAbortHandler { // net/http compares it the same way
					panic(v)
				}
				w.abort()
			}
		}()
		h.srv.Handler().ServeHTTP(w, req)
		w.WriteHeader(http.StatusOK)
	}()
	<-w.started
	return resp
}

// all reads the whole body, waiting for the handler to return.
func (r *response) all() []byte {
	b := r.rest
	for chunk := range r.body {
		b = append(b, chunk...)
	}
	r.rest = nil
	return b
}

// nextEvent returns the data of the next SSE event, skipping priming events with empty
// data (H5); ok is false when the stream ended.
func (r *response) nextEvent() (data []byte, ok bool) {
	for {
		if i := bytes.Index(r.rest, []byte("\n\n")); i >= 0 {
			ev := r.rest[:i]
			r.rest = r.rest[i+2:]
			var d []byte
			sc := bufio.NewScanner(bytes.NewReader(ev))
			for sc.Scan() {
				if v, found := strings.CutPrefix(sc.Text(), "data:"); found {
					d = append(d, strings.TrimPrefix(v, " ")...)
				}
			}
			if len(d) == 0 {
				continue // priming event
			}
			return d, true
		}
		chunk, more := <-r.body
		if !more {
			return nil, false
		}
		r.rest = append(r.rest, chunk...)
	}
}

// client is one MCP session on a harness.
type client struct {
	h       *harness
	sid     string
	version string
	token   string
	nextID  int
	accept  string
	headers map[string]string
}

// clientOpt adjusts a client before it initializes.
type clientOpt func(*client, *mcp.InitializeParams)

func withToken(tok string) clientOpt {
	return func(c *client, _ *mcp.InitializeParams) { c.token = tok }
}
func withVersion(v string) clientOpt {
	return func(_ *client, p *mcp.InitializeParams) { p.ProtocolVersion = v }
}
func withoutElicitation() clientOpt {
	return func(_ *client, p *mcp.InitializeParams) { p.Capabilities.Elicitation = nil }
}

// connect initializes a session (H1, H2) and sends notifications/initialized.
func (h *harness) connect(opts ...clientOpt) *client {
	h.t.Helper()
	c := &client{h: h, accept: "application/json, text/event-stream"}
	p := mcp.InitializeParams{
		ProtocolVersion: mcp.Version20251125,
		Capabilities:    mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}},
		ClientInfo:      mcp.Implementation{Name: "harness", Version: "1"},
	}
	for _, o := range opts {
		o(c, &p)
	}
	params, _ := json.Marshal(p)
	resp := c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":%s}`, params))
	body := resp.all()
	if resp.Status != http.StatusOK {
		h.t.Fatalf("initialize: HTTP %d: %s", resp.Status, body)
	}
	checkReply(h.t, "initialize", body)
	var m struct {
		Result mcp.InitializeResult `json:"result"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		h.t.Fatalf("initialize reply: %v", err)
	}
	c.sid = resp.Header.Get("Mcp-Session-Id")
	c.version = m.Result.ProtocolVersion
	if r := c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); r.Status != http.StatusAccepted {
		h.t.Fatalf("notifications/initialized: HTTP %d, want 202", r.Status)
	}
	return c
}

// request builds a POST carrying body with the session's headers.
func (c *client) request(method, body string) *http.Request {
	req := httptest.NewRequest(method, "http://127.0.0.1/mcp", strings.NewReader(body))
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", c.accept)
	if c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
		req.Header.Set("MCP-Protocol-Version", c.version)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	return req
}

// send POSTs a raw body.
func (c *client) send(body string) *response { return c.h.do(c.request(http.MethodPost, body)) }

// reply is a decoded JSON-RPC reply.
type reply struct {
	Raw    []byte
	Result json.RawMessage
	Err    *mcp.Error
}

// call sends a request and waits for its reply, validating it against the schema. SSE
// replies are read to the end; server requests on the stream fail the test (use stream).
func (c *client) call(method string, params any) reply {
	c.h.t.Helper()
	resp := c.start(method, params)
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "text/event-stream") {
		for {
			data, ok := resp.nextEvent()
			if !ok {
				c.h.t.Fatalf("%s: SSE stream ended without a reply", method)
			}
			if r, final := c.readStreamed(method, data); final {
				return r
			}
			c.h.t.Fatalf("%s: unexpected message on the stream: %s", method, data)
		}
	}
	body := resp.all()
	if resp.Status != http.StatusOK {
		c.h.t.Fatalf("%s: HTTP %d: %s", method, resp.Status, body)
	}
	return decodeReply(c.h.t, method, body)
}

// start sends a request and returns the open response.
func (c *client) start(method string, params any) *response {
	c.h.t.Helper()
	c.nextID++
	p, err := json.Marshal(params)
	if err != nil {
		c.h.t.Fatalf("marshal params: %v", err)
	}
	if params == nil {
		p = nil
	}
	return c.send(string(mcp.AppendRequest(nil, mcp.IntID(int64(c.nextID)), method, p)))
}

// readStreamed classifies one streamed message: a reply (final) or a server message, both
// validated against the schema.
func (c *client) readStreamed(method string, data []byte) (reply, bool) {
	c.h.t.Helper()
	msg, perr := mcp.Decode(data)
	if perr != nil {
		c.h.t.Fatalf("%s: undecodable SSE data %s: %v", method, data, perr)
	}
	if msg.Kind == mcp.KindResult || msg.Kind == mcp.KindError {
		return decodeReply(c.h.t, method, data), true
	}
	if err := mcptest.ValidateMessage(data); err != nil {
		c.h.t.Errorf("%s: server message fails the schema: %v", method, err)
	}
	return reply{Raw: data}, false
}

func decodeReply(t testing.TB, method string, body []byte) reply {
	t.Helper()
	checkReply(t, method, body)
	msg, perr := mcp.Decode(body)
	if perr != nil {
		t.Fatalf("%s: undecodable reply %s: %v", method, body, perr)
	}
	return reply{Raw: body, Result: msg.Result, Err: msg.Error}
}

// checkReply validates a captured reply against the official schema.
func checkReply(t testing.TB, method string, body []byte) {
	t.Helper()
	if err := mcptest.ValidateReply(method, body); err != nil {
		t.Errorf("%s reply fails the 2025-11-25 schema: %v\n%s", method, err, body)
	}
}

// createTask calls tool as a task with args and returns the created task (R11).
func (c *client) createTask(tool string, args map[string]any) mcp.Task {
	c.h.t.Helper()
	r := c.call("tools/call", map[string]any{"name": tool, "arguments": args, "task": map[string]any{}})
	if r.Err != nil {
		c.h.t.Fatalf("tools/call %s: %v", tool, r.Err)
	}
	var ctr mcp.CreateTaskResult
	if err := json.Unmarshal(r.Result, &ctr); err != nil || ctr.Task.TaskID == "" {
		c.h.t.Fatalf("tools/call %s: not a CreateTaskResult: %s", tool, r.Raw)
	}
	return ctr.Task
}

// get polls tasks/get once.
func (c *client) get(id string) (mcp.Task, *mcp.Error) {
	c.h.t.Helper()
	r := c.call("tasks/get", map[string]any{"taskId": id})
	if r.Err != nil {
		return mcp.Task{}, r.Err
	}
	var tk mcp.Task
	if err := json.Unmarshal(r.Result, &tk); err != nil {
		c.h.t.Fatalf("tasks/get: %v: %s", err, r.Raw)
	}
	return tk, nil
}
