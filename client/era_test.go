package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/mcp/mcptest"
	"github.com/tasksim/tasksim/mockserver"
)

// modernChecker wraps a handler and validates every request of the modern era it sees (a
// POST with a modern MCP-Protocol-Version) against the 2026-07-28 schemas
// (mcptest.ValidateMessage2026), and that its headers agree with its body (E24, E26).
type modernChecker struct {
	t    *testing.T
	next http.Handler
	mu   sync.Mutex
	seen []string // the methods of the modern requests, in order
}

func (c *modernChecker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && mcp.IsModern(r.Header.Get(mcp.HeaderProtocolVersion)) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err := mcptest.ValidateMessage2026(body); err != nil {
			c.t.Errorf("modern request does not match the 2026-07-28 schema: %v\n%s", err, body)
		}
		msg, perr := mcp.Decode(body)
		if perr != nil {
			c.t.Errorf("modern request: %v", perr)
		} else {
			h := mcp.RequestHeaders{ProtocolVersion: r.Header.Get(mcp.HeaderProtocolVersion),
				Method: r.Header.Get(mcp.HeaderMethod), Name: r.Header.Get(mcp.HeaderName)}
			if e := mcp.CheckHeaders(h, &msg); e != nil {
				c.t.Errorf("modern request headers %+v: %v", h, e)
			}
			c.mu.Lock()
			c.seen = append(c.seen, msg.Method)
			c.mu.Unlock()
		}
	}
	c.next.ServeHTTP(w, r)
}

func (c *modernChecker) methods() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.seen)
}

// inprocTarget returns a target for a mock server of cfg served in-process
// (HandlerTransport), every modern request checked; call it inside the synctest bubble
// when time matters.
func inprocTarget(t *testing.T, cfg mockserver.Config) (*Target, *modernChecker) {
	t.Helper()
	srv, err := mockserver.NewHandlerServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	c := &modernChecker{t: t, next: srv.Handler()}
	return &Target{URL: "http://embedded.test/mcp", Header: http.Header{}, Client: &http.Client{Transport: HandlerTransport(c)},
		ClientInfo: mcp.Implementation{Name: "tasksim-test", Version: "1"}}, c
}

