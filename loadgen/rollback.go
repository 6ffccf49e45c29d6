package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

// A rollback drill (scenarios.Rollback, docs/ARCHITECTURE.md#rollback) flips the fleet's kill
// switch: Engine.RollBack. From then on:
//
//   - no new task-augmented call is sent. New work takes the declared fallback: a plain
//     tools/call (2025-11-25: no task parameter; 2026-07-28: an envelope that does not
//     declare the Tasks extension) when the scenario's fallback is sync and the tool does
//     not require tasks, else a refusal the client counts and sends nothing for;
//   - a create that had no reply is not sent again (a retry would be a task-augmented call):
//     it is reconciled by key or lands on the reconciliation list;
//   - every task created before the switch is watched by its own client, polled to its end,
//     and cancelled only with RollbackPolicy.Cancel (its planned cancel is not sent
//     otherwise);
//   - what became of those tasks is counted: a known outcome, unknown on the reconciliation
//     list, or unknown and off it (the server stopped knowing the task: -32602 before a
//     terminal status, before its ttl ran out).
//
// The switch is ordered with creates: a create decides and sends under the read lock, the
// switch takes the write lock. A create is thus before the switch (its task is watched) or
// after it (it takes the fallback), never both; and a task-augmented call seen on the way
// out after the switch (RollbackStats.CreatesAfter) is a bug of this client, counted as the
// server would count it.

// RollbackPolicy says how the clients behave once the switch flips (Config.Rollback).
type RollbackPolicy struct {
	// On says the scenario rehearses a rollback: the switch may flip.
	On bool
	// Cancel cancels the tasks created before the switch; false: they are only polled,
	// and their planned cancels are not sent.
	Cancel bool
	// OnSwitch, when set, is called once with the switch's instant (the embedded server's
	// side of the drill: mockserver.Server.RollBack).
	OnSwitch func(at time.Time)
}

// RollbackStats is what the drill showed on the client side (results.Rollback).
type RollbackStats struct {
	Trigger string    // what flipped the switch; "" = it never flipped
	At      time.Time // when
	// CreatesAfter counts the task-augmented tools/call sent after the switch, as they went
	// out; TasksAfter the tasks a server returned for a plain call after it (no client asked
	// for one).
	CreatesAfter, TasksAfter int64
	// PreSwitch counts the tasks created before the switch and still running at it; of
	// those, Settled ended with a known outcome, Listed ended unknown on the reconciliation
	// list, and Unlisted were lost by the server (UnlistedSample: some of their ids).
	PreSwitch, Settled, Listed, Unlisted int64
	UnlistedSample                       []string
	Cancelled                            int64         // pre-switch tasks cancelled by the watcher
	Drain                                time.Duration // switch -> the last pre-switch task's end; -1 = not every one ended
	// FallbackCalls and FallbackErrors count the plain tools/call new work took after the
	// switch and those that failed as requests; Refused the new work the client refused.
	FallbackCalls, FallbackErrors, Refused int64
}

// rollbackCounts are the drill's counters, written by every client.
type rollbackCounts struct {
	createsAfter, tasksAfter             atomic.Int64
	pre, settled, listed, lost, cut      atomic.Int64
	cancelled                            atomic.Int64
	fallbackCalls, fallbackErrs, refused atomic.Int64
	lastEnd                              atomic.Int64 // UnixNano of the latest pre-switch task's end
}

// rollbackState is the switch and its counts.
type rollbackState struct {
	mu sync.RWMutex // creates decide and send under R; the switch takes W
	on atomic.Bool  // the switch has flipped: new work takes the fallback
	// past is set at the switch's instant, before RollbackPolicy.OnSwitch runs and on is
	// set: a poll already in flight may end its task while OnSwitch runs (a restarted server
	// answers it "unknown"), and that task was running at the switch.
	past    atomic.Bool
	at      time.Time // set under mu
	trigger string    // set under mu
	plain   bool      // new work may take a plain call (fallback sync, tool not requiring tasks)
	// dialer opens the connections of the plain calls where the era makes them on
	// connections of their own (client.PlainDialer, 2026-07-28: the envelope without the
	// extension); nil: on the client's own.
	dialer client.Dialer

	c        rollbackCounts
	sampleMu sync.Mutex
	sample   []string
}

// unlistedSampleMax bounds RollbackStats.UnlistedSample.
const unlistedSampleMax = 20

