package loadgen

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

// cleanupProber measures cleanup_lag on a target whose task records tasksim cannot see
// (docs/METRICS.md#cleanup_lag): for a sample of finished tasks it waits until the task's expiry
// (createdAt + ttl, on the server's clock), then polls tasks/get every step until the
// server answers -32602 (R46). The lag is the first "not found" minus the expiry instant.
// The two clocks are assumed to agree, so the figure is approximate; the embedded server
// reports the exact one from its store instead.
type cleanupProber struct {
	e       *Engine
	every   int64         // probe one task in every `every` finished ones
	step    time.Duration // gap between probe polls
	maxWait time.Duration // give up this long after expiry
	seen    atomic.Int64
	slots   chan struct{} // bounds the probes running at once

	// sessMu guards sess, and is held while it is opened: the probes wait for one session,
	// and nothing else ever waits on a network exchange.
	sessMu sync.Mutex
	sess   client.Conn

	mu      sync.Mutex // guards waiting and stats, briefly: clients take it at a task's end
	wg      sync.WaitGroup
	waiting map[*probeRun]struct{} // probes started and not ended
	stats   CleanupProbeStats
}

// CleanupProbeStats counts the cleanup_lag probes that could not measure.
type CleanupProbeStats struct {
	// Cut: the run ended before the task's expiry (its ttl outlasts the grace period).
	Cut int64 `json:"cut"`
	// Blind: the probe's own session could not see the task before its expiry (tasks/get
	// -32602): the target binds tasks to the session that created them, so a separate
	// session cannot watch a record's cleanup.
	Blind int64 `json:"blind"`
	// Failed: a read failed (no session, a transport failure, another JSON-RPC error on the
	// first read, which stops the probe before it waits for the expiry).
	Failed int64 `json:"failed"`
	// TimedOut: the record was still there 2 minutes after its expiry: its cleanup lag is
	// beyond what the probe waits for.
	TimedOut int64 `json:"timed_out"`
}

// probeRun is one probe under way: the expiry it waits for, and how to end it early.
type probeRun struct {
	expiry time.Time
	cancel context.CancelFunc
}

// probeSlots bounds concurrent probes; a probe that finds none free is skipped.
const probeSlots = 32

func newCleanupProber(e *Engine, every int) *cleanupProber {
	return &cleanupProber{e: e, every: int64(every), step: 250 * time.Millisecond,
		maxWait: 2 * time.Minute, slots: make(chan struct{}, probeSlots)}
}

// consider probes the task if it is in the sample, its ttl is finite, and a slot is free.
// It returns at once; the probe runs until the task vanishes, maxWait passes or ctx ends.
func (p *cleanupProber) consider(ctx context.Context, taskID string, created time.Time, ttl *mcp.Ms) {
	if p == nil || ttl == nil || created.IsZero() || p.seen.Add(1)%p.every != 0 {
		return
	}
	select {
	case p.slots <- struct{}{}:
	default:
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	run := &probeRun{expiry: created.Add(ttl.Duration()), cancel: cancel}
	p.mu.Lock()
	if p.waiting == nil {
		p.waiting = map[*probeRun]struct{}{}
	}
	p.waiting[run] = struct{}{}
	p.mu.Unlock()
	p.wg.Go(func() {
		defer func() {
			cancel()
			p.mu.Lock()
			delete(p.waiting, run)
			p.mu.Unlock()
			<-p.slots
		}()
		p.probe(ctx, taskID, run)
	})
}

// cut ends the probes whose task expires after end, the instant the run's work ends: once
// no task is in flight, a probe that cannot see its expiry before then would only hold the
// drain open until the grace period is over, and measure nothing. It returns how many it
// ended; the others run on.
func (p *cleanupProber) cut(end time.Time) int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for run := range p.waiting {
		if run.expiry.After(end) {
			run.cancel()
			delete(p.waiting, run)
			n++
		}
	}
	p.stats.Cut += int64(n)
	return n
}

// counts returns what the probes could not measure.
func (p *cleanupProber) counts() CleanupProbeStats {
	if p == nil {
		return CleanupProbeStats{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

func (p *cleanupProber) probe(ctx context.Context, taskID string, run *probeRun) {
	expiry := run.expiry
	ref := client.NewTaskRef(taskID)
	if !p.sees(ctx, ref, run) {
		return
	}
	if !sleepUntil(ctx, expiry) {
		return
	}
	deadline := expiry.Add(p.maxWait)
	for time.Now().Before(deadline) {
		s, err := p.session(ctx)
		if err != nil {
			if ctx.Err() == nil {
				p.count(run, &p.stats.Failed)
			}
			return
		}
		rctx, cancel := context.WithTimeout(ctx, p.e.cfg.timeout())
		_, rep, err := s.Get(rctx, ref)
		cancel()
		now := time.Now()
		switch {
		case errors.Is(err, client.ErrSessionGone):
			p.drop(s)
		case err == nil && rep.Err != nil && rep.Err.Code == mcp.CodeInvalidParams:
			p.e.rec.Shard(0).RecordDuration(metrics.CleanupLag, max(0, now.Sub(expiry)))
			return
		}
		if !sleepUntil(ctx, now.Add(p.step)) {
			return
		}
	}
	p.count(run, &p.stats.TimedOut)
}

// sees reports whether the prober's session sees the task before its expiry: if it does
// not, a "not found" after the expiry would say nothing about the cleanup, and the probe
// is counted blind (unless cut has counted it already).
func (p *cleanupProber) sees(ctx context.Context, ref client.TaskRef, run *probeRun) bool {
	s, err := p.session(ctx)
	if err == nil {
		rctx, cancel := context.WithTimeout(ctx, p.e.cfg.timeout())
		var rep client.Reply
		_, rep, err = s.Get(rctx, ref)
		cancel()
		switch {
		case err == nil && rep.Err == nil:
			return true
		case err == nil && rep.Err.Code == mcp.CodeInvalidParams:
			p.count(run, &p.stats.Blind)
			return false
		case errors.Is(err, client.ErrSessionGone):
			p.drop(s)
		}
	}
	if ctx.Err() == nil { // not the run's end: the read itself failed
		p.count(run, &p.stats.Failed)
	}
	return false
}

// count adds one to n (a field of p.stats) for run, unless cut has counted it already.
func (p *cleanupProber) count(run *probeRun, n *int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, still := p.waiting[run]; still {
		delete(p.waiting, run)
		*n++
	}
}

// session returns the prober's own session, opening it on first use within the request
// timeout.
func (p *cleanupProber) session(ctx context.Context) (client.Conn, error) {
	p.sessMu.Lock()
	defer p.sessMu.Unlock()
	if p.sess != nil {
		return p.sess, nil
	}
	ctx, cancel := context.WithTimeout(ctx, p.e.cfg.timeout())
	defer cancel()
	s, err := p.e.dialer.Dial(ctx, p.e.target) // 2026-07-28: nothing to open
	if err != nil {
		return nil, err
	}
	p.sess = s
	return s, nil
}

func (p *cleanupProber) drop(s client.Conn) {
	p.sessMu.Lock()
	if p.sess == s {
		p.sess = nil
	}
	p.sessMu.Unlock()
}

// wait lets running probes end (they stop with their context) and closes the session.
func (p *cleanupProber) wait(ctx context.Context) {
	if p == nil {
		return
	}
	p.wg.Wait()
	p.sessMu.Lock()
	defer p.sessMu.Unlock()
	if p.sess != nil {
		ctx, cancel := context.WithTimeout(ctx, p.e.cfg.timeout())
		defer cancel()
		_ = p.sess.Close(ctx)
		p.sess = nil
	}
}