// TestE32EraOfMock: the era tasksim finds for the mock server in each of its --protocols,
// and the manifest ProbeWith reads: a server of both eras with the Tasks extension is
// described in 2026-07-28 (as run and sweep speak to it) unless 2025-11-25 is pinned; a
// modern-only one in 2026-07-28, with no session; a legacy one as before.
func TestE32EraOfMock(t *testing.T) {
	tools := []string{"work", "work_task", "work_sync"}
	cases := []struct {
		protocols mockserver.Protocols
		pin       string
		era       string   // Era().Version
		eras      []string // Manifest.Eras
		describes string   // Manifest.Era
		extension bool
		legacyOK  bool // Era().ServesLegacy()
	}{
		{mockserver.ProtocolsBoth, "", ProtocolModern, []string{ProtocolModern, ProtocolLegacy}, ProtocolModern, true, true},
		{mockserver.ProtocolsBoth, ProtocolModern, ProtocolModern, []string{ProtocolModern, ProtocolLegacy}, ProtocolModern, true, false},
		{mockserver.ProtocolsModern, "", ProtocolModern, []string{ProtocolModern}, ProtocolModern, true, false},
		{mockserver.ProtocolsLegacy, "", ProtocolLegacy, []string{ProtocolLegacy}, ProtocolLegacy, false, true},
		{mockserver.ProtocolsLegacy, ProtocolLegacy, ProtocolLegacy, []string{ProtocolLegacy}, ProtocolLegacy, false, true},
	}
	for _, tc := range cases {
		t.Run(string(tc.protocols)+"/"+tc.pin, func(t *testing.T) {
			target, checker := inprocTarget(t, mockserver.Config{Protocols: tc.protocols})
			target.Protocol = tc.pin
			ctx := context.Background()
			era, err := target.Era(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if era.Version != tc.era || era.How == "" {
				t.Errorf("Era() = %+v, want version %s, with how it was told", era, tc.era)
			}
			if tc.pin != "" && (!era.Pinned || len(checker.methods()) != 0) {
				t.Errorf("pinned %s: Era() = %+v after %v: want pinned, nothing sent", tc.pin, era, checker.methods())
			}
			m, err := ProbeWith(ctx, target, ProbeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if m.Era != tc.describes || !slices.Equal(m.Eras, tc.eras) || m.Tasks.Extension != tc.extension {
				t.Errorf("manifest era %q eras %q extension %v, want %q %q %v", m.Era, m.Eras, m.Tasks.Extension, tc.describes, tc.eras, tc.extension)
			}
			var names []string
			for _, tl := range m.Tools {
				names = append(names, tl.Name)
			}
			if !slices.Equal(names, tools) || m.Server.Name != "tasksim-mock" || m.Instructions == "" {
				t.Errorf("tools %q server %+v instructions %q: want %q from tasksim-mock, with instructions", names, m.Server, m.Instructions, tools)
			}
			switch modern := m.Era == ProtocolModern; {
			case modern && (m.ProtocolVersion != ProtocolModern || m.SessionID || !m.Session.Stateless ||
				m.Session.DeleteStatus != 0 || m.Session.GetStatus != 0 || !strings.Contains(m.Session.Note, "no sessions")):
				t.Errorf("modern manifest: protocol %q session_id %v session %+v: want 2026-07-28, no session, checks not applicable", m.ProtocolVersion, m.SessionID, m.Session)
			case modern && (m.Tasks.Declared || m.Tools[0].TaskSupport != ""):
				t.Errorf("modern manifest: tasks %+v, taskSupport %q: want no legacy leaves, no taskSupport (E37, E40)", m.Tasks, m.Tools[0].TaskSupport)
			case modern && !slices.Equal(checker.methods()[len(checker.methods())-1:], []string{mcp.MethodToolsList}):
				t.Errorf("modern requests %q: want tools/list last", checker.methods())
			case !modern && (m.ProtocolVersion != ProtocolLegacy || !m.SessionID || m.Session.Stateless || !m.Tasks.ToolsCall):
				t.Errorf("legacy manifest: protocol %q session_id %v session %+v tasks %+v", m.ProtocolVersion, m.SessionID, m.Session, m.Tasks)
			}
			if got := era.ServesLegacy(); got != tc.legacyOK {
				t.Errorf("ServesLegacy() = %v, want %v", got, tc.legacyOK)
			}
		})
	}
}

// TestModernOnlyMessages: a command asked for 2025-11-25 is told plainly that a modern-only
// target speaks only 2026-07-28: the initialize of a pinned 2025-11-25 was refused with
// -32022 (E35).
func TestModernOnlyMessages(t *testing.T) {
	target, _ := inprocTarget(t, mockserver.Config{Protocols: mockserver.ProtocolsModern})
	ctx := context.Background()
	target.Protocol = ProtocolLegacy // no detection: initialize is refused (E35)
	_, err := ProbeWith(ctx, target, ProbeOptions{})
	var me *ModernOnlyError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "initialize was refused with -32022") ||
		!strings.Contains(err.Error(), "leave the protocol to detection, or pin 2026-07-28") {
		t.Errorf("ProbeWith pinned to 2025-11-25 = %v, want a *ModernOnlyError from initialize", err)
	}
	target.Protocol = "2025-06-18"
	if _, err := target.Era(ctx); err == nil {
		t.Error("Era() with protocol 2025-06-18: no error")
	}
}

// TestModernProbeCreateTask: --create-task in 2026-07-28 is one tools/call declaring the
// extension; a task's ttlMs and pollIntervalMs are recorded and it is cancelled; a call the
// server answers synchronously is noted; a server without the extension gets no call.
func TestModernProbeCreateTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := mockserver.Config{Protocols: mockserver.ProtocolsModern, PollInterval: 300 * time.Millisecond, DefaultTTL: time.Minute}
		target, checker := inprocTarget(t, cfg)
		ctx := context.Background()
		m, err := ProbeWith(ctx, target, ProbeOptions{CreateTask: true})
		if err != nil {
			t.Fatal(err)
		}
		notes := strings.Join(m.Notes, "; ")
		if m.PollIntervalMs == nil || *m.PollIntervalMs != 300 || m.TTLMs == nil || *m.TTLMs != 60_000 || !m.PollIntervalFound {
			t.Errorf("poll_interval_ms %v ttl_ms %v, want 300 and 60000; notes %q", m.PollIntervalMs, m.TTLMs, notes)
		}
		if !strings.Contains(notes, `one task of "work" was created`) || !strings.Contains(notes, "the task was cancelled") {
			t.Errorf("notes %q: want the task of work created and cancelled", notes)
		}
		want := []string{mcp.MethodServerDiscover, mcp.MethodToolsList, mcp.MethodToolsCall, mcp.MethodTasksCancel}
		if got := checker.methods(); !slices.Equal(got, want) {
			t.Errorf("modern requests %q, want %q", got, want)
		}

		m, err = ProbeWith(ctx, target, ProbeOptions{CreateTask: true, Tool: "work_sync", Args: map[string]any{"duration_ms": 10}})
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Join(m.Notes, "; "); m.PollIntervalMs != nil || !strings.Contains(n, "answered synchronously") {
			t.Errorf("work_sync: poll_interval_ms %v notes %q, want a synchronous answer noted", m.PollIntervalMs, n)
		}

		noTasks, checker := inprocTarget(t, mockserver.Config{Protocols: mockserver.ProtocolsModern, NoTasks: true})
		m, err = ProbeWith(ctx, noTasks, ProbeOptions{CreateTask: true})
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Join(m.Notes, "; "); m.Tasks.Extension || !strings.Contains(n, "does not advertise the Tasks extension") ||
			slices.Contains(checker.methods(), mcp.MethodToolsCall) {
			t.Errorf("no extension: extension %v notes %q requests %q, want no call", m.Tasks.Extension, n, checker.methods())
		}
	})
}