// setupRollback prepares the drill when the policy is on: the plain call's params per tenant
// and, in 2026-07-28, the envelope without the Tasks extension.
func (e *Engine) setupRollback(t *client.Target, m *client.Manifest) error {
	if !e.cfg.Rollback.On {
		return nil
	}
	rb := &rollbackState{plain: e.cfg.Fallback == client.FallbackSync && m.TaskSupport != string(mcp.TaskRequired)}
	if pd, ok := e.dialer.(client.PlainDialer); ok {
		d, err := pd.Plain(t)
		if err != nil {
			return err
		}
		rb.dialer = d
	}
	for _, ten := range e.tenants {
		p, err := plainParams(ten.callParams)
		if err != nil {
			return fmt.Errorf("rollback: %w", err)
		}
		ten.plainParams = p
	}
	e.rb = rb
	return nil
}

// plainParams is a create's tools/call params without the task parameter.
func plainParams(call []byte) ([]byte, error) {
	var p map[string]json.RawMessage
	if err := json.Unmarshal(call, &p); err != nil {
		return nil, err
	}
	delete(p, "task")
	return json.Marshal(p)
}

// RollBack flips the kill switch, once: trigger says why ("at 5s", a failed threshold). It
// waits for the creates being sent to go out, calls RollbackPolicy.OnSwitch, and flips.
// Without a rollback policy it does nothing.
func (e *Engine) RollBack(trigger string) {
	rb := e.rb
	if rb == nil {
		return
	}
	rb.mu.Lock()
	if rb.on.Load() {
		rb.mu.Unlock()
		return
	}
	rb.at, rb.trigger = time.Now(), trigger
	rb.past.Store(true)
	if f := e.cfg.Rollback.OnSwitch; f != nil {
		f(rb.at) // before any client can act on the switch: the server sees what was in flight
	}
	rb.on.Store(true)
	rb.mu.Unlock()
}

// RolledBack reports whether the switch has flipped.
func (e *Engine) RolledBack() bool { return e.rb != nil && e.rb.on.Load() }

// Rollback returns the drill's counts; nil without a rollback policy.
func (e *Engine) Rollback() *RollbackStats {
	rb := e.rb
	if rb == nil {
		return nil
	}
	rb.mu.RLock()
	st := RollbackStats{Trigger: rb.trigger, At: rb.at}
	rb.mu.RUnlock()
	c := &rb.c
	st.CreatesAfter, st.TasksAfter = c.createsAfter.Load(), c.tasksAfter.Load()
	st.PreSwitch, st.Settled, st.Listed, st.Unlisted = c.pre.Load(), c.settled.Load(), c.listed.Load(), c.lost.Load()
	st.Cancelled = c.cancelled.Load()
	st.FallbackCalls, st.FallbackErrors, st.Refused = c.fallbackCalls.Load(), c.fallbackErrs.Load(), c.refused.Load()
	st.Drain = -1
	if end := c.lastEnd.Load(); st.PreSwitch > 0 && c.cut.Load() == 0 && end > 0 {
		st.Drain = max(0, time.Unix(0, end).Sub(st.At))
	}
	rb.sampleMu.Lock()
	st.UnlistedSample = append([]string(nil), rb.sample...)
	rb.sampleMu.Unlock()
	return &st
}

// beforeCreate is called before each attempt of a create, the first with first: it takes the
// read lock (released by afterCreate) unless the switch has flipped, and reports whether the
// create may go on. The first attempt of a task after the switch takes the fallback instead;
// a later attempt (a retry) is not sent.
func (v *vu) beforeCreate(t *taskState, first bool) bool {
	rb := v.e.rb
	if rb == nil {
		return true
	}
	rb.mu.RLock()
	if !rb.on.Load() {
		if first {
			t.preSwitch = true
		}
		return true
	}
	rb.mu.RUnlock()
	return false
}

// afterCreate releases what beforeCreate took when it let the attempt go.
func (v *vu) afterCreate() {
	if rb := v.e.rb; rb != nil {
		rb.mu.RUnlock()
	}
}

// fallback runs new work after the switch: a plain tools/call, or a counted refusal. It
// reports no task to follow.
func (v *vu) fallback(ctx context.Context, t *taskState) {
	e := v.e
	rb := e.rb
	if !rb.plain {
		rb.c.refused.Add(1)
		v.holdOff(0) // nothing is sent: the client waits as after a refused create
		return
	}
	cr, rep, err := v.plainCall(ctx, rb)
	rb.c.fallbackCalls.Add(1)
	if o, _, _ := classify(mcp.OpToolsCall, rep, err); o.IsError() {
		rb.c.fallbackErrs.Add(1)
	}
	if err != nil || rep.Err != nil {
		v.holdOff(0)
		return
	}
	task, plain, perr := cr.Task, cr.Call, cr.Malformed
	if cr.Input != nil {
		perr = errors.New("the server asked for input on a plain call after the rollback; not answered")
	}
	switch {
	case task != nil:
		rb.c.tasksAfter.Add(1) // the server made a task of a plain call: not followed
	case perr != nil:
		rb.c.fallbackErrs.Add(1) // counted ok above: the reply did not decode
		v.malformed(mcp.OpToolsCall, "tools/call result after the rollback: "+perr.Error())
	case plain.IsError:
		v.shard.Add(metrics.SyncCalls, 1)
		v.shard.Add(metrics.TasksFailed, 1)
		v.shard.RecordDuration(metrics.TaskE2E, time.Since(t.intended))
	default:
		v.shard.Add(metrics.SyncCalls, 1)
		v.shard.Add(metrics.TasksCompleted, 1)
		v.shard.RecordDuration(metrics.TaskE2E, time.Since(t.intended))
	}
}

