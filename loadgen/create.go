package loadgen

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

// create sends the task's create and settles it (see "A create is settled" in vu.go). It
// returns the task to observe and true, or false when there is none: refused, run
// synchronously, or lost and not reconciled (then it is counted unknown with its key).
// v.resumed says whether the task came from reconciliation rather than a CreateTaskResult.
// An input round (MRTR) is answered and the call retried, within the same attempt.
func (v *vu) create(ctx context.Context, t *taskState) (*mcp.Task, bool) {
	v.resumed = false
	call := v.e.createParams(v.ten, t.key)
	var answers *client.InputAnswers
	rounds := 0
	for attempt := 1; ; attempt++ {
		if !v.beforeCreate(t, attempt == 1 && rounds == 0) { // a rollback's switch has flipped (rollback.go)
			if attempt == 1 && rounds == 0 {
				v.fallback(ctx, t)
			} else {
				v.unknown(t, ReasonRolledBack) // not sent again: that would be a task-augmented call
			}
			return nil, false
		}
		sentAt := time.Now()
		t.createSent = sentAt
		// tasks/list reconciliation keeps every id this create could claim (recovery.go)
		v.e.list.sent(sentAt)
		cr, rep, err := v.link.Create(ctx, call, answers, client.CutNone) // create_reply: faultConn
		v.afterCreate()
		if err == nil && rep.Err == nil {
			v.e.list.settled(sentAt)
			if cr.Input != nil {
				next, why := v.inputRound(cr.Input)
				if rounds++; why == "" && rounds <= maxInputRounds {
					answers = next
					attempt-- // a round is no new attempt: the call goes on
					continue
				}
				if why == "" {
					why = fmt.Sprintf("the server still asked for input after %d rounds", maxInputRounds)
				}
				cr.Malformed = errors.New(why)
			}
			return v.created(t, &cr)
		}
		task, ok, again := v.createFailed(ctx, t, rep, err, sentAt, attempt)
		v.e.list.settled(sentAt)
		if !again {
			return task, ok
		}
	}
}

// created settles a create the server answered with a result (cr): a task to follow, a
// synchronous result, or a result that does not read (counted a protocol error, the task
// unknown).
func (v *vu) created(t *taskState, cr *client.Created) (*mcp.Task, bool) {
	if cr.Malformed != nil {
		v.malformed(mcp.OpToolsCall, "tools/call result: "+cr.Malformed.Error())
		v.unknown(t, ReasonProtocol)
		v.holdOff(0) // a target that answers garbage is not hammered either
		return nil, false
	}
	v.failedCreates = 0
	if cr.Call != nil { // the server ran it synchronously (R4, or the sync fallback)
		v.shard.Add(metrics.SyncCalls, 1)
		if cr.Call.IsError {
			v.shard.Add(metrics.TasksFailed, 1)
		} else {
			v.shard.Add(metrics.TasksCompleted, 1)
		}
		v.shard.RecordDuration(metrics.TaskE2E, time.Since(t.intended))
		return nil, false
	}
	return cr.Task, true
}

// createFailed settles a create (sent at sentAt, attempt of the create budget) that got no
// result: never sent, refused, or without a reply, which the client reconciles before
// anything else and never repeats on its own. again says the create is to be sent again
// (Recovery.RetryCreate, the same key), after the backoff it has waited.
func (v *vu) createFailed(ctx context.Context, t *taskState, rep client.Reply, err error, sentAt time.Time, attempt int) (task *mcp.Task, ok, again bool) {
	e := v.e
	if ns := (*notSentError)(nil); errors.As(err, &ns) {
		v.holdOff(0) // no session, so the call never left: no task can exist
		return nil, false, false
	}
	if refused, key, retryAfter := createRefusal(rep, err); refused && !errors.Is(err, client.ErrCut) {
		v.refused(key, retryAfter) // the server answered: no task
		return nil, false, false
	}
	task, reason := v.reconcile(ctx, t, sentAt)
	if task != nil {
		v.shard.Add(metrics.Reconciled, 1)
		v.resumed = true
		return task, true, false
	}
	if reason == reasonNotMade && !e.recovery.RetryCreate {
		// The target's own record says the create never happened: a known outcome, not
		// a task to reconcile (an arrival the fault swallowed).
		v.shard.Add(metrics.CreatesNotFound, 1)
		if !errors.Is(err, client.ErrCut) { // a cut of the scenario's own is no sign to slow down
			v.holdOff(0)
		}
		return nil, false, false
	}
	if reason == reasonNotMade {
		reason = ReasonCreateLost
	}
	if !e.recovery.RetryCreate || t.key == "" || attempt >= e.recovery.Budgets.Create || ctx.Err() != nil {
		v.unknown(t, reason)
		v.holdOff(0) // a failing transport is not hammered either
		return nil, false, false
	}
	v.shard.Add(metrics.RetriedCreates, 1) // same key: an idempotent server answers with the task
	if !v.sleepUntil(ctx, time.Now().Add(backoff(e.recovery.Backoff, attempt, v.frng))) {
		v.unknown(t, ReasonStopped)
		return nil, false, false
	}
	return nil, false, true
}

