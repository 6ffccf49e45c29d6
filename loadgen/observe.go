package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

// observe applies a read of the task (a Get: tr, its reply and error) to the lifecycle.
func (v *vu) observe(tr *client.TaskRead, rep client.Reply, err error, t *taskState) {
	lr, payloadLost := lost(err)
	if err != nil && !payloadLost || rep.Err != nil {
		v.failedRead(rep, err, t)
		return
	}
	if tr.Quirks != 0 {
		v.e.quirks.Or(uint32(tr.Quirks)) // ext-gaps: accepted, and flagged in the manifest
	}
	lc := &v.lc
	if tr.Malformed != nil {
		v.readTask(mcp.OpTasksGet, &tr.Task, tr.Malformed, t)
		return
	}
	now := time.Now()
	if payloadLost {
		// The reply carrying the payload was lost with its connection (faultConn.Get, fault
		// point 3 where reads inline the payload): recounted injected, not charged to the
		// status budget; the next poll must bring it again.
		lc.Replied(now.Add(lr.retry))
		return
	}
	v.apply(now, &tr.Task, t) // an acknowledged cancel is judged there when the task ends (settleCancel)
	if lc.Inline {
		v.inlined(now, tr, t)
	}
}

// inlined applies what a read inlines with the task's status (E50): the payload, or the
// input requests, kept in t.inputs for answerInputs.
func (v *vu) inlined(now time.Time, tr *client.TaskRead, t *taskState) {
	lc := &v.lc
	switch st := tr.Task.Status; {
	case st == mcp.StatusCompleted && !lc.payload:
		failed := isErrorResult(tr.Payload)
		lc.ResultReceived(now, failed)
		if failed {
			// The tool failed: in 2026-07-28 its isError result makes a completed task (E49),
			// where 2025-11-25 makes a failed one (R51). The outcome is the tool's, in both.
			lc.ToolFailed()
		}
		v.shard.RecordDuration(metrics.ResultLag, 0) // inline: in hand with the status
	case st == mcp.StatusFailed && !lc.payload:
		lc.ResultReceived(now, true)
		v.shard.RecordDuration(metrics.ResultLag, 0)
	case st == mcp.StatusInputRequired:
		t.inputs = tr.Inputs
	}
}

// failedRead applies a read or a cancel (a Get, a Cancel) that brought no task: no reply
// (err), or a JSON-RPC error.
func (v *vu) failedRead(rep client.Reply, err error, t *taskState) {
	lc := &v.lc
	now := time.Now()
	switch {
	case v.revokedDenial(err):
		t.reason = ReasonRevoked
		lc.Abandon()
	case err != nil:
		t.statusFails++
		var he *client.HTTPError
		if errors.As(err, &he) && he.RetryAfter > 0 {
			lc.Replied(now.Add(he.RetryAfter)) // honour Retry-After
			return
		}
		lc.Replied(now.Add(backoff(v.e.recovery.Backoff, t.statusFails, v.frng)))
	case rep.Err.Code == mcp.CodeInvalidParams:
		if v.resuming && !lc.Status.Terminal() {
			v.e.noteLostAfterReconnect(t.id) // a finding: bound to the session? (R52)
		}
		lc.Gone(now) // R46: expired, or lost before its ttl
		lc.Replied(now)
	default:
		// The server failed the read (-32603, ...): a failed status read like a transport
		// error, backed off the same way, and counted against the status budget.
		t.statusFails++
		lc.Replied(now.Add(backoff(v.e.recovery.Backoff, t.statusFails, v.frng)))
	}
}

// readTask applies the task in the result of a read or a cancel (m) to the lifecycle, or,
// when the result is no task (malformed), counts the protocol error it is.
func (v *vu) readTask(m mcp.Op, tk *mcp.Task, malformed error, t *taskState) {
	now := time.Now()
	if malformed != nil {
		v.malformed(m, m.Name()+" result: "+malformed.Error())
		v.lc.Replied(now)
		return
	}
	v.apply(now, tk, t)
}