// answer is one canned HTTP answer of a fake server.
type answer struct {
	status int
	ctype  string
	body   string
}

// fakeServer answers the n-th POST with answers[min(n, len-1)] and counts them.
type fakeServer struct {
	answers []answer
	n       atomic.Int32
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := int(f.n.Add(1)) - 1
	a := f.answers[min(n, len(f.answers)-1)]
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	b, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(b, &req)
	body := strings.ReplaceAll(a.body, "ID", string(req.ID)) // the reply answers the request
	if a.ctype != "" {
		w.Header().Set("Content-Type", a.ctype)
	}
	w.WriteHeader(a.status)
	io.WriteString(w, body)
}

const (
	jsonCT       = "application/json"
	discoverBody = `{"jsonrpc":"2.0","id":ID,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}},"ttlMs":0,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fake","version":"9"}}}}`
)

func rpcError(code, data string) string {
	if data != "" {
		data = `,"data":` + data
	}
	return `{"jsonrpc":"2.0","id":ID,"error":{"code":` + code + `,"message":"m"` + data + `}}`
}

// TestE32EraTable: each kind of answer to server/discover and the era it means (E32): a
// DiscoverResult or a recognised modern error is modern; -32022 is retried with 2026-07-28
// when listed (E10); anything else falls back to initialize; unreachable or refused
// credentials are errors.
func TestE32EraTable(t *testing.T) {
	cases := []struct {
		name     string
		answers  []answer
		era      string // "" = an error
		how      string // in Era.How, or in the error
		requests int32
	}{
		{"DiscoverResult", []answer{{200, jsonCT, discoverBody}}, ProtocolModern, "server/discover answered", 1},
		{"DiscoverResult on SSE", []answer{{200, "text/event-stream", "event: message\ndata: " + discoverBody + "\n\n"}}, ProtocolModern, "server/discover answered", 1},
		{"400 empty", []answer{{400, "", ""}}, ProtocolLegacy, "HTTP 400 with an empty body", 1},
		{"400 plain text", []answer{{400, "text/plain", "Bad Request"}}, ProtocolLegacy, "no JSON-RPC error", 1},
		{"400 -32600 (a session required)", []answer{{400, jsonCT, rpcError("-32600", "")}}, ProtocolLegacy, "no modern error", 1},
		{"400 -32000 (TypeScript SDK, no session)", []answer{{400, jsonCT, rpcError("-32000", "")}}, ProtocolLegacy, "no modern error", 1},
		{"400 -32020", []answer{{400, jsonCT, rpcError("-32020", "")}}, ProtocolModern, "refused tasksim's request", 1},
		{"400 -32021", []answer{{400, jsonCT, rpcError("-32021", `{"requiredCapabilities":{}}`)}}, ProtocolModern, "refused tasksim's request", 1},
		{"400 -32001 (draft -32020)", []answer{{400, jsonCT, rpcError("-32001", "")}}, ProtocolModern, "draft number of -32020", 1},
		{"404 -32601", []answer{{404, jsonCT, rpcError("-32601", "")}}, ProtocolModern, "without server/discover", 1},
		{"404 -32001 (session not found)", []answer{{404, jsonCT, rpcError("-32001", "")}}, ProtocolLegacy, "no modern error", 1},
		{"404 empty", []answer{{404, "", ""}}, ProtocolLegacy, "HTTP 404 with an empty body", 1},
		{"200 -32601", []answer{{200, jsonCT, rpcError("-32601", "")}}, ProtocolLegacy, "HTTP 200 with JSON-RPC error -32601", 1},
		{"200 InitializeResult", []answer{{200, jsonCT, `{"jsonrpc":"2.0","id":ID,"result":{"protocolVersion":"2025-11-25"}}`}}, ProtocolLegacy, "no DiscoverResult", 1},
		{"200 HTML", []answer{{200, "text/html", "<html>hi</html>"}}, ProtocolLegacy, "HTML", 1},
		{"200 SSE with a null-id error", []answer{{200, "text/event-stream", `data: {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"m"}}` + "\n\n"}}, ProtocolLegacy, "HTTP 200 with JSON-RPC error -32600", 1},
		{"200 SSE that ends without the reply", []answer{{200, "text/event-stream", "event: ping\ndata: \n\n"}}, ProtocolLegacy, "SSE stream ended before the reply", 1},
		{"-32022 listing 2026-07-28, then discover", []answer{{400, jsonCT, rpcError("-32022", `{"supported":["2026-07-28"],"requested":"2026-07-28"}`)},
			{200, jsonCT, discoverBody}}, ProtocolModern, "after -32022", 2},
		{"-32022 listing 2026-07-28 twice", []answer{{400, jsonCT, rpcError("-32022", `{"supported":["2026-07-28"],"requested":"2026-07-28"}`)}}, "", "again", 2},
		{"-32022 listing 2025-11-25", []answer{{400, jsonCT, rpcError("-32022", `{"supported":["2025-11-25"],"requested":"2026-07-28"}`)}}, ProtocolLegacy, "no modern version tasksim speaks", 1},
		{"-32022 listing 2027-01-01", []answer{{400, jsonCT, rpcError("-32022", `{"supported":["2027-01-01"],"requested":"2026-07-28"}`)}}, "", `serves protocol versions ["2027-01-01"]`, 1},
		{"401", []answer{{401, jsonCT, `{"error":"no token"}`}}, "", "refused the client's credentials", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := &fakeServer{answers: tc.answers}
			target := &Target{URL: "http://fake.test/mcp", Client: &http.Client{Transport: HandlerTransport(fake)}}
			era, err := target.Era(context.Background())
			switch {
			case tc.era == "" && (err == nil || !strings.Contains(err.Error(), tc.how)):
				t.Errorf("Era() = %+v, %v; want an error saying %q", era, err, tc.how)
			case tc.era != "" && err != nil:
				t.Errorf("Era(): %v, want %s", err, tc.era)
			case tc.era != "" && (era.Version != tc.era || !strings.Contains(era.How, tc.how)):
				t.Errorf("Era() = %s (%q), want %s saying %q", era.Version, era.How, tc.era, tc.how)
			}
			if got := fake.n.Load(); got != tc.requests {
				t.Errorf("%d requests, want %d", got, tc.requests)
			}
			if tc.name == "DiscoverResult" && (era.ServerInfo.Name != "fake" || !era.Discover.Capabilities.DeclaresTasks() ||
				!slices.Equal(era.Eras(), []string{ProtocolModern})) {
				t.Errorf("Era() = %+v: want serverInfo fake, the extension, eras [2026-07-28]", era)
			}
		})
	}
}

