package mockserver

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tasksim/tasksim/internal/clock"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

// The downstream system of record (Config.Downstream): the service every unit of tool work
// ends in. When the work of a call that is to complete has taken its duration, its domain
// operation is sent downstream; the call completes when the operation returns (tasks:
// completed; synchronous calls: the reply). Work planned to fail (outcome failed or error)
// fails before reaching the downstream.
//
//	slots     Capacity operations run at once; the rest wait FIFO for a slot
//	queue     with QueueLimit > 0, an operation that finds QueueLimit waiting is rejected at
//	          once (DownstreamRejections)
//	service   an operation holds its slot for a sample of ServiceTime, plus StallDuration
//	          with StallProbability, plus, when it starts inside a StallWindow (measured
//	          from server start), the rest of that window: the downstream answers nothing
//	          during a window, so the queue builds and then drains
//	outcome   it fails with FailureRate, else it is applied (its effect happens)
//
// A rejected or failed operation fails its task with a JSON-RPC error (tasks/result returns
// it). Every operation is recorded in the ledger (ledger.go) with its receipt. Cancel is not
// rollback: an operation already sent downstream (waiting or running) still happens when its
// task is cancelled, and its effect is then counted in EffectsAfterCancel.
//
// downstream_wait (time from sending to getting a slot, 0 when one was free) goes to
// Config.Metrics for every operation that gets a slot. With Capacity 0 there is no model:
// the effect is applied when the work ends.
type downstream struct {
	capacity   int
	queueLimit int // 0 = unbounded
	cfg        Downstream

	mu       sync.Mutex
	inFlight int
	waiting  []*operation // FIFO
	whead    int
	running  map[*operation]struct{} // in flight, so that close can stop their timers
	closed   bool

	nInFlight  atomic.Int64
	nWaiting   atomic.Int64
	rejections atomic.Uint64
	failures   atomic.Uint64
	receipts   atomic.Uint64
}

// opOutcome is the authoritative outcome of a domain operation.
type opOutcome uint8

const (
	opApplied  opOutcome = iota // the effect happened
	opFailed                    // the downstream failed the operation: no effect
	opRejected                  // the downstream queue was full: never attempted
)

func (o opOutcome) String() string {
	switch o {
	case opApplied:
		return "applied"
	case opFailed:
		return "failed"
	}
	return "rejected"
}

// operation is one domain operation on its way through the downstream.
type operation struct {
	t      *task          // the task whose work this is; nil for a synchronous call
	effect effectRecord   // what the ledger records (key, actor, tenant, tool)
	reply  chan opOutcome // synchronous call: the outcome, buffered
	sent   time.Time
	timer  clock.Timer
	failed bool
}

func (d *downstream) init(cfg Downstream) {
	d.cfg, d.capacity, d.queueLimit = cfg, cfg.Capacity, cfg.QueueLimit
	d.running = make(map[*operation]struct{})
}

// on reports whether the downstream model is configured.
func (d *downstream) on() bool { return d.capacity > 0 }

// receipt issues the next downstream receipt id.
func (d *downstream) receipt() uint64 { return d.receipts.Add(1) }

// send hands o to the downstream: it starts in a free slot, waits for one, or is rejected.
func (s *Server) send(o *operation) {
	d := &s.down
	o.sent = s.clock.Now()
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return
	}
	if d.inFlight < d.capacity {
		d.inFlight++
		d.nInFlight.Store(int64(d.inFlight))
		s.startOpLocked(o)
		d.mu.Unlock()
		return
	}
	if d.queueLimit > 0 && len(d.waiting)-d.whead >= d.queueLimit {
		d.mu.Unlock()
		d.rejections.Add(1)
		if m := s.cfg.Metrics; m != nil {
			m.Add(metrics.DownstreamRejections, 1)
		}
		s.settle(o, opRejected)
		return
	}
	d.waiting = append(d.waiting, o)
	d.nWaiting.Store(int64(len(d.waiting) - d.whead))
	d.mu.Unlock()
}

