package mockserver_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/mockserver"
)

// bpCreate sends a task-augmented tools/call and returns the HTTP status, the headers, the
// created task (on success) and the JSON-RPC error (on refusal).
func bpCreate(c *client, args map[string]any) (status int, hdr http.Header, tk mcp.Task, e *mcp.Error) {
	c.h.t.Helper()
	resp := c.start("tools/call", map[string]any{"name": "work", "arguments": args, "task": map[string]any{}})
	body := resp.all()
	msg, perr := mcp.Decode(body)
	if perr != nil {
		c.h.t.Fatalf("tools/call: HTTP %d, undecodable body %s", resp.Status, body)
	}
	if msg.Error != nil {
		return resp.Status, resp.Header, mcp.Task{}, msg.Error
	}
	checkReply(c.h.t, "tools/call", body)
	var ctr mcp.CreateTaskResult
	if err := json.Unmarshal(msg.Result, &ctr); err != nil || ctr.Task.TaskID == "" {
		c.h.t.Fatalf("tools/call: not a CreateTaskResult: %s", body)
	}
	return resp.Status, resp.Header, ctr.Task, nil
}

// bpStatus polls tk and returns its status and statusMessage.
func bpStatus(t *testing.T, c *client, id string) (mcp.Status, string) {
	t.Helper()
	got, e := c.get(id)
	if e != nil {
		t.Fatalf("tasks/get %s: %v", id, e)
	}
	return got.Status, got.StatusMessage
}

// TestExecutorRefusesExactlyBeyondWorkersPlusQueue: with W workers and a queue of Q, W+Q
// concurrent creates are accepted (W working, Q queued with their positions) and every
// create beyond is refused with -32603 naming the executor.
func TestExecutorRefusesExactlyBeyondWorkersPlusQueue(t *testing.T) {
	for _, wq := range [][2]int{{1, 0}, {3, 2}, {4, 10}} {
		w, q := wq[0], wq[1]
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, mockserver.Config{Backpressure: mockserver.Backpressure{Workers: w, Queue: q}})
			c := h.connect()
			var ids []string
			for i := range w + q {
				_, _, tk, e := bpCreate(c, map[string]any{"duration_ms": 10_000})
				if e != nil {
					t.Fatalf("W=%d Q=%d: create %d refused: %v", w, q, i+1, e)
				}
				ids = append(ids, tk.TaskID)
				if i >= w && !strings.HasPrefix(tk.StatusMessage, "queued (position ") {
					t.Errorf("create %d: statusMessage %q, want queued", i+1, tk.StatusMessage)
				}
			}
			for i := range 2 {
				st, _, _, e := bpCreate(c, map[string]any{"duration_ms": 10_000})
				if e == nil || e.Code != mcp.CodeInternalError || !strings.Contains(e.Message, "server at capacity") || !strings.Contains(e.Message, "workers") {
					t.Fatalf("W=%d Q=%d: create %d beyond W+Q: HTTP %d, error %v; want -32603 server at capacity (workers)", w, q, i+1, st, e)
				}
				if st != http.StatusOK {
					t.Errorf("refuse_rpc answered HTTP %d, want 200", st)
				}
			}
			for i, id := range ids {
				s, msg := bpStatus(t, c, id)
				wantMsg := ""
				if i >= w {
					wantMsg = "queued (position " + itoa(i-w+1) + "): waiting for a worker"
				}
				if s != mcp.StatusWorking || msg != wantMsg {
					t.Errorf("task %d: %s %q, want working %q", i+1, s, msg, wantMsg)
				}
			}
			st := h.srv.Stats()
			if st.Refusals.Executor != 2 || st.Refusals.Total() != 2 || st.QueueDepth != int64(q) || !st.Overloaded || st.TasksActive != int64(w+q) {
				t.Errorf("stats %+v: want 2 executor refusals, queue depth %d, overloaded, %d active", st.BackpressureStats, q, w+q)
			}
		})
	}
}

