package loadgen

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// The clients run as state machines on a pool of sender goroutines, not on a goroutine
// each. A client runs on a sender while it has work (a request, a reply to read);
// to wait for its next poll it arms its timer and leaves the sender; the timer hands it to
// an idle sender, or to a new one, when it is due.
//
// Why: the garbage collector. With a goroutine per client, 10,000 clients were 10,000 stacks
// to scan in every cycle (about 40% of the marking). And while the collector marks, a
// goroutine that allocates beyond its credit must assist: take background credit, or do at
// least 64 KiB worth of marking itself; every goroutine's credit is reset each cycle. The
// thousands of clients that woke during a mark phase each started with none, and each
// collection showed as 50-150 ms of schedule_lag in its second. A few hundred senders now do
// that work, and what one assist pays beyond its debt serves the sender's next requests.
//
// The pool grows to the clients with work at once (the request slots of Config.MaxConns
// bound the requests; a client waiting for a slot, or sleeping in a rare backoff, holds its
// sender) and keeps at most maxIdleSenders idle.
type executor struct {
	idle  chan *vu      // an idle sender receives its next client here
	quit  chan struct{} // closed at the end of the run: idle senders exit
	nIdle atomic.Int32
	wg    sync.WaitGroup
}

// maxIdleSenders bounds the idle senders kept for the next wake-ups; more exit.
const maxIdleSenders = 128

func newExecutor() *executor {
	return &executor{idle: make(chan *vu), quit: make(chan struct{})}
}

// dispatch runs v.drive on an idle sender, or on a new one.
func (x *executor) dispatch(v *vu) {
	select {
	case x.idle <- v:
	default:
		x.wg.Go(func() { x.serve(v) })
	}
}

// serve is a sender: it drives v until v waits or ends, then takes the next client.
func (x *executor) serve(v *vu) {
	for {
		v.drive()
		if x.nIdle.Add(1) > maxIdleSenders {
			x.nIdle.Add(-1)
			return
		}
		select {
		case v = <-x.idle:
			x.nIdle.Add(-1)
		case <-x.quit:
			return
		}
	}
}

// close ends the idle senders once no client runs any more, and waits for them.
func (x *executor) close() {
	close(x.quit)
	x.wg.Wait()
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

// sleep arms v's timer for at. It reports true if v now waits: the caller must leave v at
// once, for resume (or interrupt, when ctx ends) hands it to a sender. It reports false, with
// v.woke set, if there is nothing to wait for: at has passed, or ctx has ended.
//
// Arming and interrupting exclude each other (wakeMu): interrupt runs once ctx has ended,
// so either sleep sees the end and does not arm, or interrupt finds the timer armed for
// this very wait. (A sleep that stopped its own timer after arming it could stop a later
// wait instead, once the client had been resumed and moved on.)
func (v *vu) sleep(ctx context.Context, at time.Time, on int32) bool {
	d := time.Until(at)
	if d <= 0 {
		v.woke = ctx.Err() == nil
		return false
	}
	v.wakeMu.Lock()
	defer v.wakeMu.Unlock()
	if ctx.Err() != nil {
		v.woke = false
		return false
	}
	v.sleeping = on
	if s := v.session(); s != nil {
		s.Idle() // what the client keeps for its next request, it rebuilds then
	}
	v.wake.Reset(d)
	return true
}

// resume is v's timer function: the wait ran its course.
func (v *vu) resume() {
	v.wakeMu.Lock()
	v.sleeping = 0
	v.woke = true
	v.wakeMu.Unlock()
	v.e.exec.dispatch(v)
}

// interrupt ends v's wait early if it waits on the context that ended (on). If the timer has
// fired already, resume has v.
func (v *vu) interrupt(on int32) {
	v.wakeMu.Lock()
	cut := v.sleeping == on && v.wake.Stop()
	if cut {
		v.sleeping = 0
		v.woke = false
	}
	v.wakeMu.Unlock()
	if cut {
		v.e.exec.dispatch(v)
	}
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
