package loadgen

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

// vu is one virtual client: a connection of its own, in the run's era (client.Conn), and a
// random source of its own; it runs one task at a time (task.go). Its metrics go to the
// shard it shares with other clients.
type vu struct {
	e        *Engine
	idx      int
	conn     client.Conn // nil until dialed, and after it is lost (dropSession)
	link     faultConn   // the connection the driver's steps call: conn, metered, in the client's faults (faultconn.go)
	rng      *rand.Rand
	shard    *metrics.Shard
	lc       Lifecycle
	task     taskState
	cur      string      // id of the task being run, for elicitation answers
	sent     time.Time   // when the latest call's first attempt got its request slot
	resultBy time.Time   // the latest instant of the tasks/result the driver sends (meteredConn.Result)
	timer    *time.Timer // for the waits inside a step (see sleepUntil), re-armed for each

	// Between the steps of a task (stepTask), while the client waits among the executor's
	// sleepers with no goroutine of its own (executor.go).
	step     Step      // the step waited for, when waiting
	waiting  bool      // stepTask returned to wait for step
	woke     bool      // the wait ran its course (false: its context ended first)
	phase    phase     // where drive resumes (executor.go)
	intended time.Time // the intended start of the next task
	sleeping int32     // which context's end cuts the current wait short; 0 = none (executor.mu)
	wakeAt   time.Time // when the current wait ends (executor.mu)
	slot     int       // the client's index among the executor's sleepers; -1 = not sleeping (executor.mu)

	frng          *rand.Rand // fault decisions and backoff jitter, apart from rng (recovery.go)
	seq           uint64     // tasks started by this client
	resumed       bool       // the current task came from reconciliation
	resuming      bool       // the session was lost with a task in hand: the next reply resumes it
	saved         []byte     // the persisted record of the current task (recovery.go)
	opened        bool       // a session was opened once: the next one is a reconnect (Traits.Sessions)
	failedCreates int        // creates in a row that brought no task, for the backoff before the next (holdOff)

	ten    *tenant    // the client's tenant: its token, create params and canaries (probes.go)
	probe  bool       // the client runs a probe round after each task (probes.go)
	prng   *rand.Rand // probe decisions, apart from rng; nil unless probe
	lastID string     // the id of the client's latest task, for the meta probe
	span   trace.Span // the span of the current task (taskspan.go); nil when the run does not trace

	// The storage of rng and frng, inside the client: two objects fewer per client for
	// every garbage collection to mark.
	pcg  [2]rand.PCG
	rand [2]rand.Rand
}

func (e *Engine) newVU(idx int) *vu {
	v := &vu{
		e:     e,
		idx:   idx,
		shard: e.rec.Shard(idx % e.shards),
		ten:   e.tenants[idx%len(e.tenants)], // round-robin over the tenants
	}
	v.pcg[0].Seed(e.cfg.Seed, uint64(idx)+1)
	v.pcg[1].Seed(e.cfg.Seed^faultSalt, uint64(idx)+1)
	v.rand[0], v.rand[1] = *rand.New(&v.pcg[0]), *rand.New(&v.pcg[1])
	v.rng, v.frng = &v.rand[0], &v.rand[1]
	v.link = faultConn{inner: meteredConn{v}, v: v, on: e.faulty}
	if e.probes != nil && isProbe(idx, e.cfg.Security.ProbeShare) {
		v.probe = true
		v.prng = rand.New(rand.NewPCG(e.cfg.Seed^probeSalt, uint64(idx)+1))
	}
	v.slot = -1 // not among the sleepers (executor.go)
	return v
}

// probeSalt separates the probe stream of a client from its other streams.
const probeSalt = 0x70726f6265 // "probe"