// startOpLocked runs o in a slot already counted: it records the wait and arms the timer of
// its service time.
func (s *Server) startOpLocked(o *operation) {
	d := &s.down
	now := s.clock.Now()
	if m := s.cfg.Metrics; m != nil {
		m.RecordDuration(metrics.DownstreamWait, now.Sub(o.sent))
	}
	s.prom.observeDownstreamWait(now.Sub(o.sent)) // prom.go
	hold := s.rand.sample(streamDownstream, d.cfg.ServiceTime)
	if s.rand.chance(streamDownstream, d.cfg.StallProbability) {
		hold += d.cfg.StallDuration
	}
	hold += d.windowRest(now.Sub(s.epoch))
	o.failed = s.rand.chance(streamDownstream, d.cfg.FailureRate)
	d.running[o] = struct{}{}
	o.timer = s.clock.AfterFunc(hold, func() { s.opDone(o) })
}

// windowRest is how long an operation starting at elapsed (since server start) waits for
// the end of the stall window it falls in; 0 outside every window.
func (d *downstream) windowRest(elapsed time.Duration) time.Duration {
	var rest time.Duration
	for _, w := range d.cfg.StallWindows {
		if end := w.Start + w.Duration; elapsed >= w.Start && elapsed < end {
			rest = max(rest, end-elapsed)
		}
	}
	return rest
}

// opDone ends o's service: its slot goes to the oldest waiting operation, and o settles.
func (s *Server) opDone(o *operation) {
	d := &s.down
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return
	}
	delete(d.running, o)
	if d.whead < len(d.waiting) {
		next := d.waiting[d.whead]
		d.waiting[d.whead] = nil
		d.whead++
		if d.whead == len(d.waiting) {
			d.waiting, d.whead = d.waiting[:0], 0
		} else if d.whead >= 1024 && d.whead*2 >= len(d.waiting) {
			n := copy(d.waiting, d.waiting[d.whead:])
			clear(d.waiting[n:])
			d.waiting, d.whead = d.waiting[:n], 0
		}
		d.nWaiting.Store(int64(len(d.waiting) - d.whead))
		s.startOpLocked(next) // the slot passes on: inFlight is unchanged
	} else {
		d.inFlight--
		d.nInFlight.Store(int64(d.inFlight))
	}
	d.mu.Unlock()
	out := opApplied
	if o.failed {
		out = opFailed
		d.failures.Add(1)
	}
	s.settle(o, out)
}

// settle records o's outcome in the ledger and finishes its task or synchronous call.
func (s *core) settle(o *operation, out opOutcome) {
	e := &o.effect
	e.outcome = out
	if out != opRejected {
		e.receipt = s.down.receipt()
	}
	if t := o.t; t != nil {
		// One critical section from the cancel check to the finish: a cancel landing in
		// between would otherwise apply the effect after the cancel without counting it.
		t.mu.Lock()
		e.afterCancel = out == opApplied && t.status == mcp.StatusCancelled
		s.ledger.record(e) // takes only the ledger's lock
		t.settledLocked(out, e.receipt)
		return
	}
	s.ledger.record(e)
	if o.reply != nil {
		o.reply <- out
	}
}

// commitLocked sends the domain operation of t, whose work just ended, downstream and
// unlocks t. t completes or fails when the operation returns (settle).
func (t *task) commitLocked() {
	t.statusMessage = commitMessage
	t.updated = stampOf(t.srv.clock.Now())
	t.signalLocked()
	o := &operation{t: t, effect: t.effectLocked()}
	t.mu.Unlock()
	t.srv.send(o)
}

// commitMessage is the statusMessage of a task whose work ended while its domain operation
// is with the downstream.
const commitMessage = "committing: the domain operation is with the downstream system"

// effectLocked is the ledger record of t's work, before its outcome is known.
func (t *task) effectLocked() effectRecord {
	return effectRecord{key: t.work.idempotencyKey, actor: t.owner.id, tenant: t.tenant, tool: t.tool, taskID: t.id}
}