// apply records a task read from a tasks/get or tasks/cancel reply, of either era.
func (v *vu) apply(now time.Time, tk *mcp.Task, t *taskState) {
	lc := &v.lc
	if v.resuming {
		v.resuming = false
		v.shard.Add(metrics.Resumed, 1)
	}
	t.lastUpdated = tk.LastUpdatedAt
	v.grant(t, tk.TTL)
	if t.lateCancel {
		t.lateCancel = false
		if !tk.Status.Terminal() {
			// The cancel was refused as if the task were terminal, but it is still running:
			// R26 allows -32602 only for a terminal task, and R27 wants a valid cancel
			// carried out. The refusal was an error, not the expected reply.
			v.shard.Add(metrics.CancelsRefused, 1)
			v.shard.Reclassify(mcp.OpTasksCancel, metrics.OutcomeExpected, metrics.OutcomeRPCError)
			v.e.errors.note(errorKey{mcp.OpTasksCancel, metrics.OutcomeRPCError, mcp.CodeInvalidParams, 200},
				func() string { return "tasks/cancel refused -32602 while the task was " + tk.Status.String() })
		}
	}
	if tk.Status == mcp.StatusInputRequired && lc.Status != mcp.StatusInputRequired {
		v.shard.Add(metrics.InputRequired, 1)
	}
	wasTerminal, raises := lc.Status.Terminal(), lc.Raises
	if lc.Observed(now, tk) {
		v.shard.Add(metrics.InvalidTransitions, 1)
		v.e.noteViolation(v.cur, lc.Violations[len(lc.Violations)-1])
	}
	if lc.Raises > raises {
		v.shard.Add(metrics.BackpressureSignals, int64(lc.Raises-raises)) // pollInterval raised
	}
	if !wasTerminal && lc.Status.Terminal() {
		t.srv.terminal = parseTime(tk.LastUpdatedAt)
		if t.ackPending {
			v.settleCancel(now, t) // canceleffect.go
		}
	}
}

// serverTimes are the server's own instants for the task, for lags and amplification.
type serverTimes struct {
	created, terminal time.Time
	ttl               *mcp.Ms // as granted, the latest seen; nil = unlimited
}

// grant records the ttl the server granted t's task (the latest seen: ttlMs may change over
// a task's life, E45) in the lifecycle, counted from the earlier of the create's send (client
// clock) and the server's createdAt: no later than the task's true creation whatever the
// skew between the two clocks, so that a skew never makes an expiry look like a loss.
func (v *vu) grant(t *taskState, ttl *mcp.Ms) {
	t.srv.ttl = ttl
	from := t.createSent
	if c := t.srv.created; !c.IsZero() && (from.IsZero() || c.Before(from)) {
		from = c
	}
	v.lc.Granted(from, ttl)
}

// malformed recounts the latest request of m, counted ok when its reply arrived, as a
// protocol error: its result did not decode as what m returns.
func (v *vu) malformed(m mcp.Op, msg string) {
	v.shard.Reclassify(m, metrics.OutcomeOK, metrics.OutcomeProtocol)
	v.e.errors.note(errorKey{m, metrics.OutcomeProtocol, 0, 0}, func() string { return msg })
}