// reconnect dials the client's connection: the first, or a new one after a 404 (H8), a cut
// or a crash. In an era of sessions (client.Traits.Sessions) a new session is a reconnect,
// and failed attempts (at most maxConnectAttempts) are spaced by the recovery backoff, or the
// server's Retry-After capped at the backoff's Max: the caller holds a request slot
// meanwhile, so one reconnect holds it for at most (maxConnectAttempts-1) * Max plus the
// attempts' own timeouts. Without sessions, dialing sends nothing and counts nothing.
func (v *vu) reconnect(ctx context.Context) error {
	if !v.e.traits.Sessions {
		c, err := v.e.dialer.Dial(ctx, v.ten.target)
		if err != nil {
			return err
		}
		v.conn = c
		return nil
	}
	first := !v.opened
	for n := 1; ; n++ {
		err := v.connect(ctx)
		if err == nil {
			v.opened = true
			if !first {
				v.shard.Add(metrics.Reconnects, 1)
			}
			return nil
		}
		var he *client.HTTPError
		wait := backoff(v.e.recovery.Backoff, n, v.frng)
		if errors.As(err, &he) && he.RetryAfter > 0 {
			wait = min(he.RetryAfter, time.Duration(v.e.recovery.Backoff.Max))
		}
		if first || n >= maxConnectAttempts || !v.sleepUntil(ctx, time.Now().Add(wait)) {
			return err
		}
	}
}

// maxConnectAttempts bounds the tries of one reconnect; a task whose requests keep failing
// ends on its status budget.
const maxConnectAttempts = 3

// connect opens one session: initialize and notifications/initialized, within the request
// timeout (a black-holed or stalled server must not hold the client forever).
func (v *vu) connect(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, v.e.cfg.timeout())
	defer cancel()
	start := time.Now()
	c, err := v.e.dialer.Dial(ctx, v.ten.target) // with the tenant's token
	v.count(mcp.OpInitialize, start, client.Reply{}, err)
	if err != nil {
		return err
	}
	v.conn = c
	return nil
}

// faultSalt separates the fault stream of a client from its main stream.
const faultSalt = 0x6661756c74 // "fault"

// close ends the session (H9); a connection of no session has nothing to end.
func (v *vu) close(ctx context.Context) {
	if v.conn == nil || !v.e.traits.Sessions {
		v.conn = nil
		return
	}
	ctx, cancel := context.WithTimeout(ctx, v.e.cfg.timeout())
	defer cancel()
	var err error
	if v.e.acquire(ctx) {
		err = v.conn.Close(ctx)
		v.e.release()
	} else {
		err = &client.TransportError{Op: "DELETE", Err: ctx.Err()}
	}
	v.count(mcp.OpDelete, time.Now(), client.Reply{}, err)
	v.conn = nil
}

// exchange is one request of op on the client's connection (a client.Conn method), its
// answer kept by the closure: call counts and times it as op. A closure handed to call does
// not escape, so it costs no allocation.
type exchange func(ctx context.Context, c client.Conn) (client.Reply, error)

// call sends one request (x, counted as op) with the per-request timeout (limit, when
// non-zero, bounds it earlier), re-dialing once if the session is gone, and records its
// latency and outcome. Every request but tasks/result first takes a request slot
// (Config.MaxConns); v.sent is when the first attempt got it, or when the call gave up
// waiting.
func (v *vu) call(ctx context.Context, op mcp.Op, limit time.Time, x exchange) (client.Reply, error) {
	v.sent = time.Time{}
	for attempt := 0; ; attempt++ {
		rep, err := v.attempt(ctx, op, limit, x)
		if v.e.det != nil {
			v.e.det.inspect(v.ten.idx, op, rep, err) // secrets.go
		}
		if errors.Is(err, client.ErrSessionGone) && attempt == 0 {
			v.dropSession()
			continue // resume the known task on a fresh session (H8)
		}
		return rep, err
	}
}

// notSentError is the error of a request that never left the client: no session could be
// opened for it (initialize failed, and was counted as such).
type notSentError struct{ err error }

func (e *notSentError) Error() string { return e.err.Error() }
func (e *notSentError) Unwrap() error { return e.err }

