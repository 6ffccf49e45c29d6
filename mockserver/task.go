package mockserver

import (
	"strconv"
	"sync"
	"time"

	"github.com/tasksim/tasksim/internal/clock"
	"github.com/tasksim/tasksim/internal/mcp"
)

// ending says how a task's work ended; it decides the tasks/result payload (R17).
type ending uint8

const (
	endNone       ending = iota
	endCompleted         // CallToolResult, isError false -> completed
	endToolError         // CallToolResult, isError true -> failed (R51)
	endRPCError          // JSON-RPC error -> failed, tasks/result returns the same error
	endDeclined          // the requestor declined or cancelled an elicitation -> failed
	endCancelled         // tasks/cancel -> cancelled
	endDownstream        // the downstream failed or rejected the operation -> failed, JSON-RPC error (downstream.go)
)

// task is one task of the store. Fields above mu never change after creation; the rest are
// guarded by mu. Its work is event driven (timers and answers, no goroutine per task), so a
// live task costs a few hundred bytes and four heap objects, which every GC cycle marks:
// itself, its id, its timer and the timer's callback (TestRetainedObjects). For that, times
// and the ttl are held as numbers, and the tool's name is a constant (params.go, toolName).
type task struct {
	srv     *Server
	id      string
	tool    string // the tool called: the per_tool pollInterval policy keys on it
	seq     uint64
	tenant  string    // "" without an authorization context
	owner   *session  // the creating session: status notifications go only there
	created stamp     // createdAt (R42)
	expires time.Time // zero when ttl is null
	ttl     optMs     // the granted ttl; absent (null on the wire) when unlimited (R44)
	work    workPlan

	// Injected per-task faults, drawn before the task is visible (faults.go).
	earlyExpiry bool // deleted the instant it turns terminal
	stuck       bool // its work never ends
	effectFirst bool // its domain effect is applied when its work starts

	mu            sync.Mutex
	status        mcp.Status
	statusMessage string
	updated       stamp // lastUpdatedAt (R43)
	end           ending
	round         int           // input rounds answered so far
	timer         clock.Timer   // the current phase of work
	changed       chan struct{} // closed and cleared on every change; nil until awaited
	pending       []*elicitation
	waiters       int             // open tasks/result SSE streams on this task (they can carry elicitations)
	subs          []chan struct{} // wake channels of the subscriptions/listen streams reporting it (listen.go)
	fetched       bool            // a terminal payload was delivered
	inFlight      bool            // counted in Server.inFlight: not yet terminal or expired (pollpolicy.go)
	gone          bool            // deleted from the store (expired)
	xstate        uint8           // executor state, guarded by Server.exec.mu (executor.go)
	xq            bool            // waiting for a worker: the wire statusMessage says where (executor.go)
	fx            uint8           // effect_first: fxNone, fxSent (with the downstream), fxApplied
	awaitFx       bool            // effect_first: the work ended, the task completes when fx settles
	overrule      bool            // cancel_not_final: the work goes on under a cancelled status (knownbad.go)
	readOnce      bool            // get_not_ready: a modern tasks/get was refused once (knownbad2026.go)

	echo string // echo_secrets: arguments and answers copied into statusMessage (insecure.go)
}

// States of an effect_first task's domain effect (task.fx).
const (
	fxNone    uint8 = iota // not applied yet (every task without effect_first)
	fxSent                 // sent to the downstream when the work started
	fxApplied              // applied
)

// appendLocked appends t's wire form (docs/RULES.md#task-object): the result of tasks/get and
// tasks/cancel, and the params of notifications/tasks/status. It writes the bytes
// mcp.V20251125's AppendTask writes (TestTaskWireMatchesDialect), but takes createdAt,
// lastUpdatedAt and ttl from the stored numbers, so that a live task keeps no strings or
// pointers for them, and builds no mcp.Task that would escape through the Dialect interface.
// The pollInterval is the policy's at this moment (pollpolicy.go).
func (t *task) appendLocked(dst []byte) []byte {
	return t.srv.modes.writeTask(t, dst) // appendTaskLocked, unless a known-bad mode (knownbad.go)
}

