package mockserver

import (
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
)

// Idempotent creates (always on). A valid task-augmented tools/call whose arguments carry
// an idempotency_key that its tenant has already used starts no new work, whatever its tool
// and other arguments:
//
//	the key's task is in the store   CreateTaskResult of that task as it is now (same
//	                                 taskId, current status); no domain effect recorded
//	                                 (Stats.IdempotentReplays)
//	the key's task is gone           JSON-RPC error -32602: the key was used by a task that
//	(expired, early_expiry, lost)    no longer exists; the work is never started again
//	                                 (Stats.IdempotentExpired)
//
// Keys are per tenant ("" without tokens): the same key in another tenant is another key,
// and a reply never names another tenant's task (R52, R53). The key -> task index lives in
// the ledger's per-key entries, so a key is remembered for the ledger's window (ledger.go),
// and like the ledger it survives restarts. Synchronous calls are not deduplicated (they have no task to
// answer with); their effects still count in the ledger.
//
// A replay is checked before admission, so a full server still answers it; a race of two
// creates with one key is settled after admission (claim), and the loser gives its worker
// back and is answered as a replay.
//
// With Faults.NonIdempotent (known-bad) a repeated key starts the work again (a second
// domain effect: a ledger duplicate, which the hard gate catches), the key stays bound to
// its first task, and LookupKey finds nothing.

// keyTask returns the task bound to (tenant, key): t while it is in the store, its id, and
// ok false when the key names no task.
func (l *ledger) keyTask(tenant, key string) (t *task, id string, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ke := l.byKey[ledgerKey{tenant, key}]
	if ke == nil || ke.taskID == "" {
		return nil, "", false
	}
	return ke.task, ke.taskID, true
}

// claim binds t's key to t unless the key names a task already; it then returns that task
// (nil when no longer stored), its id, and ok false.
func (l *ledger) claim(t *task) (prev *task, prevID string, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	ke := l.entryLocked(ledgerKey{t.tenant, t.work.idempotencyKey}, now)
	if ke.taskID != "" {
		return ke.task, ke.taskID, false
	}
	ke.taskID, ke.task, ke.last = t.id, t, now.UnixNano() // queued when t leaves the store (unbind)
	return nil, "", true
}

// unbind drops the ledger's pointer to t, which left the store; its key keeps t's id for
// the window from now (ledger.go).
func (l *ledger) unbind(t *task) {
	if t.work.idempotencyKey == "" {
		return
	}
	l.mu.Lock()
	k := ledgerKey{t.tenant, t.work.idempotencyKey}
	if ke := l.byKey[k]; ke != nil && ke.task == t {
		ke.task = nil
		l.touchLocked(k, ke, l.clock.Now())
	}
	l.mu.Unlock()
}

// replay answers a create whose key names prev (nil when no longer stored, id prevID).
func (s *core) replay(c *call, key string, prev *task, prevID string) {
	if prev != nil {
		prev.mu.Lock()
		if !prev.gone {
			b := c.fe.appendCreateLocked(prev, nil)
			prev.mu.Unlock()
			s.replays.Add(1)
			c.reply(b, nil)
			return
		}
		prev.mu.Unlock()
	}
	s.replayExpired.Add(1)
	c.reply(nil, mcp.Errorf(mcp.CodeInvalidParams,
		"idempotency_key %q was already used by task %s, which no longer exists (expired); the work is not started again: use a new key", key, prevID))
}

// bindKey settles the key of t, admitted but not yet stored: it reports false when t lost
// to an earlier task with its key (t's admission is released and c answered with that
// task). With NonIdempotent a repeated key is counted as a fault and t goes ahead.
func (s *core) bindKey(c *call, t *task, now time.Time) bool {
	prev, prevID, ok := s.ledger.claim(t)
	switch {
	case ok:
		return true
	case s.faults.nonIdem:
		s.injected(faultNonIdempotent, now, t.id)
		return true
	}
	s.exec.release(t) // it never ran: its worker or queue place goes to the next
	s.replay(c, t.work.idempotencyKey, prev, prevID)
	return false
}

// LookupKey returns the id of the task created for idempotency key by tenant (the tenant
// name, as in Config.Tokens' values; "" without tokens), as long as the server remembers
// the key: even after the task has ended or been deleted. It is the embedded server's
// reconciliation lookup for creates whose reply was lost. With Faults.NonIdempotent it finds
// nothing.
func (s *Server) LookupKey(tenant, key string) (taskID string, ok bool) {
	if s.faults.nonIdem || key == "" {
		return "", false
	}
	_, id, ok := s.ledger.keyTask(tenant, key)
	return id, ok
}