// attempt is one try of call: take a slot, dial if there is no connection, send.
func (v *vu) attempt(ctx context.Context, m mcp.Op, limit time.Time, x exchange) (client.Reply, error) {
	stream := m == mcp.OpTasksResult
	if !stream {
		if !v.e.acquire(ctx) {
			err := &client.TransportError{Op: v.e.dialect.Method(m), Err: ctx.Err()}
			if v.sent.IsZero() {
				v.sent = time.Now()
			}
			v.count(m, v.sent, client.Reply{}, err)
			return client.Reply{}, err
		}
		defer v.e.release()
	}
	if v.sent.IsZero() {
		v.sent = time.Now()
	}
	if v.conn == nil {
		if err := v.reconnect(ctx); err != nil {
			return client.Reply{}, &notSentError{err}
		}
	}
	start := time.Now()
	var rep client.Reply
	var err error
	switch {
	case !limit.IsZero():
		rctx, cancel := context.WithDeadline(ctx, limit)
		rep, err = x(rctx, v.conn)
		cancel()
	case !stream:
		// The per-request timeout as a reply deadline (client.ReplyBy): no timer and no
		// context of its own for each request.
		rep, err = x(client.ReplyBy(ctx, start.Add(v.e.cfg.timeout())), v.conn)
	default:
		rep, err = x(ctx, v.conn)
	}
	v.count(m, start, rep, err)
	return rep, err
}

// The driver's requests, one per client.Conn method, each counted as its op by call.

// createCall sends a create, or the retry of an input round with answers.
func (v *vu) createCall(ctx context.Context, call []byte, answers *client.InputAnswers, cut client.Cut) (client.Created, client.Reply, error) {
	var cr client.Created
	rep, err := v.call(ctx, mcp.OpToolsCall, time.Time{}, func(ctx context.Context, c client.Conn) (rep client.Reply, err error) {
		v.countAugmented(call) // a rollback's wire evidence (rollback.go)
		cr, rep, err = c.Create(ctx, call, answers, cut)
		return rep, err
	})
	return cr, rep, err
}

// get reads the task ref.
func (v *vu) get(ctx context.Context, ref client.TaskRef) (client.TaskRead, client.Reply, error) {
	var tr client.TaskRead
	rep, err := v.call(ctx, mcp.OpTasksGet, time.Time{}, func(ctx context.Context, c client.Conn) (rep client.Reply, err error) {
		tr, rep, err = c.Get(ctx, ref)
		return rep, err
	})
	return tr, rep, err
}

// cancelCall asks for the task ref to be cancelled.
func (v *vu) cancelCall(ctx context.Context, ref client.TaskRef, cut client.Cut) (client.Cancelled, client.Reply, error) {
	var cd client.Cancelled
	rep, err := v.call(ctx, mcp.OpTasksCancel, time.Time{}, func(ctx context.Context, c client.Conn) (rep client.Reply, err error) {
		cd, rep, err = c.Cancel(ctx, ref, cut)
		return rep, err
	})
	return cd, rep, err
}

// resultCall fetches the payload of the task ref until limit at the latest, h answering the
// server requests of its stream (the client's Request).
func (v *vu) resultCall(ctx context.Context, ref client.TaskRef, limit time.Time, h client.ServerHandler, cut client.Cut) (client.Reply, error) {
	return v.call(ctx, mcp.OpTasksResult, limit, func(ctx context.Context, c client.Conn) (client.Reply, error) {
		return c.Result(ctx, ref, h, cut)
	})
}

// answerCall answers input requests of the task ref.
func (v *vu) answerCall(ctx context.Context, ref client.TaskRef, responses mcp.InputResponses, cut client.Cut) (client.Reply, error) {
	return v.call(ctx, mcp.OpTasksUpdate, time.Time{}, func(ctx context.Context, c client.Conn) (client.Reply, error) {
		return c.Answer(ctx, ref, responses, cut)
	})
}

// listCall sends one page request of tasks/list.
func (v *vu) listCall(ctx context.Context, params []byte) (client.Reply, error) {
	return v.call(ctx, mcp.OpTasksList, time.Time{}, func(ctx context.Context, c client.Conn) (client.Reply, error) {
		return c.List(ctx, params)
	})
}

// session is the Session under the client's connection (client.SessionOf): nil when it has
// none, or no session-backed connection.
func (v *vu) session() *client.Session {
	if v.conn == nil {
		return nil
	}
	return client.SessionOf(v.conn)
}