// appendTaskLocked is the honest writer of appendLocked.
func (t *task) appendTaskLocked(dst []byte) []byte {
	dst = append(dst, `{"taskId":`...)
	dst = mcp.AppendString(dst, t.id)
	dst = append(dst, `,"status":"`...)
	dst = append(dst, t.status.String()...)
	dst = append(dst, '"')
	if msg := t.wireMessageLocked(); msg != "" { // a queued task's position, echoes, canaries (insecure.go)
		dst = append(dst, `,"statusMessage":`...)
		dst = mcp.AppendString(dst, msg)
	}
	dst = append(dst, `,"createdAt":`...)
	dst = t.created.appendJSON(dst)
	dst = append(dst, `,"lastUpdatedAt":`...)
	dst = t.updated.appendJSON(dst)
	dst = append(dst, `,"ttl":`...)
	dst = t.ttl.appendJSON(dst) // null when unlimited (R44)
	dst = append(dst, `,"pollInterval":`...)
	dst = strconv.AppendInt(dst, t.srv.pollInterval(t.tool).Milliseconds(), 10)
	return append(dst, '}')
}

// appendCreateLocked appends the CreateTaskResult of t: the task nested under "task" (R11).
func (t *task) appendCreateLocked(dst []byte) []byte {
	dst = t.appendLocked(append(dst, `{"task":`...))
	return append(dst, '}')
}

// stamp is an instant in whole milliseconds since the Unix epoch, the precision of createdAt
// and lastUpdatedAt on the wire (mcp.TimeLayout). A task keeps its times as stamps and
// formats them into each reply.
type stamp int64

// stampOf returns the stamp of t: t rounded down to the millisecond, as mcp.FormatTime
// writes it.
func stampOf(t time.Time) stamp { return stamp(t.UnixMilli()) }

// appendJSON appends st as a JSON string: the bytes mcp.AppendString(dst, mcp.FormatTime(t))
// writes for any t with stampOf(t) == st.
func (st stamp) appendJSON(dst []byte) []byte {
	dst = append(dst, '"')
	dst = time.UnixMilli(int64(st)).UTC().AppendFormat(dst, mcp.TimeLayout)
	return append(dst, '"')
}

// optMs is an optional count of milliseconds (a ttl) held by value: ok is false when it is
// absent, which the wire writes as null.
type optMs struct {
	ms mcp.Ms
	ok bool
}

func (o optMs) appendJSON(dst []byte) []byte {
	if !o.ok {
		return append(dst, "null"...)
	}
	return strconv.AppendInt(dst, int64(o.ms), 10)
}

// signalLocked wakes everyone waiting for a change of t: its tasks/result streams and its
// subscriptions/listen streams (listen.go).
func (t *task) signalLocked() {
	if t.changed != nil {
		close(t.changed)
		t.changed = nil
	}
	for _, w := range t.subs {
		select {
		case w <- struct{}{}:
		default: // a wake is pending: the stream reads every task when it wakes
		}
	}
}

// changedLocked returns a channel that is closed at t's next change.
func (t *task) changedLocked() <-chan struct{} {
	if t.changed == nil {
		t.changed = make(chan struct{})
	}
	return t.changed
}

// setLocked moves t to status to with msg, enforcing R14: it reports false, and changes
// nothing, when the transition is not allowed (a terminal task never changes, R28).
func (t *task) setLocked(to mcp.Status, msg string) bool {
	if !mcp.CanTransition(t.status, to) || t.status.Terminal() {
		return false
	}
	t.status, t.statusMessage = to, msg
	t.updated = stampOf(t.srv.clock.Now())
	if to.Terminal() {
		t.leaveInFlightLocked()
		t.srv.exec.release(t) // its worker or queue place (executor.go)
		if t.timer != nil {
			t.timer.Stop()
			t.timer = nil
		}
		for _, e := range t.pending {
			t.srv.forgetElicitation(e)
		}
		t.pending = nil
	}
	t.signalLocked()
	return true
}

// start runs the first phase of work. Called once, right after the task is stored.
func (t *task) start() {
	t.mu.Lock()
	var o *operation
	if !t.status.Terminal() && !t.gone { // a cancel may land between store.add and start
		o = t.beginWorkLocked()
	}
	t.mu.Unlock()
	if o != nil {
		t.srv.send(o) // effect_first through the downstream (downstream.go)
	}
}

