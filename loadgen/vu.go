package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

// vu is one virtual client: a session of its own and a random source of its own; it runs
// one task at a time. Its metrics go to the shard it shares with other clients.
type vu struct {
	e     *Engine
	idx   int
	sess  *Session
	rng   *rand.Rand
	shard *metrics.Shard
	lc    Lifecycle
	cur   string      // id of the task being run, for elicitation answers
	sent  time.Time   // when the latest call's first attempt got its request slot
	timer *time.Timer // the client's one timer, re-armed for every wait (see sleepUntil)
}

func (e *Engine) newVU(idx int) *vu {
	return &vu{
		e:     e,
		idx:   idx,
		rng:   rand.New(rand.NewPCG(e.cfg.Seed, uint64(idx)+1)),
		shard: e.rec.Shard(idx % e.shards),
	}
}

// connect opens (or re-opens, after a 404, H8) the client's session.
func (v *vu) connect(ctx context.Context) error {
	start := time.Now()
	s, err := v.e.target.Connect(ctx, clientCaps)
	v.count(metrics.MethodInitialize, start, Reply{}, err)
	if err != nil {
		return err
	}
	v.sess = s
	return nil
}

// clientCaps are what tasksim's clients declare: form elicitation, so the server may ask for
// input (R60).
var clientCaps = mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{Form: mcp.On()}}

// close ends the session (H9).
func (v *vu) close(ctx context.Context) {
	if v.sess == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, v.e.cfg.timeout())
	defer cancel()
	var err error
	if v.e.acquire(ctx) {
		err = v.sess.Close(ctx)
		v.e.release()
	} else {
		err = &TransportError{Op: "DELETE", Err: ctx.Err()}
	}
	v.count(metrics.MethodDelete, time.Now(), Reply{}, err)
	v.sess = nil
}

// call sends one request with the per-request timeout (limit, when non-zero, bounds it
// earlier), re-initializing once if the session is gone, and records its latency and outcome.
// Every request but tasks/result first takes a request slot (Config.MaxConns); v.sent is
// when the first attempt got it, or when the call gave up waiting.
func (v *vu) call(ctx context.Context, m metrics.Method, method string, params []byte, limit time.Time, sh ServerHandler) (Reply, error) {
	v.sent = time.Time{}
	for attempt := 0; ; attempt++ {
		rep, err := v.attempt(ctx, m, method, params, limit, sh)
		if errors.Is(err, ErrSessionGone) && attempt == 0 {
			v.shard.Add(metrics.Reconnects, 1)
			v.sess = nil
			continue // resume the known task on a fresh session
		}
		return rep, err
	}
}

// attempt is one try of call: take a slot, connect if there is no session, send.
func (v *vu) attempt(ctx context.Context, m metrics.Method, method string, params []byte, limit time.Time, sh ServerHandler) (Reply, error) {
	stream := method == mcp.MethodTasksResult
	if !stream {
		if !v.e.acquire(ctx) {
			err := &TransportError{Op: method, Err: ctx.Err()}
			if v.sent.IsZero() {
				v.sent = time.Now()
			}
			v.count(m, v.sent, Reply{}, err)
			return Reply{}, err
		}
		defer v.e.release()
	}
	if v.sent.IsZero() {
		v.sent = time.Now()
	}
	if v.sess == nil {
		if err := v.connect(ctx); err != nil {
			return Reply{}, err
		}
	}
	rctx, cancel := ctx, context.CancelFunc(func() {})
	if !limit.IsZero() {
		rctx, cancel = context.WithDeadline(ctx, limit)
	} else if !stream {
		rctx, cancel = context.WithTimeout(ctx, v.e.cfg.timeout())
	}
	start := time.Now()
	rep, err := v.sess.Call(rctx, method, params, sh)
	cancel()
	v.count(m, start, rep, err)
	return rep, err
}

// count records one request's latency (for methods that have a latency metric) and outcome.
func (v *vu) count(m metrics.Method, start time.Time, rep Reply, err error) {
	o, code, status := classify(rep, err)
	if err == nil { // a reply came: count it and its latency under one shard lock
		v.shard.Reply(m, o, code, status, time.Since(start))
	} else {
		v.shard.Request(m, o, code, status)
	}
	if throttled(status) {
		// One signal per throttling reply: honouring its Retry-After is the same signal.
		v.shard.Add(metrics.BackpressureSignals, 1)
	}
}

