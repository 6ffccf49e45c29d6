package mockserver

// Requirement (b): a task-store lookup allocates nothing (STYLE.md habit 6). Allocation
// counts are deterministic, so they are asserted in tests; speed is only benchmarked.

import (
	"bytes"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/clock"
	"github.com/tasksim/tasksim/internal/mcp"
)

// fillStore returns a store holding n working tasks with a finite ttl, the ids of those
// tasks (hits) and n ids that are not stored (misses), as bytes, the way a request holds them.
func fillStore(tb testing.TB, n int) (s *store, hits, misses [][]byte) {
	tb.Helper()
	s = newStore()
	now := time.Now()
	for range n {
		t := &task{id: randomID(), status: mcp.StatusWorking, expires: now.Add(time.Hour)}
		s.add(t)
		hits = append(hits, []byte(t.id))
		misses = append(misses, []byte(randomID()))
	}
	return s, hits, misses
}

// TestExpiryHeapOrder: push and pop keep the expiry heap a min-heap, as heap.Push and
// heap.Pop do.
func TestExpiryHeapOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	base := time.Now()
	var h expiryHeap
	var want []time.Time
	for round := range 50 {
		for range r.IntN(40) {
			at := base.Add(time.Duration(r.IntN(1000)) * time.Millisecond)
			h.push(expiry{at: at})
			want = append(want, at)
		}
		slices.SortFunc(want, func(a, b time.Time) int { return a.Compare(b) })
		for range r.IntN(len(want) + 1) {
			if got := h.pop().at; !got.Equal(want[0]) {
				t.Fatalf("round %d: popped %v, want %v", round, got, want[0])
			}
			want = want[1:]
		}
	}
	if len(h) != len(want) {
		t.Fatalf("%d expiries left, want %d", len(h), len(want))
	}
}

// BenchmarkStoreLookup runs parallel lookups over 100,000 stored tasks, alternating an
// existing and a missing id. One op is one lookup.
func BenchmarkStoreLookup(b *testing.B) {
	s, hits, misses := fillStore(b, 100_000)
	var seed, found atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(seed.Add(7919)) // each goroutine starts elsewhere in the id lists
		var hit int64
		for pb.Next() {
			i++
			j := i % len(hits)
			if i&1 == 0 {
				if s.lookup(hits[j]) != nil {
					hit++
				}
			} else if s.lookup(misses[j]) != nil {
				b.Error("a missing id was found")
			}
		}
		found.Add(hit)
	})
	b.StopTimer()
	if b.N >= 4 && found.Load() == 0 {
		b.Error("no existing id was found")
	}
}

// TestStoreLookupAllocatesNothing asserts 0 allocations for hits and misses, both of the
// store and of Server.visible (tenant check and expiry check), which tasks/get, tasks/result
// and tasks/cancel go through.
func TestStoreLookupAllocatesNothing(t *testing.T) {
	s, hits, misses := fillStore(t, 1000)
	srv := &Server{store: s}
	srv.clock = clock.Real{} // the server's time, which newServer sets from Config.Clock
	cases := []struct {
		name string
		f    func()
	}{
		{"store hit", func() {
			if s.lookup(hits[17]) == nil {
				t.Fatal("hit not found")
			}
		}},
		{"store miss", func() {
			if s.lookup(misses[17]) != nil {
				t.Fatal("miss found")
			}
		}},
		{"visible hit", func() {
			if srv.visible(s.lookup(hits[42]), "") == nil {
				t.Fatal("hit not found")
			}
		}},
		{"visible miss", func() {
			if srv.visible(s.lookup(misses[42]), "") != nil {
				t.Fatal("miss found")
			}
		}},
		{"visible to another tenant", func() {
			if srv.visible(s.lookup(hits[42]), "someone-else") != nil {
				t.Fatal("foreign task found")
			}
		}},
	}
	for _, c := range cases {
		if n := testing.AllocsPerRun(1000, c.f); n != 0 {
			t.Errorf("%s: %v allocations per lookup, want 0", c.name, n)
		}
	}
}

