package mockserver

import (
	"sync"
	"time"

	"github.com/tasksim/tasksim/internal/clock"
)

// The server's time (Config.Clock): every instant the core reads and every wait it arms
// (a phase of a task's work, a downstream hold, the reaper's sweeps, the restart schedule)
// goes through one clock.Clock, the machine's by default. On a simulation's event loop
// (package sim) the same core then runs in virtual time, with no goroutine of its own:
// the reaper and the restarts are chains of the clock's calls, not goroutines that sleep.
// What still waits in a request's own goroutine (reply latency and stalls, a synchronous
// call's work, a blocking tasks/result) is the request path's, which a simulation models
// apart.

// chains are the server's recurring calls (the reaper, the restart schedule), each
// armed on the clock for its next instant once the one before has run; Close stops them
// and waits for a call running then.
type chains struct {
	mu      sync.Mutex
	all     []*chain
	closed  bool
	running sync.WaitGroup
}

// chain calls f at the instants next gives, one after the other: next returns the first
// instant after last (the zero time before the first call), or false when there is none.
type chain struct {
	cs    *chains
	clock clock.Clock
	next  func(last time.Time) (time.Time, bool)
	f     func(now time.Time)
	at    time.Time   // the instant armed
	timer clock.Timer // guarded by cs.mu
}

// start arms a new chain on c.
func (cs *chains) start(c clock.Clock, next func(last time.Time) (time.Time, bool), f func(now time.Time)) {
	ch := &chain{cs: cs, clock: c, next: next, f: f}
	cs.mu.Lock()
	cs.all = append(cs.all, ch)
	cs.mu.Unlock()
	ch.arm(time.Time{})
}

// arm schedules the call after last, if there is one and the chains are not closed.
func (ch *chain) arm(last time.Time) {
	at, ok := ch.next(last)
	if !ok {
		return
	}
	cs := ch.cs
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if !cs.closed {
		ch.at = at
		ch.timer = ch.clock.AfterFunc(at.Sub(ch.clock.Now()), ch.fire)
	}
}

// fire makes the call armed, then arms the next.
func (ch *chain) fire() {
	cs := ch.cs
	cs.mu.Lock()
	if cs.closed {
		cs.mu.Unlock()
		return
	}
	cs.running.Add(1)
	at := ch.at
	cs.mu.Unlock()
	defer cs.running.Done()
	ch.f(ch.clock.Now())
	ch.arm(at)
}

// stop ends every chain: no call starts after it returns, and a call running has ended.
func (cs *chains) stop() {
	cs.mu.Lock()
	cs.closed = true
	for _, ch := range cs.all {
		if ch.timer != nil {
			ch.timer.Stop()
		}
	}
	cs.mu.Unlock()
	cs.running.Wait()
}

// every is a chain's next for a period from base: base+period, base+2·period, ...
func every(base time.Time, period time.Duration) func(last time.Time) (time.Time, bool) {
	return func(last time.Time) (time.Time, bool) {
		if last.IsZero() {
			return base.Add(period), true
		}
		return last.Add(period), true
	}
}
