package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

// The virtual client in 2026-07-28 with the Tasks extension (docs/RULES.md#e39): the same
// client as in 2025-11-25 (vu.go), on the same request path, with these differences.
//
//	step          2025-11-25                          2026-07-28
//	requester     a session: initialize, DELETE       none: each request carries the
//	                                                  envelope (client.Target.Stateless)
//	create        tools/call with params.task         tools/call declaring the extension in
//	                                                  _meta; the server decides (E40): a
//	                                                  task (resultType task), a result, or
//	                                                  an input round (MRTR: answered, and
//	                                                  the call retried, inputRound)
//	poll          tasks/get: the task                 tasks/get: the task with its payload
//	                                                  inline (E50), Mcp-Name: the task (E64)
//	result        tasks/result, a stream              none: the poll that shows completed or
//	                                                  failed carries it (result_lag is 0)
//	input         elicitation/create on the           inputRequests in the poll, answered with
//	              tasks/result stream                 tasks/update, each key once (E55-E57)
//	cancel        tasks/cancel answers the task       tasks/cancel is acknowledged (E60); the
//	                                                  outcome is what later polls show
//	reconcile     by idempotency key or tasks/list    by idempotency key (no tasks/list)
//
// The client faults in this era (docs/METRICS.md#eras):
//
//	create_reply         the tools/call reply is lost: an orphan (docs/RULES.md#ext-gap-9),
//	                     reconciled by idempotency key or counted unknown
//	after_create         the connection drops: there is no session to lose; the next poll
//	                     of the stored taskId resumes the observation
//	before_result,       the tasks/get reply carrying the payload is lost (read, then
//	result_stream        dropped with its connection): the next poll must bring it again
//	input_before_answer  the connection drops between the poll that shows inputRequests
//	                     and the tasks/update that would answer them
//	input_after_answer   the tasks/update acknowledgement is lost: the keys count as
//	                     answered, and are never answered again
//	cancel_reply         the tasks/cancel acknowledgement is lost
//	crash                as in 2025-11-25: resumed from the persisted taskId

// speakModern sets the engine up for 2026-07-28: the era's dialect and the envelope of every
// request, which declares the Tasks extension when the run creates tasks (E39) and form
// elicitation, so that the server may ask for input (ext-gap-6: the same capabilities on
// every request).
func (e *Engine) speakModern(t *client.Target, m *client.Manifest) error {
	caps := mcp.ModernClientCapabilities{Elicitation: &mcp.ElicitationCapability{Form: mcp.On()}}
	if m.AsTask {
		caps.DeclareTasks()
	}
	env, err := t.NewEnvelope(m.ProtocolVersion, caps)
	if err != nil {
		return err
	}
	e.env, e.dialect = env, mcp.V20260728{}
	if e.cfg.TaskTTL > 0 {
		m.Notes = append(m.Notes, fmt.Sprintf("task_ttl %s is not sent: in %s the server alone sets ttlMs (E40)", e.cfg.TaskTTL, client.ProtocolModern))
	}
	return nil
}

