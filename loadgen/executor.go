package loadgen

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// The clients run as state machines on a pool of sender goroutines, not on a goroutine
// each. A client runs on a sender while it has work (a request, a reply to read);
// to wait for its next poll it joins the executor's sleepers and leaves the sender; when it
// is due, an idle sender picks it up.
//
// Why: the garbage collector. With a goroutine per client, 10,000 clients were 10,000 stacks
// to scan in every cycle (about 40% of the marking). And while the collector marks, a
// goroutine that allocates beyond its credit must assist: take background credit, or do at
// least 64 KiB worth of marking itself; every goroutine's credit is reset each cycle. The
// thousands of clients that woke during a mark phase each started with none, and each
// collection showed as 50-150 ms of schedule_lag in its second. A few hundred senders now do
// that work, and what one assist pays beyond its debt serves the sender's next requests.
//
// The sleepers are a min-heap by due time under one timer, armed for the earliest, whose
// channel the idle senders wait on beside x.idle: the sender that receives a tick drives the
// client due itself, and a sender that finds a client due when it is done with the last
// one takes it without waiting (dueNow). (A time.AfterFunc per client ran each wake-up on a goroutine of its own,
// which handed the client to a sender over x.idle: a goroutine made and ended, a channel
// handoff and a second wake-up for every poll.) So that a tick never waits for a sender, a
// sender that leaves the idle ones with none (a tick, a dispatch) starts another (watch).
//
// The pool grows to the clients with work at once (the request slots of Config.MaxConns
// bound the requests; a client waiting for a slot, or sleeping in a rare backoff, holds its
// sender) and keeps at most maxIdleSenders idle.
type executor struct {
	idle  chan *vu      // an idle sender receives its next client here
	quit  chan struct{} // closed at the end of the run: idle senders exit
	nIdle atomic.Int32  // senders in serve's wait; a dispatch to one takes it off
	wg    sync.WaitGroup

	mu     sync.Mutex  // guards sleeps and the clients' sleeping, wakeAt and slot
	sleeps sleepHeap   // the clients waiting for a time, earliest first
	timer  *time.Timer // armed for the earliest sleeper's due time while there is one
}

// maxIdleSenders bounds the idle senders kept for the next wake-ups; more exit.
const maxIdleSenders = 128

// newExecutor makes the executor of a run; Run makes it, so that a run inside a
// testing/synctest bubble has its timer in the bubble.
func newExecutor() *executor {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &executor{idle: make(chan *vu), quit: make(chan struct{}), timer: t}
}

// dispatch runs v.drive on an idle sender, or on a new one.
func (x *executor) dispatch(v *vu) {
	select {
	case x.idle <- v:
		if x.nIdle.Add(-1) == 0 {
			x.watch()
		}
	default:
		x.wg.Go(func() { x.serve(v) })
	}
}

// watch starts an idle sender if none is left to receive the timer's next tick while
// clients sleep.
func (x *executor) watch() {
	x.mu.Lock()
	sleepers := len(x.sleeps) > 0
	x.mu.Unlock()
	if sleepers && x.nIdle.Load() == 0 {
		x.wg.Go(func() { x.serve(nil) })
	}
}

// serve is a sender: it drives v (if any) until v waits or ends, then waits for the next
// client: one dispatched to it, or the sleepers due at a tick of the timer.
func (x *executor) serve(v *vu) {
	for {
		if v != nil {
			v.drive()
		}
		if v = x.dueNow(); v != nil {
			continue // a client is due already: served without a wait for the tick
		}
		if x.nIdle.Add(1) > maxIdleSenders {
			x.nIdle.Add(-1)
			return
		}
		select {
		case v = <-x.idle: // dispatch counted this sender off the idle ones
		case <-x.timer.C:
			left := x.nIdle.Add(-1)
			v = x.due()
			if left == 0 {
				x.watch() // the next tick needs a sender
			}
		case <-x.quit:
			x.nIdle.Add(-1)
			return
		}
	}
}

