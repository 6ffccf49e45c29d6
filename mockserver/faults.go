package mockserver

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/scenarios"
)

// Server-side faults (Config.Faults): the embedded server misbehaving on purpose,
// so that a client fleet's recovery can be rehearsed. Every zero value is off, and off costs
// the request path one bool test (perRequest) and task creation another (perTask).
//
// A Trigger decides one opportunity at offset e = now - server start:
//
//	fires  =  Every > 0 and e mod Every < Window            (a window: nothing is drawn)
//	       or a draw from the fault's own seeded stream < Probability
//
// Each fault draws from its own stream (rng.go): with the same Config.Seed, the same
// configuration and the same sequence of opportunities, every fault makes the same
// decisions, and turning one fault on does not shift another's.
//
//	fault           opportunity              effect
//	http_5xx        each POST                answered Status (0 = 503; 503 adds Retry-After: 1)
//	                                         with a short text body; the request is not processed
//	reset           each POST                the connection is closed with no reply
//	                                         (panic(http.ErrAbortHandler)); not processed
//	session_expiry  each request naming a    the session is forgotten and the request answered
//	                live session             404, as for an ended session (H8); not processed
//	restart         Restart.At, k*Every      every session is forgotten at once (their streams
//	                                         end; clients get 404 and initialize again); with
//	                                         RestartLosesTasks every task too (its work stops;
//	                                         tasks/get then answers -32602, R46)
//	duplicate       each tasks/result SSE    the response is sent twice, as two events with
//	                stream                   their own ids; a correct client ignores the second
//	early_expiry    each task                the task is deleted the instant it turns terminal,
//	                                         long before its ttl: counted expired and orphaned
//	stuck           each task                its work never ends: working until cancelled or
//	                                         its ttl runs out
//	effect_first    each task                its domain effect (ledger.go, through the
//	                                         downstream if any) is applied when its work starts,
//	                                         not when it ends: a later cancel still makes it
//	                                         cancelled, and its effect counts in
//	                                         EffectsAfterCancel (cancel is not rollback)
//	non_idempotent  each create repeating    known-bad mode: the work starts again (a second
//	                an idempotency key       effect: a ledger duplicate), and LookupKey finds
//	                                         nothing (idempotency.go)
//
// Per-request faults apply to requests that passed the Origin and token checks (H10); when
// several fire on one request, the first of reset, http_5xx, session_expiry applies. A
// per-task fault is drawn when the task is created (after its admission) and takes effect
// later, or never (a stuck task cancelled while queued; effect_first on work planned to
// fail). A fault is counted (Stats.Faults) and its event recorded (Config.Events, Source
// "server", Kind its scenario name, Task the task id when there is one) when it takes
// effect. Requests answered by a fault are not counted in Stats.Requests or
// Stats.Rejections. A stuck task holds its executor worker, as a hung thread would.

// faultKind is one server fault. The kinds with a Trigger come first: each has a random
// stream (streamFaults + kind).
type faultKind uint8

const (
	faultHTTP5xx faultKind = iota
	faultReset
	faultSessionExpiry
	faultDuplicate
	faultEarlyExpiry
	faultStuck
	faultEffectFirst
	numTriggered // the kinds above fire by a Trigger

	faultRestart       = numTriggered // by a Schedule
	faultNonIdempotent = numTriggered + 1
	numFaultKinds      = numTriggered + 2
)

// faultNames are the scenario names of the kinds: the Kind of their events.
var faultNames = [numFaultKinds]string{
	faultHTTP5xx: "http_5xx", faultReset: "reset", faultSessionExpiry: "session_expiry",
	faultDuplicate: "duplicate", faultEarlyExpiry: "early_expiry", faultStuck: "stuck",
	faultEffectFirst: "effect_first", faultRestart: "restart", faultNonIdempotent: "non_idempotent",
}

// faultState is the live form of Config.Faults.
type faultState struct {
	trig       [numTriggered]scenarios.Trigger
	status     int  // http_5xx's status, 503 when 0
	perRequest bool // http_5xx, reset or session_expiry can fire
	perTask    bool // early_expiry, stuck or effect_first can fire
	duplicate  bool
	nonIdem    bool
	loseTasks  bool
	events     *metrics.Events
	counts     [numFaultKinds]atomic.Uint64
}

// initFaults builds the fault state from s.cfg.
func (s *core) initFaults() {
	c, f := s.cfg.Faults, &s.faults
	f.trig = [numTriggered]scenarios.Trigger{
		faultHTTP5xx: c.HTTP5xx, faultReset: c.Reset, faultSessionExpiry: c.SessionExpiry,
		faultDuplicate: c.Duplicate, faultEarlyExpiry: c.EarlyExpiry, faultStuck: c.Stuck,
		faultEffectFirst: c.EffectFirst,
	}
	f.status = c.Status
	if f.status == 0 {
		f.status = http.StatusServiceUnavailable
	}
	f.perRequest = c.HTTP5xx.On() || c.Reset.On() || c.SessionExpiry.On()
	f.perTask = c.EarlyExpiry.On() || c.Stuck.On() || c.EffectFirst.On()
	f.duplicate = c.Duplicate.On()
	f.nonIdem = c.NonIdempotent
	f.loseTasks = c.RestartLosesTasks
	f.events = s.cfg.Events
}

