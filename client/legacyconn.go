package client

import (
	"context"
	"errors"

	"github.com/tasksim/tasksim/internal/mcp"
)

// legacyConn is the Conn of 2025-11-25: a session (H1-H9). A create asks for a task in its
// params (params.task); tasks/get and tasks/cancel answer the task; the payload comes from
// tasks/result, on whose stream the server asks for input (elicitation/create).
type legacyConn struct{ s *Session }

// legacyDialer opens sessions with initialize, keeping no InitializeResult (ConnectLean):
// a run opens them by the thousand.
type legacyDialer struct {
	caps    mcp.ClientCapabilities
	dialect mcp.Dialect // the Target's (Target.DialectInUse)
}

// Dial opens a session.
func (d legacyDialer) Dial(ctx context.Context, t *Target) (Conn, error) {
	s, err := t.ConnectLean(ctx, d.caps)
	if err != nil {
		return nil, err
	}
	return legacyConn{s}, nil
}

// Traits of 2025-11-25, spelled by the Target's dialect.
func (d legacyDialer) Traits() Traits {
	return Traits{Dialect: d.dialect, Sessions: true, TaskParam: true}
}

// Session is the session.
func (c legacyConn) Session() *Session { return c.s }

// errNoRounds refuses InputAnswers in an era without input rounds.
var errNoRounds = errors.New("client: 2025-11-25 has no input rounds on tools/call")

// Create sends tools/call; a CreateTaskResult is the task (R11), a CallToolResult the
// synchronous result (R4).
func (c legacyConn) Create(ctx context.Context, call []byte, answers *InputAnswers, cut Cut) (Created, Reply, error) {
	if answers != nil {
		return Created{}, Reply{}, errNoRounds
	}
	rep, err := c.s.CallOpCut(ctx, mcp.OpToolsCall, call, nil, cut)
	if err != nil || rep.Err != nil {
		return Created{}, rep, err
	}
	task, plain, perr := c.s.dialect().ParseCallReply(rep.Result)
	return Created{Task: task, Call: plain, Malformed: perr}, rep, nil
}

// Get sends tasks/get: the task (R15).
func (c legacyConn) Get(ctx context.Context, ref TaskRef) (TaskRead, Reply, error) {
	rr := mcp.TaskReader()
	rep, err := c.s.callTask(ctx, mcp.OpTasksGet, ref, &rr, CutNone)
	if err != nil || rep.Err != nil {
		return TaskRead{}, rep, err
	}
	tk, perr := readLegacyTask(rep.Result, &rr)
	return TaskRead{Task: tk, Malformed: perr}, rep, nil
}

// readLegacyTask reads the task of a tasks/get or tasks/cancel result, what rr read in the
// reply's pass or raw parsed when rr did not read it (rr nil: parse raw); one without a
// valid status is malformed.
func readLegacyTask(raw []byte, rr *mcp.ResultReader) (mcp.Task, error) {
	var tk mcp.Task
	var err error
	if rr != nil && rr.Read {
		tk, err = rr.Task, rr.Err
	} else {
		tk, err = mcp.ParseTask(raw)
	}
	if err == nil && !tk.Status.Valid() {
		err = errNoStatus
	}
	return tk, err
}

// Result calls tasks/result: it blocks until the task is terminal (R18), h answering the
// server requests of its stream.
func (c legacyConn) Result(ctx context.Context, ref TaskRef, h ServerHandler, cut Cut) (Reply, error) {
	return c.s.CallOpCut(ctx, mcp.OpTasksResult, ref.Params(), h, cut)
}

// Answer is refused: 2025-11-25 asks for input on the tasks/result stream (Result's h).
func (c legacyConn) Answer(context.Context, TaskRef, mcp.InputResponses, Cut) (Reply, error) {
	return Reply{}, errors.New("client: 2025-11-25 answers input on the tasks/result stream, not with tasks/update")
}

// Cancel sends tasks/cancel: the reply is the task (R25).
func (c legacyConn) Cancel(ctx context.Context, ref TaskRef, cut Cut) (Cancelled, Reply, error) {
	rr := mcp.TaskReader()
	rep, err := c.s.callTask(ctx, mcp.OpTasksCancel, ref, &rr, cut)
	if err != nil || rep.Err != nil {
		return Cancelled{}, rep, err
	}
	tk, perr := readLegacyTask(rep.Result, &rr)
	return Cancelled{Task: tk, Malformed: perr}, rep, nil
}

// List sends tasks/list (R54).
func (c legacyConn) List(ctx context.Context, params []byte) (Reply, error) {
	return c.s.CallOpCut(ctx, mcp.OpTasksList, params, nil, CutNone)
}

// Close ends the session (H9).
func (c legacyConn) Close(ctx context.Context) error { return c.s.Close(ctx) }
