package mockserver

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
)

// Backpressure (Config.Backpressure): what a task-augmented tools/call meets when the server
// is full. The server is full when any of these holds:
//
//	max_tasks             non-terminal tasks >= MaxTasks                 (MaxTasks > 0)
//	max_tasks_per_tenant  non-terminal tasks of the caller's tenant
//	                      >= MaxTasksPerTenant                           (MaxTasksPerTenant > 0)
//	executor              running == Workers and queued >= Queue         (Workers > 0)
//
// so with W workers and a queue of Q, W+Q concurrent creates are accepted and the (W+Q+1)-th
// meets WhenFull:
//
//	refuse_rpc           JSON-RPC error -32603 "server at capacity: <which cap>"; no task
//	refuse_429           HTTP 429, Retry-After (RetryAfter, whole seconds rounded up, >= 1),
//	                     and the same JSON-RPC error as the body; no task
//	queue                the task is accepted and queued behind the others
//	raise_poll_interval  as queue, and while the server is full every task reply advertises
//	                     RaisedPollInterval
//
// A refused create counts in Stats.Refusals by its cause (the first that holds, in the order
// above). Rate limits are separate: ratelimit.go.

// whenFull is Backpressure.WhenFull resolved.
type whenFull uint8

const (
	fullRefuseRPC whenFull = iota
	fullRefuse429
	fullQueue
	fullRaisePoll
)

// refusal is the cap that refused a create.
type refusal uint8

const (
	refusedNone refusal = iota
	refusedMaxTasks
	refusedTenant
	refusedExecutor
	numRefusals
)

// Refusals counts creates refused because the server was full, by cause.
type Refusals struct {
	MaxTasks          uint64 // non-terminal tasks reached Backpressure.MaxTasks
	MaxTasksPerTenant uint64 // the caller's tenant reached Backpressure.MaxTasksPerTenant
	Executor          uint64 // every worker busy and the queue full
}

// Total is the number of refused creates.
func (r Refusals) Total() uint64 { return r.MaxTasks + r.MaxTasksPerTenant + r.Executor }

// problems reports every problem with the backpressure knobs.
func (b Backpressure) problems() []error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if b.MaxTasks < 0 || b.MaxTasksPerTenant < 0 || b.Workers < 0 || b.Queue < 0 || b.Burst < 0 {
		add("backpressure: max_tasks, max_tasks_per_tenant, workers, queue and burst must not be negative")
	}
	if b.Queue > 0 && b.Workers == 0 {
		add("backpressure.queue needs workers > 0 (without workers every task runs at once)")
	}
	switch b.WhenFull {
	case "", "refuse_rpc", "refuse_429", "queue", "raise_poll_interval":
	default:
		add(`backpressure.when_full must be "refuse_rpc", "refuse_429", "queue" or "raise_poll_interval", got %q`, b.WhenFull)
	}
	if b.RetryAfter < 0 || b.RaisedPollInterval < 0 {
		add("backpressure: retry_after and raised_poll_interval must not be negative")
	}
	for _, r := range []struct {
		n string
		v float64
	}{{"get_rate_per_client", b.GetRatePerClient}, {"get_rate_per_tenant", b.GetRatePerTenant},
		{"create_rate_per_client", b.CreateRatePerClient}, {"create_rate_per_tenant", b.CreateRatePerTenant}} {
		if !(r.v >= 0) || math.IsInf(r.v, 1) {
			add("backpressure.%s must be a finite rate >= 0, got %v", r.n, r.v)
		}
	}
	return errs
}

// overloaded reports whether the server is full now (any cap reached, or every worker busy
// and the queue at or beyond its size). It is one atomic load: the pollInterval policy may
// call it on every reply.
func (s *core) overloaded() bool { return s.exec.full.Load() }

// executorQueueDepth is the number of tasks waiting for a worker (the queue_depth signal).
func (s *core) executorQueueDepth() int { return int(s.exec.nQueued.Load()) }