// observeModern applies a tasks/get reply of 2026-07-28 to the lifecycle (observe has
// handled errors): the task, then what its status inlines (E50): the payload, or the input
// requests, kept in t.inputs for answerInputs.
func (v *vu) observeModern(rep client.Reply, t *taskState) {
	lc := &v.lc
	now := time.Now()
	r, q, err := mcp.ParseGetTaskResult(rep.Result)
	if q != 0 {
		v.e.quirks.Or(uint32(q)) // ext-gaps: accepted, and flagged in the manifest
	}
	if err == nil && !r.Status.Valid() {
		err = errors.New("no valid task status")
	}
	if err != nil {
		v.malformed(mcp.OpTasksGet, "tasks/get result: "+err.Error())
		lc.Replied(now)
		return
	}
	if r.Status.Terminal() && r.Status != mcp.StatusCancelled && !t.streamCut && v.losePayload() {
		// The reply carrying the payload is lost with its connection: the next poll must
		// bring it again (fault point 3, in this era).
		t.streamCut = true
		v.shard.Reclassify(mcp.OpTasksGet, metrics.OutcomeOK, metrics.OutcomeInjected)
		v.dropSession()
		lc.Replied(now.Add(v.retryDelay(1)))
		return
	}
	task := r.Task()
	v.apply(now, &task, t) // an acknowledged cancel is judged there when the task ends (settleCancel)
	switch {
	case r.Status == mcp.StatusCompleted && !lc.payload:
		failed := isErrorResult(r.Result)
		lc.ResultReceived(now, failed)
		if failed {
			// The tool failed: in this era its isError result makes a completed task (E49),
			// where 2025-11-25 makes a failed one (R51). The outcome is the tool's, in both.
			lc.ToolFailed()
		}
		v.shard.RecordDuration(metrics.ResultLag, 0) // inline: in hand with the status
	case r.Status == mcp.StatusFailed && !lc.payload:
		lc.ResultReceived(now, true)
		v.shard.RecordDuration(metrics.ResultLag, 0)
	case r.Status == mcp.StatusInputRequired:
		t.inputs = r.InputRequests
	}
}

// parseCall reads a tools/call reply in the run's era (Dialect.ParseCallReply): in
// 2026-07-28 a task answers only a request that declared the Tasks extension, and is an
// invalid reply to one that did not (E13, E39), as with the sync fallback.
func (e *Engine) parseCall(raw []byte) (*mcp.Task, *mcp.CallToolResult, error) {
	if e.env == nil || e.env.DeclaresTasks() {
		return e.dialect.ParseCallReply(raw)
	}
	r, _, err := mcp.ParseCallToolReply(raw, false)
	switch {
	case err != nil:
		return nil, nil, err
	case r.Input != nil:
		return nil, nil, mcp.ErrInputRequired
	}
	return nil, r.Call, nil
}

// readTask reads the task of a tasks/get reply in the run's era: 2025-11-25's fields, or the
// extension's (ttlMs, pollIntervalMs, the resultType and the payload its status calls for).
func (e *Engine) readTask(raw []byte) (mcp.Task, error) {
	if e.env == nil {
		return mcp.ParseTask(raw)
	}
	r, _, err := mcp.ParseGetTaskResult(raw)
	if err != nil {
		return mcp.Task{}, err
	}
	return r.Task(), nil
}

// answerInputs answers, with one tasks/update, the input requests of the latest poll the
// client has not answered yet (E55-E57): an elicitation/create by the configured ratios
// (with the tenant's canary when one is planted); a request of another method, which the
// client's capabilities do not allow the server to send (E15), is left unanswered and
// counted as the protocol error it is.
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
	responses := make(mcp.InputResponses, len(keys))
	var undeclared []string
	for _, k := range keys {
		if b, ok := v.answerInput(reqs[k]); ok {
			responses[k] = b
			continue
		}
		// Input the client's capabilities do not allow (E15): left unanswered for good.
		t.answered = append(t.answered, k)
		undeclared = append(undeclared, reqs[k].Method)
	}
	if len(undeclared) > 0 { // the poll that asked is the protocol error
		v.malformed(mcp.OpTasksGet, fmt.Sprintf("tasks/get asked for input of %s, which the client did not declare (E15): left unanswered", strings.Join(undeclared, ", ")))
	}
	if len(responses) == 0 {
		return
	}
	params, err := json.Marshal(mcp.UpdateTaskParams{TaskID: t.id, InputResponses: responses})
	if err != nil {
		return // cannot happen: the keys and the answers are valid JSON
	}
	for k := range responses {
		t.answered = append(t.answered, k) // sent: never again, whatever the reply (E56)
	}
	cut := client.CutNone
	if !t.streamCut && v.draw(v.e.cfg.Faults.InputAfterAnswer) {
		t.streamCut, cut = true, client.CutReply
	}
	_, err = v.call(ctx, mcp.OpTasksUpdate, params, time.Time{}, nil, cut)
	if errors.Is(err, client.ErrCut) {
		v.injected(client.CutAfterAnswer)
		v.dropSession()
	}
}

