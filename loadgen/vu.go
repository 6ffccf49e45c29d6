package loadgen

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/scenarios"
)

// vu is one virtual client: a session of its own and a random source of its own; it runs
// one task at a time. Its metrics go to the shard it shares with other clients.
type vu struct {
	e     *Engine
	idx   int
	sess  *client.Session
	rng   *rand.Rand
	shard *metrics.Shard
	lc    Lifecycle
	task  taskState
	cur   string      // id of the task being run, for elicitation answers
	sent  time.Time   // when the latest call's first attempt got its request slot
	timer *time.Timer // for the waits inside a step (see sleepUntil), re-armed for each

	// Between the steps of a task (stepTask), while the client waits on its timer with no
	// goroutine of its own (executor.go).
	step     Step        // the step waited for, when waiting
	waiting  bool        // stepTask returned to wait for step
	woke     bool        // the wait ran its course (false: its context ended first)
	phase    phase       // where drive resumes (executor.go)
	intended time.Time   // the intended start of the next task
	wake     *time.Timer // calls resume at the end of a wait (executor.go)
	wakeMu   sync.Mutex  // orders sleep, resume and interrupt
	sleeping int32       // which context's end cuts the current wait short; 0 = none

	frng          *rand.Rand // fault decisions and backoff jitter, apart from rng (recovery.go)
	seq           uint64     // tasks started by this client
	resumed       bool       // the current task came from reconciliation
	resuming      bool       // the session was lost with a task in hand: the next reply resumes it
	saved         []byte     // the persisted record of the current task (recovery.go)
	opened        bool       // a session was opened once: the next one is a reconnect
	failedCreates int        // creates in a row that brought no task, for the backoff before the next (holdOff)

	ten    *tenant    // the client's tenant: its token, create params and canaries (probes.go)
	probe  bool       // the client runs a probe round after each task (probes.go)
	prng   *rand.Rand // probe decisions, apart from rng; nil unless probe
	lastID string     // the id of the client's latest task, for the meta probe

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
	if e.probes != nil && isProbe(idx, e.cfg.Security.ProbeShare) {
		v.probe = true
		v.prng = rand.New(rand.NewPCG(e.cfg.Seed^probeSalt, uint64(idx)+1))
	}
	v.wake = time.AfterFunc(time.Hour, v.resume) // armed by sleep only (executor.go)
	v.wake.Stop()
	return v
}

// probeSalt separates the probe stream of a client from its other streams.
const probeSalt = 0x70726f6265 // "probe"