// TestExecutorQueuedStartInOrder: queued tasks start in arrival order as workers free, and
// their work (its timer) starts only then.
func TestExecutorQueuedStartInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{Backpressure: mockserver.Backpressure{Workers: 1, Queue: 3}})
		c := h.connect()
		var ids []string
		for range 4 {
			ids = append(ids, c.createTask("work", map[string]any{"duration_ms": 1000}).TaskID)
		}
		for step := range 4 {
			// At step seconds, tasks before step completed, task step works, the rest wait.
			for i, id := range ids {
				s, msg := bpStatus(t, c, id)
				switch {
				case i < step:
					if s != mcp.StatusCompleted {
						t.Fatalf("at %ds task %d is %s, want completed", step, i, s)
					}
				case i == step:
					if s != mcp.StatusWorking || msg != "" {
						t.Fatalf("at %ds task %d is %s %q, want working", step, i, s, msg)
					}
				default:
					want := "queued (position " + itoa(i-step) + "): waiting for a worker"
					if s != mcp.StatusWorking || msg != want {
						t.Fatalf("at %ds task %d is %s %q, want working %q", step, i, s, msg, want)
					}
				}
			}
			if got := h.srv.Stats().QueueDepth; got != int64(3-step) {
				t.Fatalf("at %ds queue depth %d, want %d", step, got, 3-step)
			}
			time.Sleep(999 * time.Millisecond)
			synctest.Wait()
			if s, _ := bpStatus(t, c, ids[step]); s != mcp.StatusWorking {
				t.Fatalf("task %d finished before its 1 s of work: %s", step, s)
			}
			time.Sleep(time.Millisecond)
			synctest.Wait()
		}
		if s, _ := bpStatus(t, c, ids[3]); s != mcp.StatusCompleted {
			t.Fatalf("last task %s, want completed at 4 s", s)
		}
	})
}

// TestExecutorCancelQueued: a task cancelled while queued never runs and gives its place up;
// the tasks behind it move up.
func TestExecutorCancelQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{Backpressure: mockserver.Backpressure{Workers: 1, Queue: 2}})
		c := h.connect()
		a := c.createTask("work", map[string]any{"duration_ms": 1000, "idempotency_key": "a"})
		b := c.createTask("work", map[string]any{"duration_ms": 1000, "idempotency_key": "b"})
		d := c.createTask("work", map[string]any{"duration_ms": 1000, "idempotency_key": "d"})
		if r := c.call("tasks/cancel", map[string]any{"taskId": b.TaskID}); r.Err != nil {
			t.Fatalf("cancel: %v", r.Err)
		}
		if _, msg := bpStatus(t, c, d.TaskID); msg != "queued (position 1): waiting for a worker" {
			t.Errorf("after the cancel ahead of it: %q, want position 1", msg)
		}
		// The freed queue place takes a new create.
		if _, _, _, e := bpCreate(c, map[string]any{"duration_ms": 1000}); e != nil {
			t.Fatalf("create after a queued cancel: %v", e)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if s, _ := bpStatus(t, c, a.TaskID); s != mcp.StatusCompleted {
			t.Errorf("a: %s", s)
		}
		if s, _ := bpStatus(t, c, d.TaskID); s != mcp.StatusCompleted {
			t.Errorf("d: %s, want completed at 2 s (it started at 1 s)", s)
		}
		if _, ok := h.srv.Effect("", "b"); ok {
			t.Errorf("the cancelled queued task b has a ledger entry: it must never run")
		}
	})
}

