package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tasksim/tasksim/internal/mcp"
)

// statelessConn is the Conn of 2026-07-28 with the Tasks extension (docs/RULES.md#e39): a
// requester of no session whose every request carries the envelope (Target.Stateless). The
// server decides what a create becomes (E40): a task, a result, or an input round; tasks/get
// inlines the payload and the input requests (E50), answered with tasks/update (E55-E57);
// tasks/cancel is acknowledged (E60).
type statelessConn struct{ s *Session }

// statelessDialer hands out requesters of one envelope: Dial sends nothing.
type statelessDialer struct{ env *Envelope }

// StatelessDialer returns the Dialer of 2026-07-28 whose requests carry env.
func StatelessDialer(env *Envelope) Dialer { return statelessDialer{env} }

// Dial returns a requester on t: nothing is sent, nothing can fail.
func (d statelessDialer) Dial(_ context.Context, t *Target) (Conn, error) {
	return statelessConn{t.Stateless(d.env)}, nil
}

// Traits of 2026-07-28: no sessions, payloads inline, the extension declared by the envelope.
func (d statelessDialer) Traits() Traits {
	return Traits{Dialect: mcp.V20260728{}, Inline: true, AsksTasks: d.env.DeclaresTasks()}
}

// Plain returns the dialer of the envelope of d's version on t without the Tasks extension.
func (d statelessDialer) Plain(t *Target) (Dialer, error) {
	caps := mcp.ModernClientCapabilities{Elicitation: &mcp.ElicitationCapability{Form: mcp.On()}}
	env, err := t.NewEnvelope(d.env.version, caps)
	if err != nil {
		return nil, err
	}
	return statelessDialer{env}, nil
}

// Session is the requester, a Session of no session.
func (c statelessConn) Session() *Session { return c.s }

// Create sends tools/call, or the retry of an input round with answers: call's params with
// inputResponses and the round's requestState (E16). The reply is read by resultType (E13):
// a task only when the envelope declares the extension.
func (c statelessConn) Create(ctx context.Context, call []byte, answers *InputAnswers, cut Cut) (Created, Reply, error) {
	params := call
	if answers != nil {
		var err error
		if params, err = retryParams(call, answers); err != nil {
			return Created{}, Reply{}, err
		}
	}
	rep, err := c.s.CallOpCut(ctx, mcp.OpToolsCall, params, nil, cut)
	if err != nil || rep.Err != nil {
		return Created{}, rep, err
	}
	return readCreated(rep.Result, c.s.env.DeclaresTasks()), rep, nil
}

// readCreated reads a tools/call reply of 2026-07-28 to a request that declared the Tasks
// extension (tasks) or not: a task answers only one that did, and is an invalid reply to one
// that did not (E13, E39), as with the sync fallback.
func readCreated(raw []byte, tasks bool) Created {
	var task *mcp.Task
	var plain *mcp.CallToolResult
	var err error
	if tasks {
		task, plain, err = mcp.V20260728{}.ParseCallReply(raw)
	} else {
		var r mcp.CallReply
		if r, _, err = mcp.ParseCallToolReply(raw, false); err == nil && r.Input != nil {
			err = mcp.ErrInputRequired
		}
		plain = r.Call
	}
	if !errors.Is(err, mcp.ErrInputRequired) {
		return Created{Task: task, Call: plain, Malformed: err}
	}
	r, _, err := mcp.ParseCallToolReply(raw, tasks)
	if err != nil || r.Input == nil {
		return Created{Malformed: fmt.Errorf("tools/call InputRequiredResult: %v", err)}
	}
	return Created{Input: &InputRound{Requests: r.Input.InputRequests, State: r.Input.RequestState}}
}

// retryParams returns the params of an input round's retry (MRTR, E16): call's members,
// then inputResponses (the same keys) and requestState, only when one came. call is the
// run's, shared: never written.
func retryParams(call []byte, a *InputAnswers) ([]byte, error) {
	extra, err := json.Marshal(struct {
		InputResponses mcp.InputResponses `json:"inputResponses"`
		RequestState   string             `json:"requestState,omitempty"`
	}{a.Responses, a.State})
	if err != nil {
		return nil, err
	}
	obj := bytes.TrimSpace(call)
	inner := bytes.TrimSpace(obj[1 : len(obj)-1])
	retry := make([]byte, 0, len(inner)+len(extra)+1)
	retry = append(append(retry, '{'), inner...)
	if len(inner) > 0 {
		retry = append(retry, ',')
	}
	return append(retry, extra[1:]...), nil
}

// Get sends tasks/get: the task with what its status inlines (E50), read leniently where
// the ext-gaps allow (Quirks).
func (c statelessConn) Get(ctx context.Context, ref TaskRef) (TaskRead, Reply, error) {
	rr := mcp.GetTaskResultReader()
	rep, err := c.s.callTask(ctx, mcp.OpTasksGet, ref, &rr, CutNone)
	if err != nil || rep.Err != nil {
		return TaskRead{}, rep, err
	}
	return readStatelessTask(rep.Result, &rr), rep, nil
}

// readStatelessTask reads a tasks/get result of 2026-07-28: what rr read in the reply's
// pass, or raw parsed when rr did not read it (rr nil: parse raw).
func readStatelessTask(raw []byte, rr *mcp.ResultReader) TaskRead {
	if rr == nil || !rr.Read {
		read := mcp.GetTaskResultReader()
		read.TaskResult, read.Quirks, read.Err = mcp.ParseGetTaskResult(raw)
		rr = &read
	}
	r, q, err := &rr.TaskResult, rr.Quirks, rr.Err // r points into rr: no copy of the task
	if err == nil && !r.Status.Valid() {
		err = errNoStatus
	}
	if err != nil {
		return TaskRead{Quirks: q, Malformed: err}
	}
	return TaskRead{Task: r.Task(), Payload: r.Result, Inputs: r.InputRequests, Quirks: q}
}

// Result is refused: the era has no tasks/result, tasks/get carries the payload (E50).
func (c statelessConn) Result(ctx context.Context, ref TaskRef, h ServerHandler, cut Cut) (Reply, error) {
	return c.s.CallOpCut(ctx, mcp.OpTasksResult, ref.Params(), h, cut) // refused: no such method
}

// Answer sends tasks/update with the responses (E55-E57).
func (c statelessConn) Answer(ctx context.Context, ref TaskRef, responses mcp.InputResponses, cut Cut) (Reply, error) {
	params, err := json.Marshal(mcp.UpdateTaskParams{TaskID: ref.ID, InputResponses: responses})
	if err != nil {
		return Reply{}, err
	}
	return c.s.CallOpCut(ctx, mcp.OpTasksUpdate, params, nil, cut)
}

// Cancel sends tasks/cancel, acknowledged without the task (E60).
func (c statelessConn) Cancel(ctx context.Context, ref TaskRef, cut Cut) (Cancelled, Reply, error) {
	rep, err := c.s.callTask(ctx, mcp.OpTasksCancel, ref, nil, cut)
	if err != nil || rep.Err != nil {
		return Cancelled{}, rep, err
	}
	return Cancelled{Acked: true}, rep, nil
}

// List is refused: the era has no tasks/list.
func (c statelessConn) List(ctx context.Context, params []byte) (Reply, error) {
	return c.s.CallOpCut(ctx, mcp.OpTasksList, params, nil, CutNone) // refused: no such method
}

// Close has nothing to end.
func (c statelessConn) Close(context.Context) error { return nil }