// fires decides one opportunity of fault k at now (see the formula above).
func (s *core) fires(k faultKind, now time.Time) bool {
	tr := &s.faults.trig[k]
	if tr.InWindow(scenarios.Duration(now.Sub(s.epoch))) {
		return true
	}
	return s.rand.chance(streamFaults+randStream(k), tr.Probability)
}

// injected counts fault k, which took effect at now (on task, "" when none), and records
// its event.
func (s *core) injected(k faultKind, now time.Time, task string) {
	s.faults.counts[k].Add(1)
	s.faults.events.Add(metrics.Event{At: now, Source: "server", Kind: faultNames[k], Task: task})
}

// requestFault applies the per-request faults to r, which passed the Origin and token
// checks. It reports true when a fault answered r (or reset its connection: it then does
// not return). Called only when s.faults.perRequest.
func (s *Server) requestFault(w http.ResponseWriter, r *http.Request) bool {
	now := s.clock.Now()
	var reset, h5xx, expiry bool
	if r.Method == http.MethodPost {
		reset = s.fires(faultReset, now)
		h5xx = s.fires(faultHTTP5xx, now)
	}
	var sess *session
	if id := r.Header.Get(headerSessionID); id != "" && s.faults.trig[faultSessionExpiry].On() {
		if sess = s.sessions.lookup(id); sess != nil {
			expiry = s.fires(faultSessionExpiry, now)
		}
	}
	switch {
	case reset:
		s.injected(faultReset, now, "")
		panic(http.ErrAbortHandler) // net/http closes the connection without a reply
	case h5xx:
		s.injected(faultHTTP5xx, now, "")
		st := s.faults.status
		h := w.Header()
		h.Set("Content-Type", "text/plain; charset=utf-8")
		if st == http.StatusServiceUnavailable {
			h.Set("Retry-After", "1")
		}
		w.WriteHeader(st)
		_, _ = w.Write([]byte("tasksim: injected fault http_5xx: " + strconv.Itoa(st) + " " + http.StatusText(st) + "\n"))
		return true
	case expiry:
		s.sessions.remove(sess.id)
		s.injected(faultSessionExpiry, now, "")
		httpError(w, s.lostSession, "session not found: it is unknown or has ended; initialize again (H8)")
		return true
	}
	return false
}

// taskFaults draws the per-task faults of t, a new task not yet visible. Called only when
// s.faults.perTask.
func (s *core) taskFaults(t *task, now time.Time) {
	t.earlyExpiry = s.fires(faultEarlyExpiry, now)
	t.stuck = s.fires(faultStuck, now)
	t.effectFirst = s.fires(faultEffectFirst, now)
}

// expireEarly counts t, which early_expiry deleted the instant it turned terminal
// (task.goneEarlyLocked). Nobody could fetch its result: it counts as expired and orphaned.
// No cleanup_lag is recorded (it was deleted before its expiry, not after).
func (s *core) expireEarly(t *task) {
	s.injected(faultEarlyExpiry, s.clock.Now(), t.id)
	s.expired.Add(1)
	s.orphaned.Add(1)
	if m := s.cfg.Metrics; m != nil {
		m.Add(metrics.OrphanedTasks, 1)
	}
	s.ledger.unbind(t)
}

// startRestarts runs the restart schedule on the server's clock (a chain: clock.go), from
// its start. It ends after the last instant or at Close.
func (s *Server) startRestarts() {
	sch := s.cfg.Faults.Restart
	if !sch.On() {
		return
	}
	at := make([]time.Duration, len(sch.At))
	for i, d := range sch.At {
		at[i] = time.Duration(d)
	}
	slices.Sort(at)
	every := time.Duration(sch.Every)
	epoch := s.epoch
	s.chains.start(s.clock, func(last time.Time) (time.Time, bool) {
		prev := time.Duration(-1)
		if !last.IsZero() {
			prev = last.Sub(epoch)
		}
		next, ok := nextInstant(at, every, prev)
		return epoch.Add(next), ok
	}, s.restart)
}

// nextInstant is the first instant of the schedule (each of at, sorted, and k*every for
// k >= 1) after last; ok is false when there is none.
func nextInstant(at []time.Duration, every, last time.Duration) (next time.Duration, ok bool) {
	i, _ := slices.BinarySearch(at, last+1)
	if i < len(at) {
		next, ok = at[i], true
	}
	if every > 0 {
		k := max(last, 0)/every + 1
		if e := k * every; !ok || e < next {
			next, ok = e, true
		}
	}
	return next, ok
}

