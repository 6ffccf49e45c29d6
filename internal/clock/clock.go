// Package clock is the seam between code that reads time or waits for it and the time it
// runs in: the machine's (Real), or a simulation's virtual time (package sim), in which a
// whole scenario runs on one event queue with no goroutine sleeping. What decides behaviour
// (the mock server's task core, the clients' lifecycles) reads its time through a Clock, so
// that a live run and a simulated one are the same code.
package clock

import "time"

// Clock is time as the code that holds it sees it: now, and a function called once a
// duration has passed.
type Clock interface {
	// Now is the current instant.
	Now() time.Time
	// AfterFunc calls f, in its own goroutine for Real, on the clock's event loop for a
	// simulation, once d has passed; Stop on the Timer prevents a call not yet made.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a call that AfterFunc scheduled.
type Timer interface {
	// Stop prevents the call if it has not been made, and reports whether it did.
	Stop() bool
}

// Real is the machine's clock: time.Now and time.AfterFunc. Its zero value is ready.
type Real struct{}

func (Real) Now() time.Time { return time.Now() }

func (Real) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Or is c, or Real when c is nil: the default of a configuration that leaves it out.
func Or(c Clock) Clock {
	if c == nil {
		return Real{}
	}
	return c
}
