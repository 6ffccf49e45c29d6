package mockserver

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/tasksim/tasksim/internal/clock"
)

// ledger is the domain system of record. Every domain operation is recorded once its outcome is
// authoritative: its idempotency key, actor (the MCP session that created the work), tenant,
// intended effect (tool + key), downstream receipt, and outcome (applied, failed, rejected). A
// second APPLIED effect for one (tenant, idempotency key) is a duplicate, the evidence the hard
// gate looks for (docs/ARCHITECTURE.md#hard-gate). Operations without a key are counted but cannot
// be deduplicated.
//
// Memory is bounded by the keys used within a window, not by every key ever used: the ledger
// keeps, per (tenant, key), the task created for the key (idempotent creates,
// idempotency.go), the first applied effect (task, actor, tool, receipt) and counts of
// operations and applied effects, and global counters by outcome. Individual records are not
// kept. A key's task is held by pointer only while it is in the store; after that, by its id.
//
// A key is remembered while its task is in the store and for the window after its last use
// (an operation, a create, its task leaving the store), then forgotten: its entry folds into
// the global counters (LedgerCounts.Forgotten). Within the window a repeated key is answered with its
// task (or refused as expired) and a second effect is a duplicate; beyond it a repeated key
// is a new key, and a duplicate is out of the ledger's sight (docs/SERVER.md#ledger-window).
// The window is Config.LedgerWindow, by default the largest ttl granted so far (at least
// DefaultTTL, at most MaxTTL): a key outlives every task that could answer it, so a client
// retrying within its deadline is deduplicated. Forgetting runs at every reaper tick and, a
// few entries at a time, at every new key, so the bound holds without a reaper too.
type ledger struct {
	mu    sync.Mutex
	byKey map[ledgerKey]*keyEntry
	aging agingQueue // the keys, in the order their windows run out (about)

	clock   clock.Clock   // the server's (clock.go)
	window  time.Duration // Config.LedgerWindow; 0 = the largest ttl granted (maxTTL)
	maxTTL  atomic.Int64  // the largest finite ttl granted so far, in ns (grant)
	ttlCap  time.Duration // Config.MaxTTL: maxTTL never exceeds it
	forgot  uint64        // keys forgotten after their window (LedgerCounts.Forgotten)
	peakLen int           // the most keys held at once

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

	last   int64 // the key's last use, Unix ns: its window runs from here
	queued bool  // the key has a place in the aging queue
	pinned bool  // never forgotten: the key of an operation a rollback drill reconciles (pin)
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
	k := ledgerKey{e.tenant, e.key}
	now := l.clock.Now()
	ke := l.entryLocked(k, now)
	l.touchLocked(k, ke, now)
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

// entryLocked returns the entry of (tenant, key), making it on first use. A new entry first
// forgets a few keys whose window has run out (forgetLocked).
func (l *ledger) entryLocked(k ledgerKey, now time.Time) *keyEntry {
	if l.byKey == nil {
		l.byKey = make(map[ledgerKey]*keyEntry)
	}
	ke := l.byKey[k]
	if ke == nil {
		l.forgetLocked(now, forgetPerNewKey)
		ke = &keyEntry{}
		l.byKey[k] = ke
		l.peakLen = max(l.peakLen, len(l.byKey))
	}
	return ke
}

// forgetPerNewKey is how many expired keys each new key forgets at most: more than one, so
// that forgetting outpaces a steady arrival of keys without a reaper.
const forgetPerNewKey = 2

// touchLocked marks ke (of k) used at now. A key whose task is not stored (gone, or none:
// synchronous calls) gets a place in the aging queue if it has none; a stored task's key
// gets one when the task leaves the store (unbind). So slots are pushed about in the order
// of their due times, and a key is forgotten within a reaper tick of its window's end.
func (l *ledger) touchLocked(k ledgerKey, ke *keyEntry, now time.Time) {
	ke.last = now.UnixNano()
	if !ke.queued && ke.task == nil {
		ke.queued = true
		l.aging.push(agingSlot{k: k, due: ke.last + int64(l.windowNow())})
	}
}

// windowNow is the window in effect: Config.LedgerWindow, or the largest ttl granted so far.
func (l *ledger) windowNow() time.Duration {
	if l.window > 0 {
		return l.window
	}
	return time.Duration(l.maxTTL.Load())
}

// grant notes a task's finite ttl d: the default window grows to the largest, up to ttlCap.
func (l *ledger) grant(d time.Duration) {
	d = min(d, l.ttlCap)
	for {
		cur := l.maxTTL.Load()
		if int64(d) <= cur || l.maxTTL.CompareAndSwap(cur, int64(d)) {
			return
		}
	}
}

// pin keeps (tenant, key) for the rest of the run: Reconcile reads its effect at the end,
// however long after the rollback drill's switch. The keys pinned are those of the tasks in
// flight at the switch: a bounded set.
func (l *ledger) pin(tenant, key string) {
	l.mu.Lock()
	if ke := l.byKey[ledgerKey{tenant, key}]; ke != nil {
		ke.pinned = true
	}
	l.mu.Unlock()
}

// forget drops the keys whose window has run out by now (the reaper's tick).
func (l *ledger) forget(now time.Time) {
	l.mu.Lock()
	l.forgetLocked(now, -1)
	l.mu.Unlock()
}

// forgetLocked pops the aging queue's due slots, at most limit of them (< 0: all): a key
// whose task is stored leaves the queue until the task does (unbind queues it again); a
// key used again since its slot was queued is queued again at its new due time; any other
// key is forgotten.
func (l *ledger) forgetLocked(now time.Time, limit int) {
	ns, win := now.UnixNano(), int64(l.windowNow())
	for n := 0; n != limit; n++ {
		sl, ok := l.aging.front()
		if !ok || sl.due > ns {
			return
		}
		l.aging.pop()
		ke := l.byKey[sl.k]
		switch {
		case ke == nil: // cannot happen: a forgotten key has no slot
		case ke.task != nil || ke.pinned: // claimed by a task since it was queued (unbind queues it again), or pinned
			ke.queued = false
		case ke.last+win > ns:
			l.aging.push(agingSlot{k: sl.k, due: ke.last + win})
		default:
			delete(l.byKey, sl.k)
			l.forgot++
		}
	}
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
	Keys        int           // idempotency keys held now (LedgerKeys)
	PeakKeys    int           // the most keys held at once
	Forgotten   uint64        // keys forgotten after their window
	Window      time.Duration // the window in effect: the configured one, or the largest ttl granted
	Operations  uint64        // domain operations recorded, every outcome
	Applied     uint64        // effects that happened
	Failed      uint64        // operations the downstream failed
	Rejected    uint64        // operations the downstream refused (queue full)
	Duplicates  uint64        // applied effects beyond the first for one (tenant, idempotency key)
	AfterCancel uint64        // effects of tasks that ended cancelled (cancel is not rollback): applied after the cancel, or before it (effect_first)
}

func (l *ledger) counts() LedgerCounts {
	l.mu.Lock()
	defer l.mu.Unlock()
	return LedgerCounts{Keys: len(l.byKey), PeakKeys: l.peakLen, Forgotten: l.forgot, Window: l.windowNow(),
		Operations: l.ops, Applied: l.applied, Failed: l.failed, Rejected: l.rejected,
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

// agingSlot is a key's place in the aging queue: the key and when its window runs out (Unix
// ns) as it was when queued.
type agingSlot struct {
	k   ledgerKey
	due int64
}

// agingQueue is a FIFO of slots on a slice that is compacted as it drains. Slots are pushed
// in the order of their due times, since the window only grows and keys are queued at the
// present; the rare key used again while queued (an effect recorded after its task left
// the store) is queued again when it comes due, behind slots due up to a window later, so it
// is forgotten at most one window late.
type agingQueue struct {
	s    []agingSlot
	head int
}

func (q *agingQueue) push(sl agingSlot) {
	if q.head > 1024 && q.head*2 >= len(q.s) { // drop the consumed half
		n := copy(q.s, q.s[q.head:])
		clear(q.s[n:])
		q.s, q.head = q.s[:n], 0
	}
	q.s = append(q.s, sl)
}

func (q *agingQueue) front() (agingSlot, bool) {
	if q.head == len(q.s) {
		return agingSlot{}, false
	}
	return q.s[q.head], true
}

func (q *agingQueue) pop() {
	q.s[q.head] = agingSlot{}
	q.head++
}

// len is the number of slots held.
func (q *agingQueue) len() int { return len(q.s) - q.head }
