package mockserver

// The server's share of the garbage collector's work under load: the bytes and allocations
// of each hot method through the handler (how often the GC runs), and the heap objects a
// live task or session keeps (how long each cycle marks). Allocation and object counts do
// not depend on the machine's speed; these benchmarks are short and in-process.
//
//	go test -run '^$' -bench 'Handler|Retained' -benchtime 1s ./mockserver/

import (
	"bytes"
	"net/http"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// callTaskBody creates a task that works for a day and is kept for an hour: it neither
// finishes nor expires while a benchmark runs.
const callTaskBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","arguments":{"duration_ms":86400000},"task":{"ttl":3600000}}}`

// handlerSession returns an unbound server and a session opened through the handler
// (initialize, notifications/initialized), as a load generator's client opens one.
func handlerSession(tb testing.TB) (*Server, http.Handler, *session) {
	tb.Helper()
	srv, err := NewHandlerServer(Config{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(srv.Close)
	h := srv.Handler()
	sess := initSession(tb, srv, h)
	return srv, h, sess
}

const initBody = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`

// initSession opens one session through h.
func initSession(tb testing.TB, srv *Server, h http.Handler) *session {
	tb.Helper()
	w, req := newReusedRequest(initBody, nil)
	h.ServeHTTP(w, req.rewind())
	sess := srv.sessions.lookup(w.h.Get(headerSessionID))
	if w.code != http.StatusOK || sess == nil || !sess.tasks {
		tb.Fatalf("initialize: HTTP %d %s", w.code, w.body)
	}
	w, req = newReusedRequest(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, sess)
	h.ServeHTTP(w, req.rewind())
	if w.code != http.StatusAccepted {
		tb.Fatalf("notifications/initialized: HTTP %d %s", w.code, w.body)
	}
	return sess
}

// createTask creates a working task through h with w and req (callTaskBody) and returns its id.
func createTask(tb testing.TB, h http.Handler, w *discardWriter, req *reusedRequest) string {
	h.ServeHTTP(w.reset(), req.rewind())
	const key = `"taskId":"`
	i := bytes.Index(w.body, []byte(key))
	if w.code != http.StatusOK || i < 0 || !bytes.Contains(w.body, []byte(`"status":"working"`)) {
		tb.Fatalf("tools/call: HTTP %d %s", w.code, w.body)
	}
	id := w.body[i+len(key):]
	return string(id[:bytes.IndexByte(id, '"')])
}

func idBody(method, id string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"taskId":"` + id + `"}}`
}

// purgeAll deletes every stored task, as the reaper does when their ttl runs out.
func purgeAll(srv *Server) {
	var all []*task // no task lock inside a shard lock (store.each)
	srv.store.each(func(t *task) bool { all = append(all, t); return true })
	now := time.Now()
	for _, t := range all {
		srv.purge(t, now)
	}
}

// BenchmarkHandler is one request of each hot method through Handler().ServeHTTP, with the
// request, its body and the response writer reused, so that B/op and allocs/op are the
// server's own:
//
//	tools_call_task  a task-augmented tools/call: a new working task (the store is emptied,
//	                 off the clock, every 4096 creates)
//	tasks_get        tasks/get of a working task
//	tasks_result     tasks/result of a completed task (the reply is at hand: no waiting)
//	tasks_cancel     tasks/cancel of a working task (a fresh one each op, made off the clock)
func BenchmarkHandler(b *testing.B) {
	const batch = 4096
	b.Run("tools_call_task", func(b *testing.B) {
		srv, h, sess := handlerSession(b)
		w, req := newReusedRequest(callTaskBody, sess)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if i%batch == batch-1 {
				b.StopTimer()
				purgeAll(srv)
				b.StartTimer()
			}
			h.ServeHTTP(w.reset(), req.rewind())
		}
		if w.code != http.StatusOK || !bytes.Contains(w.body, []byte(`"status":"working"`)) {
			b.Fatalf("tools/call: HTTP %d %s", w.code, w.body)
		}
	})
	b.Run("tasks_get", func(b *testing.B) {
		_, h, sess := handlerSession(b)
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
	b.Run("tasks_result", func(b *testing.B) {
		srv, h, sess := handlerSession(b)
		cw, creq := newReusedRequest(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","arguments":{"duration_ms":0},"task":{"ttl":3600000}}}`, sess)
		id := createTask(b, h, cw, creq)
		waitTerminal(b, srv, id)
		w, req := newReusedRequest(idBody("tasks/result", id), sess)
		b.ReportAllocs()
		for b.Loop() {
			h.ServeHTTP(w.reset(), req.rewind())
		}
		if w.code != http.StatusOK || !bytes.Contains(w.body, []byte(`"work completed in 0 ms"`)) {
			b.Fatalf("tasks/result: HTTP %d %s", w.code, w.body)
		}
	})
	b.Run("tasks_cancel", func(b *testing.B) {
		srv, h, sess := handlerSession(b)
		cw, creq := newReusedRequest(callTaskBody, sess)
		reqs := make([]*reusedRequest, batch)
		w := &discardWriter{h: http.Header{}}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if i%batch == 0 {
				b.StopTimer()
				purgeAll(srv)
				for j := range reqs {
					_, reqs[j] = newReusedRequest(idBody("tasks/cancel", createTask(b, h, cw, creq)), sess)
				}
				b.StartTimer()
			}
			h.ServeHTTP(w.reset(), reqs[i%batch].rewind())
		}
		if w.code != http.StatusOK || !bytes.Contains(w.body, []byte(`"status":"cancelled"`)) {
			b.Fatalf("tasks/cancel: HTTP %d %s", w.code, w.body)
		}
	})
}