// Backpressure signals (DESIGN.md section 4, backpressure_signals). One signal per event the
// server uses to push back, never two for one reply:
//
//	throttling reply   any request answered HTTP 429 or 503 (counted in count). Honouring
//	                   its Retry-After is part of the same signal, not a second one.
//	capacity refusal   a create refused with a JSON-RPC error that says the server is full
//	                   (capacityError). A JSON-RPC refusal for any other reason (bad
//	                   arguments, unknown tool) is a refusal but not a signal.
//	raised interval    a task reply advertising a longer pollInterval than the same task's
//	                   previous advertised one (Lifecycle.Raises): one signal per raise.
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
// After a throttling reply or a capacity refusal a closed-model client waits before its
// next create: Retry-After when the reply carried one, else its poll policy's Interval (1 s
// when unset). An open-model arrival that is refused is simply refused: the client takes
// the next arrival as it comes.

// throttled reports whether an HTTP status asks the client to slow down.
func throttled(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
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
func createRefusal(rep Reply, err error) (refused bool, key int, signal bool, retryAfter time.Duration) {
	if err == nil {
		return true, rep.Err.Code, capacityError(rep.Err), 0
	}
	var he *HTTPError
	switch {
	case errors.Is(err, ErrSessionGone):
		return true, http.StatusNotFound, false, 0
	case errors.As(err, &he) && (he.Status/100 == 4 || he.Status == http.StatusServiceUnavailable):
		return true, he.Status, throttled(he.Status), he.RetryAfter
	}
	return false, 0, false, 0
}

// refused records a refused create and, in the closed model, waits before the client's
// next create when the server pushed back.
func (v *vu) refused(ctx context.Context, key int, signal bool, retryAfter time.Duration, viaHTTP bool) {
	v.e.noteCreateRefused(key)
	if !signal {
		return
	}
	if !viaHTTP { // a 429/503 was counted with the request
		v.shard.Add(metrics.BackpressureSignals, 1)
	}
	if v.e.cfg.Model != Closed {
		return
	}
	wait := retryAfter
	if wait <= 0 {
		wait = v.e.cfg.Poll.Interval
		if wait <= 0 {
			wait = time.Second
		}
	}
	v.sleepUntil(ctx, time.Now().Add(wait))
}

func classify(rep Reply, err error) (o metrics.Outcome, code, status int) {
	var he *HTTPError
	var pe *ProtocolError
	switch {
	case err == nil && rep.Err != nil:
		return metrics.OutcomeRPCError, rep.Err.Code, 200
	case err == nil:
		return metrics.OutcomeOK, 0, 200
	case errors.Is(err, ErrSessionGone):
		return metrics.OutcomeHTTPError, 0, 404
	case errors.As(err, &he):
		return metrics.OutcomeHTTPError, 0, he.Status
	case errors.As(err, &pe):
		return metrics.OutcomeProtocol, 0, 0
	}
	return metrics.OutcomeTransport, 0, 0
}

// runTask runs one task from creation to a known outcome (or to abandonment when ctx ends).
// intended is when the task should have started: task_e2e counts from it (DESIGN.md
// section 4), so a late start is measured, not hidden.
func (v *vu) runTask(ctx context.Context, intended time.Time) {
	e := v.e
	rep, err := v.call(ctx, metrics.MethodToolsCall, mcp.MethodToolsCall, e.callParams, time.Time{}, nil)
	if err != nil || rep.Err != nil {
		refused, key, signal, retryAfter := createRefusal(rep, err)
		if refused { // the server answered: no task (see "A create is settled" above)
			v.refused(ctx, key, signal, retryAfter, err != nil)
			return
		}
		// Without a reply the client cannot know whether the server created the task: the
		// outcome is unknown, and the call is never repeated (DESIGN.md section 5, recovery).
		v.shard.Add(metrics.TasksUnknown, 1)
		return
	}
	task, plain, perr := e.dialect.ParseCallReply(rep.Result)
	if perr != nil {
		v.shard.Request(metrics.MethodToolsCall, metrics.OutcomeProtocol, 0, 0)
		v.shard.Add(metrics.TasksUnknown, 1)
		return
	}
	if plain != nil { // the server ran it synchronously (R4, or the sync fallback)
		if plain.IsError {
			v.shard.Add(metrics.TasksFailed, 1)
		} else {
			v.shard.Add(metrics.TasksCompleted, 1)
		}
		v.shard.RecordDuration(metrics.TaskE2E, time.Since(intended))
		return
	}
	now := time.Now()
	v.shard.Add(metrics.TasksCreated, 1)
	e.manifest.sawTask(task)
	e.inFlight.Add(1)
	defer e.inFlight.Add(-1)

	var cancelAfter time.Duration
	if e.cfg.Cancel.Probability > 0 && v.rng.Float64() < e.cfg.Cancel.Probability {
		cancelAfter = time.Nanosecond
		if e.cfg.Cancel.Delay != nil {
			cancelAfter = max(time.Nanosecond, e.cfg.Cancel.Delay(v.rng))
		}
	}
	v.lc = Lifecycle{Policy: &e.cfg.Poll, Strategy: e.cfg.Result, Rand: v.rng}
	lc := &v.lc
	lc.Start(now, task, cancelAfter)
	v.cur = task.TaskID
	srv := serverTimes{created: parseTime(task.CreatedAt), ttl: task.TTL}
	params := taskIDParams(task.TaskID)
	for {
		st := lc.Next(time.Now())
		if st.Kind == StepDone {
			break
		}
		if st.Kind != StepResult && !v.sleepUntil(ctx, st.At) {
			lc.Abandon()
			break
		}
		switch st.Kind {
		case StepPoll:
			lc.PollSent()
			v.shard.Add(metrics.Polls, 1)
			rep, err := v.call(ctx, metrics.MethodTasksGet, mcp.MethodTasksGet, params, time.Time{}, nil)
			// Sent when it got its request slot: a wait for one is the load generator's own.
			v.shard.RecordDuration(metrics.ScheduleLag, max(0, v.sent.Sub(st.At)))
			v.observe(rep, err, &srv)
		case StepCancel:
			lc.CancelSent(time.Now())
			rep, err := v.call(ctx, metrics.MethodTasksCancel, mcp.MethodTasksCancel, params, time.Time{}, nil)
			if err == nil && rep.Err != nil && rep.Err.Code == mcp.CodeInvalidParams && lc.Status.Terminal() {
				break // R26: it finished first; the outcome stands
			}
			v.observe(rep, err, &srv)
			if lc.Status == mcp.StatusCancelled {
				v.shard.RecordDuration(metrics.CancelLatency, time.Since(lc.CancelSentAt))
			}
		case StepResult:
			rep, err := v.call(ctx, metrics.MethodTasksResult, mcp.MethodTasksResult, params, st.At, v)
			switch {
			case err != nil:
				lc.ResultFailed(time.Now())
			case rep.Err != nil && rep.Err.Code == mcp.CodeInvalidParams:
				lc.Gone()
			default:
				lc.ResultReceived(time.Now(), rep.Err != nil || isErrorResult(rep.Result))
				if !lc.TerminalSeen.IsZero() {
					v.shard.RecordDuration(metrics.ResultLag, time.Since(lc.TerminalSeen))
				}
			}
		}
		if ctx.Err() != nil {
			lc.Abandon()
			break
		}
	}
	v.finish(intended, &srv)
	v.e.probe.consider(ctx, task.TaskID, srv.created, srv.ttl)
}

// serverTimes are the server's own instants for the task, for lags and amplification.
type serverTimes struct {
	created, terminal time.Time
	ttl               *mcp.Ms // as granted; nil = unlimited
}

// observe applies a tasks/get or tasks/cancel reply to the lifecycle.
func (v *vu) observe(rep Reply, err error, srv *serverTimes) {
	lc := &v.lc
	now := time.Now()
	switch {
	case err != nil:
		var he *HTTPError
		if errors.As(err, &he) && he.RetryAfter > 0 {
			lc.Replied(now.Add(he.RetryAfter)) // honour Retry-After
			return
		}
		lc.Replied(now)
		return
	case rep.Err != nil:
		if rep.Err.Code == mcp.CodeInvalidParams {
			lc.Gone() // R46: unknown, expired or purged
		}
		lc.Replied(now)
		return
	}
	var t mcp.Task
	if json.Unmarshal(rep.Result, &t) != nil || !t.Status.Valid() {
		v.shard.Request(metrics.MethodTasksGet, metrics.OutcomeProtocol, 0, 0)
		lc.Replied(now)
		return
	}
	wasTerminal, raises := lc.Status.Terminal(), lc.Raises
	if lc.Observed(now, &t) {
		v.shard.Add(metrics.InvalidTransitions, 1)
		v.e.noteViolation(v.cur, lc.Violations[len(lc.Violations)-1])
	}
	if lc.Raises > raises {
		v.shard.Add(metrics.BackpressureSignals, int64(lc.Raises-raises)) // pollInterval raised
	}
	if !wasTerminal && lc.Status.Terminal() {
		srv.terminal = parseTime(t.LastUpdatedAt)
	}
}

// finish records the task's outcome and per-task figures.
func (v *vu) finish(intended time.Time, srv *serverTimes) {
	lc := &v.lc
	now := time.Now()
	v.shard.RecordDuration(metrics.TaskE2E, now.Sub(intended))
	v.shard.Record(metrics.PollsPerTask, int64(lc.Polls))
	switch lc.Outcome {
	case OutcomeCompleted:
		v.shard.Add(metrics.TasksCompleted, 1)
	case OutcomeFailed:
		v.shard.Add(metrics.TasksFailed, 1)
	case OutcomeCancelled:
		v.shard.Add(metrics.TasksCancelled, 1)
	case OutcomeExpired:
		v.shard.Add(metrics.TasksExpired, 1)
	default:
		v.shard.Add(metrics.TasksUnknown, 1)
	}
	if !srv.terminal.IsZero() && !lc.TerminalSeen.IsZero() {
		v.shard.RecordDuration(metrics.DetectionLag, max(0, lc.TerminalSeen.Sub(srv.terminal)))
	}
	interval := lc.FirstAdvised
	if interval == 0 {
		interval = v.e.cfg.Poll.Interval
	}
	if !srv.terminal.IsZero() && !srv.created.IsZero() && v.e.cfg.Result == ResultPoll {
		if adv := Advised(srv.terminal.Sub(srv.created), interval); adv > 0 {
			v.shard.RecordPollAmplification(int64(lc.Polls), int64(adv))
		}
	}
	v.cur = ""
}

// Request answers elicitation/create on a tasks/result stream (spec/TASKS.md section 10):
// accept, decline or cancel by the configured ratios, with related-task _meta (R31).
func (v *vu) Request(msg *mcp.Message) ([]byte, *mcp.Error) {
	if msg.Method != mcp.MethodElicit {
		return nil, mcp.Errorf(mcp.CodeMethodNotFound, "tasksim client does not handle %s", msg.Method)
	}
	var p struct {
		Meta json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(msg.Params, &p)
	taskID := mcp.RelatedTaskID(p.Meta)
	if taskID == "" {
		taskID = v.cur
	}
	action := v.e.cfg.Input.pick(v.rng)
	b := []byte(`{"action":"` + action + `"`)
	if action == mcp.ElicitAccept {
		b = append(b, `,"content":{"answer":"tasksim"}`...)
	}
	b = append(b, `,"_meta":`...)
	b = append(b, mcp.RelatedTaskMeta(taskID)...)
	b = append(b, '}')
	return b, nil
}

// Notify implements ServerHandler; status notifications are not relied on (R20).
func (v *vu) Notify(*mcp.Message) {}

var _ ServerHandler = (*vu)(nil)

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

func taskIDParams(id string) []byte {
	b := append([]byte(`{"taskId":`), mcp.AppendString(nil, id)...)
	return append(b, '}')
}

func parseTime(s string) time.Time {
	t, err := mcp.ParseTime(s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// sleepUntil is the package sleepUntil on the client's own timer: thousands of clients
// waiting between polls allocate no timer per wait.
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