// count records one request's latency (for methods that have a latency metric) and outcome,
// and samples it when it is an error (errsample.go).
func (v *vu) count(m mcp.Op, start time.Time, rep client.Reply, err error) {
	o, code, status := classify(m, rep, err)
	if o == metrics.OutcomeRPCError && m == mcp.OpTasksResult && v.resultErrorExpected(code) {
		o = metrics.OutcomeExpected // the failed call's own error, as R17 has it delivered
	}
	if (o == metrics.OutcomeTransport || o == metrics.OutcomeProtocol) && v.stopped() {
		// No reply, or half of one, once the run's end cancelled the request: whatever the
		// transport made of the cut (context canceled, a closed pipe, an empty body), the
		// run cut it off, not the target.
		o = metrics.OutcomeStopped
	}
	switch {
	case err == nil: // a reply came: count it and its latency under one shard lock
		v.shard.Reply(m, o, code, status, time.Since(start))
	case status >= 400: // an HTTP status said no: its duration is the live endpoint's only
		v.shard.StatusReply(m, o, code, status, time.Since(start))
	default:
		v.shard.Request(m, o, code, status)
	}
	switch {
	case o == metrics.OutcomeBackpressure:
		// One signal per reply that pushes back: honouring its Retry-After is the same
		// signal, not a second one.
		v.shard.Add(metrics.BackpressureSignals, 1)
	case o.IsError():
		v.e.errors.note(errorKey{m, o, code, status}, func() string { return errorMessage(rep, err) })
	}
}

// stopped reports whether the run's work has ended (grace period over, second Ctrl-C).
func (v *vu) stopped() bool { return v.e.workCtx != nil && v.e.workCtx.Err() != nil }

// Backpressure signals (docs/METRICS.md#backpressure_signals). One signal per event the
// server uses to push back, never two for one reply:
//
//	throttling reply   any request answered HTTP 429, or 503 with Retry-After (throttled).
//	                   Honouring its Retry-After is part of the same signal, not a second
//	                   one. A 503 without Retry-After is an error: the server is down, not
//	                   pacing the client.
//	capacity refusal   a create refused with a JSON-RPC error that says the server is full
//	                   (capacityError). A JSON-RPC refusal for any other reason (bad
//	                   arguments, unknown tool) is a refusal and an error, not a signal.
//	raised interval    a task reply advertising a longer pollInterval than the same task's
//	                   previous advertised one (Lifecycle.Raises): one signal per raise.
//
// Throttling replies and capacity refusals are counted under the request outcome
// "backpressure", not as errors (classify).
//
// A create is settled by the first reply to it:
//
//	result                  created (or run synchronously)
//	JSON-RPC error          refused: not created (Engine.Refusals by code)
//	HTTP 4xx, 503           refused: not created (Engine.Refusals by HTTP status)
//	no reply (transport),   unknown: the server may have created it (a proxy's 502/504
//	other HTTP 5xx, or an   may hide a created task); the create is never repeated
//	undecodable reply
//
// A closed-model client whose create was refused waits before its next one (holdOff):
// Retry-After when the reply carried one, else the recovery backoff, growing with each
// create in a row that brought no task (refused, never sent, or lost). An open-model
// arrival that is refused is simply refused: the client takes the next arrival as it comes,
// and the arrival rate bounds the load.

// throttled reports whether an HTTP reply asks the client to slow down: 429, or 503 with
// a Retry-After.
func throttled(status int, retryAfter time.Duration) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable && retryAfter > 0
}

// capacityError reports whether a JSON-RPC error refuses a create because the server is
// full or limiting the caller: its message mentions capacity, overload or a rate limit
// (case-insensitive), as the mock's "server at capacity: ..." does.
func capacityError(e *mcp.Error) bool {
	m := strings.ToLower(e.Message)
	for _, w := range capacityWords {
		if strings.Contains(m, w) {
			return true
		}
	}
	return false
}

var capacityWords = [...]string{"capacity", "overload", "rate limit", "too many requests"}

