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
// params). modern_tasks_get is a modern tasks/get of a working task, for comparison: it
// reads the whole _meta envelope and checks the headers on every request.
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
		cw, creq := newReusedRequest(callTaskBody, sess)
		id := createTask(b, h, cw, creq) // a legacy task, read in the modern era (E38)
		body := `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"` + id + `","_meta":{` +
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`
		w, req := newReusedRequest(body, nil)
		req.Header.Set(mcp.HeaderProtocolVersion, mcp.Version20260728)
		req.Header.Set(mcp.HeaderMethod, mcp.MethodTasksGet)
		req.Header.Set(mcp.HeaderName, id)
		b.ReportAllocs()
		for b.Loop() {
			h.ServeHTTP(w.reset(), req.rewind())
		}
		if w.code != http.StatusOK || !bytes.Contains(w.body, []byte(`"status":"working"`)) {
			b.Fatalf("tasks/get: HTTP %d %s", w.code, w.body)
		}
	})
}