// finish records the task's outcome and per-task figures.
func (v *vu) finish(ctx context.Context, t *taskState) {
	lc := &v.lc
	srv := &t.srv
	now := time.Now()
	reason := ""
	switch lc.Outcome {
	case OutcomeCompleted, OutcomeFailed, OutcomeCancelled, OutcomeExpired, OutcomeResultLost, OutcomeLost:
	default:
		switch reason = t.reason; {
		case reason != "":
		case !lc.Deadline.IsZero() && !now.Before(lc.Deadline):
			reason = ReasonDeadline
		case ctx.Err() != nil:
			reason = ReasonStopped
		default:
			reason = ReasonStatusBudget
		}
	}
	if reason != ReasonStopped {
		// To the outcome, or to the client giving up (deadline, budgets): those are the
		// slowest tasks and count. A task the run's end cut off has no end to measure: its
		// cut-off time would pull the figure down.
		v.shard.RecordDuration(metrics.TaskE2E, now.Sub(t.intended))
	}
	v.shard.Record(metrics.PollsPerTask, int64(lc.Polls))
	switch lc.Outcome {
	case OutcomeCompleted:
		v.shard.Add(metrics.TasksCompleted, 1)
	case OutcomeFailed:
		v.shard.Add(metrics.TasksFailed, 1)
	case OutcomeCancelled:
		v.shard.Add(metrics.TasksCancelled, 1)
		if lc.CancelSentAt.IsZero() {
			// A task is cancelled only through tasks/cancel, and this client sent none:
			// someone else did (another client of the tenant, or another tenant).
			v.shard.Add(metrics.CancelledUnrequested, 1)
		}
	case OutcomeExpired:
		v.shard.Add(metrics.TasksExpired, 1)
	case OutcomeLost:
		v.shard.Add(metrics.TasksLost, 1)
		v.e.noteTaskLost(UnknownEvidence{Key: t.key, TaskID: t.id, Reason: ReasonLost})
	case OutcomeResultLost:
		v.shard.Add(metrics.ResultsLost, 1)
		v.e.noteResultLost(UnknownEvidence{Key: t.key, TaskID: t.id, Reason: ReasonResultLost})
	default:
		v.unknown(t, reason)
	}
	v.endPreSwitch(now, t, reason) // rollback.go
	if !srv.terminal.IsZero() && !lc.TerminalSeen.IsZero() {
		v.shard.RecordDuration(metrics.DetectionLag, max(0, lc.TerminalSeen.Sub(srv.terminal)))
	}
	interval := lc.FirstAdvised
	if interval == 0 {
		interval = v.e.cfg.Poll.Interval
	}
	if !srv.terminal.IsZero() && !srv.created.IsZero() && (v.e.cfg.Result == ResultPoll || lc.Inline) && !v.resumed && !t.crashed {
		if adv := Advised(srv.terminal.Sub(srv.created), interval); adv > 0 {
			v.shard.RecordPollAmplification(int64(lc.Polls), int64(adv))
		}
	}
	v.cur = ""
	v.resuming = false
	v.saved = nil
}

// confirmCancelled reads the task once more after a cancel was accepted: it must show
// terminal cancelled, now and for good (R14, R25). Anything else is counted broken.
func (v *vu) confirmCancelled(ctx context.Context, t *taskState) {
	v.lc.PollSent()
	v.shard.Add(metrics.Polls, 1)
	tr, rep, err := v.link.Get(ctx, t.ref)
	if _, payloadLost := lost(err); err != nil && !payloadLost || rep.Err != nil {
		return // no evidence either way (a purge after a cancel is allowed)
	}
	switch {
	case tr.Malformed != nil:
		v.observe(&tr, rep, nil, t) // a malformed reply, counted as such
	case tr.Task.Status != mcp.StatusCancelled:
		v.shard.Add(metrics.CancelsBroken, 1)
		v.observe(&tr, rep, err, t) // and the R14 violation it is (or its lost payload)
	}
}

// resultErrorExpected reports whether a JSON-RPC error (code) answering tasks/result is
// the reply R17 prescribes: the failed call's own error, for a task seen failed; or, for a
// task no terminal status was seen for yet (a blocking or input_required result), maybe
// so: it is counted expected, and checkFailure moves it back to the errors if the task
// turns out neither failed nor cancelled. A -32602 there is the task gone (R46): an error.
func (v *vu) resultErrorExpected(code int) bool {
	return v.lc.Status == mcp.StatusFailed || v.lc.TerminalSeen.IsZero() && code != mcp.CodeInvalidParams
}