// TestE34EraCache: the verdict is found once per Target and URL, by one request even when
// many clients ask at once; ForgetEra and a new URL detect again; an error is not cached;
// a pin sends nothing.
func TestE34EraCache(t *testing.T) {
	fake := &fakeServer{answers: []answer{{200, jsonCT, discoverBody}}}
	target := &Target{URL: "http://fake.test/mcp", Client: &http.Client{Transport: HandlerTransport(fake)}}
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if era, err := target.Era(ctx); err != nil || era.Version != ProtocolModern {
				t.Errorf("Era() = %+v, %v", era, err)
			}
		})
	}
	wg.Wait()
	if n := fake.n.Load(); n != 1 {
		t.Errorf("%d server/discover for 8 concurrent Era(), want 1 (E34)", n)
	}
	copied := *target // as per-tenant targets are made: the verdict is shared
	if _, err := copied.Era(ctx); err != nil || fake.n.Load() != 1 {
		t.Errorf("a copy of the Target detected again (%d requests, %v)", fake.n.Load(), err)
	}
	target.ForgetEra()
	_, _ = target.Era(ctx)
	if n := fake.n.Load(); n != 2 {
		t.Errorf("after ForgetEra: %d requests, want 2", n)
	}
	target.URL = "http://fake.test/other"
	_, _ = target.Era(ctx)
	if n := fake.n.Load(); n != 3 {
		t.Errorf("after a new URL: %d requests, want 3", n)
	}
	target.Protocol = ProtocolModern
	if era, err := target.Era(ctx); err != nil || !era.Pinned || fake.n.Load() != 3 {
		t.Errorf("pinned: Era() = %+v, %v after %d requests, want pinned with none sent", era, err, fake.n.Load())
	}

	refusing := &fakeServer{answers: []answer{{401, "", ""}, {200, jsonCT, discoverBody}}}
	target = &Target{URL: "http://fake.test/mcp", Client: &http.Client{Transport: HandlerTransport(refusing)}}
	if _, err := target.Era(ctx); err == nil {
		t.Fatal("a 401 gave no error")
	}
	if era, err := target.Era(ctx); err != nil || era.Version != ProtocolModern {
		t.Errorf("after an error, Era() = %+v, %v: want detected again", era, err)
	}
}

