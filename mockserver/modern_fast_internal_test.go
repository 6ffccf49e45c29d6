package mockserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
)

// TestModernTaskWireMatchesStrictWriter: appendGetModernLocked writes the bytes
// mcp.AppendGetTaskResult writes for detailedLocked(true) and the server's _meta, over
// statuses, messages that need escaping, ttls, ids, pollInterval policies and the insecure
// modes that change the statusMessage; and leaves a task with a payload to the strict
// writer.
func TestModernTaskWireMatchesStrictWriter(t *testing.T) {
	for _, cfg := range []Config{
		{Protocols: ProtocolsBoth},
		{Protocols: ProtocolsModern, ServerName: `odd "name"`, PollInterval: 1500 * time.Millisecond, Poll: PollPolicy{Kind: "per_tool", PerTool: map[string]time.Duration{ToolWorkTask: 20 * time.Second}}},
		{Protocols: ProtocolsBoth, Inject: true, Insecure: Insecure{EchoSecrets: true}},
	} {
		srv, err := NewHandlerServer(cfg)
		if err != nil {
			t.Fatal(err)
		}
		created := time.Date(2026, 7, 28, 10, 30, 0, 123_456_789, time.Local)
		updated := created.Add(90*time.Minute + 999*time.Microsecond)
		for _, st := range []mcp.Status{mcp.StatusWorking, mcp.StatusInputRequired, mcp.StatusCompleted, mcp.StatusFailed, mcp.StatusCancelled} {
			for _, pending := range [][]bool{nil, {true}, {true, false}} {
				for _, msg := range []string{"", "plain", `quote " and \ and <tag> & é and ` + "\n\t\x01"} {
					for _, ttl := range []optMs{{}, {ms: 0, ok: true}, {ms: 3_600_000, ok: true}, {ms: 1 << 53, ok: true}} {
						for _, tool := range []string{ToolWork, ToolWorkTask} {
							tk := &task{srv: srv, id: randomID(), tool: tool, status: st, statusMessage: msg,
								created: stampOf(created), updated: stampOf(updated), ttl: ttl, echo: "arguments: " + msg, end: endCompleted}
							if tool == ToolWorkTask {
								tk.id = `id "odd" ` + tk.id
							}
							for i, answered := range pending {
								tk.pending = append(tk.pending, &elicitation{id: `"e-` + itoa(int64(i)) + `"`, t: tk, round: i + 1, answered: answered})
							}
							got, ok := tk.appendGetModernLocked([]byte("x"))
							d := tk.detailedLocked(true)
							payload := d.InputRequests != nil || d.Result != nil || d.Error != nil
							if ok == payload {
								t.Fatalf("%s task, pending %v: fast writer ok %v, payload %v", st, pending, ok, payload)
							}
							if !ok {
								if string(got) != "x" {
									t.Fatalf("fast writer wrote %q and declined", got)
								}
								continue
							}
							want, err := mcp.AppendGetTaskResult([]byte("x"), &d, srv.modern.info)
							if err != nil {
								t.Fatal(err)
							}
							if string(got) != string(want) {
								t.Fatalf("tasks/get:\n got %s\nwant %s", got, want)
							}
						}
					}
				}
			}
		}
		srv.Close()
	}
}

