package mockserver

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// executor admits tasks (the caps of backpressure.go) and runs their work on Workers
// workers with a FIFO queue. It owns no goroutine: a worker is a count, a running task's
// work is its timers (task.go), and a worker that frees starts the next queued task at once.
//
// A task holds its worker from the start of its work until it is terminal or expired:
// through its input rounds and its downstream operation (downstream.go), as a thread of a
// real server would. A task cancelled while queued never runs.
//
// Task states, guarded by executor.mu (task.xstate):
//
//	xNone -> xRunning (admitted, a worker free or Workers 0) -> xDone (terminal or expired)
//	xNone -> xQueued  (admitted, no worker free)             -> xRunning (a worker freed)
//	                                                         -> xDone (cancelled or expired)
type executor struct {
	// Fixed at construction.
	workers, queueCap      int // Workers (0 = unbounded), Queue
	maxTasks, maxPerTenant int // 0 = no cap
	mode                   whenFull
	raised                 time.Duration // pollInterval advertised while full (raise_poll_interval)

	mu        sync.Mutex
	active    int              // non-terminal admitted tasks
	perTenant map[string]int   // non-terminal tasks by tenant; only with maxPerTenant
	running   int              // tasks holding a worker
	queue     []*task          // FIFO; entries no longer xQueued are skipped when popped
	qhead     int              // index of the oldest entry
	queued    int              // entries still xQueued
	tickets   uint64           // queue tickets handed out
	ticketOf  map[*task]uint64 // tickets of the tasks still queued
	holes     []uint64         // ascending tickets of tasks that left the queue out of turn

	// Mirrors for lock-free readers (Stats, the pollInterval policy, statusMessage).
	full    atomic.Bool
	nQueued atomic.Int64
	popped  atomic.Uint64 // tickets that left the head of the queue
	refused refusedCounter
}

// Executor states of a task (task.xstate).
const (
	xNone uint8 = iota
	xQueued
	xRunning
	xDone
)

func (x *executor) init(b Backpressure, pollInterval time.Duration) {
	x.workers, x.queueCap = b.Workers, b.Queue
	x.maxTasks, x.maxPerTenant = b.MaxTasks, b.MaxTasksPerTenant
	switch b.WhenFull {
	case "refuse_429":
		x.mode = fullRefuse429
	case "queue":
		x.mode = fullQueue
	case "raise_poll_interval":
		x.mode = fullRaisePoll
	}
	x.raised = b.RaisedPollInterval
	if x.raised == 0 {
		x.raised = 4 * pollInterval
	}
	if x.maxPerTenant > 0 {
		x.perTenant = make(map[string]int)
	}
}

// fullLocked applies the definition of "full" in backpressure.go and says which cap holds.
func (x *executor) fullLocked(tenant string) refusal {
	switch {
	case x.maxTasks > 0 && x.active >= x.maxTasks:
		return refusedMaxTasks
	case x.maxPerTenant > 0 && x.perTenant[tenant] >= x.maxPerTenant:
		return refusedTenant
	case x.workers > 0 && x.running >= x.workers && x.queued >= x.queueCap:
		return refusedExecutor
	}
	return refusedNone
}

// syncLocked refreshes the lock-free mirrors. full ignores the per-tenant cap: that cap is
// one tenant's, not the server's.
func (x *executor) syncLocked() {
	x.nQueued.Store(int64(x.queued))
	f := x.fullLocked("")
	x.full.Store(f == refusedMaxTasks || f == refusedExecutor)
}

// admit decides the fate of t, not yet stored: run now (run true), wait in the queue (run
// false, why refusedNone; t.xq is set), or be refused (why says which cap).
func (x *executor) admit(t *task) (run bool, why refusal) {
	x.mu.Lock()
	defer x.mu.Unlock()
	why = x.fullLocked(t.tenant)
	if why != refusedNone && (x.mode == fullRefuseRPC || x.mode == fullRefuse429) {
		x.refused[why].Add(1)
		return false, why
	}
	x.active++
	if x.perTenant != nil {
		x.perTenant[t.tenant]++
	}
	defer x.syncLocked()
	if x.workers == 0 || x.running < x.workers {
		x.running++
		t.xstate = xRunning
		return true, refusedNone
	}
	x.tickets++
	if x.ticketOf == nil {
		x.ticketOf = make(map[*task]uint64)
	}
	x.ticketOf[t] = x.tickets
	t.xq = true
	t.xstate = xQueued
	x.queue = append(x.queue, t)
	x.queued++
	return false, refusedNone
}

