package loadgen

import (
	"context"
	"errors"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

// meteredConn is the client's connection as its driver sees it: each method one request
// of vu.call (a request slot, the dial, the 404 re-dial, the count by op) on the client.Conn
// the run dialed (vu.conn). It is a concrete type, called statically: no interface hop.
type meteredConn struct{ v *vu }

// Create sends a create counted as tools/call (vu.createCall).
func (m meteredConn) Create(ctx context.Context, call []byte, answers *client.InputAnswers, cut client.Cut) (client.Created, client.Reply, error) {
	return m.v.createCall(ctx, call, answers, cut)
}

// Get reads a task, counted as tasks/get (vu.get).
func (m meteredConn) Get(ctx context.Context, ref client.TaskRef) (client.TaskRead, client.Reply, error) {
	return m.v.get(ctx, ref)
}

// Result fetches a payload, counted as tasks/result, until vu.resultBy at the latest (the
// StepResult's instant: client.Conn's Result has no limit of its own).
func (m meteredConn) Result(ctx context.Context, ref client.TaskRef, h client.ServerHandler, cut client.Cut) (client.Reply, error) {
	return m.v.resultCall(ctx, ref, m.v.resultBy, h, cut)
}

// Answer answers input requests, counted as tasks/update (vu.answerCall).
func (m meteredConn) Answer(ctx context.Context, ref client.TaskRef, responses mcp.InputResponses, cut client.Cut) (client.Reply, error) {
	return m.v.answerCall(ctx, ref, responses, cut)
}

// Cancel asks for a cancel, counted as tasks/cancel (vu.cancelCall).
func (m meteredConn) Cancel(ctx context.Context, ref client.TaskRef, cut client.Cut) (client.Cancelled, client.Reply, error) {
	return m.v.cancelCall(ctx, ref, cut)
}

// List sends a page request, counted as tasks/list (vu.listCall).
func (m meteredConn) List(ctx context.Context, params []byte) (client.Reply, error) {
	return m.v.listCall(ctx, params)
}

// Close ends the connection (vu.close, which counts the DELETE).
func (m meteredConn) Close(ctx context.Context) error {
	m.v.close(ctx)
	return nil
}

// faultConn wraps the client's metered connection in the client's own faults, as
// Toxiproxy's toxics wrap a pipe (clientfault.go): each method decides the faults of the
// request it sends, at the instant the request is sent, injects them (a client.Cut handed
// to the exchange, a connection dropped before or after it), and returns what came of it.
// The driver passes client.CutNone and applies what comes back; a reply the fault lost
// after it was read comes back as a *lostReply.
//
// The decisions draw from the client's fault stream (vu.frng), at the same instants and in
// the same order as every other draw of that stream (the backoffs), so a seed gives one
// run. When the run has no client fault (on false) each method is the metered one, called
// statically: nothing is drawn, allocated or dispatched.
type faultConn struct {
	inner meteredConn
	v     *vu  // the client: its fault stream, its task's once-per-task flags, its counters
	on    bool // the run has a client fault on (Config.Faults.On)
}

// lostReply is the error of an exchange whose reply the client's own fault lost (it wraps
// client.ErrCut): the driver asks again after retry, which the fault has drawn (vu.retryDelay)
// before dropping the connection whose stream advertised it. A read lost after it arrived
// (a payload carried in the read) was counted ok, and is recounted injected, not an error of
// the target: the driver does not charge it to the status budget.
type lostReply struct {
	err   error         // the exchange's error; nil for a read that arrived
	retry time.Duration // the wait before asking again
}

func (e *lostReply) Error() string {
	if e.err != nil {
		return e.err.Error()
	}
	return "reply lost: " + client.ErrCut.Error()
}

func (e *lostReply) Unwrap() error { return client.ErrCut }

// lost returns err as a *lostReply, by type assertion (errors.As would allocate per call).
func lost(err error) (*lostReply, bool) {
	lr, ok := err.(*lostReply)
	return lr, ok
}

// Create sends a create whose reply create_reply may lose (fault point 1): the request is
// sent, the reply dropped with its connection.
func (f *faultConn) Create(ctx context.Context, call []byte, answers *client.InputAnswers, _ client.Cut) (client.Created, client.Reply, error) {
	if !f.on {
		return f.inner.Create(ctx, call, answers, client.CutNone)
	}
	cut := f.v.cut(f.v.e.cfg.Faults.CreateReply, "create_reply", client.CutReply)
	cr, rep, err := f.inner.Create(ctx, call, answers, cut)
	if errors.Is(err, client.ErrCut) {
		f.v.dropSession()
	}
	return cr, rep, err
}

// Get reads the task; where reads inline the payload (client.Traits.Inline), the read that
// brings it may be lost with its connection (fault point 3, losePayload): then the read is
// recounted injected and comes back as a *lostReply, the next poll to bring it again.
func (f *faultConn) Get(ctx context.Context, ref client.TaskRef) (client.TaskRead, client.Reply, error) {
	tr, rep, err := f.inner.Get(ctx, ref)
	if !f.on || err != nil || rep.Err != nil || tr.Malformed != nil {
		return tr, rep, err
	}
	v := f.v
	if st := tr.Task.Status; v.lc.Inline && st.Terminal() && st != mcp.StatusCancelled && !v.task.streamCut && v.losePayload() {
		v.task.streamCut = true
		v.shard.Reclassify(mcp.OpTasksGet, metrics.OutcomeOK, metrics.OutcomeInjected)
		v.dropSession()
		return tr, rep, &lostReply{retry: v.retryDelay(1)}
	}
	return tr, rep, nil
}

// Result fetches the payload with the faults of fault points 3 and 4 on a stream: the
// connection dropped before the call (before_result, once per task, of a task seen
// terminal), or one stream cut (at most one per task, so that every task can end). A cut
// that happened is recorded, and comes back as a *lostReply whose retry is the stream's
// retry field, else the backoff for the task's next result try.
func (f *faultConn) Result(ctx context.Context, ref client.TaskRef, h client.ServerHandler, _ client.Cut) (client.Reply, error) {
	if !f.on {
		return f.inner.Result(ctx, ref, h, client.CutNone)
	}
	v := f.v
	t := &v.task
	faults := &v.e.cfg.Faults
	if v.lc.Status.Terminal() && !t.beforeResult && v.fires(faults.BeforeResult, "before_result") {
		t.beforeResult = true
		v.dropSession()
	}
	cut := client.CutNone
	if !t.streamCut {
		switch {
		case v.draw(faults.InputBeforeAnswer):
			cut = client.CutBeforeAnswer
		case v.draw(faults.InputAfterAnswer):
			cut = client.CutAfterAnswer
		case v.draw(faults.ResultStream):
			cut = client.CutStream
		}
	}
	rep, err := f.inner.Result(ctx, ref, h, cut)
	if !errors.Is(err, client.ErrCut) {
		return rep, err
	}
	t.streamCut = true
	v.injected(cut)
	retry := v.retryDelay(t.resultTries + 1) // before the drop: the stream's retry field
	v.dropSession()
	return rep, &lostReply{err: err, retry: retry}
}

// Answer answers inlined input requests; input_after_answer may lose the acknowledgement
// (fault point 4 where reads inline the input: the keys count as answered).
func (f *faultConn) Answer(ctx context.Context, ref client.TaskRef, responses mcp.InputResponses, _ client.Cut) (client.Reply, error) {
	if !f.on {
		return f.inner.Answer(ctx, ref, responses, client.CutNone)
	}
	v := f.v
	cut := client.CutNone
	if !v.task.streamCut && v.draw(v.e.cfg.Faults.InputAfterAnswer) {
		v.task.streamCut, cut = true, client.CutReply
	}
	rep, err := f.inner.Answer(ctx, ref, responses, cut)
	if errors.Is(err, client.ErrCut) {
		v.injected(client.CutAfterAnswer)
		v.dropSession()
	}
	return rep, err
}

// Cancel sends a cancel whose reply cancel_reply may lose (fault point 5).
func (f *faultConn) Cancel(ctx context.Context, ref client.TaskRef, _ client.Cut) (client.Cancelled, client.Reply, error) {
	if !f.on {
		return f.inner.Cancel(ctx, ref, client.CutNone)
	}
	cd, rep, err := f.inner.Cancel(ctx, ref, f.v.cut(f.v.e.cfg.Faults.CancelReply, "cancel_reply", client.CutReply))
	if errors.Is(err, client.ErrCut) {
		f.v.dropSession()
	}
	return cd, rep, err
}

// List sends a page request; no client fault breaks it.
func (f *faultConn) List(ctx context.Context, params []byte) (client.Reply, error) {
	return f.inner.List(ctx, params)
}

// Close ends the connection; no client fault breaks it.
func (f *faultConn) Close(ctx context.Context) error { return f.inner.Close(ctx) }

var (
	_ client.Conn = meteredConn{}
	_ client.Conn = (*faultConn)(nil)
)
