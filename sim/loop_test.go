package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)

// TestOrder: events run by instant, simultaneous ones in the order they were scheduled,
// whatever the order of their instants' scheduling; an event scheduled now from an event
// runs after those already due now; virtual time is the running event's instant.
func TestOrder(t *testing.T) {
	l := New(t0)
	var got []string
	at := func(d time.Duration, name string) {
		l.AfterFunc(d, func() {
			if l.Elapsed() != d {
				t.Errorf("%s ran at %v, want %v", name, l.Elapsed(), d)
			}
			got = append(got, name)
		})
	}
	at(2*time.Second, "c1")
	at(time.Second, "a")
	at(2*time.Second, "c2")
	l.AfterFunc(time.Second, func() {
		got = append(got, "b")
		l.AfterFunc(0, func() { got = append(got, "b-now") })           // due now: after a's peers
		l.AfterFunc(-time.Hour, func() { got = append(got, "b-past") }) // the past is now
	})
	at(time.Second, "a2")
	if more := l.Run(t0.Add(time.Minute)); more {
		t.Error("events remain after the last")
	}
	want := []string{"a", "b", "a2", "b-now", "b-past", "c1", "c2"}
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	if l.Ran() != 7 || l.Now() != t0.Add(time.Minute) {
		t.Errorf("ran %d, now %v: want 7 and the end of Run", l.Ran(), l.Now())
	}
}

// TestStopAndReschedule: a stopped event does not run and says it was scheduled once; a
// rescheduled one runs once, at its last instant; Run stops at its horizon and the rest
// runs later; Pending counts only what is left once the stale entries at the top are gone.
func TestStopAndReschedule(t *testing.T) {
	l := New(t0)
	var runs []time.Duration
	e := l.NewEvent(func() { runs = append(runs, l.Elapsed()) })
	e.After(time.Second)
	e.After(3 * time.Second) // replaces the first
	stopped := l.NewEvent(func() { t.Error("a stopped event ran") })
	stopped.After(2 * time.Second)
	if !stopped.Stop() || stopped.Stop() || stopped.Scheduled() {
		t.Error("Stop: true once, then false; not scheduled after")
	}
	if more := l.Run(t0.Add(2 * time.Second)); !more || len(runs) != 0 || l.Elapsed() != 2*time.Second {
		t.Fatalf("at 2s: more %v, runs %v, elapsed %v: want the event still due at 3s", more, runs, l.Elapsed())
	}
	if l.Pending() != 1 {
		t.Errorf("pending %d at 2s, want 1 (the stale ones dropped)", l.Pending())
	}
	l.Run(t0.Add(time.Hour))
	if !slices.Equal(runs, []time.Duration{3 * time.Second}) || e.Scheduled() {
		t.Errorf("runs %v, want one at 3s", runs)
	}
	e.At(t0) // the past: now
	l.Run(t0.Add(time.Hour))
	if len(runs) != 2 || runs[1] != time.Hour {
		t.Errorf("runs %v: an event scheduled in the past runs now", runs)
	}
}

// TestHeapOrderRandom: many events at random instants, many at equal instants, some
// stopped and some rescheduled, run exactly in (instant, scheduling order), as a sort of
// the same schedule says.
func TestHeapOrderRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	l := New(t0)
	type sched struct {
		at  time.Duration
		seq int
	}
	var want []sched
	var got []sched
	evs := make([]*Event, 5000)
	plan := make([]sched, len(evs))
	seq := 0
	for i := range evs {
		evs[i] = l.NewEvent(func() { got = append(got, plan[i]) })
	}
	for round := range 3 { // each round reschedules every event; the last one stands
		for i, e := range evs {
			d := time.Duration(rng.IntN(200)) * time.Millisecond // many equal instants
			seq++
			plan[i] = sched{d, seq}
			e.After(d)
			if round == 2 && i%7 == 0 {
				e.Stop()
				plan[i].seq = -1
			}
		}
	}
	for _, p := range plan {
		if p.seq >= 0 {
			want = append(want, p)
		}
	}
	slices.SortFunc(want, func(a, b sched) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return a.seq - b.seq
	})
	l.Run(t0.Add(time.Second))
	if !slices.Equal(got, want) {
		t.Fatalf("%d events ran, %d due; the order differs from (instant, scheduling order)", len(got), len(want))
	}
}

// BenchmarkFleetEvents: a fleet of clients, each an event rescheduling itself every 10 s
// with 10% jitter, as polling clients do: the loop's cost per event at a fleet's queue
// size (b.N events in all; the events per second are reported).
func BenchmarkFleetEvents(b *testing.B) {
	for _, clients := range []int{10_000, 1_000_000} {
		b.Run(itoa(clients), func(b *testing.B) {
			l := New(t0)
			rng := rand.New(rand.NewPCG(1, 2))
			left := b.N
			for range clients {
				var e *Event
				e = l.NewEvent(func() {
					if left--; left > 0 {
						e.After(9*time.Second + time.Duration(rng.Int64N(int64(2*time.Second))))
					}
				})
				e.After(time.Duration(rng.Int64N(int64(10 * time.Second))))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for left > 0 {
				l.Run(l.Now().Add(time.Hour))
			}
			b.StopTimer()
			b.ReportMetric(float64(l.Ran())/b.Elapsed().Seconds(), "events/s")
		})
	}
}

func itoa(n int) string {
	switch {
	case n >= 1_000_000:
		return string(rune('0'+n/1_000_000)) + "M"
	}
	return string(rune('0'+n/10_000)) + "0k"
}

// TestFarFuture: an event a duration too large for the clock's range away is due at the
// end of time, not in the past: it runs after a 1 s event, and not within an hour.
func TestFarFuture(t *testing.T) {
	l := New(t0)
	l.Run(t0.Add(time.Minute))
	var got []string
	l.AfterFunc(time.Duration(math.MaxInt64), func() { got = append(got, "far") })
	l.AfterFunc(time.Second, func() { got = append(got, "1s") })
	l.Run(l.Now().Add(time.Hour))
	if !slices.Equal(got, []string{"1s"}) || l.Elapsed() < time.Minute {
		t.Errorf("ran %v, elapsed %v: want only the 1 s event, time never going back", got, l.Elapsed())
	}
}
