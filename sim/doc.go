// Package sim runs scenarios in virtual time (`tasksim simulate`, issue 28): one event
// queue, no goroutine per client, no sockets, no sleeping. This is its foundation: the
// event loop (Loop), which is also a clock.Clock, so that the code that decides behaviour
// (the mock server's task core, through mockserver.Config.Clock) runs on it unchanged.
//
// Order. Events run one at a time in the order of their instants; events due at the same
// instant run in the order they were scheduled (the secondary key, a sequence number the
// loop draws each time an event is scheduled), so a run is a function of its inputs: the
// same scenario and seed give the same sequence of events, and the same figures.
package sim