// beginWorkLocked starts t's work: it arms the first phase, unless t is stuck (its work
// never ends), and applies the domain effect of an effect_first task whose work is planned
// to complete (faults.go). It returns the operation the caller must send downstream once
// t.mu is released, if any.
func (t *task) beginWorkLocked() *operation {
	var o *operation
	if t.effectFirst && t.work.ending == endCompleted {
		t.srv.injected(faultEffectFirst, t.srv.clock.Now(), t.id)
		if t.srv.down.on() {
			t.fx = fxSent
			o = &operation{t: t, effect: t.effectLocked()}
		} else {
			t.srv.recordApplied(t.effectLocked())
			t.fx = fxApplied
		}
	}
	if t.stuck {
		t.srv.injected(faultStuck, t.srv.clock.Now(), t.id)
		return o // no timer: working until cancelled or expired
	}
	t.schedulePhaseLocked()
	return o
}

// schedulePhaseLocked arms the timer for the next phase. The work of a task with r input
// rounds is r+1 equal phases; an input round sits between two phases.
func (t *task) schedulePhaseLocked() {
	phases := time.Duration(t.work.rounds + 1)
	d := t.work.duration / phases
	if t.round == t.work.rounds {
		d = t.work.duration - d*time.Duration(t.work.rounds) // the last phase takes the remainder
	}
	t.timer = t.srv.clock.AfterFunc(d, t.phaseDone)
}

// phaseDone ends a phase of work: ask for input, or finish.
func (t *task) phaseDone() {
	t.mu.Lock()
	t.overruleLocked() // cancel_not_final (knownbad.go)
	if t.status.Terminal() || t.gone {
		t.mu.Unlock()
		return
	}
	t.timer = nil
	if t.round < t.work.rounds {
		t.askLocked()
		return // askLocked unlocks
	}
	end, to, msg := t.srv.modes.outcome(t.work.ending) // workOutcome, unless a known-bad mode (knownbad.go)
	switch {
	case end == endCompleted && t.fx == fxSent: // effect_first: its operation is still downstream
		t.awaitFx = true
		t.statusMessage = commitMessage
		t.updated = stampOf(t.srv.clock.Now())
		t.signalLocked()
		t.mu.Unlock() // settle completes t (downstream.go)
		return
	case end == endCompleted && t.srv.down.on() && t.fx == fxNone:
		t.commitLocked() // unlocks; t completes when the downstream answers (downstream.go)
		return
	}
	t.finishLocked(end, to, msg)
}

// finishLocked ends the work with outcome end, records the domain effect and unlocks t.
func (t *task) finishLocked(end ending, to mcp.Status, msg string) {
	ok := t.setLocked(to, msg)
	if ok {
		t.end = end
	}
	var snap []byte
	if ok {
		snap = t.srv.statusNotification(t)
		// Record the effect before t.mu is released, so that whoever sees the task completed
		// also sees its effect. With a downstream, settle recorded it (downstream.go).
		if end == endCompleted && !t.srv.down.on() && t.fx == fxNone { // effect_first applied it already
			t.srv.recordApplied(t.effectLocked()) // takes only the ledger's lock
		}
	}
	early := ok && t.goneEarlyLocked()
	t.mu.Unlock()
	if !ok {
		return
	}
	t.srv.notifyOwner(t.owner, snap)
	if early {
		t.srv.expireEarly(t) // faults.go
	}
}

// goneEarlyLocked deletes t, which has just turned terminal, when early_expiry is on for
// it: in the same critical section, so that nobody ever sees it terminal and still there.
// It reports whether it deleted t; the caller then counts the deletion (expireEarly) once
// t.mu is released.
func (t *task) goneEarlyLocked() bool {
	if !t.earlyExpiry {
		return false
	}
	t.gone = true
	return t.srv.store.remove(t) // a shard lock inside t.mu: the allowed order (store.go)
}