// due takes the sleepers whose time has come off the heap and re-arms the timer for the
// next: it returns the first, for the sender that received the tick, and dispatches the
// others. It returns nil when none is due (the earliest was interrupted since).
func (x *executor) due() *vu {
	now := time.Now()
	x.mu.Lock()
	var first *vu
	var more []*vu
	for len(x.sleeps) > 0 && !x.sleeps[0].wakeAt.After(now) {
		v := x.sleeps.remove(0)
		v.sleeping, v.woke = 0, true
		if first == nil {
			first = v
		} else {
			more = append(more, v)
		}
	}
	if len(x.sleeps) > 0 {
		x.timer.Reset(x.sleeps[0].wakeAt.Sub(now))
	}
	x.mu.Unlock()
	for _, v := range more {
		x.dispatch(v)
	}
	return first
}

// dueNow takes the earliest sleeper off the heap if its time has come, and re-arms the
// timer for the next: a sender that finds a client due as it leaves the last one serves it
// at once. Under load clients come due while every sender is busy; each would otherwise
// cost a park of the sender, a tick and a wake-up.
func (x *executor) dueNow() *vu {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.sleeps) == 0 {
		return nil
	}
	now := time.Now()
	if x.sleeps[0].wakeAt.After(now) {
		return nil
	}
	v := x.sleeps.remove(0)
	v.sleeping, v.woke = 0, true
	if len(x.sleeps) > 0 {
		x.timer.Reset(x.sleeps[0].wakeAt.Sub(now))
	} else {
		x.timer.Stop()
	}
	return v
}

// close ends the idle senders once no client runs any more, and waits for them.
func (x *executor) close() {
	close(x.quit)
	x.wg.Wait()
	x.timer.Stop()
}

// phase is where a client's drive resumes.
type phase uint8

const (
	phaseStart phase = iota // start the next task (closed model: unless the load phase is over)
	phaseTask               // in a task: run its next steps
	phaseAfter              // the task is over: a probe round, then think time or the pool
	phaseThink              // back from the think time
	phaseClose              // end the session; the client is done
)

// Which context's end cuts a wait short (vu.sleeping).
const (
	sleepLoad int32 = 1 + iota // think time: the load phase's context
	sleepWork                  // between a task's steps: the work context
)

// drive runs the client from v.phase until it must wait for a time or has nothing to do:
// a task (beginTask, stepTask until it is over, endTask), then a probe round. A closed-model
// client then thinks and starts the next task, until the load phase is over; an open-model
// client goes back to the idle pool for the next arrival (runOpen). At the end: the
// session's end.
func (v *vu) drive() {
	e := v.e
	for {
		switch v.phase {
		case phaseStart:
			// In the open model an arrival is a task to run (runOpen checked the tenant); in
			// the closed model no task starts after the load phase or once the client's
			// tenant is revoked.
			if e.cfg.Model == Closed && (e.loadCtx.Err() != nil || v.ten.revoked(e)) {
				v.phase = phaseClose
			} else if v.beginTask(e.workCtx, v.intended) {
				v.phase = phaseTask
			} else {
				v.phase = phaseAfter
			}
		case phaseTask:
			if at, wait := v.stepTask(e.workCtx); wait {
				if v.sleep(e.workCtx, at, sleepWork) {
					return
				}
				continue
			}
			v.endTask(e.workCtx)
			v.phase = phaseAfter
		case phaseAfter:
			if v.probe && e.loadCtx.Err() == nil {
				v.probeRound(e.workCtx) // probes.go
			}
			if e.cfg.Model == Open {
				if e.idle.put(v) {
					return // v is not ours any more
				}
				v.phase = phaseClose // the arrivals are over
				continue
			}
			if e.cfg.ThinkTime > 0 {
				v.phase = phaseThink
				if v.sleep(e.loadCtx, time.Now().Add(e.cfg.ThinkTime), sleepLoad) {
					return
				}
				continue
			}
			v.intended, v.phase = time.Now(), phaseStart
		case phaseThink:
			if !v.woke {
				v.phase = phaseClose
				continue
			}
			v.intended, v.phase = time.Now(), phaseStart
		case phaseClose:
			v.close(context.WithoutCancel(e.workCtx))
			e.clients.Done()
			return
		}
	}
}