// TestWithMeta: the envelope goes into params as their last member.
func TestWithMeta(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, `{"_meta":{}}`},
		{`{}`, `{"_meta":{}}`},
		{` { } `, `{ "_meta":{}}`},
		{`{"cursor":"c"}`, `{"cursor":"c","_meta":{}}`},
	} {
		got, err := withMeta([]byte(tc.in), []byte(`{}`))
		if err != nil || string(got) != tc.want {
			t.Errorf("withMeta(%q) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{`[]`, `{"_meta":{}}`, `{`} {
		if _, err := withMeta([]byte(bad), []byte(`{}`)); err == nil {
			t.Errorf("withMeta(%q): no error", bad)
		}
	}
}

// TestModernWithoutDiscover: a modern server that answers server/discover with -32601 (404:
// it has no such method, against E8) is modern by E32, and is probed without asking again:
// the manifest says the Tasks extension is not known, so a run takes plain calls with the
// sync fallback, and is refused naming the extension without it.
func TestModernWithoutDiscover(t *testing.T) {
	srv, err := mockserver.NewHandlerServer(mockserver.Config{Protocols: mockserver.ProtocolsModern})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	discovers := 0
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(mcp.HeaderMethod) == (mcp.V20260728{}).Method(mcp.OpServerDiscover) {
			discovers++
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			w.Write(mcp.AppendError(nil, mcp.IntID(1), mcp.Errorf(mcp.CodeMethodNotFound, "method not found")))
			return
		}
		srv.Handler().ServeHTTP(w, r)
	})
	target := &Target{URL: "http://embedded.test/mcp", Header: http.Header{}, Client: &http.Client{Transport: HandlerTransport(h)},
		ClientInfo: mcp.Implementation{Name: "tasksim-test", Version: "1"}}
	m, err := ProbeWith(context.Background(), target, ProbeOptions{Tool: "work"})
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	if m.Era != ProtocolModern || m.Tasks.Extension || len(m.Tools) != 3 || discovers != 1 ||
		!strings.Contains(strings.Join(m.Notes, "; "), "gave no DiscoverResult") {
		t.Errorf("era %q extension %v tools %d, %d server/discover, notes %q: want 2026-07-28, the extension unknown, the tools, one ask, a note",
			m.Era, m.Tasks.Extension, len(m.Tools), discovers, m.Notes)
	}
	if err := m.Decide(FallbackRefuse); err == nil || !strings.Contains(err.Error(), mcp.ExtTasks) {
		t.Errorf("fallback refuse: %v, want the extension named", err)
	}
	if err := m.Decide(FallbackSync); err != nil || m.AsTask {
		t.Errorf("fallback sync: %v, as_task %v", err, m.AsTask)
	}
}