// waitTerminal waits until the task with id is terminal: its zero-duration work ends on a
// timer of its own, with no sleep on the test's side.
func waitTerminal(tb testing.TB, srv *Server, id string) {
	tb.Helper()
	t := srv.store.lookup([]byte(id))
	if t == nil {
		tb.Fatalf("task %s not stored", id)
	}
	for {
		t.mu.Lock()
		if t.status.Terminal() {
			t.mu.Unlock()
			return
		}
		ch := t.changedLocked()
		t.mu.Unlock()
		<-ch
	}
}

// Allocation bounds per request through the handler, measured with Go 1.26.8 on
// linux/amd64 (BenchmarkHandler, -memprofile), each with a margin of 2 for small changes in
// the standard library (tasks/get: maxTasksGetAllocs). Every request pays 2: mcp.Decode's
// copy of the params and http.MaxBytesReader.
const (
	// tools/call with a task: 7, the 2 above, the task, its id, its timer and the timer's
	// callback, and the duration_ms argument (workArgs points to it); now and then a step
	// of the store's growth, which averages out.
	maxCreateAllocs = 7 + 2
	maxResultAllocs = 2 + 2 // tasks/result of a completed task
	maxCancelAllocs = 2 + 2 // tasks/cancel of a working task
)

// TestHotPathAllocs counts the allocations of tools/call with a task, tasks/result and
// tasks/cancel through Handler().ServeHTTP, as TestTasksGetHandlerAllocs does for tasks/get.
func TestHotPathAllocs(t *testing.T) {
	if raceEnabled() {
		t.Skip("the race detector drops sync.Pool items at random, so counts vary under -race")
	}
	const runs = 500
	srv, h, sess := handlerSession(t)
	cw, creq := newReusedRequest(callTaskBody, sess)
	n := testing.AllocsPerRun(runs, func() { h.ServeHTTP(cw.reset(), creq.rewind()) })
	check(t, "tools/call", cw, `"status":"working"`, n, maxCreateAllocs)

	rw, rreq := newReusedRequest(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","arguments":{"duration_ms":0},"task":{"ttl":3600000}}}`, sess)
	id := createTask(t, h, rw, rreq)
	waitTerminal(t, srv, id)
	w, req := newReusedRequest(idBody("tasks/result", id), sess)
	n = testing.AllocsPerRun(runs, func() { h.ServeHTTP(w.reset(), req.rewind()) })
	check(t, "tasks/result", w, `"work completed in 0 ms"`, n, maxResultAllocs)

	reqs := make([]*reusedRequest, runs+1) // AllocsPerRun runs f once more, unmeasured
	for i := range reqs {
		_, reqs[i] = newReusedRequest(idBody("tasks/cancel", createTask(t, h, cw, creq)), sess)
	}
	i := 0
	n = testing.AllocsPerRun(runs, func() { h.ServeHTTP(w.reset(), reqs[i].rewind()); i++ })
	check(t, "tasks/cancel", w, `"status":"cancelled"`, n, maxCancelAllocs)
}

// check reports n allocations of a method against its bound, and a reply without want.
func check(t *testing.T, method string, w *discardWriter, want string, n float64, bound int) {
	t.Helper()
	t.Logf("%s through the handler: %v allocations per request (bound %d)", method, n, bound)
	if n > float64(bound) {
		t.Errorf("%s allocates %v times per request, want at most %d", method, n, bound)
	}
	if w.code != http.StatusOK || !bytes.Contains(w.body, []byte(want)) {
		t.Errorf("%s: HTTP %d %s, want %s", method, w.code, w.body, want)
	}
}

// retainedTasks and retainedSessions are how many tasks and sessions the retention figures
// are averaged over: enough that a stray object or a map's growth step hardly moves them.
const (
	retainedTasks    = 20_000
	retainedSessions = 5_000
)

// retainedPerTask creates n working tasks through h and returns the heap objects and bytes
// they retain, per task.
func retainedPerTask(tb testing.TB, n int) (objects, bytes float64) {
	srv, h, sess := handlerSession(tb)
	defer srv.Close() // its reaper and its tasks' timers stop before the next measurement starts
	w, req := newReusedRequest(callTaskBody, sess)
	createTask(tb, h, w, req) // the store's and the pools' first allocations are not the tasks'
	ms0 := collected()
	objs0, heap0 := ms0.HeapObjects, ms0.HeapAlloc
	for range n {
		createTask(tb, h, w, req)
	}
	ms1 := collected()
	objs1, heap1 := ms1.HeapObjects, ms1.HeapAlloc
	runtime.KeepAlive(srv)
	if got := srv.Stats().TasksLive; got != int64(n)+1 {
		tb.Fatalf("%d tasks live, want %d", got, n+1)
	}
	return float64(int64(objs1)-int64(objs0)) / float64(n), float64(int64(heap1)-int64(heap0)) / float64(n)
}

// retainedPerSession opens n sessions through h and returns the heap objects and bytes they
// retain, per session.
func retainedPerSession(tb testing.TB, n int) (objects, bytes float64) {
	srv, h, _ := handlerSession(tb)
	defer srv.Close() // its reaper and its tasks' timers stop before the next measurement starts
	ms0 := collected()
	objs0, heap0 := ms0.HeapObjects, ms0.HeapAlloc
	for range n {
		initSession(tb, srv, h)
	}
	ms1 := collected()
	objs1, heap1 := ms1.HeapObjects, ms1.HeapAlloc
	runtime.KeepAlive(srv)
	if got := srv.Stats().Sessions; got != n+1 {
		tb.Fatalf("%d sessions live, want %d", got, n+1)
	}
	return float64(int64(objs1)-int64(objs0)) / float64(n), float64(int64(heap1)-int64(heap0)) / float64(n)
}

// retainedPerKey creates n working tasks through h, each with an idempotency key of its
// own, lets their ttl run out (the reaper's sweep, an hour early), and returns the heap objects and
// bytes per key that the ledger keeps within its window (ledger.go).
func retainedPerKey(tb testing.TB, n int) (objects, bytes float64) {
	srv, h, sess := handlerSession(tb)
	defer srv.Close() // its reaper and its tasks' timers stop before the next measurement starts
	const prefix = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","arguments":{"duration_ms":86400000,"idempotency_key":"`
	const suffix = `"},"task":{"ttl":3600000}}}`
	w, req := newReusedRequest(prefix+"first"+suffix, sess)
	createTask(tb, h, w, req)
	reapAll(srv)
	ms0 := collected()
	objs0, heap0 := ms0.HeapObjects, ms0.HeapAlloc
	for i := range n {
		// keys as a client makes them: a run id and a sequence number (loadgen/recovery.go)
		req.body = strconv.AppendInt(append(req.body[:0], prefix+"tasksim-8f3a2c1d-"...), int64(i), 36)
		req.body = append(req.body, suffix...)
		req.ContentLength = int64(len(req.body))
		createTask(tb, h, w, req)
	}
	reapAll(srv)
	ms1 := collected()
	objs1, heap1 := ms1.HeapObjects, ms1.HeapAlloc
	runtime.KeepAlive(srv)
	if st := srv.Stats(); st.TasksLive != 0 || st.Ledger.Keys != n+1 {
		tb.Fatalf("%d tasks live and %d keys held, want 0 and %d", st.TasksLive, st.Ledger.Keys, n+1)
	}
	return float64(int64(objs1)-int64(objs0)) / float64(n), float64(int64(heap1)-int64(heap0)) / float64(n)
}

// reapAll sweeps as the reaper would once every task's ttl (at most an hour) has run out:
// the store and the expiry queue let go of them.
func reapAll(srv *Server) {
	at := time.Now().Add(time.Hour + time.Second)
	for _, t := range srv.store.expired(at) {
		srv.purge(t, at)
	}
}

// Heap objects a live task and a live session keep (the mark phase of every GC cycle walks
// them all): a task is itself, its id, its timer and the timer's callback; a session is
// itself and its id. The margin absorbs the store's and the session table's growth steps.
const (
	maxObjectsPerTask    = 4 + 0.5
	maxObjectsPerSession = 2 + 0.5
	// a key: its entry, the key's text and its task's id (the aging queue's slot is in a
	// slice, the map's entry in its buckets)
	maxObjectsPerKey = 3 + 0.5
)

// TestRetainedObjects creates tasks and sessions through the handler and holds the heap
// objects they retain, counted after forced collections, to the figures above.
func TestRetainedObjects(t *testing.T) {
	objs, by := retainedPerTask(t, retainedTasks/4)
	t.Logf("a live task retains %.2f heap objects, %.0f bytes", objs, by)
	if objs > maxObjectsPerTask {
		t.Errorf("a live task retains %.2f heap objects, want at most %v", objs, maxObjectsPerTask)
	}
	objs, by = retainedPerKey(t, retainedTasks/4)
	t.Logf("a key in the ledger window retains %.2f heap objects, %.0f bytes", objs, by)
	if objs > maxObjectsPerKey {
		t.Errorf("a key in the ledger window retains %.2f heap objects, want at most %v", objs, maxObjectsPerKey)
	}
	objs, by = retainedPerSession(t, retainedSessions/4)
	t.Logf("a live session retains %.2f heap objects, %.0f bytes", objs, by)
	if objs > maxObjectsPerSession {
		t.Errorf("a live session retains %.2f heap objects, want at most %v", objs, maxObjectsPerSession)
	}
}

// BenchmarkRetained reports what one live task and one live session keep on the heap:
// objects/task, B/task, objects/session, B/session. The ns/op figure means nothing.
func BenchmarkRetained(b *testing.B) {
	b.Run("task", func(b *testing.B) {
		for b.Loop() {
			objs, by := retainedPerTask(b, retainedTasks)
			b.ReportMetric(objs, "objects/task")
			b.ReportMetric(by, "B/task")
		}
	})
	b.Run("key", func(b *testing.B) {
		for b.Loop() {
			objs, by := retainedPerKey(b, retainedTasks)
			b.ReportMetric(objs, "objects/key")
			b.ReportMetric(by, "B/key")
		}
	})
	b.Run("session", func(b *testing.B) {
		for b.Loop() {
			objs, by := retainedPerSession(b, retainedSessions)
			b.ReportMetric(objs, "objects/session")
			b.ReportMetric(by, "B/session")
		}
	})
}