// maxTasksGetAllocs bounds the allocations of one tasks/get through the handler. Measured
// with Go 1.26.8 on linux/amd64: 2 per request (BenchmarkHandler/tasks_get, -memprofile):
// mcp.Decode's copy of the params, and http.MaxBytesReader. The taskId is read as a span of
// the request and looked up as bytes (params.go, store.go), and the reply is written in
// place into pooled buffers (task.appendLocked). The margin of 2 absorbs small changes in
// the standard library; a new per-request allocation in our code should fail this test.
const maxTasksGetAllocs = 2 + 2

// TestTasksGetHandlerAllocs counts the allocations of one in-process tasks/get through
// Handler().ServeHTTP, with the request, its body and the response writer reused, so the
// count is the server's alone.
func TestTasksGetHandlerAllocs(t *testing.T) {
	if raceEnabled() {
		t.Skip("the race detector drops sync.Pool items at random, so counts vary under -race")
	}
	srv, tk, sess := handlerWithTask(t)
	w, req := newReusedRequest(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"`+tk.id+`"}}`, sess)
	h := srv.Handler()
	h.ServeHTTP(w, req.rewind())
	if w.code != http.StatusOK || !bytes.Contains(w.body, []byte(`"status":"working"`)) {
		t.Fatalf("tasks/get: HTTP %d %s", w.code, w.body)
	}
	n := testing.AllocsPerRun(1000, func() { h.ServeHTTP(w.reset(), req.rewind()) })
	t.Logf("tasks/get through the handler: %v allocations per request (bound %d)", n, maxTasksGetAllocs)
	if n > maxTasksGetAllocs {
		t.Errorf("tasks/get allocates %v times per request, want at most %d", n, maxTasksGetAllocs)
	}
	if w.code != http.StatusOK {
		t.Fatalf("tasks/get: HTTP %d %s", w.code, w.body)
	}
}

// BenchmarkTasksGetHandler is one in-process tasks/get through Handler().ServeHTTP, without
// sockets: the server's own cost per poll, and its allocations.
func BenchmarkTasksGetHandler(b *testing.B) {
	srv, tk, sess := handlerWithTask(b)
	w, req := newReusedRequest(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"`+tk.id+`"}}`, sess)
	h := srv.Handler()
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w.reset(), req.rewind())
	}
	if w.code != http.StatusOK {
		b.Fatalf("tasks/get: HTTP %d %s", w.code, w.body)
	}
}

// handlerWithTask returns an unbound server with one session and one working task.
func handlerWithTask(tb testing.TB) (*Server, *task, *session) {
	tb.Helper()
	srv, err := NewHandlerServer(Config{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(srv.Close)
	sess := newSession(mcp.Version20251125, mcp.ClientCapabilities{})
	srv.sessions.add(sess)
	now := time.Now()
	tk := &task{srv: srv, id: randomID(), owner: sess, created: stampOf(now), updated: stampOf(now),
		ttl: millis(time.Hour), expires: now.Add(time.Hour), status: mcp.StatusWorking}
	srv.store.add(tk)
	return srv, tk, sess
}

// reusedRequest is an in-process POST whose body can be replayed without allocating. It
// carries the headers of sess, or none when sess is nil (initialize).
type reusedRequest struct {
	*http.Request
	body []byte
	rd   *rewindBody
}

type rewindBody struct{ bytes.Reader }

func (*rewindBody) Close() error { return nil }

func newReusedRequest(body string, sess *session) (*discardWriter, *reusedRequest) {
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil)
	req.Header.Set("Content-Type", "application/json")
	if sess != nil {
		req.Header.Set(headerSessionID, sess.id)
		req.Header.Set(headerProtocolVersion, sess.version)
	}
	rr := &reusedRequest{Request: req, body: []byte(body), rd: &rewindBody{}}
	req.Body = rr.rd
	req.ContentLength = int64(len(body))
	return &discardWriter{h: http.Header{}}, rr
}

func (r *reusedRequest) rewind() *http.Request {
	r.rd.Reset(r.body)
	return r.Request
}

// discardWriter is a ResponseWriter that allocates nothing once its buffers have grown.
type discardWriter struct {
	h    http.Header
	code int
	body []byte
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}
func (w *discardWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.body = append(w.body, b...)
	return len(b), nil
}

func (w *discardWriter) reset() *discardWriter {
	w.code, w.body = 0, w.body[:0]
	return w
}

// raceEnabled reports whether the test binary was built with -race.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}