// answerInput answers one input request, of a task (E56) or of an MRTR round (E15), as the
// standalone request it names would be answered: an elicitation/create by the configured
// ratios, with the tenant's canary when one is planted. ok is false for another method,
// which the client's capabilities do not let the server send.
func (v *vu) answerInput(r mcp.InputRequest) (answer json.RawMessage, ok bool) {
	if v.e.det != nil {
		v.e.det.scan(r.Params, v.ten.idx, r.Method, partServerRequest) // secrets.go
	}
	if v.e.dialect.Op(r.Method) != mcp.OpElicit {
		return nil, false
	}
	return append(v.elicitAnswer(), '}'), true
}

// maxInputRounds bounds the MRTR rounds of one create: a server that keeps asking has a
// problem the run reports, rather than one it loops on (the go-sdk's own client stops at 10).
const maxInputRounds = 10

// inputRound answers an InputRequiredResult (raw) to the tools/call with params call (MRTR,
// docs/RULES.md#e15, E16) and returns the params of the retry: call's, with the answers as
// inputResponses (same keys) and requestState echoed unread, only when one came. The
// session gives the retry a new id. why says why there is no retry: the reply does not
// read, or asks for input the client did not declare (E15).
func (v *vu) inputRound(raw, call []byte) (retry []byte, why string) {
	r, _, err := mcp.ParseCallToolReply(raw, v.e.env.DeclaresTasks())
	if err != nil || r.Input == nil {
		return nil, fmt.Sprintf("tools/call InputRequiredResult: %v", err)
	}
	responses := make(mcp.InputResponses, len(r.Input.InputRequests))
	for _, k := range slices.Sorted(maps.Keys(r.Input.InputRequests)) { // a fixed order of draws
		b, ok := v.answerInput(r.Input.InputRequests[k])
		if !ok {
			return nil, fmt.Sprintf("tools/call asked for input of method %s, which the client did not declare (E15)", r.Input.InputRequests[k].Method)
		}
		responses[k] = b
	}
	extra, err := json.Marshal(struct {
		InputResponses mcp.InputResponses `json:"inputResponses"`
		RequestState   string             `json:"requestState,omitempty"`
	}{responses, r.Input.RequestState})
	if err != nil {
		return nil, err.Error()
	}
	// One object: call's members, then extra's (call is the tenant's, shared: never written).
	obj := bytes.TrimSpace(call)
	inner := bytes.TrimSpace(obj[1 : len(obj)-1])
	retry = make([]byte, 0, len(inner)+len(extra)+1)
	retry = append(append(retry, '{'), inner...)
	if len(inner) > 0 {
		retry = append(retry, ',')
	}
	return append(retry, extra[1:]...), ""
}

// losePayload decides whether the reply that brings a task's payload is lost: fault point 3,
// before_result or result_stream, recorded under the name drawn.
func (v *vu) losePayload() bool {
	f := &v.e.cfg.Faults
	if v.fires(f.BeforeResult, "before_result") {
		return true
	}
	if v.draw(f.ResultStream) {
		v.injected(client.CutStream)
		return true
	}
	return false
}