// maxInputRounds bounds the MRTR rounds of one create: a server that keeps asking has a
// problem the run reports, rather than one it loops on (the go-sdk's own client stops at 10).
const maxInputRounds = 10

// inputRound answers the input requests of a create's input round (MRTR,
// docs/RULES.md#e15, E16), each key in a fixed order, for the retry of the call. why says
// why there is no retry: the round asks for input the client did not declare (E15).
func (v *vu) inputRound(r *client.InputRound) (answers *client.InputAnswers, why string) {
	responses := make(mcp.InputResponses, len(r.Requests))
	for _, k := range slices.Sorted(maps.Keys(r.Requests)) { // a fixed order of draws
		b, ok := v.answerInput(r.Requests[k])
		if !ok {
			return nil, fmt.Sprintf("tools/call asked for input of method %s, which the client did not declare (E15)", r.Requests[k].Method)
		}
		responses[k] = b
	}
	return &client.InputAnswers{Responses: responses, State: r.State}, ""
}

// answerInput answers one input request, of a task (E56) or of an input round (E15), as the
// standalone request it names would be answered: an elicitation/create by the configured
// ratios, with the tenant's canary when one is planted. ok is false for another method,
// which the client's capabilities do not let the server send.
func (v *vu) answerInput(r mcp.InputRequest) (answer []byte, ok bool) {
	if v.e.det != nil {
		v.e.det.scan(r.Params, v.ten.idx, r.Method, partServerRequest) // secrets.go
	}
	if v.e.dialect.Op(r.Method) != mcp.OpElicit {
		return nil, false
	}
	return append(v.elicitAnswer(), '}'), true
}

// reconcile looks for the task of a create that got no reply, by its idempotency key
// (Config.Reconciler) or through tasks/list where the target declares it, within the
// reconcile budget. It returns the task as a tasks/get shows it, or the reason it did not.
func (v *vu) reconcile(ctx context.Context, t *taskState, sentAt time.Time) (*mcp.Task, string) {
	e := v.e
	if !e.recovery.Reconcile || (t.key == "" || e.cfg.Reconciler == nil) && e.list == nil {
		return nil, ReasonNoReconcile
	}
	failedAt := time.Now()
	for attempt := 1; attempt <= e.recovery.Budgets.Reconcile; attempt++ {
		var id string
		var found bool
		var err error
		byKey := e.cfg.Reconciler != nil && t.key != ""
		if byKey {
			id, found, err = e.cfg.Reconciler.Find(ctx, t.key)
		} else {
			id, found, err = e.list.find(func(params []byte) (client.Reply, error) {
				return v.listCall(ctx, params)
			}, sentAt, failedAt)
		}
		if err == nil && !found {
			if byKey {
				return nil, reasonNotMade // authoritative: the target holds no task for the key
			}
			return nil, ReasonCreateLost // tasks/list shows no candidate: not proof enough
		}
		if err == nil {
			tr, rep, err := v.get(ctx, client.NewTaskRef(id))
			if err == nil && rep.Err == nil {
				if tr.Malformed == nil {
					task := tr.Task
					if task.TaskID == "" {
						task.TaskID = id
					}
					return &task, ""
				}
				v.malformed(mcp.OpTasksGet, "tasks/get result: no valid task")
			}
			if err == nil && rep.Err != nil && rep.Err.Code == mcp.CodeInvalidParams {
				return nil, ReasonCreateLost // created, then gone before anyone saw it
			}
		}
		if !v.sleepUntil(ctx, time.Now().Add(backoff(e.recovery.Backoff, attempt, v.frng))) {
			return nil, ReasonStopped
		}
	}
	return nil, ReasonReconcileBudget
}

// unknown counts a task whose outcome was never established and lists it for
// reconciliation.
func (v *vu) unknown(t *taskState, reason string) {
	v.shard.Add(metrics.TasksUnknown, 1)
	v.e.noteUnknown(UnknownEvidence{Key: t.key, TaskID: t.id, Reason: reason})
}
