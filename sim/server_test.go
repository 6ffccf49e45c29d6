package sim_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/sim"
)

var t0 = time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)

// loopServer is the mock server on a loop's clock, driven through its handler on the
// loop's own goroutine, in the stateless era (2026-07-28): no socket, no goroutine.
type loopServer struct {
	t   *testing.T
	srv *mockserver.Server
	id  int64
}

// send sends method with params (and the 2026-07-28 envelope declaring the Tasks
// extension, with the headers E24 asks for) and returns the reply.
func (s *loopServer) send(method string, params map[string]any) mcp.Message {
	s.t.Helper()
	meta := mcp.RequestMeta{ProtocolVersion: mcp.Version20260728, ClientInfo: &mcp.Implementation{Name: "sim-test", Version: "1"}}
	meta.ClientCapabilities.DeclareTasks()
	params["_meta"] = meta
	raw, err := json.Marshal(params)
	if err != nil {
		s.t.Fatal(err)
	}
	s.id++
	body := mcp.AppendRequest(nil, mcp.IntID(s.id), method, raw)
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	h, err := mcp.HeadersFor(method, raw)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set(mcp.HeaderProtocolVersion, h.ProtocolVersion)
	req.Header.Set(mcp.HeaderMethod, h.Method)
	if h.Name != "" {
		req.Header.Set(mcp.HeaderName, h.Name)
	}
	rec := httptest.NewRecorder()
	s.srv.Handler().ServeHTTP(rec, req)
	msg, derr := mcp.Decode(rec.Body.Bytes())
	if derr != nil {
		s.t.Fatalf("%s: HTTP %d, %v\n%s", method, rec.Code, derr, rec.Body.Bytes())
	}
	return msg
}

// post is send of a request that must succeed: its result.
func (s *loopServer) post(method string, params map[string]any) json.RawMessage {
	s.t.Helper()
	msg := s.send(method, params)
	if msg.Error != nil {
		s.t.Fatalf("%s: %v", method, msg.Error)
	}
	return msg.Result
}

// status is the task's status as tasks/get says, or "gone" when the server no longer
// knows it (-32602).
func (s *loopServer) status(id string) string {
	s.t.Helper()
	msg := s.send("tasks/get", map[string]any{"taskId": id})
	switch {
	case msg.Error != nil && msg.Error.Code == mcp.CodeInvalidParams:
		return "gone"
	case msg.Error != nil:
		s.t.Fatalf("tasks/get: %v", msg.Error)
	}
	var r struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(msg.Result, &r); err != nil {
		s.t.Fatal(err)
	}
	return r.Status
}

// TestServerOnTheLoop: the mock server's task core runs on the loop's virtual time
// (mockserver.Config.Clock): a 5 s task is working at 4 s and completed at 6 s of virtual
// time, its 20 s ttl runs out and the reaper, a chain of the loop's events, deletes it at
// its first sweep after, all on this goroutine with nothing sleeping.
func TestServerOnTheLoop(t *testing.T) {
	l := sim.New(t0)
	srv, err := mockserver.NewHandlerServer(mockserver.Config{Clock: l, Protocols: mockserver.ProtocolsModern, ReaperInterval: time.Second, PollInterval: time.Second, DefaultTTL: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	s := &loopServer{t: t, srv: srv}
	res := s.post("tools/call", map[string]any{"name": "work_task", "arguments": map[string]any{"duration_ms": 5000}})
	var created struct {
		Task struct {
			TaskID    string `json:"taskId"`
			CreatedAt string `json:"createdAt"`
		} `json:"task"`
		TaskID string `json:"taskId"`
	}
	if err := json.Unmarshal(res, &created); err != nil {
		t.Fatal(err)
	}
	id := created.Task.TaskID + created.TaskID
	if id == "" {
		t.Fatalf("no task id in %s", res)
	}
	if !strings.Contains(string(res), t0.Format("2006-01-02T15:04:05")) {
		t.Errorf("the task was created at %s of virtual time, want its createdAt in the reply: %s", t0, res)
	}
	for _, step := range []struct {
		at   time.Duration
		want string
	}{{4 * time.Second, "working"}, {6 * time.Second, "completed"}, {19 * time.Second, "completed"}} {
		l.Run(t0.Add(step.at))
		if got := s.status(id); got != step.want {
			t.Errorf("at %v of virtual time: %s, want %s", step.at, got, step.want)
		}
	}
	l.Run(t0.Add(21 * time.Second)) // the ttl ran out at 20 s: the reaper's sweep, not a lookup, deletes it
	if st := srv.Stats(); st.TasksExpired != 1 || st.MaxCleanupLag > time.Second {
		t.Errorf("the reaper deleted %d tasks, cleanup lag up to %v: want 1, within a sweep (1 s)", st.TasksExpired, st.MaxCleanupLag)
	}
	if got := s.status(id); got != "gone" {
		t.Errorf("after its ttl: %s, want gone", got)
	}
}
