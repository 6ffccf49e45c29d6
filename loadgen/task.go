package loadgen

import (
	"context"
	"strconv"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

// The driver of a virtual client: one task at a time through its Lifecycle, on the
// client's client.Conn, in whichever era the run dialed (client.DialerFor). The lifecycle
// decides the next step; the driver takes it with one Conn method and feeds the values it
// returns back in. What differs by era is in the Conn and its client.Traits:
//
//	step          2025-11-25 (legacyConn)             2026-07-28 (statelessConn)
//	dial          a session: initialize, DELETE       none: each request carries the
//	                                                  envelope (client.Target.Stateless)
//	create        tools/call with params.task         tools/call declaring the extension in
//	                                                  _meta; the server decides (E40): a
//	                                                  task, a result, or an input round
//	                                                  (MRTR: answered, and the call retried)
//	poll          tasks/get: the task                 tasks/get: the task with its payload
//	                                                  inline (E50), Mcp-Name: the task (E64)
//	result        tasks/result, a stream              none (Traits.Inline): the poll that
//	                                                  shows completed or failed carries it
//	input         elicitation/create on the           inputRequests in the poll, answered with
//	              tasks/result stream                 Answer (tasks/update), each key once
//	cancel        tasks/cancel answers the task       tasks/cancel is acknowledged (E60); the
//	                                                  outcome is what later polls show
//	reconcile     by idempotency key or tasks/list    by idempotency key (no tasks/list)
//
// The client faults where the era has no stream (docs/METRICS.md#eras):
//
//	create_reply         the tools/call reply is lost: an orphan (docs/RULES.md#ext-gap-9),
//	                     reconciled by idempotency key or counted unknown
//	after_create         the connection drops: there is no session to lose; the next poll
//	                     of the stored taskId resumes the observation
//	before_result,       the read carrying the payload is lost (read, then dropped with its
//	result_stream        connection): the next poll must bring it again (losePayload)
//	input_before_answer  the connection drops between the poll that shows inputRequests
//	                     and the Answer that would answer them
//	input_after_answer   the Answer's acknowledgement is lost: the keys count as
//	                     answered, and are never answered again
//	cancel_reply         the cancel's acknowledgement is lost
//	crash                as with sessions: resumed from the persisted taskId

// taskState is what a client holds about its current task beside its Lifecycle.
type taskState struct {
	id          string // task id; "" until known
	key         string // idempotency key sent with the create; "" = none
	correlation string // the client's own name for the task: key, or client-sequence
	lastUpdated string // lastUpdatedAt of the latest status seen
	intended    time.Time
	createSent  time.Time      // when the create that made the task was sent (client clock), for its expiry (grant)
	ref         client.TaskRef // the task, for the requests about it
	srv         serverTimes

	statusFails  int  // failed status reads and cancels (Budgets.Status)
	resultTries  int  // tasks/result calls that brought no payload (Budgets.Result)
	crashed      bool // the client crashed once during this task (at most once per task)
	streamCut    bool // a tasks/result stream of this task was cut (at most once per task)
	beforeResult bool // the connection was cut before tasks/result (at most once per task)
	lateCancel   bool // a tasks/cancel was refused -32602 as late (R26): the next read checks it
	reason       string

	// Input and cancels where reads inline them (client.Traits.Inline, client.Cancelled.Acked)
	inputs     mcp.InputRequests // the input requests of the latest poll, to answer
	answered   []string          // the input keys answered (E56: never twice)
	ackPending bool              // tasks/cancel was accepted, the task not seen terminal since (canceleffect.go)
	ackAt      time.Time         // when that cancel's reply came (client clock)
	ackOnly    bool              // that reply was an acknowledgement, without the task (E60)

	// A rollback drill (rollback.go)
	preSwitch bool // created before the switch: the watcher's
	watched   bool // the switch was seen while it ran: its cancel is decided
}

// A task runs from creation to a known outcome (or to abandonment when ctx ends): beginTask,
// then stepTask until it is over, then endTask, driven by drive (executor.go). Its intended
// start is when it should have started: task_e2e counts from it (docs/METRICS.md#task_e2e), so a
// late start is measured, not hidden.

// beginTask creates a task (create) and sets up its lifecycle; it reports false if there is
// no task to follow. After true, stepTask runs the task and endTask closes it.
func (v *vu) beginTask(ctx context.Context, intended time.Time) bool {
	e := v.e
	v.seq++
	t := &v.task
	*t = taskState{intended: intended}
	if e.keyArg != "" {
		t.key = v.idempotencyKey(v.seq)
		t.correlation = t.key
	} else {
		t.correlation = strconv.Itoa(v.idx) + "-" + strconv.FormatUint(v.seq, 10)
	}
	task, ok := v.create(v.startTaskSpan(ctx), t)
	if !ok {
		v.endTaskSpan(false)
		return false
	}
	v.taskCreated(task.TaskID)
	now := time.Now()
	v.shard.Add(metrics.TasksCreated, 1)
	e.manifest.SawTask(task)
	e.learn(task.TaskID)
	v.lastID = task.TaskID
	if e.probes != nil { // what probes of other tenants learn, through the simulator (probes.go)
		sid := ""
		if s := v.session(); s != nil {
			sid = s.ID()
		}
		e.probes.reg.add(v.ten.idx, task.TaskID, sid)
	}
	e.inFlight.Add(1) // until endTask

	var cancelAfter time.Duration
	if e.cfg.Cancel.Probability > 0 && v.rng.Float64() < e.cfg.Cancel.Probability {
		cancelAfter = time.Nanosecond
		if e.cfg.Cancel.Delay != nil {
			cancelAfter = max(time.Nanosecond, e.cfg.Cancel.Delay(v.rng))
		}
	}
	v.lc = v.newLifecycle()
	lc := &v.lc
	t.id, t.ref = task.TaskID, client.NewTaskRef(task.TaskID)
	t.srv = serverTimes{created: parseTime(task.CreatedAt), ttl: task.TTL}
	t.lastUpdated = task.LastUpdatedAt
	v.grant(t, task.TTL)
	v.cur = task.TaskID
	if v.resumed { // found by reconciliation: its status may have moved on (no R13 check)
		lc.Resume(ResumePoint{Created: now, NextPoll: now})
		if e.cfg.Poll.Deadline > 0 {
			lc.Deadline = now.Add(e.cfg.Poll.Deadline)
		}
		if cancelAfter > 0 {
			lc.CancelAt = now.Add(cancelAfter)
		}
		lc.observe(now, task)
	} else {
		lc.Start(now, task, cancelAfter)
		if len(lc.Violations) > 0 { // created in a status other than working (R13)
			v.shard.Add(metrics.InvalidTransitions, 1)
			e.noteViolation(task.TaskID, lc.Violations[0])
		}
	}
	// Fault point 2, after_create, stays here rather than in faultConn.Create: it is decided
	// for every task the client begins, one found by reconciliation too (no Create brought
	// it), once the task is set up (its id in the fault's event; dropSession then marks the
	// task to resume).
	if v.fires(e.cfg.Faults.AfterCreate, "after_create") {
		v.dropSession() // the connection drops right after CreateTaskResult
	}
	return true
}

// stepTask runs the task's steps, from where it stands, until the next one is due later
// (it returns that instant and wait true) or the task is over (wait false). The caller
// waits, sets v.woke to whether the wait ran its course (false: ctx ended first), and calls
// stepTask again, from whichever goroutine: the task's state is all in v.
func (v *vu) stepTask(ctx context.Context) (at time.Time, wait bool) {
	ctx = v.taskContext(ctx) // the task's requests link to its span (taskspan.go)
	t := &v.task
	lc := &v.lc
	for {
		st, at, wait, ok := v.due(ctx)
		if !ok {
			return at, wait
		}
		switch st.Kind {
		case StepPoll:
			if v.stepPoll(ctx, st) {
				continue // crashed, and resumed from the persisted record
			}
		case StepCancel:
			v.stepCancel(ctx)
		case StepResult:
			v.stepResult(ctx, st)
		}
		if t.statusFails >= v.e.recovery.Budgets.Status && lc.Outcome == OutcomePending {
			t.reason = ReasonStatusBudget
			lc.Abandon()
		}
		if ctx.Err() != nil {
			lc.Abandon()
			return time.Time{}, false
		}
	}
}

// due returns the step to take now (ok true), or, ok false, what stepTask returns: the
// instant of a step due later (wait true), or the task over (wait false). Back from a
// wait, the step waited for is due, unless a rollback changed the task's cancel meanwhile.
func (v *vu) due(ctx context.Context) (st Step, at time.Time, wait, ok bool) {
	t := &v.task
	lc := &v.lc
	if v.waiting && v.woke && v.watch(t) {
		v.waiting = false // a rollback changed the task's cancel: its next step is decided again
	}
	if v.waiting { // back from the wait for st
		st, v.waiting = v.step, false
		if !v.woke {
			lc.Abandon()
			return st, time.Time{}, false, false
		}
		return st, time.Time{}, false, true
	}
	v.watch(t) // rollback.go
	st = lc.Next(time.Now())
	if st.Kind == StepDone {
		return st, time.Time{}, false, false
	}
	v.persist(t, st.At)
	if st.Kind != StepResult {
		if time.Until(st.At) > 0 {
			v.step, v.waiting = st, true
			return st, st.At, true, false
		}
		if ctx.Err() != nil {
			lc.Abandon()
			return st, time.Time{}, false, false
		}
	}
	return st, time.Time{}, false, true
}

// stepPoll reads the task (StepPoll due at st.At) and answers what input the read inlines,
// unless the client crashes first: then it reports true when the task resumes from its
// persisted record.
func (v *vu) stepPoll(ctx context.Context, st Step) (resumed bool) {
	t := &v.task
	lc := &v.lc
	// A crash is the client process's fault, not its connection's: it loses the client's
	// memory (the task's state, the connection with it) between two requests, so no Conn
	// method breaks; it stays with the driver, which owns that memory (recovery.go).
	if !t.crashed && v.fires(v.e.cfg.Faults.Crash, "crash") {
		v.crash(t) // v.lc and *t now hold only what was persisted
		t.crashed = true
		if t.id == "" {
			lc.Abandon()
			t.reason = ReasonProtocol
			return false
		}
		v.resuming = true
		return true
	}
	lc.PollSent()
	v.shard.Add(metrics.Polls, 1)
	tr, rep, err := v.link.Get(ctx, t.ref)
	// Sent when it got its request slot: a wait for one is the load generator's own.
	v.shard.RecordDuration(metrics.ScheduleLag, max(0, v.sent.Sub(st.At)))
	v.observe(&tr, rep, err, t)
	if len(t.inputs) > 0 {
		v.answerInputs(ctx, t) // input inlined in the read is answered between polls (E55)
	}
	return false
}

// stepCancel sends the task's cancel and applies its reply: a -32602 is the task already
// terminal or gone (R26, docs/RULES.md#e60: accepted either way), the next read says which;
// a task in the reply is judged at once (cancelAccepted), an acknowledgement when the task
// is next seen terminal (cancelAcked, settleCancel).
func (v *vu) stepCancel(ctx context.Context) {
	t := &v.task
	lc := &v.lc
	wasTerminal := lc.Status.Terminal() // a late cancel (Lifecycle.LateCancelDue)
	lc.CancelSent(time.Now())
	v.shard.Add(metrics.CancelsSent, 1)
	cd, rep, err := v.link.Cancel(ctx, t.ref, client.CutNone) // cancel_reply: faultConn
	switch {
	case err == nil && rep.Err != nil && rep.Err.Code == mcp.CodeInvalidParams:
		v.shard.Add(metrics.CancelsLate, 1)
		t.lateCancel = true
		lc.Replied(time.Now())
	case err != nil || rep.Err != nil:
		v.failedRead(rep, err, t) // the status budget, the backoff
	case cd.Acked:
		v.cancelAcked(ctx, t, wasTerminal) // canceleffect.go
	default:
		violations := len(lc.Violations)
		v.readTask(mcp.OpTasksCancel, &cd.Task, cd.Malformed, t)
		v.cancelAccepted(ctx, t, wasTerminal, violations) // canceleffect.go
	}
}

// stepResult fetches the payload (StepResult, until st.At at the latest; the stream faults
// of fault points 3 and 4 are faultConn's) and applies the reply (applyResult).
func (v *vu) stepResult(ctx context.Context, st Step) {
	v.resultBy = st.At
	rep, err := v.link.Result(ctx, v.task.ref, v, client.CutNone)
	v.applyResult(ctx, rep, err)
}

// applyResult applies the reply to tasks/result to the lifecycle.
func (v *vu) applyResult(ctx context.Context, rep client.Reply, err error) {
	t := &v.task
	lc := &v.lc
	switch {
	case v.revokedDenial(err): // the token lost the right to fetch it: no retry
		t.reason = ReasonRevoked
		if lc.Status.Terminal() {
			lc.ResultLost()
		}
		lc.Abandon()
	case err != nil:
		v.resultFailed(ctx, err)
	case rep.Err != nil && rep.Err.Code == mcp.CodeInvalidParams && lc.Status == mcp.StatusFailed:
		lc.ResultReceived(time.Now(), true) // R17: a failed task's result may be this error
	case rep.Err != nil && rep.Err.Code == mcp.CodeInvalidParams && lc.Status.Terminal():
		// Terminal, then purged before its result was fetched: the outcome stands,
		// the payload is lost (asking again would only get -32602 again).
		lc.ResultLost()
	case rep.Err != nil && rep.Err.Code == mcp.CodeInvalidParams:
		lc.Gone(time.Now()) // R46: expired, or lost before its ttl, before a terminal status was seen
	default:
		if v.resuming {
			v.resuming = false
			v.shard.Add(metrics.Resumed, 1)
		}
		failed := rep.Err != nil || isErrorResult(rep.Result)
		if failed && lc.TerminalSeen.IsZero() && v.checkFailure(ctx, t, rep.Err) == mcp.StatusCancelled {
			return // cancelled (by someone else): no payload to take (R29)
		}
		lc.ResultReceived(time.Now(), failed)
		if !lc.TerminalSeen.IsZero() {
			v.shard.RecordDuration(metrics.ResultLag, time.Since(lc.TerminalSeen))
		}
	}
}

// resultFailed applies a tasks/result that brought no reply (err): a stream the client's
// own fault cut (a *lostReply, the fault recorded and the connection dropped by faultConn)
// is retried after the wait it says, and the result budget bounds the tries of a terminal
// task.
func (v *vu) resultFailed(ctx context.Context, err error) {
	t := &v.task
	lc := &v.lc
	t.resultTries++
	now := time.Now()
	wait := time.Duration(0)
	if lr, ok := lost(err); ok {
		wait = lr.retry
	}
	lc.ResultFailed(now.Add(wait))
	if lc.Status.Terminal() {
		if t.resultTries >= v.e.recovery.Budgets.Result {
			lc.ResultLost()
		} else if !v.sleepUntil(ctx, now.Add(wait)) {
			lc.Abandon()
		}
	}
}

// endTask records the task's outcome (finish) after stepTask.
func (v *vu) endTask(ctx context.Context) {
	t := &v.task
	v.finish(ctx, t)
	v.endTaskSpan(true)
	v.e.probe.consider(ctx, t.id, t.srv.created, t.srv.ttl)
	v.e.inFlight.Add(-1)
}

// newLifecycle is the lifecycle of a new task, in the run's era: Inline where reads carry
// payloads and input (client.Traits.Inline).
func (v *vu) newLifecycle() Lifecycle {
	return Lifecycle{Policy: &v.e.cfg.Poll, Strategy: v.e.cfg.Result, Rand: v.rng, Inline: v.e.traits.Inline}
}