// askLocked moves t to input_required with a queued elicitation/create and unlocks t.
// A client that did not declare form elicitation is never sent one (R60): the task fails.
func (t *task) askLocked() {
	if !t.owner.elicitForm {
		t.finishLocked(endDeclined, mcp.StatusFailed, "input required, but the client did not declare form elicitation (R60)")
		return
	}
	asks := 1
	if fc := t.work.fixture; fc != nil {
		asks = fc.asks // a fixture may ask several at once (fixtures.go)
	}
	first := len(t.pending)
	for range asks {
		t.pending = append(t.pending, t.srv.newElicitation(t, t.round+1))
	}
	asked := t.pending[first:]
	t.setLocked(mcp.StatusInputRequired, "waiting for input: round "+strconv.Itoa(t.round+1)+" of "+strconv.Itoa(t.work.rounds))
	snap := t.srv.statusNotification(t)
	deliverGET := t.waiters == 0 && t.owner.getReaders.Load() > 0 // no tasks/result stream to carry it (R39)
	var msgs [][]byte
	if deliverGET {
		for _, e := range asked {
			e.onGET = true // H6: no other stream repeats it meanwhile
			msgs = append(msgs, e.msg)
		}
	}
	t.mu.Unlock()
	t.srv.notifyOwner(t.owner, snap)
	for _, m := range msgs {
		t.srv.sendOwner(t.owner, m)
	}
}

// answer applies the requestor's answer to elicitation e: accept resumes the work (R38)
// once every elicitation of the round is answered (a fixture may ask several at once,
// fixtures.go), anything else ends the task failed. content is the accepted answer's
// content, which a fixture keeps for its result.
func (t *task) answer(e *elicitation, action string, content []byte, rpcErr bool) {
	t.mu.Lock()
	if t.status != mcp.StatusInputRequired || e.answered {
		t.mu.Unlock()
		return
	}
	e.answered = true
	for i, p := range t.pending {
		if p == e {
			t.pending = append(t.pending[:i], t.pending[i+1:]...)
			break
		}
	}
	if rpcErr || action != mcp.ElicitAccept {
		if rpcErr {
			action = "error"
		}
		t.finishLocked(endDeclined, mcp.StatusFailed, "input round "+strconv.Itoa(e.round)+" answered with "+action)
		return
	}
	if fc := t.work.fixture; fc != nil {
		fc.answers = append(fc.answers, content)
		if len(t.pending) > 0 { // the round asked for more at once: it waits for them all
			t.updated = stampOf(t.srv.clock.Now())
			t.signalLocked()
			t.mu.Unlock()
			return
		}
	}
	t.round++
	t.setLocked(mcp.StatusWorking, "")
	t.schedulePhaseLocked()
	snap := t.srv.statusNotification(t)
	t.mu.Unlock()
	t.srv.notifyOwner(t.owner, snap)
}

// cancel makes a non-terminal task cancelled before returning it (R27, R28); a terminal task
// gets -32602 (R26). It is the honest cancel, which the known-bad cancel modes wrap
// (knownbadcancel.go: canceller); both eras cancel through Server.modes.cancel.
func (t *task) cancel(dst []byte) ([]byte, *mcp.Error) {
	t.mu.Lock()
	return t.cancelLocked(dst)
}

// cancelLocked is cancel with t.mu held; it unlocks it.
func (t *task) cancelLocked(dst []byte) ([]byte, *mcp.Error) {
	if t.status.Terminal() {
		st := t.status
		t.mu.Unlock()
		return dst, mcp.Errorf(mcp.CodeInvalidParams, "cannot cancel task %s: it is already %s (R26)", t.id, st)
	}
	t.setLocked(mcp.StatusCancelled, "cancelled by requestor")
	t.end = endCancelled
	if t.fx == fxApplied { // effect_first: the effect came before the cancel, and stays
		e := t.effectLocked()
		t.srv.ledger.addAfterCancel(&e)
	}
	dst = t.appendLocked(dst)
	snap := t.srv.statusNotification(t)
	early := t.goneEarlyLocked()
	t.mu.Unlock()
	t.srv.notifyOwner(t.owner, snap)
	if early {
		t.srv.expireEarly(t)
	}
	return dst, nil
}

// expire marks t deleted and wakes its waiters; their tasks/result calls then fail.
func (t *task) expire() {
	t.mu.Lock()
	t.gone = true
	t.leaveInFlightLocked()
	t.srv.exec.release(t)
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
	for _, e := range t.pending {
		t.srv.forgetElicitation(e)
	}
	t.pending = nil
	t.signalLocked()
	t.mu.Unlock()
}