// sleep puts v among the executor's sleepers until at. It reports true if v now waits: the
// caller must leave v at once, for a sender picks it up when it is due (or interrupt, when
// ctx ends). It reports false, with v.woke set, if there is nothing to wait for: at has
// passed, or ctx has ended.
//
// Sleeping and interrupting exclude each other (x.mu): interrupt runs once ctx has ended,
// so either sleep sees the end and does not wait, or interrupt finds v among the sleepers.
func (v *vu) sleep(ctx context.Context, at time.Time, on int32) bool {
	d := time.Until(at)
	if d <= 0 {
		v.woke = ctx.Err() == nil
		return false
	}
	x := v.e.exec
	x.mu.Lock()
	defer x.mu.Unlock()
	if ctx.Err() != nil {
		v.woke = false
		return false
	}
	v.sleeping = on
	if s := v.session(); s != nil {
		s.Idle() // what the client keeps for its next request, it rebuilds then
	}
	v.wakeAt = at
	x.sleeps.push(v)
	if v.slot == 0 { // the earliest now: the timer is armed for a later one, or not at all
		x.timer.Reset(d)
	}
	return true
}

// interrupt ends v's wait early if it waits on the context that ended (on). If v is due
// already, the sender that took it has it.
func (v *vu) interrupt(on int32) {
	x := v.e.exec
	x.mu.Lock()
	cut := v.sleeping == on && v.slot >= 0
	if cut {
		x.sleeps.remove(v.slot) // the timer may tick for it still: due finds nothing then
		v.sleeping = 0
		v.woke = false
	}
	x.mu.Unlock()
	if cut {
		x.dispatch(v)
	}
}

// sleepHeap is a binary min-heap of sleeping clients by due time; each client's slot is its
// index in it, -1 when it is not in it. Hand-written rather than container/heap: no
// interface conversions on the path of every poll.
type sleepHeap []*vu

// push adds v.
func (h *sleepHeap) push(v *vu) {
	*h = append(*h, v)
	v.slot = len(*h) - 1
	h.up(v.slot)
}

// remove takes out the client at index i and returns it.
func (h *sleepHeap) remove(i int) *vu {
	s := *h
	n := len(s) - 1
	v := s[i]
	if i != n {
		s.swap(i, n)
	}
	s[n] = nil
	*h = s[:n]
	if i < n && !h.down(i) {
		h.up(i)
	}
	v.slot = -1
	return v
}

// less orders the heap: the client at i is due before the one at j.
func (h sleepHeap) less(i, j int) bool { return h[i].wakeAt.Before(h[j].wakeAt) }

// swap exchanges the clients at i and j, and their slots.
func (h sleepHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].slot, h[j].slot = i, j
}

// up moves the client at i towards the root while it is due before its parent.
func (h sleepHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

// down moves the client at i towards the leaves while a child is due before it; it reports
// whether it moved.
func (h sleepHeap) down(i int) bool {
	i0 := i
	for {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		j := l
		if r := l + 1; r < len(h) && h.less(r, l) {
			j = r
		}
		if !h.less(j, i) {
			break
		}
		h.swap(i, j)
		i = j
	}
	return i > i0
}

// idleClients is the open model's pool of idle clients, oldest first: an arrival goes to
// the client idle the longest.
type idleClients struct {
	mu     sync.Mutex
	ring   []*vu
	head   int
	n      int
	closed bool
}

func (p *idleClients) init(size int) { p.ring = make([]*vu, max(size, 1)) }

// get takes the client idle the longest; nil if there is none.
func (p *idleClients) get() *vu {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == 0 {
		return nil
	}
	v := p.ring[p.head]
	p.ring[p.head] = nil
	p.head = (p.head + 1) % len(p.ring)
	p.n--
	return v
}

// put gives v back to the pool; false once the pool is closed (v is still the caller's).
func (p *idleClients) put(v *vu) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.ring[(p.head+p.n)%len(p.ring)] = v
	p.n++
	return true
}

// close empties and closes the pool; it returns the clients that were idle.
func (p *idleClients) close() []*vu {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	out := make([]*vu, 0, p.n)
	for p.n > 0 {
		out = append(out, p.ring[p.head])
		p.ring[p.head] = nil
		p.head = (p.head + 1) % len(p.ring)
		p.n--
	}
	return out
}