// TestWhenFull covers each WhenFull mode at the (W+Q+1)-th create.
func TestWhenFull(t *testing.T) {
	const w, q = 2, 1
	t.Run("refuse_429", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, mockserver.Config{Backpressure: mockserver.Backpressure{Workers: w, Queue: q, WhenFull: "refuse_429", RetryAfter: 2500 * time.Millisecond}})
			c := h.connect()
			for range w + q {
				c.createTask("work", map[string]any{"duration_ms": 5000})
			}
			st, hdr, _, e := bpCreate(c, map[string]any{"duration_ms": 5000})
			if st != http.StatusTooManyRequests || hdr.Get("Retry-After") != "3" {
				t.Fatalf("HTTP %d Retry-After %q, want 429 and 3 (2.5 s rounded up)", st, hdr.Get("Retry-After"))
			}
			if e == nil || e.Code != mcp.CodeInternalError || !strings.Contains(e.Message, "server at capacity") {
				t.Fatalf("429 body error %v, want -32603 server at capacity", e)
			}
			if s := h.srv.Stats(); s.TasksCreated != w+q || s.Refusals.Executor != 1 {
				t.Errorf("created %d refusals %+v, want %d and 1", s.TasksCreated, s.Refusals, w+q)
			}
		})
	})
	t.Run("queue", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, mockserver.Config{Backpressure: mockserver.Backpressure{Workers: w, Queue: q, WhenFull: "queue"}})
			c := h.connect()
			var last mcp.Task
			for range w + q + 3 {
				last = c.createTask("work", map[string]any{"duration_ms": 1000})
			}
			if last.StatusMessage != "queued (position 4): waiting for a worker" {
				t.Errorf("6th create: %q, want queued at position 4", last.StatusMessage)
			}
			s := h.srv.Stats()
			if s.Refusals.Total() != 0 || s.QueueDepth != 4 || !s.Overloaded {
				t.Errorf("stats %+v, want no refusals, queue depth 4, overloaded", s.BackpressureStats)
			}
			time.Sleep(3 * time.Second) // 6 tasks of 1 s on 2 workers
			synctest.Wait()
			if st, _ := bpStatus(t, c, last.TaskID); st != mcp.StatusCompleted {
				t.Errorf("last task %s at 3 s, want completed", st)
			}
		})
	})
	t.Run("raise_poll_interval", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h := newHarness(t, mockserver.Config{PollInterval: time.Second,
				Backpressure: mockserver.Backpressure{Workers: w, Queue: q, WhenFull: "raise_poll_interval", RaisedPollInterval: 7 * time.Second}})
			c := h.connect()
			pi := func(tk mcp.Task) int64 {
				if tk.PollInterval == nil {
					return 0
				}
				return int64(*tk.PollInterval)
			}
			first := c.createTask("work", map[string]any{"duration_ms": 1000})
			if pi(first) != 1000 {
				t.Fatalf("pollInterval %d before full, want 1000", pi(first))
			}
			c.createTask("work", map[string]any{"duration_ms": 1000})
			third := c.createTask("work", map[string]any{"duration_ms": 1000}) // fills the queue
			fourth := c.createTask("work", map[string]any{"duration_ms": 1000})
			if pi(third) != 7000 || pi(fourth) != 7000 {
				t.Fatalf("pollInterval %d, %d while full, want 7000", pi(third), pi(fourth))
			}
			if got, _ := c.get(first.TaskID); pi(got) != 7000 {
				t.Errorf("tasks/get of a running task while full: pollInterval %d, want 7000", pi(got))
			}
			time.Sleep(time.Second) // two finish; the two queued start; nothing waits
			synctest.Wait()
			if got, _ := c.get(fourth.TaskID); pi(got) != 1000 || got.Status != mcp.StatusWorking {
				t.Errorf("after the queue drained: %s pollInterval %d, want working 1000", got.Status, pi(got))
			}
			if s := h.srv.Stats(); s.Refusals.Total() != 0 || s.Overloaded {
				t.Errorf("stats %+v, want no refusals, not overloaded", s.BackpressureStats)
			}
		})
	})
}