// TestModernFastMatchesFull: every reply of the modern front end, status, headers and body,
// is the same with the fast scan (mcp.ScanModernRequest) as through the full readers, over
// well-formed requests and malformed ones.
func TestModernFastMatchesFull(t *testing.T) {
	srv, err := NewHandlerServer(Config{Protocols: ProtocolsBoth})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	h := srv.Handler()
	sess := initSession(t, srv, h)
	cw, creq := newReusedRequest(callTaskBody, sess)
	id := createTask(t, h, cw, creq)

	const version = `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`
	const caps = `"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	meta := `"_meta":{` + version + `,` + caps + `}`
	type req struct{ method, params, version, name string }
	var reqs []req
	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		extra := ""
		if method == "tasks/update" {
			extra = `"inputResponses":{"nope":{"action":"accept","content":{"answer":"a"}}},`
		}
		for _, tid := range []string{id, "unknown", ""} {
			if method == "tasks/cancel" && tid == id {
				continue // it would end the task the others read
			}
			for _, p := range []string{
				`{` + extra + `"taskId":"` + tid + `",` + meta + `}`,
				`{"taskId":"` + tid + `","_meta":{` + version + `,"io.modelcontextprotocol/clientCapabilities":{}}}`,
				`{"taskId":"` + tid + `","_meta":{` + version + `,"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"url":{}},"extensions":{"io.modelcontextprotocol/tasks":{},"x":{}}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"progressToken":3}}`,
				`{"taskId":"` + tid + `","taskId":"` + tid + `",` + meta + `}`,
				`{"TaskId":"` + tid + `",` + meta + `}`,
				`{"taskId":"` + tid + `","_meta":{` + version + `}}`,
				`{"taskId":"` + tid + `","_meta":{` + version + `,"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":1}}}}`,
				`{"taskId":"` + tid + `","_meta":{"io.modelcontextprotocol/protocolVersion":"2027-01-01",` + caps + `}}`,
				`{"taskId":"` + tid + `","_meta":{` + version + `,` + caps + `,"io.modelcontextprotocol/logLevel":"loud"}}`,
				`{"taskId":"` + tid + `"}`,
				`{"taskId":7,` + meta + `}`,
			} {
				for _, hv := range []string{"2026-07-28", "2025-11-25", ""} {
					for _, name := range []string{tid, "other", "=?base64?" + "dA==" + "?="} {
						reqs = append(reqs, req{method, p, hv, name})
					}
				}
			}
		}
	}
	for _, method := range []string{"server/discover", "tools/list", "ping", "tasks/list"} {
		reqs = append(reqs, req{method, `{` + meta + `}`, "2026-07-28", ""}, req{method, `{"_meta":{` + version + `}}`, "2026-07-28", ""})
	}
	reqs = append(reqs,
		req{"tools/call", `{"name":"nope",` + meta + `}`, "2026-07-28", "nope"},
		req{"tools/call", `{"name":"work_task","_meta":{` + version + `,"io.modelcontextprotocol/clientCapabilities":{}}}`, "2026-07-28", "work_task"},
		req{"tools/call", `{"name":"work_task",` + meta + `}`, "2026-07-28", "work"},
	)
	post := func(r req, fullOnly bool) *httptest.ResponseRecorder {
		srv.modern.fullOnly = fullOnly
		body := `{"jsonrpc":"2.0","id":"r-1","method":"` + r.method + `","params":` + r.params + `}`
		hr := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range map[string]string{mcp.HeaderProtocolVersion: r.version, mcp.HeaderMethod: r.method, mcp.HeaderName: r.name} {
			if v != "" {
				hr.Header.Set(k, v)
			}
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, hr)
		return w
	}
	fast := 0
	for _, r := range reqs {
		m, _ := mcp.Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"` + r.method + `","params":` + r.params + `}`))
		if _, ok := mcp.ScanModernRequest(&m, mcp.RequestHeaders{ProtocolVersion: r.version, Method: r.method, Name: r.name}, srv.modern.versions); ok {
			fast++
		}
		a, b := post(r, false), post(r, true)
		if a.Code != b.Code || a.Body.String() != b.Body.String() || a.Header().Get("Content-Type") != b.Header().Get("Content-Type") {
			t.Errorf("%s %s (headers %q %q):\nfast HTTP %d %s\nfull HTTP %d %s", r.method, r.params, r.version, r.name, a.Code, a.Body, b.Code, b.Body)
		}
	}
	if fast < 10 {
		t.Errorf("the fast scan took %d of %d requests: too few to compare", fast, len(reqs))
	}
	t.Logf("%d requests, %d through the fast scan", len(reqs), fast)
}
