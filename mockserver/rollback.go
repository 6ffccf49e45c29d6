package mockserver

import (
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
)

// A rollback drill (scenarios.Rollback, docs/ARCHITECTURE.md#rollback) flips a kill switch in
// the client fleet: from then on no task-augmented call may be sent. The server's side of it
// is evidence: RollBack remembers the instant and the tasks still running, counts every task
// created after it (a fleet that rolled back creates none), and Reconcile says what became
// of the domain operations in flight at the switch, from the ledger, the system of record.

// rollbackState is what RollBack remembers.
type rollbackState struct {
	at       time.Time
	lostAt   uint64  // Stats.TasksLost at the switch
	inFlight []*task // the tasks not terminal at the switch
}

// RollBack marks the switch at now: tasks created from now on are counted
// (Reconciliation.CreatesAfter), and the tasks not yet terminal are kept for Reconcile. With
// restart the server then restarts, as a redeploy of the previous build does (with
// RestartLosesTasks it forgets its tasks, as a build without Tasks would). A second call
// changes nothing.
func (s *Server) RollBack(now time.Time, restart bool) {
	rb := &rollbackState{at: now, lostAt: s.lost.Load()}
	s.store.each(func(t *task) bool {
		t.mu.Lock()
		if !t.status.Terminal() && !t.gone {
			rb.inFlight = append(rb.inFlight, t)
		}
		t.mu.Unlock()
		return true
	})
	if !s.rolledBack.CompareAndSwap(nil, rb) {
		return
	}
	for _, t := range rb.inFlight { // Reconcile reads their keys at the end: past any ledger window
		if t.work.idempotencyKey != "" {
			s.ledger.pin(t.tenant, t.work.idempotencyKey)
		}
	}
	if restart {
		s.restart(now)
	}
}

// Reconciliation is what became of the domain operations in flight at the switch, each
// with its task and idempotency key: applied (the ledger holds its effect), not applied (its
// task ended without one: failed, cancelled, or refused downstream) or unknown (its task is
// still running, or the server lost it, and the ledger holds no effect: nobody can say yet
// whether it will happen).
type Reconciliation struct {
	At         time.Time
	InFlight   int // tasks not terminal at the switch
	Applied    []ReconciledOp
	NotApplied []ReconciledOp
	Unknown    []ReconciledOp
	// CreatesAfter counts the tasks created after the switch: task-augmented calls that a
	// fleet which rolled back should never have sent.
	CreatesAfter uint64
	// TasksLost counts the tasks the server forgot after the switch (a restart with
	// RestartLosesTasks).
	TasksLost uint64
}

// ReconciledOp is one domain operation of a task in flight at the switch.
type ReconciledOp struct {
	TaskID string `json:"task_id"`
	Key    string `json:"idempotency_key,omitempty"` // "" when the call carried none
	Tenant string `json:"tenant,omitempty"`
	// Status is the task's status now, or "lost" when the server forgot it.
	Status string `json:"status"`
}

// Reconcile reconciles the operations in flight at the switch, as of now; nil before
// RollBack. An operation with an idempotency key is applied when the ledger holds an applied
// effect for it; one without a key (the ledger cannot look it up) when its task completed.
func (s *Server) Reconcile() *Reconciliation {
	rb := s.rolledBack.Load()
	if rb == nil {
		return nil
	}
	r := &Reconciliation{At: rb.at, InFlight: len(rb.inFlight), CreatesAfter: s.createdAfterRollback.Load(),
		TasksLost: s.lost.Load() - rb.lostAt}
	for _, t := range rb.inFlight {
		t.mu.Lock()
		status, gone := t.status, t.gone
		t.mu.Unlock()
		op := ReconciledOp{TaskID: t.id, Key: t.work.idempotencyKey, Tenant: t.tenant, Status: status.String()}
		if gone && !status.Terminal() {
			op.Status = "lost"
		}
		applied := status == mcp.StatusCompleted
		if op.Key != "" {
			applied = s.ledger.keyApplied(t.tenant, op.Key)
		}
		switch {
		case applied:
			r.Applied = append(r.Applied, op)
		case status.Terminal():
			r.NotApplied = append(r.NotApplied, op)
		default:
			r.Unknown = append(r.Unknown, op)
		}
	}
	return r
}

// keyApplied reports whether the ledger holds an applied effect for (tenant, key).
func (l *ledger) keyApplied(tenant, key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	ke := l.byKey[ledgerKey{tenant, key}]
	return ke != nil && ke.applied > 0
}