// TestTaskCaps: MaxTasksPerTenant refuses a tenant's (n+1)-th non-terminal task while
// others still create; MaxTasks caps all tenants; a task that ends frees its place.
func TestTaskCaps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{
			Tokens:       map[string]string{"ta": "alice", "tb": "bob"},
			Backpressure: mockserver.Backpressure{MaxTasks: 3, MaxTasksPerTenant: 2},
		})
		a, b := h.connect(withToken("ta")), h.connect(withToken("tb"))
		a.createTask("work", map[string]any{"duration_ms": 1000})
		a.createTask("work", map[string]any{"duration_ms": 5000})
		if _, _, _, e := bpCreate(a, map[string]any{"duration_ms": 1000}); e == nil || !strings.Contains(e.Message, "max_tasks_per_tenant 2") {
			t.Fatalf("alice's 3rd task: %v, want refused by max_tasks_per_tenant", e)
		}
		b.createTask("work", map[string]any{"duration_ms": 5000})
		if _, _, _, e := bpCreate(b, map[string]any{"duration_ms": 1000}); e == nil || !strings.Contains(e.Message, "max_tasks 3") {
			t.Fatalf("bob's 2nd task (4th in all): %v, want refused by max_tasks", e)
		}
		time.Sleep(time.Second) // alice's first task completes
		synctest.Wait()
		b.createTask("work", map[string]any{"duration_ms": 1000})
		s := h.srv.Stats()
		if s.Refusals != (mockserver.Refusals{MaxTasks: 1, MaxTasksPerTenant: 1}) || s.TasksActive != 3 {
			t.Errorf("refusals %+v active %d, want one of each cap, 3 active", s.Refusals, s.TasksActive)
		}
	})
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestExecutorConcurrentCreates: creates racing on many sessions still get exactly W+Q
// acceptances; the rest are refused.
func TestExecutorConcurrentCreates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const w, q, n = 5, 7, 40
		h := newHarness(t, mockserver.Config{Backpressure: mockserver.Backpressure{Workers: w, Queue: q}})
		cs := make([]*client, n)
		for i := range cs {
			cs[i] = h.connect()
		}
		refused := make(chan bool, n)
		for _, c := range cs {
			go func() {
				_, _, _, e := bpCreate(c, map[string]any{"duration_ms": 1000})
				refused <- e != nil
			}()
		}
		nRefused := 0
		for range n {
			if <-refused {
				nRefused++
			}
		}
		if s := h.srv.Stats(); nRefused != n-w-q || s.TasksCreated != w+q || s.QueueDepth != q {
			t.Fatalf("%d refused, %d created, queue %d; want %d, %d, %d", nRefused, s.TasksCreated, s.QueueDepth, n-w-q, w+q, q)
		}
		time.Sleep(3 * time.Second) // 12 tasks of 1 s on 5 workers: done at 3 s
		synctest.Wait()
		if s := h.srv.Stats(); s.TasksActive != 0 || s.QueueDepth != 0 || s.Effects != w+q {
			t.Errorf("after 3 s: %d active, queue %d, %d effects; want 0, 0, %d", s.TasksActive, s.QueueDepth, s.Effects, w+q)
		}
	})
}

// TestExecutorExpiredQueuedTask: a queued task whose ttl runs out leaves the queue and never
// runs; the task behind it moves up.
func TestExecutorExpiredQueuedTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{ReaperInterval: 100 * time.Millisecond,
			Backpressure: mockserver.Backpressure{Workers: 1, Queue: 2}})
		c := h.connect()
		c.createTask("work", map[string]any{"duration_ms": 2000})
		r := c.call("tools/call", map[string]any{"name": "work", "arguments": map[string]any{"duration_ms": 1000, "idempotency_key": "short"}, "task": map[string]any{"ttl": 500}})
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		last := c.createTask("work", map[string]any{"duration_ms": 1000})
		time.Sleep(time.Second)
		synctest.Wait()
		if s, msg := bpStatus(t, c, last.TaskID); s != mcp.StatusWorking || msg != "queued (position 1): waiting for a worker" {
			t.Errorf("after the expiry ahead: %s %q, want queued at position 1", s, msg)
		}
		if s := h.srv.Stats(); s.QueueDepth != 1 || s.TasksActive != 2 {
			t.Errorf("queue %d active %d, want 1 and 2", s.QueueDepth, s.TasksActive)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if s, _ := bpStatus(t, c, last.TaskID); s != mcp.StatusCompleted {
			t.Errorf("last task at 3 s: %s, want completed", s)
		}
		if _, ok := h.srv.Effect("", "short"); ok {
			t.Errorf("the expired queued task ran")
		}
	})
}