// plainCall sends the tenant's plain call (a create without the task parameter) on the
// client's connection, or on one of rb.dialer's where the era has them. It is not counted
// by countAugmented: it asks for no task.
func (v *vu) plainCall(ctx context.Context, rb *rollbackState) (client.Created, client.Reply, error) {
	var cr client.Created
	x := func(ctx context.Context, c client.Conn) (rep client.Reply, err error) {
		cr, rep, err = c.Create(ctx, v.ten.plainParams, nil, client.CutNone)
		return rep, err
	}
	if rb.dialer != nil {
		saved := v.conn
		c, err := rb.dialer.Dial(ctx, v.ten.target)
		if err != nil {
			return cr, client.Reply{}, err
		}
		v.conn = c
		defer func() { v.conn = saved }()
	}
	rep, err := v.call(ctx, mcp.OpToolsCall, time.Time{}, x)
	return cr, rep, err
}

// countAugmented counts a tools/call sent after the switch that asks for a task: what the
// server would see. params are the call's params, on a connection of the run's era.
func (v *vu) countAugmented(params []byte) {
	rb := v.e.rb
	if rb == nil || !rb.on.Load() {
		return
	}
	augmented := false
	if !v.e.traits.TaskParam {
		augmented = v.e.traits.AsksTasks
	} else {
		var p struct {
			Task json.RawMessage `json:"task"`
		}
		augmented = json.Unmarshal(params, &p) == nil && len(bytes.TrimSpace(p.Task)) > 0 && string(p.Task) != "null"
	}
	if augmented {
		rb.c.createsAfter.Add(1)
	}
}

// watch adjusts a pre-switch task's cancel once the switch has flipped, and reports whether
// it did: with RollbackPolicy.Cancel the task is cancelled now, else a planned cancel not
// yet sent is dropped.
func (v *vu) watch(t *taskState) bool {
	rb := v.e.rb
	if rb == nil || !t.preSwitch || t.watched || !rb.on.Load() {
		return false // without a drill, nothing more on a poll's path than this test
	}
	t.watched = true
	lc := &v.lc
	if !lc.CancelSentAt.IsZero() || lc.Status.Terminal() {
		return false
	}
	if v.e.cfg.Rollback.Cancel {
		lc.CancelAt = time.Now()
		rb.c.cancelled.Add(1)
		return true
	}
	changed := !lc.CancelAt.IsZero()
	lc.CancelAt = time.Time{}
	return changed
}

// endPreSwitch counts how a task created before the switch ended, once the switch's instant
// has passed (a task that ended before it was no concern of the watcher).
func (v *vu) endPreSwitch(now time.Time, t *taskState, reason string) {
	rb := v.e.rb
	if rb == nil || !t.preSwitch || !rb.past.Load() {
		return
	}
	c := &rb.c
	c.pre.Add(1)
	switch v.lc.Outcome {
	case OutcomeCompleted, OutcomeFailed, OutcomeCancelled:
		c.settled.Add(1)
	case OutcomeExpired:
		c.settled.Add(1) // its ttl ran out: an outcome the contract allows
	case OutcomeLost:
		// The server stopped knowing it before its ttl ran out (Lifecycle.Gone): lost. The
		// recovery gate lists it for reconciliation; the rollback gate names it unlisted, as
		// no watcher of the switch could settle it.
		c.lost.Add(1)
		rb.sampleMu.Lock()
		if len(rb.sample) < unlistedSampleMax {
			rb.sample = append(rb.sample, t.id)
		}
		rb.sampleMu.Unlock()
	default: // result lost, or unknown: on the reconciliation list with its key and why
		c.listed.Add(1)
		if reason == ReasonStopped {
			c.cut.Add(1)
		}
	}
	for n := now.UnixNano(); ; {
		last := c.lastEnd.Load()
		if n <= last || c.lastEnd.CompareAndSwap(last, n) {
			break
		}
	}
}