// settledLocked finishes t by the outcome of its domain operation and unlocks t. A task
// that ended meanwhile (cancelled, expired) keeps its status: the effect, if applied, stays
// applied. The operation of an effect_first task (faults.go) settles while its work may
// still run: applied, the work goes on (t completes when it ends); failed or rejected, t
// fails at once.
func (t *task) settledLocked(out opOutcome, receipt uint64) {
	if out == opApplied && t.fx == fxSent {
		t.fx = fxApplied
		if !t.awaitFx {
			t.mu.Unlock()
			return
		}
	}
	if t.status.Terminal() || t.gone {
		t.mu.Unlock()
		return
	}
	switch out {
	case opApplied:
		t.finishLocked(endCompleted, mcp.StatusCompleted, "")
	case opFailed:
		t.finishLocked(endDownstream, mcp.StatusFailed, "downstream operation "+receiptID(receipt)+" failed: the system of record returned an error; the effect did not happen")
	default:
		d := &t.srv.down
		t.finishLocked(endDownstream, mcp.StatusFailed, fmt.Sprintf("downstream rejected the operation: %d operations already waiting (queue_limit %d); the effect did not happen", d.queueLimit, d.queueLimit))
	}
}

// downstreamError is the JSON-RPC error a task failed by the downstream returns from
// tasks/result (and a synchronous call returns at once).
func downstreamError(msg string) *mcp.Error {
	return &mcp.Error{Code: mcp.CodeInternalError, Message: msg}
}

// receiptID formats a downstream receipt.
func receiptID(r uint64) string { return "ds-" + strconv.FormatUint(r, 10) }

// callDownstream sends the operation of a synchronous call and waits for its outcome. ok is
// false when the client left (the operation still runs) or the server closed first (c is
// answered with an error).
func (s *Server) callDownstream(c *call, e effectRecord) (out opOutcome, ok bool) {
	o := &operation{effect: e, reply: make(chan opOutcome, 1)}
	s.send(o)
	select {
	case out = <-o.reply:
		return out, true
	case <-c.r.Context().Done():
	case <-s.closing:
		c.reply(nil, mcp.Errorf(mcp.CodeInternalError, "server is shutting down"))
	}
	return 0, false
}

// close stops every operation in flight; nothing settles after it.
func (d *downstream) close() {
	d.mu.Lock()
	d.closed = true
	for o := range d.running {
		o.timer.Stop()
	}
	clear(d.running)
	d.mu.Unlock()
}

// recordApplied records work that ended without a downstream model: its effect applies when
// the work ends.
func (s *core) recordApplied(e effectRecord) {
	e.outcome = opApplied
	e.receipt = s.down.receipt()
	s.ledger.record(&e)
}

// syncEffect applies the effect of a synchronous call whose work completed: through the
// downstream when there is one. It reports false when it answered c itself (the downstream
// failed or rejected the operation) or the client left.
func (s *Server) syncEffect(c *call, tool string, p *workPlan) bool {
	e := effectRecord{key: p.idempotencyKey, actor: c.sess.id, tenant: c.tenant, tool: tool}
	if !s.down.on() {
		s.recordApplied(e)
		return true
	}
	out, ok := s.callDownstream(c, e)
	switch {
	case !ok:
		return false
	case out == opFailed:
		c.reply(nil, downstreamError("downstream operation failed: the system of record returned an error; the effect did not happen"))
		return false
	case out == opRejected:
		c.reply(nil, downstreamError(fmt.Sprintf("downstream rejected the operation: %d operations already waiting (queue_limit %d); the effect did not happen", s.down.queueLimit, s.down.queueLimit)))
		return false
	}
	return true
}

// problems reports every problem with the downstream knobs.
func (d Downstream) problems() []error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if d.Capacity < 0 || d.QueueLimit < 0 {
		add("downstream: capacity and queue_limit must not be negative")
	}
	for _, r := range []struct {
		n string
		v float64
	}{{"failure_rate", d.FailureRate}, {"stall_probability", d.StallProbability}} {
		if !(r.v >= 0 && r.v <= 1) {
			add("downstream.%s must be in [0, 1], got %v", r.n, r.v)
		}
	}
	if d.StallDuration < 0 {
		add("downstream.stall_duration must not be negative, got %v", d.StallDuration)
	}
	if d.ServiceTime.Kind != "" {
		distProblems(&errs, "downstream.service_time", d.ServiceTime)
	}
	for i, w := range d.StallWindows {
		if w.Start < 0 || w.Duration <= 0 {
			add("downstream.stall_windows[%d]: start must be >= 0 and duration > 0, got %v, %v", i, w.Start, w.Duration)
		}
	}
	return errs
}