// restart forgets every session and, with RestartLosesTasks, every task, as a restarted
// server without durable storage would. The ledger is the system of record, not the
// server's memory: its effects and idempotency keys stay.
func (s *Server) restart(now time.Time) {
	s.injected(faultRestart, now, "")
	s.sessions.closeAll()
	s.modern.listens.dropAll() // the modern era's open streams: dropped without their result (listen.go)
	if !s.faults.loseTasks {
		return
	}
	var all []*task
	s.store.each(func(t *task) bool { all = append(all, t); return true })
	for _, t := range all {
		if s.store.remove(t) {
			t.expire()
			s.lost.Add(1)
			s.ledger.unbind(t)
		}
	}
}

// FaultCounts counts the injected faults that took effect, by kind (see faults.go).
type FaultCounts struct {
	HTTP5xx       uint64 // POSTs answered with the fault status
	Reset         uint64 // POSTs whose connection was closed without a reply
	SessionExpiry uint64 // sessions forgotten by a request (answered 404)
	Restart       uint64 // restarts
	Duplicate     uint64 // responses sent twice on a tasks/result stream
	EarlyExpiry   uint64 // tasks deleted the instant they turned terminal
	Stuck         uint64 // tasks whose work started and will never end
	EffectFirst   uint64 // domain effects applied when the work started
	NonIdempotent uint64 // creates that repeated an idempotency key and started the work again
}

// Total is the number of faults that took effect.
func (f FaultCounts) Total() uint64 {
	var n uint64
	f.Each(func(_ string, v uint64) { n += v })
	return n
}

// Each calls fn with the scenario name and count of every kind, in a fixed order.
func (f FaultCounts) Each(fn func(kind string, n uint64)) {
	for k, n := range f.array() {
		fn(faultNames[k], n)
	}
}

func (f *FaultCounts) array() [numFaultKinds]uint64 {
	return [numFaultKinds]uint64{
		faultHTTP5xx: f.HTTP5xx, faultReset: f.Reset, faultSessionExpiry: f.SessionExpiry,
		faultDuplicate: f.Duplicate, faultEarlyExpiry: f.EarlyExpiry, faultStuck: f.Stuck,
		faultEffectFirst: f.EffectFirst, faultRestart: f.Restart, faultNonIdempotent: f.NonIdempotent,
	}
}

// faultCounts snapshots the counters.
func (s *core) faultCounts() FaultCounts {
	c := &s.faults.counts
	return FaultCounts{
		HTTP5xx: c[faultHTTP5xx].Load(), Reset: c[faultReset].Load(), SessionExpiry: c[faultSessionExpiry].Load(),
		Restart: c[faultRestart].Load(), Duplicate: c[faultDuplicate].Load(), EarlyExpiry: c[faultEarlyExpiry].Load(),
		Stuck: c[faultStuck].Load(), EffectFirst: c[faultEffectFirst].Load(), NonIdempotent: c[faultNonIdempotent].Load(),
	}
}

// faultProblems reports every problem with the fault knobs. The scenario loader checks the
// same rules with line numbers (scenarios.ValidateServer); this catches programmatic configs.
func faultProblems(f scenarios.ServerFaults) []error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	for _, tr := range []struct {
		name string
		t    scenarios.Trigger
	}{{"http_5xx", f.HTTP5xx}, {"reset", f.Reset}, {"session_expiry", f.SessionExpiry},
		{"duplicate", f.Duplicate}, {"early_expiry", f.EarlyExpiry}, {"stuck", f.Stuck},
		{"effect_first", f.EffectFirst}} {
		p := "faults." + tr.name
		if !(tr.t.Probability >= 0 && tr.t.Probability <= 1) { // also rejects NaN
			add("%s.probability must be in [0, 1], got %v", p, tr.t.Probability)
		}
		if tr.t.Every < 0 || tr.t.Window < 0 {
			add("%s: every and window must not be negative", p)
		} else if tr.t.Every > 0 && (tr.t.Window <= 0 || tr.t.Window > tr.t.Every) {
			add("%s.window must be in (0, every=%v], got %v", p, tr.t.Every, tr.t.Window)
		} else if tr.t.Every == 0 && tr.t.Window > 0 {
			add("%s.window has no effect without every > 0", p)
		}
	}
	switch f.Status {
	case 0, 500, 502, 503, 504:
	default:
		add("faults.status must be 500, 502, 503 or 504 (0 = 503), got %d", f.Status)
	}
	for i, at := range f.Restart.At {
		if at < 0 {
			add("faults.restart.at[%d] must not be negative, got %v", i, at)
		}
	}
	if f.Restart.Every < 0 {
		add("faults.restart.every must not be negative, got %v", f.Restart.Every)
	}
	return errs
}