// refuseCreate answers a create the server is too full to take, as WhenFull says.
func (s *core) refuseCreate(c *call, why refusal, t *task) {
	x := &s.exec
	var msg string
	switch why {
	case refusedMaxTasks:
		msg = fmt.Sprintf("server at capacity: %d non-terminal tasks (max_tasks %d)", x.maxTasks, x.maxTasks)
	case refusedTenant:
		msg = fmt.Sprintf("server at capacity: tenant %q has %d non-terminal tasks (max_tasks_per_tenant %d)", t.tenant, x.maxPerTenant, x.maxPerTenant)
	default:
		msg = fmt.Sprintf("server at capacity: all %d workers busy and %d tasks queued (workers %d, queue %d)", x.workers, x.queueCap, x.workers, x.queueCap)
	}
	e := &mcp.Error{Code: mcp.CodeInternalError, Message: msg}
	if x.mode == fullRefuse429 {
		c.tooMany(s.cfg.Backpressure.RetryAfter, e)
		return
	}
	c.reply(nil, e)
}

// tooMany answers c with HTTP 429, Retry-After in whole seconds (rounded up, at least 1) and
// e as the JSON-RPC error body.
func (c *call) tooMany(retry time.Duration, e *mcp.Error) {
	if !c.replyLatency() {
		return
	}
	c.srv.rejectedIn(c.era(), c.r, c.op, http.StatusTooManyRequests) // requests.go
	c.w.Header().Set("Retry-After", strconv.FormatInt(retryAfterSeconds(retry), 10))
	writeJSONError(c.w, http.StatusTooManyRequests, c.msg.ID, e)
}

// retryAfterSeconds is d in whole seconds, rounded up, at least 1.
func retryAfterSeconds(d time.Duration) int64 {
	secs := int64((d + time.Second - 1) / time.Second)
	return max(secs, 1)
}

// queuedMessage is the statusMessage of a queued task: its position is 1 + the tasks queued
// ahead of it that have not started, been cancelled or expired. ok is false when t is no
// longer queued.
func (x *executor) queuedMessage(t *task) (string, bool) {
	pos, ok := x.position(t)
	if !ok {
		return "", false
	}
	return "queued (position " + strconv.FormatUint(pos, 10) + "): waiting for a worker", true
}

// refusalCounts snapshots the refusal counters.
func (x *executor) refusalCounts() Refusals {
	return Refusals{
		MaxTasks:          x.refused[refusedMaxTasks].Load(),
		MaxTasksPerTenant: x.refused[refusedTenant].Load(),
		Executor:          x.refused[refusedExecutor].Load(),
	}
}

// refusedCounter is one counter per refusal cause.
type refusedCounter [numRefusals]atomic.Uint64

// initBackpressure builds the executor, the rate limits and the downstream from s.cfg.
func (s *core) initBackpressure() {
	s.exec.init(s.cfg.Backpressure, s.cfg.PollInterval)
	s.limits = newLimits(s.cfg.Backpressure)
	s.down.init(s.cfg.Downstream)
	s.queueDepth = s.executorQueueDepth // the adaptive pollInterval signal queue_depth
}

// BackpressureStats are the counters of backpressure, rate limits, the downstream system
// and the ledger. The gauges (QueueDepth, DownstreamInFlight, DownstreamQueueDepth) are
// levels now: the run's collector samples them each interval.
type BackpressureStats struct {
	TasksActive          int64    // non-terminal tasks admitted (what MaxTasks caps)
	QueueDepth           int64    // tasks waiting for an executor worker
	Overloaded           bool     // full now (backpressure.go): raise_poll_interval raises
	Refusals             Refusals // creates refused because the server was full, by cause
	RateLimited          uint64   // requests answered 429 by a rate limit
	DownstreamInFlight   int64    // operations holding a downstream slot
	DownstreamQueueDepth int64    // operations waiting for a downstream slot
	DownstreamRejections uint64   // operations rejected: the downstream queue was full
	DownstreamFailures   uint64   // operations the downstream failed (FailureRate)
	EffectsAfterCancel   uint64   // effects applied after their task was cancelled
	Ledger               LedgerCounts
}

func (s *core) backpressureStats(lc LedgerCounts) BackpressureStats {
	x := &s.exec
	x.mu.Lock()
	active := int64(x.active)
	x.mu.Unlock()
	return BackpressureStats{
		TasksActive:          active,
		QueueDepth:           x.nQueued.Load(),
		Overloaded:           x.full.Load(),
		Refusals:             x.refusalCounts(),
		RateLimited:          s.limits.rateLimited(),
		DownstreamInFlight:   s.down.nInFlight.Load(),
		DownstreamQueueDepth: s.down.nWaiting.Load(),
		DownstreamRejections: s.down.rejections.Load(),
		DownstreamFailures:   s.down.failures.Load(),
		EffectsAfterCancel:   lc.AfterCancel,
		Ledger:               lc,
	}
}
