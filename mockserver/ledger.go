package mockserver

import "sync"

// ledger is the domain system of record: every completed unit of tool work is one effect,
// keyed by the caller's idempotency key. A second effect for one key is a duplicate, the
// evidence the hard gate looks for (DESIGN.md section 5). Calls without a key are counted
// but cannot be deduplicated.
type ledger struct {
	mu      sync.Mutex
	byKey   map[string]effect
	effects uint64
	dups    uint64
}

// effect is what the ledger keeps of the first effect of a key.
type effect struct {
	tenant string
	taskID string
}

// record adds one effect and reports whether it duplicated an earlier one.
func (l *ledger) record(key, tenant, taskID string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.effects++
	if key == "" {
		return false
	}
	if l.byKey == nil {
		l.byKey = make(map[string]effect)
	}
	k := tenant + "\x00" + key
	if _, dup := l.byKey[k]; dup {
		l.dups++
		return true
	}
	l.byKey[k] = effect{tenant: tenant, taskID: taskID}
	return false
}

func (l *ledger) counts() (effects, duplicates uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.effects, l.dups
}