// release frees what t holds: its worker (the next queued task starts) or its queue place.
// Only the first call after t ends counts. t.mu may be held: release takes no task's lock,
// and the next task starts on its own goroutine.
func (x *executor) release(t *task) {
	x.mu.Lock()
	var next *task
	switch t.xstate {
	case xRunning:
		x.running--
		next = x.popLocked()
	case xQueued:
		x.queued--
		x.holes = insertSorted(x.holes, x.ticketOf[t])
		delete(x.ticketOf, t)
		x.trimLocked()
	default:
		x.mu.Unlock()
		return
	}
	t.xstate = xDone
	x.active--
	if x.perTenant != nil {
		if n := x.perTenant[t.tenant] - 1; n > 0 {
			x.perTenant[t.tenant] = n
		} else {
			delete(x.perTenant, t.tenant)
		}
	}
	x.syncLocked()
	x.mu.Unlock()
	if next != nil {
		go next.begin()
	}
}

// popLocked hands a free worker to the oldest queued task, if any.
func (x *executor) popLocked() *task {
	if x.workers > 0 && x.running >= x.workers {
		return nil
	}
	for x.qhead < len(x.queue) {
		t := x.queue[x.qhead]
		x.queue[x.qhead] = nil
		x.qhead++
		x.advanceLocked()
		if t.xstate == xQueued {
			delete(x.ticketOf, t)
			t.xstate = xRunning
			x.queued--
			x.running++
			x.compactLocked()
			return t
		}
	}
	x.compactLocked()
	return nil
}

// trimLocked drops ended tasks from the head of the queue, so that positions stay right
// when the oldest queued tasks are cancelled.
func (x *executor) trimLocked() {
	for x.qhead < len(x.queue) && x.queue[x.qhead].xstate != xQueued {
		x.queue[x.qhead] = nil
		x.qhead++
		x.advanceLocked()
	}
	x.compactLocked()
}

// compactLocked reclaims the consumed head of the queue once it is most of the slice.
func (x *executor) compactLocked() {
	if x.qhead == len(x.queue) {
		x.queue, x.qhead = x.queue[:0], 0
		return
	}
	if x.qhead >= 1024 && x.qhead*2 >= len(x.queue) {
		n := copy(x.queue, x.queue[x.qhead:])
		clear(x.queue[n:])
		x.queue, x.qhead = x.queue[:n], 0
	}
}

// begin starts the work of a task that waited in the queue: its first phase's timer starts
// now. A task that ended meanwhile does nothing.
func (t *task) begin() {
	if o := t.beginQueued(); o != nil {
		t.srv.send(o) // effect_first through the downstream (downstream.go)
	}
}

func (t *task) beginQueued() *operation {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.xq = false
	if t.status.Terminal() || t.gone {
		return nil
	}
	select {
	case <-t.srv.closing:
		return nil
	default:
	}
	t.statusMessage = ""
	t.updated = stampOf(t.srv.clock.Now())
	t.signalLocked()
	return t.beginWorkLocked()
}

// statusMessageLocked is the statusMessage on the wire: a queued task says where it stands.
func (t *task) statusMessageLocked() string {
	if t.xq {
		if msg, ok := t.srv.exec.queuedMessage(t); ok {
			return msg
		}
	}
	return t.statusMessage
}

// advanceLocked counts one ticket off the head of the queue; a hole at or behind the head
// no longer lies ahead of anyone.
func (x *executor) advanceLocked() {
	p := x.popped.Add(1)
	for len(x.holes) > 0 && x.holes[0] <= p {
		x.holes = x.holes[1:]
	}
	if len(x.holes) == 0 {
		x.holes = nil
	}
}

// position is the place of t in the queue: 1 + the tasks still queued ahead of it. ok is
// false when t is no longer queued.
func (x *executor) position(t *task) (pos uint64, ok bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	q, ok := x.ticketOf[t]
	if !ok {
		return 0, false
	}
	ahead := q - 1 - x.popped.Load()
	for _, h := range x.holes {
		if h >= q {
			break
		}
		ahead--
	}
	return ahead + 1, true
}

func insertSorted(s []uint64, v uint64) []uint64 {
	i := len(s)
	for i > 0 && s[i-1] > v {
		i--
	}
	return slices.Insert(s, i, v)
}
