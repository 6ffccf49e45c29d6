package mockserver

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/tasksim/tasksim/internal/mcp"
)

// BenchmarkHandlerEras measures the legacy hot path on a server that answers both eras
// (Protocols both, tasksim serve's default), beside BenchmarkHandler's legacy-only server:
// each legacy request pays the era test of routeModern (a header test and two scans of its
// params). modern_tasks_get is a modern tasks/get of a working task, for comparison: its
// envelope, headers and taskId are read by the fast scan (mcp.ScanModernRequest) and the
// task written in place (appendGetModernLocked).
//
//	go test -run '^$' -bench 'HandlerEras' ./mockserver/
func BenchmarkHandlerEras(b *testing.B) {
	both := func(b *testing.B) (http.Handler, *session) {
		srv, err := NewHandlerServer(Config{Protocols: ProtocolsBoth})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(srv.Close)
		h := srv.Handler()
		return h, initSession(b, srv, h)
	}
	b.Run("legacy_tasks_get", func(b *testing.B) {
		h, sess := both(b)
		cw, creq := newReusedRequest(callTaskBody, sess)
		w, req := newReusedRequest(idBody("tasks/get", createTask(b, h, cw, creq)), sess)
		b.ReportAllocs()
		for b.Loop() {
			h.ServeHTTP(w.reset(), req.rewind())
		}
		if w.code != http.StatusOK || !bytes.Contains(w.body, []byte(`"status":"working"`)) {
			b.Fatalf("tasks/get: HTTP %d %s", w.code, w.body)
		}
	})
	b.Run("modern_tasks_get", func(b *testing.B) {
		h, sess := both(b)
		w, req := modernGetRequest(b, h, sess)
		b.ReportAllocs()
		for b.Loop() {
			h.ServeHTTP(w.reset(), req.rewind())
		}
		if w.code != http.StatusOK || !bytes.Contains(w.body, []byte(`"status":"working"`)) {
			b.Fatalf("tasks/get: HTTP %d %s", w.code, w.body)
		}
	})
}

// modernGetRequest creates a working task through sess (a legacy task, read in the modern
// era, E38) and returns a reusable modern tasks/get of it, as a client of the extension sends
// it: the _meta envelope declaring the extension, and the three headers.
func modernGetRequest(tb testing.TB, h http.Handler, sess *session) (*discardWriter, *reusedRequest) {
	cw, creq := newReusedRequest(callTaskBody, sess)
	id := createTask(tb, h, cw, creq)
	body := `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"` + id + `","_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`
	w, req := newReusedRequest(body, nil)
	req.Header.Set(mcp.HeaderProtocolVersion, mcp.Version20260728)
	req.Header.Set(mcp.HeaderMethod, mcp.MethodTasksGet)
	req.Header.Set(mcp.HeaderName, id)
	return w, req
}

// TestModernTasksGetAllocs: a modern tasks/get of a working task allocates no more than a
// legacy one (TestTasksGetHandlerAllocs): the body's reader and the params Decode copies.
func TestModernTasksGetAllocs(t *testing.T) {
	if raceEnabled() {
		t.Skip("the race detector drops sync.Pool items at random, so counts vary under -race")
	}
	srv, err := NewHandlerServer(Config{Protocols: ProtocolsBoth})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	h := srv.Handler()
	w, req := modernGetRequest(t, h, initSession(t, srv, h))
	n := testing.AllocsPerRun(500, func() { h.ServeHTTP(w.reset(), req.rewind()) })
	check(t, "modern tasks/get", w, `"status":"working"`, n, 2)
}
