package mockserver

import "sync"

// ledger is the domain system of record. Every domain operation is recorded once its outcome is
// authoritative: its idempotency key, actor (the MCP session that created the work), tenant,
// intended effect (tool + key), downstream receipt, and outcome (applied, failed, rejected). A
// second APPLIED effect for one (tenant, idempotency key) is a duplicate, the evidence the hard
// gate looks for (docs/ARCHITECTURE.md#hard-gate). Operations without a key are counted but cannot
// be deduplicated.
//
// Memory is bounded by the number of distinct keys, not of operations: the ledger keeps,
// per (tenant, key), the task created for the key (idempotent creates, idempotency.go), the
// first applied effect (task, actor, tool, receipt) and counts of operations and applied
// effects (about 200 bytes per key plus the key itself), and global counters by outcome.
// Individual records are not kept. A key's task is held by pointer only while it is in the
// store; after that, by its id.
type ledger struct {
	mu    sync.Mutex
	byKey map[ledgerKey]*keyEntry

	ops         uint64 // operations recorded, every outcome
	applied     uint64 // effects applied (Stats.Effects)
	failed      uint64
	rejected    uint64
	dups        uint64 // applied effects beyond the first per key (Stats.DuplicateEffects)
	afterCancel uint64 // effects of tasks that ended cancelled (see addAfterCancel)
}

type ledgerKey struct{ tenant, key string }

// keyEntry is what the ledger keeps of one idempotency key.
type keyEntry struct {
	first   effectRecord // the first applied effect; outcome is opApplied once applied > 0
	ops     uint32       // operations with this key, every outcome
	applied uint32       // applied effects with this key; > 1 means duplicates

	taskID string // the task created for this key ("" = none yet: only synchronous calls)
	task   *task  // that task while it is in the store; nil once deleted
}

// effectRecord is one domain operation as the ledger sees it.
type effectRecord struct {
	key         string // idempotency key; "" = none
	actor       string // session id of the creator
	tenant      string // "" without an authorization context
	tool        string // intended effect: tool applied to key
	taskID      string // "" for a synchronous call
	receipt     uint64 // downstream receipt; 0 when rejected (never reached the system)
	outcome     opOutcome
	afterCancel bool // its task ended cancelled: applied after the cancel, or before it (effect_first)
}

// record adds one operation and reports whether it was a duplicate applied effect.
func (l *ledger) record(e *effectRecord) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ops++
	switch e.outcome {
	case opApplied:
		l.applied++
		if e.afterCancel {
			l.afterCancel++
		}
	case opFailed:
		l.failed++
	default:
		l.rejected++
	}
	if e.key == "" {
		return false
	}
	ke := l.entryLocked(e.tenant, e.key)
	ke.ops++
	if e.outcome != opApplied {
		return false
	}
	ke.applied++
	if ke.applied == 1 {
		ke.first = *e
		return false
	}
	l.dups++
	return true
}

// entryLocked returns the entry of (tenant, key), making it on first use.
func (l *ledger) entryLocked(tenant, key string) *keyEntry {
	if l.byKey == nil {
		l.byKey = make(map[ledgerKey]*keyEntry)
	}
	k := ledgerKey{tenant, key}
	ke := l.byKey[k]
	if ke == nil {
		ke = &keyEntry{}
		l.byKey[k] = ke
	}
	return ke
}

// addAfterCancel counts an effect applied BEFORE its task was cancelled (effect_first,
// faults.go): the cancel came after the effect, which stays. Effects applied after the
// cancel are counted by record. Each effect is counted once: by whichever of the two
// comes second, both under the task's lock.
func (l *ledger) addAfterCancel(e *effectRecord) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.afterCancel++
	if e.key == "" {
		return
	}
	if ke := l.byKey[ledgerKey{e.tenant, e.key}]; ke != nil && ke.applied > 0 && ke.first.taskID == e.taskID {
		ke.first.afterCancel = true
	}
}

// LedgerCounts are the ledger's counters.
type LedgerCounts struct {
	Operations  uint64 // domain operations recorded, every outcome
	Applied     uint64 // effects that happened
	Failed      uint64 // operations the downstream failed
	Rejected    uint64 // operations the downstream refused (queue full)
	Duplicates  uint64 // applied effects beyond the first for one (tenant, idempotency key)
	AfterCancel uint64 // effects of tasks that ended cancelled (cancel is not rollback): applied after the cancel, or before it (effect_first)
}

func (l *ledger) counts() LedgerCounts {
	l.mu.Lock()
	defer l.mu.Unlock()
	return LedgerCounts{Operations: l.ops, Applied: l.applied, Failed: l.failed, Rejected: l.rejected,
		Duplicates: l.dups, AfterCancel: l.afterCancel}
}

// Effect is what the ledger holds of one idempotency key.
type Effect struct {
	Tenant, Key string
	Operations  int    // operations with this key, every outcome
	Applied     int    // applied effects; more than 1 is a duplicate
	TaskID      string // the first applied effect's task ("" for a synchronous call)
	Actor       string // its session
	Tool        string // its tool
	Receipt     string // its downstream receipt, "ds-N"
	AfterCancel bool   // its task ended cancelled (after or, with effect_first, before the effect)
}

// Effect returns the ledger entry of (tenant, key); ok is false when no operation used it
// (a task created for the key whose work has not reached the ledger yet is no operation).
func (s *Server) Effect(tenant, key string) (e Effect, ok bool) {
	l := &s.ledger
	l.mu.Lock()
	defer l.mu.Unlock()
	ke := l.byKey[ledgerKey{tenant, key}]
	if ke == nil || ke.ops == 0 {
		return Effect{}, false
	}
	e = Effect{Tenant: tenant, Key: key, Operations: int(ke.ops), Applied: int(ke.applied)}
	if ke.applied > 0 {
		f := &ke.first
		e.TaskID, e.Actor, e.Tool, e.AfterCancel = f.taskID, f.actor, f.tool, f.afterCancel
		e.Receipt = receiptID(f.receipt)
	}
	return e, true
}