// checkFailure reads the task once (a status read, not a poll of the schedule) when
// tasks/result answered with an error before any terminal status was seen, and returns the
// status it read. The reply to tasks/result of a cancelled task is not defined
// (docs/RULES.md#gap-1), so an error there may mean cancelled rather than failed; and a
// JSON-RPC error (rpcErr), counted expected (resultErrorExpected), is moved back to the
// errors unless the task is failed or cancelled.
func (v *vu) checkFailure(ctx context.Context, t *taskState, rpcErr *mcp.Error) mcp.Status {
	tr, rep, err := v.link.Get(ctx, t.ref)
	v.observe(&tr, rep, err, t)
	st := v.lc.Status
	if rpcErr != nil && rpcErr.Code != mcp.CodeInvalidParams && st != mcp.StatusFailed && st != mcp.StatusCancelled {
		v.shard.Reclassify(mcp.OpTasksResult, metrics.OutcomeExpected, metrics.OutcomeRPCError)
		v.e.errors.note(errorKey{mcp.OpTasksResult, metrics.OutcomeRPCError, rpcErr.Code, 200},
			func() string { return rpcErr.Message })
	}
	return st
}

// answerInputs answers, with one Answer, the input requests of the latest poll the client
// has not answered yet (E55-E57): an elicitation/create by the configured ratios (with the
// tenant's canary when one is planted); a request of another method, which the client's
// capabilities do not allow the server to send (E15), is left unanswered and counted as the
// protocol error it is. Fault point 4: the answer's acknowledgement may be lost
// (input_after_answer, faultConn.Answer); or the connection drops before the answer
// (input_before_answer), decided here: the drop falls after the poll's read is applied
// (apply clears the resuming the drop sets) and before any answer is drawn (a drop sends
// none, and draws none from the main stream), an instant no Conn method stands at: Get
// returns before its read is applied, Answer is called once the answers are drawn.
func (v *vu) answerInputs(ctx context.Context, t *taskState) {
	reqs := t.inputs
	t.inputs = nil
	keys := make([]string, 0, len(reqs))
	for k := range reqs {
		if !slices.Contains(t.answered, k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return
	}
	slices.Sort(keys) // the answers drawn in a fixed order, for a reproducible run
	if !t.streamCut && v.draw(v.e.cfg.Faults.InputBeforeAnswer) {
		t.streamCut = true // at most one cut per task, so that every task can end
		v.injected(client.CutBeforeAnswer)
		v.dropSession() // the next poll shows the same keys, answered then
		return
	}
	responses := v.inputResponses(reqs, keys, t)
	if len(responses) == 0 {
		return
	}
	for k := range responses {
		t.answered = append(t.answered, k) // sent: never again, whatever the reply (E56)
	}
	_, _ = v.link.Answer(ctx, t.ref, responses, client.CutNone) // input_after_answer: faultConn
}

// inputResponses answers the requests of reqs under keys; those of a method the client did
// not declare (E15) are left unanswered for good, and the poll that asked for them is
// counted a protocol error.
func (v *vu) inputResponses(reqs mcp.InputRequests, keys []string, t *taskState) mcp.InputResponses {
	responses := make(mcp.InputResponses, len(keys))
	var undeclared []string
	for _, k := range keys {
		if b, ok := v.answerInput(reqs[k]); ok {
			responses[k] = json.RawMessage(b)
			continue
		}
		t.answered = append(t.answered, k)
		undeclared = append(undeclared, reqs[k].Method)
	}
	if len(undeclared) > 0 { // the poll that asked is the protocol error
		v.malformed(mcp.OpTasksGet, fmt.Sprintf("tasks/get asked for input of %s, which the client did not declare (E15): left unanswered", strings.Join(undeclared, ", ")))
	}
	return responses
}
