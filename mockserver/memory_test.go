package mockserver

// Requirement (c): 100,000 live tasks cost at most 100 MiB. The live heap is measured after
// forced collections, so the figure depends on what is retained, not on the machine's speed.

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
)

const (
	memTasks      = 100_000 // the requirement's task count
	memBudgetByte = 100 << 20
)

// collected returns the memory statistics after collecting everything collectable. Two
// cycles also empty sync.Pool's victim cache, so pooled buffers are not counted on either
// side.
func collected() runtime.MemStats {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms
}

// liveHeap returns HeapAlloc after collecting everything collectable.
func liveHeap() uint64 { return collected().HeapAlloc }

// TestMemory100kLiveTasks creates memTasks tasks through tools/call on the in-process
// handler (one day of work, one hour of ttl: none finishes or expires while the test runs)
// and asserts that the heap they retain fits memBudgetByte.
//
// Under -race or -short it creates a quarter of the tasks and holds the per-task figure,
// scaled to memTasks, against the budget: the race detector slows tools/call about
// sevenfold, and it is there to find races, not to weigh the heap (which it does not change).
func TestMemory100kLiveTasks(t *testing.T) {
	tasks := memTasks
	if raceEnabled() || testing.Short() {
		tasks = memTasks / 4
	}
	srv, err := NewHandlerServer(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	h := srv.Handler()

	// A real session: initialize and notifications/initialized through the handler.
	initW, initReq := newReusedRequest(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"memtest","version":"1"}}}`, nil)
	h.ServeHTTP(initW, initReq.rewind())
	sess := srv.sessions.lookup(initW.h.Get(headerSessionID))
	if initW.code != http.StatusOK || sess == nil || !sess.tasks {
		t.Fatalf("initialize: HTTP %d %s", initW.code, initW.body)
	}
	w, req := newReusedRequest(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, sess)
	h.ServeHTTP(w, req.rewind())
	if w.code != http.StatusAccepted {
		t.Fatalf("notifications/initialized: HTTP %d %s", w.code, w.body)
	}

	// One worker per P, each with its own reused request (built before the first
	// measurement), so that creation uses every core; the retained heap does not depend on it.
	const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","arguments":{"duration_ms":86400000},"task":{"ttl":3600000}}}`
	workers := runtime.GOMAXPROCS(0)
	ws := make([]*discardWriter, workers)
	reqs := make([]*reusedRequest, workers)
	for wi := range workers {
		ws[wi], reqs[wi] = newReusedRequest(call, sess)
	}
	var wg sync.WaitGroup
	errs := make([]error, workers)
	before := liveHeap()
	start := time.Now()
	for wi := range workers {
		w, req := ws[wi], reqs[wi]
		wg.Go(func() {
			for i := wi; i < tasks; i += workers {
				h.ServeHTTP(w.reset(), req.rewind())
				if w.code != http.StatusOK || !bytes.Contains(w.body, []byte(`"status":"working"`)) {
					errs[wi] = fmt.Errorf("tools/call %d: HTTP %d %s", i, w.code, w.body)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	created := time.Since(start)
	after := liveHeap()
	runtime.KeepAlive(srv)

	st := srv.Stats()
	if st.TasksLive != int64(tasks) || st.TasksCreated != uint64(tasks) || st.TasksExpired != 0 {
		t.Fatalf("stats %+v: want %d live tasks, none expired", st, tasks)
	}
	working := 0
	var all []*task // no task lock inside a shard lock (store.each)
	srv.store.each(func(tk *task) bool { all = append(all, tk); return true })
	for _, tk := range all {
		tk.mu.Lock()
		if tk.status == mcp.StatusWorking {
			working++
		}
		tk.mu.Unlock()
	}
	if working != tasks {
		t.Fatalf("%d of %d tasks are working, want all", working, tasks)
	}

	grown := int64(after) - int64(before)
	perTask := grown / int64(tasks)
	total := grown * memTasks / int64(tasks) // == grown when all memTasks were created
	t.Logf("%d live tasks retain %d bytes, %d bytes per task: %.1f MiB per %d tasks (created in %v)",
		tasks, grown, perTask, float64(total)/(1<<20), memTasks, created.Round(time.Millisecond))
	if total > memBudgetByte {
		t.Errorf("%d live tasks retain %.1f MiB (%d bytes per task), budget %d MiB",
			memTasks, float64(total)/(1<<20), perTask, memBudgetByte>>20)
	}
}