// createRefusal settles a create that got no result. It reports whether the create was
// refused (not created) and, for a refusal that asks the client to slow down, how long the
// server asked it to wait (0 = not said). refused false means the outcome is unknown.
func createRefusal(rep client.Reply, err error) (refused bool, key int, retryAfter time.Duration) {
	if err == nil {
		return true, rep.Err.Code, 0
	}
	var he *client.HTTPError
	switch {
	case errors.Is(err, client.ErrSessionGone):
		return true, http.StatusNotFound, 0
	case errors.As(err, &he) && (he.Status/100 == 4 || he.Status == http.StatusServiceUnavailable):
		return true, he.Status, he.RetryAfter
	}
	return false, 0, 0
}

// refused records a refused create and holds the client off before its next one.
func (v *vu) refused(key int, retryAfter time.Duration) {
	v.e.noteCreateRefused(key)
	v.holdOff(retryAfter)
}

// holdOff counts a create that brought no task (refused, never sent, or lost) and, in the
// closed model, waits before the client's next create: what Retry-After asked, else the
// recovery backoff for the failed creates in a row, so that a workload the server keeps
// refusing (bad arguments, a denied token, a full server) or that cannot reach it sends a
// trickle of creates, not a flood. The wait ends with the load phase: no create follows it.
// An open-model arrival does not wait: the arrival rate bounds the load.
func (v *vu) holdOff(retryAfter time.Duration) {
	v.failedCreates++
	if v.e.cfg.Model != Closed {
		return
	}
	wait := retryAfter
	if wait <= 0 {
		wait = backoff(v.e.recovery.Backoff, v.failedCreates, v.frng)
	}
	v.sleepUntil(v.e.loadCtx, time.Now().Add(wait))
}

// classify returns how a request of method m ended, with its JSON-RPC code and HTTP
// status (0 when there is none).
func classify(m mcp.Op, rep client.Reply, err error) (o metrics.Outcome, code, status int) {
	switch {
	case err != nil:
		return classifyFailure(err) // apart: its errors.As targets escape, and cost an allocation each
	case rep.Err == nil:
		return metrics.OutcomeOK, 0, 200
	}
	status = cmp.Or(rep.Status, 200) // 2026-07-28 refuses some errors with 400 or 404 (E27)
	switch {
	case m == mcp.OpTasksCancel && rep.Err.Code == mcp.CodeInvalidParams:
		return metrics.OutcomeExpected, rep.Err.Code, status // R26: already terminal, or gone
	case m == mcp.OpToolsCall && capacityError(rep.Err):
		return metrics.OutcomeBackpressure, rep.Err.Code, status
	}
	return metrics.OutcomeRPCError, rep.Err.Code, status
}

// classifyFailure is classify of a request that got no JSON-RPC reply. Each errors.As
// target escapes, so each is declared where it is needed: a transport failure, the most
// common in a storm, allocates none.
func classifyFailure(err error) (o metrics.Outcome, code, status int) {
	switch {
	case errors.Is(err, client.ErrCut): // the scenario's own client fault: not the target's doing
		return metrics.OutcomeInjected, 0, 0
	case errors.Is(err, client.ErrSessionGone):
		return metrics.OutcomeHTTPError, 0, 404
	}
	if rpc := (*mcp.Error)(nil); errors.As(err, &rpc) { // initialize answered with an error
		return metrics.OutcomeRPCError, rpc.Code, 200
	}
	if he := (*client.HTTPError)(nil); errors.As(err, &he) {
		if throttled(he.Status, he.RetryAfter) {
			return metrics.OutcomeBackpressure, 0, he.Status
		}
		return metrics.OutcomeHTTPError, 0, he.Status
	}
	if pe := (*client.ProtocolError)(nil); errors.As(err, &pe) {
		return metrics.OutcomeProtocol, 0, 0
	}
	if ve := (*client.VersionError)(nil); errors.As(err, &ve) { // an unknown protocol version
		return metrics.OutcomeProtocol, 0, 0
	}
	return metrics.OutcomeTransport, 0, 0
}

