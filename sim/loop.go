package sim

import (
	"math"
	"time"

	"github.com/tasksim/tasksim/internal/clock"
)

// Loop is a discrete-event loop in virtual time. Its time moves only from one event's
// instant to the next; nothing waits. It is single-threaded: its events, and everything
// they schedule, run on the goroutine that called Run, and a Loop must not be used from two
// goroutines at once.
//
// The queue (queue.go) holds (instant, sequence) entries that hold their event by pointer;
// a stopped or rescheduled event leaves its old entry behind, recognised and skipped by its
// generation when it comes to the top (lazy deletion: Stop and a reschedule cost nothing
// but the new entry). A run of N clients holds about one entry per client and per pending
// timer of the server; an entry is 32 bytes.
type Loop struct {
	start time.Time
	now   int64 // nanoseconds since start
	seq   uint64
	q     queue
	ran   uint64 // events run
}

// entry is one scheduling of an event in the heap.
type entry struct {
	at  int64  // the instant, in nanoseconds since the loop's start
	seq uint64 // the secondary key: the order of scheduling
	ev  *Event
	gen uint32 // the event's generation when scheduled; another generation: stale
}

// Event is a function the loop calls at an instant. One Event can be scheduled again and
// again (a client's next poll, a server's reaper tick), each schedule replacing the one
// before: a fleet's clients allocate nothing per event.
type Event struct {
	loop    *Loop
	fn      func()
	gen     uint32
	pending bool
}

var _ clock.Clock = (*Loop)(nil)

// New is a loop whose virtual time starts at start.
func New(start time.Time) *Loop { return &Loop{start: start} }

// Now is the loop's virtual instant: the instant of the event running, or of the last
// one run.
func (l *Loop) Now() time.Time { return l.start.Add(time.Duration(l.now)) }

// Elapsed is the virtual time since the loop's start.
func (l *Loop) Elapsed() time.Duration { return time.Duration(l.now) }

// Ran is the number of events run so far.
func (l *Loop) Ran() uint64 { return l.ran }

// Pending is the number of entries in the queue, stale ones included.
func (l *Loop) Pending() int { return l.q.len() }

// NewEvent is an event that calls fn; it is not scheduled.
func (l *Loop) NewEvent(fn func()) *Event { return &Event{loop: l, fn: fn} }

// AfterFunc schedules a new event calling f once d has passed (clock.Clock): d <= 0 is
// now, after the events already due now.
func (l *Loop) AfterFunc(d time.Duration, f func()) clock.Timer {
	e := l.NewEvent(f)
	e.After(d)
	return e
}

// After schedules e d from now (d <= 0: now, after the events already due now), replacing
// its pending schedule if it has one.
func (e *Event) After(d time.Duration) {
	now := e.loop.now
	e.at(now + min(max(int64(d), 0), math.MaxInt64-now)) // saturating: a far instant, not the past
}

// At schedules e at the instant t (one in the past: now), replacing its pending schedule.
func (e *Event) At(t time.Time) { e.After(t.Sub(e.loop.Now())) }

func (e *Event) at(at int64) {
	l := e.loop
	if e.pending {
		e.gen++ // the old entry goes stale
	}
	e.pending = true
	l.seq++
	l.q.push(entry{at: at, seq: l.seq, ev: e, gen: e.gen})
}

// Stop unschedules e and reports whether it was scheduled (clock.Timer).
func (e *Event) Stop() bool {
	if !e.pending {
		return false
	}
	e.pending = false
	e.gen++
	return true
}

// Scheduled reports whether e is due to run.
func (e *Event) Scheduled() bool { return e.pending }

// Run runs the events due up to the instant until, in order (those they schedule up to
// until included), and returns with virtual time at until (or where it was, if until is
// behind it); it reports whether events remain, due later.
func (l *Loop) Run(until time.Time) bool {
	end := int64(until.Sub(l.start))
	for {
		p, ok := l.q.peek()
		if !ok || p.at > end {
			break
		}
		top := *p
		l.q.pop()
		e := top.ev
		if !e.pending || e.gen != top.gen {
			continue // stopped or rescheduled since
		}
		e.pending = false
		l.now = top.at
		l.ran++
		e.fn()
	}
	for p, ok := l.q.peek(); ok && (!p.ev.pending || p.ev.gen != p.gen); p, ok = l.q.peek() {
		l.q.pop() // drop the stale entries on top, so that Pending says what is left
	}
	l.now = max(l.now, end)
	return l.q.len() > 0
}