// reconnect opens the client's session: the first, or a new one after a 404 (H8), a cut or
// a crash. A new session is a reconnect. Failed attempts (at most maxConnectAttempts) are
// spaced by the recovery backoff, or the server's Retry-After capped at the backoff's Max:
// the caller holds a request slot meanwhile, so one reconnect holds it for at most
// (maxConnectAttempts-1) * Max plus the attempts' own timeouts.
func (v *vu) reconnect(ctx context.Context) error {
	if v.e.env != nil { // 2026-07-28: nothing to open, nothing to count (vu2026.go)
		v.sess = v.ten.target.Stateless(v.e.env)
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
	s, err := v.ten.target.ConnectLean(ctx, client.ClientCapabilities()) // with the tenant's token
	v.count(mcp.OpInitialize, start, client.Reply{}, err)
	if err != nil {
		return err
	}
	v.sess = s
	return nil
}

// faultSalt separates the fault stream of a client from its main stream.
const faultSalt = 0x6661756c74 // "fault"

// close ends the session (H9).
func (v *vu) close(ctx context.Context) {
	if v.sess == nil || v.sess.Envelope() != nil { // 2026-07-28 has no session to end
		v.sess = nil
		return
	}
	ctx, cancel := context.WithTimeout(ctx, v.e.cfg.timeout())
	defer cancel()
	var err error
	if v.e.acquire(ctx) {
		err = v.sess.Close(ctx)
		v.e.release()
	} else {
		err = &client.TransportError{Op: "DELETE", Err: ctx.Err()}
	}
	v.count(mcp.OpDelete, time.Now(), client.Reply{}, err)
	v.sess = nil
}

// call sends one request with the per-request timeout (limit, when non-zero, bounds it
// earlier), re-initializing once if the session is gone, and records its latency and outcome.
// Every request but tasks/result first takes a request slot (Config.MaxConns); v.sent is
// when the first attempt got it, or when the call gave up waiting. The engine's dialect
// spells op.
func (v *vu) call(ctx context.Context, op mcp.Op, params []byte, limit time.Time, sh client.ServerHandler, cut client.Cut) (client.Reply, error) {
	v.sent = time.Time{}
	for attempt := 0; ; attempt++ {
		rep, err := v.attempt(ctx, op, params, limit, sh, cut)
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

// attempt is one try of call: take a slot, connect if there is no session, send.
func (v *vu) attempt(ctx context.Context, m mcp.Op, params []byte, limit time.Time, sh client.ServerHandler, cut client.Cut) (client.Reply, error) {
	method := v.e.dialect.Method(m)
	stream := m == mcp.OpTasksResult
	if !stream {
		if !v.e.acquire(ctx) {
			err := &client.TransportError{Op: method, Err: ctx.Err()}
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
	if v.sess == nil {
		if err := v.reconnect(ctx); err != nil {
			return client.Reply{}, &notSentError{err}
		}
	}
	rctx, cancel := ctx, context.CancelFunc(func() {})
	if !limit.IsZero() {
		rctx, cancel = context.WithDeadline(ctx, limit)
	} else if !stream {
		rctx, cancel = context.WithTimeout(ctx, v.e.cfg.timeout())
	}
	if m == mcp.OpToolsCall {
		v.countAugmented(params) // a rollback's wire evidence (rollback.go)
	}
	start := time.Now()
	rep, err := v.sess.CallCut(rctx, method, params, sh, cut)
	cancel()
	v.count(m, start, rep, err)
	return rep, err
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
	if err == nil { // a reply came: count it and its latency under one shard lock
		v.shard.Reply(m, o, code, status, time.Since(start))
	} else {
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

// taskState is what a client holds about its current task beside its Lifecycle.
type taskState struct {
	id          string // task id; "" until known
	key         string // idempotency key sent with the create; "" = none
	correlation string // the client's own name for the task: key, or client-sequence
	lastUpdated string // lastUpdatedAt of the latest status seen
	intended    time.Time
	createSent  time.Time // when the create that made the task was sent (client clock), for its expiry (grant)
	params      []byte    // {"taskId": id}
	srv         serverTimes

	statusFails  int  // failed status reads and cancels (Budgets.Status)
	resultTries  int  // tasks/result calls that brought no payload (Budgets.Result)
	crashed      bool // the client crashed once during this task (at most once per task)
	streamCut    bool // a tasks/result stream of this task was cut (at most once per task)
	beforeResult bool // the connection was cut before tasks/result (at most once per task)
	lateCancel   bool // a tasks/cancel was refused -32602 as late (R26): the next read checks it
	reason       string

	// 2026-07-28 (vu2026.go)
	inputs     mcp.InputRequests // the input requests of the latest poll, to answer
	answered   []string          // the input keys answered (E56: never twice)
	ackPending bool              // tasks/cancel was accepted, the task not seen terminal since (canceleffect.go)
	ackAt      time.Time         // when that cancel's reply came (client clock)

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
	task, ok := v.create(ctx, t)
	if !ok {
		return false
	}
	now := time.Now()
	v.shard.Add(metrics.TasksCreated, 1)
	e.manifest.SawTask(task)
	e.learn(task.TaskID)
	v.lastID = task.TaskID
	if e.probes != nil { // what probes of other tenants learn, through the simulator (probes.go)
		sid := ""
		if v.sess != nil {
			sid = v.sess.ID()
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
	t.id, t.params = task.TaskID, client.TaskIDParams(task.TaskID)
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
	if v.fires(e.cfg.Faults.AfterCreate, "after_create") {
		v.dropSession() // fault point 2: the connection drops right after CreateTaskResult
	}
	return true
}

// stepTask runs the task's steps, from where it stands, until the next one is due later
// (it returns that instant and wait true) or the task is over (wait false). The caller
// waits, sets v.woke to whether the wait ran its course (false: ctx ended first), and calls
// stepTask again, from whichever goroutine: the task's state is all in v.
func (v *vu) stepTask(ctx context.Context) (at time.Time, wait bool) {
	e := v.e
	t := &v.task
	lc := &v.lc
	rec := &e.recovery
	for {
		var st Step
		if v.waiting && v.woke && v.watch(t) {
			v.waiting = false // a rollback changed the task's cancel: its next step is decided again
		}
		if v.waiting { // back from the wait for st
			st, v.waiting = v.step, false
			if !v.woke {
				lc.Abandon()
				return time.Time{}, false
			}
		} else {
			v.watch(t) // rollback.go
			st = lc.Next(time.Now())
			if st.Kind == StepDone {
				return time.Time{}, false
			}
			v.persist(t, st.At)
			if st.Kind != StepResult {
				if time.Until(st.At) > 0 {
					v.step, v.waiting = st, true
					return st.At, true
				}
				if ctx.Err() != nil {
					lc.Abandon()
					return time.Time{}, false
				}
			}
		}
		switch st.Kind {
		case StepPoll:
			if !t.crashed && v.fires(e.cfg.Faults.Crash, "crash") {
				v.crash(t) // v.lc and *t now hold only what was persisted
				t.crashed = true
				if t.id == "" {
					lc.Abandon()
					t.reason = ReasonProtocol
					break
				}
				v.resuming = true
				continue
			}
			lc.PollSent()
			v.shard.Add(metrics.Polls, 1)
			rep, err := v.call(ctx, mcp.OpTasksGet, t.params, time.Time{}, nil, client.CutNone)
			// Sent when it got its request slot: a wait for one is the load generator's own.
			v.shard.RecordDuration(metrics.ScheduleLag, max(0, v.sent.Sub(st.At)))
			v.observe(mcp.OpTasksGet, rep, err, t)
			if len(t.inputs) > 0 {
				v.answerInputs(ctx, t) // 2026-07-28: input is answered between polls (E55)
			}
		case StepCancel:
			wasTerminal := lc.Status.Terminal() // a late cancel (Lifecycle.LateCancelDue)
			lc.CancelSent(time.Now())
			v.shard.Add(metrics.CancelsSent, 1)
			if v.e.env != nil {
				v.cancelModern(ctx, t, wasTerminal)
				break
			}
			cut := v.cut(e.cfg.Faults.CancelReply, "cancel_reply", client.CutReply) // fault point 5
			rep, err := v.call(ctx, mcp.OpTasksCancel, t.params, time.Time{}, nil, cut)
			if err == nil && rep.Err != nil && rep.Err.Code == mcp.CodeInvalidParams {
				// R26: the task was terminal by the time the cancel arrived (or is gone): not
				// an outcome. The next tasks/get says which.
				v.shard.Add(metrics.CancelsLate, 1)
				t.lateCancel = true
				lc.Replied(time.Now())
				break
			}
			violations := len(lc.Violations)
			v.observe(mcp.OpTasksCancel, rep, err, t)
			if err == nil && rep.Err == nil {
				v.cancelAccepted(ctx, t, wasTerminal, violations) // canceleffect.go
			}
		case StepResult:
			if lc.Status.Terminal() && !t.beforeResult && v.fires(e.cfg.Faults.BeforeResult, "before_result") {
				t.beforeResult = true
				v.dropSession() // fault point 3: the connection drops before tasks/result
			}
			cut := client.CutNone
			if !t.streamCut { // at most one stream cut per task, so that every task can end
				switch {
				case v.draw(e.cfg.Faults.InputBeforeAnswer):
					cut = client.CutBeforeAnswer
				case v.draw(e.cfg.Faults.InputAfterAnswer):
					cut = client.CutAfterAnswer
				case v.draw(e.cfg.Faults.ResultStream):
					cut = client.CutStream
				}
			}
			rep, err := v.call(ctx, mcp.OpTasksResult, t.params, st.At, v, cut)
			switch {
			case v.revokedDenial(err): // the token lost the right to fetch it: no retry
				t.reason = ReasonRevoked
				if lc.Status.Terminal() {
					lc.ResultLost()
				}
				lc.Abandon()
			case err != nil:
				t.resultTries++
				now := time.Now()
				wait := time.Duration(0)
				if errors.Is(err, client.ErrCut) {
					t.streamCut = true
					v.injected(cut)
					wait = v.retryDelay(t.resultTries)
					v.dropSession()
				}
				lc.ResultFailed(now.Add(wait))
				if lc.Status.Terminal() {
					if t.resultTries >= rec.Budgets.Result {
						lc.ResultLost()
					} else if !v.sleepUntil(ctx, now.Add(wait)) {
						lc.Abandon()
					}
				}
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
					break // cancelled (by someone else): no payload to take (R29)
				}
				lc.ResultReceived(time.Now(), failed)
				if !lc.TerminalSeen.IsZero() {
					v.shard.RecordDuration(metrics.ResultLag, time.Since(lc.TerminalSeen))
				}
			}
		}
		if t.statusFails >= rec.Budgets.Status && lc.Outcome == OutcomePending {
			t.reason = ReasonStatusBudget
			lc.Abandon()
		}
		if ctx.Err() != nil {
			lc.Abandon()
			return time.Time{}, false
		}
	}
}

// endTask records the task's outcome (finish) after stepTask.
func (v *vu) endTask(ctx context.Context) {
	t := &v.task
	v.finish(ctx, t)
	v.e.probe.consider(ctx, t.id, t.srv.created, t.srv.ttl)
	v.e.inFlight.Add(-1)
}

// create sends the task's tools/call and settles it (see "A create is settled" above). It
// returns the task to observe and true, or false when there is none: refused, run
// synchronously, or lost and not reconciled (then it is counted unknown with its key).
// v.resumed says whether the task came from reconciliation rather than a CreateTaskResult.
func (v *vu) create(ctx context.Context, t *taskState) (*mcp.Task, bool) {
	e := v.e
	v.resumed = false
	call := e.createParams(v.ten, t.key)
	params, rounds := call, 0
	for attempt := 1; ; attempt++ {
		if !v.beforeCreate(t, attempt == 1 && rounds == 0) { // a rollback's switch has flipped (rollback.go)
			if attempt == 1 && rounds == 0 {
				v.fallback(ctx, t)
			} else {
				v.unknown(t, ReasonRolledBack) // not sent again: that would be a task-augmented call
			}
			return nil, false
		}
		cut := v.cut(e.cfg.Faults.CreateReply, "create_reply", client.CutReply) // fault point 1
		sentAt := time.Now()
		t.createSent = sentAt
		rep, err := v.call(ctx, mcp.OpToolsCall, params, time.Time{}, nil, cut)
		v.afterCreate()
		if errors.Is(err, client.ErrCut) {
			v.dropSession()
		}
		if err == nil && rep.Err == nil {
			task, plain, perr := e.parseCall(rep.Result)
			if errors.Is(perr, mcp.ErrInputRequired) { // 2026-07-28: an MRTR round (vu2026.go)
				retry, why := v.inputRound(rep.Result, call)
				if rounds++; why == "" && rounds <= maxInputRounds {
					params = retry
					attempt-- // a round is no new attempt: the call goes on
					continue
				}
				if why == "" {
					why = fmt.Sprintf("the server still asked for input after %d rounds", maxInputRounds)
				}
				perr = errors.New(why)
			}
			if perr != nil {
				v.malformed(mcp.OpToolsCall, "tools/call result: "+perr.Error())
				v.unknown(t, ReasonProtocol)
				v.holdOff(0) // a target that answers garbage is not hammered either
				return nil, false
			}
			v.failedCreates = 0
			if plain != nil { // the server ran it synchronously (R4, or the sync fallback)
				v.shard.Add(metrics.SyncCalls, 1)
				if plain.IsError {
					v.shard.Add(metrics.TasksFailed, 1)
				} else {
					v.shard.Add(metrics.TasksCompleted, 1)
				}
				v.shard.RecordDuration(metrics.TaskE2E, time.Since(t.intended))
				return nil, false
			}
			return task, true
		}
		if ns := (*notSentError)(nil); errors.As(err, &ns) {
			v.holdOff(0) // no session, so the call never left: no task can exist
			return nil, false
		}
		if refused, key, retryAfter := createRefusal(rep, err); refused && !errors.Is(err, client.ErrCut) {
			v.refused(key, retryAfter) // the server answered: no task
			return nil, false
		}
		// Without a reply the client cannot know whether the server created the task: it
		// reconciles before anything else, and never repeats the call on its own.
		task, reason := v.reconcile(ctx, t, sentAt)
		if task != nil {
			v.shard.Add(metrics.Reconciled, 1)
			v.resumed = true
			return task, true
		}
		if reason == reasonNotMade && !e.recovery.RetryCreate {
			// The target's own record says the create never happened: a known outcome, not
			// a task to reconcile (an arrival the fault swallowed).
			v.shard.Add(metrics.CreatesNotFound, 1)
			if !errors.Is(err, client.ErrCut) { // a cut of the scenario's own is no sign to slow down
				v.holdOff(0)
			}
			return nil, false
		}
		if reason == reasonNotMade {
			reason = ReasonCreateLost
		}
		if !e.recovery.RetryCreate || t.key == "" || attempt >= e.recovery.Budgets.Create || ctx.Err() != nil {
			v.unknown(t, reason)
			v.holdOff(0) // a failing transport is not hammered either
			return nil, false
		}
		v.shard.Add(metrics.RetriedCreates, 1) // same key: an idempotent server answers with the task
		if !v.sleepUntil(ctx, time.Now().Add(backoff(e.recovery.Backoff, attempt, v.frng))) {
			v.unknown(t, ReasonStopped)
			return nil, false
		}
	}
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
				return v.call(ctx, mcp.OpTasksList, params, time.Time{}, nil, client.CutNone)
			}, sentAt, failedAt)
		}
		if err == nil && !found {
			if byKey {
				return nil, reasonNotMade // authoritative: the target holds no task for the key
			}
			return nil, ReasonCreateLost // tasks/list shows no candidate: not proof enough
		}
		if err == nil {
			params := client.TaskIDParams(id)
			rep, err := v.call(ctx, mcp.OpTasksGet, params, time.Time{}, nil, client.CutNone)
			if err == nil && rep.Err == nil {
				task, perr := v.e.readTask(rep.Result)
				if perr == nil && task.Status.Valid() {
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

// confirmCancelled reads the task once more after a cancel was accepted: it must show
// terminal cancelled, now and for good (R14, R25). Anything else is counted broken.
func (v *vu) confirmCancelled(ctx context.Context, t *taskState) {
	v.lc.PollSent()
	v.shard.Add(metrics.Polls, 1)
	rep, err := v.call(ctx, mcp.OpTasksGet, t.params, time.Time{}, nil, client.CutNone)
	if err != nil || rep.Err != nil {
		return // no evidence either way (a purge after a cancel is allowed)
	}
	switch task, perr := mcp.ParseTask(rep.Result); {
	case perr != nil || !task.Status.Valid():
		v.observe(mcp.OpTasksGet, rep, nil, t) // a malformed reply, counted as such
	case task.Status != mcp.StatusCancelled:
		v.shard.Add(metrics.CancelsBroken, 1)
		v.observe(mcp.OpTasksGet, rep, nil, t) // and the R14 violation it is
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
	rep, err := v.call(ctx, mcp.OpTasksGet, t.params, time.Time{}, nil, client.CutNone)
	v.observe(mcp.OpTasksGet, rep, err, t)
	st := v.lc.Status
	if rpcErr != nil && rpcErr.Code != mcp.CodeInvalidParams && st != mcp.StatusFailed && st != mcp.StatusCancelled {
		v.shard.Reclassify(mcp.OpTasksResult, metrics.OutcomeExpected, metrics.OutcomeRPCError)
		v.e.errors.note(errorKey{mcp.OpTasksResult, metrics.OutcomeRPCError, rpcErr.Code, 200},
			func() string { return rpcErr.Message })
	}
	return st
}

// newLifecycle is the lifecycle of a new task, in the run's era.
func (v *vu) newLifecycle() Lifecycle {
	return Lifecycle{Policy: &v.e.cfg.Poll, Strategy: v.e.cfg.Result, Rand: v.rng, Inline: v.e.env != nil}
}

// dropSession forgets the client's session without DELETE, as a lost connection with a
// client that has to start over does; the next request initializes a new one.
func (v *vu) dropSession() {
	v.sess = nil
	v.resuming = v.cur != ""
}

// draw decides a client fault at one opportunity: inside a window of t always, else with
// its probability, drawn from the client's fault stream (so turning a fault on does not
// change any other random decision of the run). Nothing is recorded: fires records a fault
// that happens once decided; a stream cut, whose point may never come, is recorded by
// injected when it happened.
func (v *vu) draw(t scenarios.Trigger) bool {
	if !t.On() {
		return false
	}
	if t.InWindow(scenarios.Duration(time.Since(v.e.start))) {
		return true
	}
	return t.Probability > 0 && v.frng.Float64() < t.Probability
}

// cut decides a cut that always happens once decided (the request is sent, its reply lost).
func (v *vu) cut(t scenarios.Trigger, kind string, c client.Cut) client.Cut {
	if v.fires(t, kind) {
		return c
	}
	return client.CutNone
}

// injected records a stream cut that happened.
func (v *vu) injected(c client.Cut) {
	kind := map[client.Cut]string{client.CutStream: "result_stream", client.CutBeforeAnswer: "input_before_answer",
		client.CutAfterAnswer: "input_after_answer"}[c]
	v.shard.Add(metrics.FaultsInjected, 1)
	v.e.cfg.Events.Add(metrics.Event{At: time.Now(), Source: "client", Kind: kind, Task: v.cur})
}

// retryDelay is the wait before asking again after a cut stream: the stream's retry field
// when the server sent one (H5), else the backoff.
func (v *vu) retryDelay(n int) time.Duration {
	if v.sess != nil {
		if d := v.sess.Retry(); d > 0 {
			return d
		}
	}
	return backoff(v.e.recovery.Backoff, n, v.frng)
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

// observe applies the reply to a tasks/get or tasks/cancel (m) to the lifecycle.
func (v *vu) observe(m mcp.Op, rep client.Reply, err error, t *taskState) {
	lc := &v.lc
	now := time.Now()
	switch {
	case v.revokedDenial(err):
		t.reason = ReasonRevoked
		lc.Abandon()
		return
	case err != nil:
		t.statusFails++
		var he *client.HTTPError
		if errors.As(err, &he) && he.RetryAfter > 0 {
			lc.Replied(now.Add(he.RetryAfter)) // honour Retry-After
			return
		}
		if errors.Is(err, client.ErrCut) {
			v.dropSession()
		}
		lc.Replied(now.Add(backoff(v.e.recovery.Backoff, t.statusFails, v.frng)))
		return
	case rep.Err != nil && rep.Err.Code == mcp.CodeInvalidParams:
		if v.resuming && !lc.Status.Terminal() {
			v.e.noteLostAfterReconnect(t.id) // a finding: bound to the session? (R52)
		}
		lc.Gone(now) // R46: expired, or lost before its ttl
		lc.Replied(now)
		return
	case rep.Err != nil:
		// The server failed the read (-32603, ...): a failed status read like a transport
		// error, backed off the same way, and counted against the status budget.
		t.statusFails++
		lc.Replied(now.Add(backoff(v.e.recovery.Backoff, t.statusFails, v.frng)))
		return
	}
	if v.e.env != nil {
		v.observeModern(rep, t) // vu2026.go
		return
	}
	tk, perr := mcp.ParseTask(rep.Result)
	if perr != nil || !tk.Status.Valid() {
		msg := "no valid task status"
		if perr != nil {
			msg = perr.Error()
		}
		v.malformed(m, m.Name()+" result: "+msg)
		lc.Replied(now)
		return
	}
	v.apply(now, &tk, t)
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
	if !srv.terminal.IsZero() && !srv.created.IsZero() && (v.e.cfg.Result == ResultPoll || v.e.env != nil) && !v.resumed && !t.crashed {
		if adv := Advised(srv.terminal.Sub(srv.created), interval); adv > 0 {
			v.shard.RecordPollAmplification(int64(lc.Polls), int64(adv))
		}
	}
	v.cur = ""
	v.resuming = false
	v.saved = nil
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