// Request answers elicitation/create on a tasks/result stream (docs/RULES.md#input-required-flow):
// accept, decline or cancel by the configured ratios, with related-task _meta (R31).
func (v *vu) Request(msg *mcp.Message) ([]byte, *mcp.Error) {
	if v.e.dialect.Op(msg.Method) != mcp.OpElicit {
		return nil, mcp.Errorf(mcp.CodeMethodNotFound, "tasksim client does not handle %s", msg.Method)
	}
	if v.e.det != nil {
		v.e.det.scan(msg.Params, v.ten.idx, msg.Method, partServerRequest) // secrets.go
	}
	var p struct {
		Meta json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(msg.Params, &p)
	taskID := mcp.RelatedTaskID(p.Meta)
	if taskID == "" {
		taskID = v.cur
	}
	b := v.elicitAnswer()
	b = append(b, `,"_meta":`...)
	b = append(b, mcp.RelatedTaskMeta(taskID)...)
	b = append(b, '}')
	return b, nil
}

// elicitAnswer draws the answer to one elicitation by the configured ratios, counts it, and
// returns its ElicitResult still open: the action and, when accepted, the content (with the
// tenant's canary, if planted); the caller adds what its era adds, and the closing brace.
func (v *vu) elicitAnswer() []byte {
	action := v.e.cfg.Input.pick(v.rng)
	v.shard.Add(metrics.Elicitations, 1)
	v.shard.Add(elicitCounter(action), 1)
	b := []byte(`{"action":"` + action + `"`)
	if action == mcp.ElicitAccept {
		b = append(b, `,"content":`...)
		b = append(b, answerContent(v.ten.answer)...)
	}
	return b
}

// Notify implements ServerHandler; status notifications are not relied on (R20), only
// watched for planted secrets.
func (v *vu) Notify(msg *mcp.Message) {
	if v.e.det != nil {
		v.e.det.scan(msg.Params, v.ten.idx, msg.Method, partNotification)
	}
}

// revokedDenial reports whether err is a 401 or 403 on a client whose tenant's token was
// revoked: its task cannot be followed any more (probes.go).
func (v *vu) revokedDenial(err error) bool {
	if err == nil || v.ten.revokeAt < 0 {
		return false // before he: an escaping variable is allocated where it is declared
	}
	var he *client.HTTPError
	return errors.As(err, &he) &&
		(he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden) && v.ten.revoked(v.e)
}

var _ client.ServerHandler = (*vu)(nil)

// elicitCounter is the counter of the answers to elicitations with action.
func elicitCounter(action string) metrics.Counter {
	switch action {
	case mcp.ElicitDecline:
		return metrics.ElicitDeclined
	case mcp.ElicitCancel:
		return metrics.ElicitCancelled
	}
	return metrics.ElicitAccepted
}

// pick draws an elicitation action by the policy's ratios.
func (p InputPolicy) pick(r *rand.Rand) string {
	total := p.Accept + p.Decline + p.Cancel
	if total <= 0 {
		return mcp.ElicitAccept
	}
	x := r.Float64() * total
	switch {
	case x < p.Accept:
		return mcp.ElicitAccept
	case x < p.Accept+p.Decline:
		return mcp.ElicitDecline
	}
	return mcp.ElicitCancel
}

func isErrorResult(raw json.RawMessage) bool {
	var r struct {
		IsError bool `json:"isError"`
	}
	_ = json.Unmarshal(raw, &r)
	return r.IsError
}

func parseTime(s string) time.Time {
	t, err := mcp.ParseTime(s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// sleepUntil is the package sleepUntil on the client's own timer, for the waits inside a
// step (backoffs, Retry-After): the client keeps its sender meanwhile (executor.go), and
// allocates no timer per wait.
func (v *vu) sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	if v.timer == nil {
		v.timer = time.NewTimer(d)
	} else {
		v.timer.Reset(d) // since Go 1.23 no stale tick survives a Reset
	}
	select {
	case <-v.timer.C:
		return true
	case <-ctx.Done():
		v.timer.Stop()
		return false
	}
}

// sleepUntil waits until t or ctx's end; it reports false if ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}