// cancelModern sends tasks/cancel in 2026-07-28 and applies its reply: an acknowledgement
// says nothing of the outcome (E60), which later polls show (settleCancel); a -32602 is the
// task already terminal or gone, as in 2025-11-25 (docs/RULES.md#e60: accepted either way).
// The acknowledged cancel of a task the client had seen terminal (wasTerminal) is read back
// at once (lateCancelModern).
func (v *vu) cancelModern(ctx context.Context, t *taskState, wasTerminal bool) {
	lc := &v.lc
	cut := v.cut(v.e.cfg.Faults.CancelReply, "cancel_reply", client.CutReply) // fault point 5
	rep, err := v.call(ctx, mcp.OpTasksCancel, t.params, time.Time{}, nil, cut)
	switch {
	case err != nil:
		v.observe(mcp.OpTasksCancel, rep, err, t) // the status budget, the backoff
	case rep.Err != nil && rep.Err.Code == mcp.CodeInvalidParams:
		v.shard.Add(metrics.CancelsLate, 1)
		t.lateCancel = true
		lc.Replied(time.Now())
	case rep.Err != nil:
		v.observe(mcp.OpTasksCancel, rep, err, t)
	case wasTerminal:
		lc.Replied(time.Now())
		v.lateCancelModern(ctx, t)
	default:
		t.ackPending, t.ackAt = true, time.Now()
		lc.Replied(t.ackAt)
	}
}

// probeModern is the rest of a probe round in 2026-07-28, after the tasks/get of foreign
// task id (probes.go): tasks/cancel and tasks/update of it, then the guesses. The era has no
// tasks/result, tasks/list, related-task _meta or sessions, so those probes do not apply.
// An acknowledgement of a cancel or an update proves nothing by itself (E58 and E60 only
// say a server SHOULD refuse an unknown id, docs/RULES.md#ext-gap-7): it is a leak when the
// same request about an id nobody holds is refused, since the server then tells another
// tenant's task apart from an unknown one (E67); otherwise it is inconclusive. Whether the
// cancel took effect shows on the owner's side (cancelled_unrequested).
func (v *vu) probeModern(ctx context.Context, sess *client.Session, foreign string) {
	update := func(id string) []byte {
		b, _ := json.Marshal(mcp.UpdateTaskParams{TaskID: id, InputResponses: mcp.InputResponses{"tasksim-probe": json.RawMessage(`{"action":"decline"}`)}})
		return b
	}
	for _, c := range [...]struct {
		kind   string
		op     mcp.Op
		params func(string) []byte
	}{{ProbeCancel, mcp.OpTasksCancel, client.TaskIDParams}, {ProbeResult, mcp.OpTasksUpdate, update}} {
		rep, err := v.probeCall(ctx, sess, c.kind, c.op, c.params(foreign), client.CutNone)
		if err != nil || rep.Err != nil {
			v.judge(c.kind, foreign, rep, err)
			continue
		}
		ctl, cerr := v.probeCall(ctx, sess, c.kind, c.op, c.params(randomHex(v.prng, len(foreign))), client.CutNone)
		p := v.e.probes
		switch {
		case cerr == nil && ctl.Err != nil:
			p.leak(c.kind, foreign, c.op.Name()+" acknowledged another tenant's task but refused an unknown id: the server tells them apart (E67)")
		default:
			p.count(p.inconclusive, c.kind) // acknowledged like any id (ext-gap-7)
		}
	}
	v.probeGuesses(ctx, sess, foreign)
}

// probeRevokedModern checks in 2026-07-28 that a revoked token (any scope) no longer reads
// a task of its tenant: tasks/get, the era's read of a status and a result alike, must be
// refused with 401, 403 or a JSON-RPC error.
func (v *vu) probeRevokedModern(ctx context.Context, t *tenant, id string) {
	p := v.e.probes
	sess := t.target.Stateless(v.e.env)
	rep, err := v.probeCall(ctx, sess, ProbeRevoked, mcp.OpTasksGet, client.TaskIDParams(id), client.CutNone)
	var he *client.HTTPError
	switch {
	case err == nil && rep.Err == nil:
		p.leak(ProbeRevoked, id, "a revoked token read a task (tasks/get)")
	case err == nil: // a JSON-RPC error: denied
	case errors.As(err, &he) && (he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden):
		// denied
	default: // no reply, 429, 5xx: proves nothing either way
		p.count(p.inconclusive, ProbeRevoked)
	}
}
