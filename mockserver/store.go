package mockserver

import (
	"container/heap"
	"sync"
	"sync/atomic"
	"time"
)

// numShards splits the task map so that lookups from many pollers rarely meet on one lock.
const numShards = 64

// store holds live tasks by id. A lookup hashes the id to a shard and takes its read lock; it
// allocates nothing. Expired tasks are deleted by the reaper or, earlier, by the lookup that
// finds them expired.
type store struct {
	shards [numShards]shard
	seq    atomic.Uint64 // creation order, for tasks/list cursors
	live   atomic.Int64

	expMu sync.Mutex
	exp   expiryHeap // tasks with a finite ttl, soonest expiry first
}

type shard struct {
	mu sync.RWMutex
	m  map[string]*task
}

func newStore() *store {
	s := &store{}
	for i := range s.shards {
		s.shards[i].m = make(map[string]*task)
	}
	return s
}

// shardOf returns the shard of id by FNV-1a, computed inline so that it does not allocate.
func (s *store) shardOf(id string) *shard {
	h := uint32(2166136261)
	for i := 0; i < len(id); i++ {
		h ^= uint32(id[i])
		h *= 16777619
	}
	return &s.shards[h%numShards]
}

// add stores t and assigns its creation sequence number.
func (s *store) add(t *task) {
	t.seq = s.seq.Add(1)
	sh := s.shardOf(t.id)
	sh.mu.Lock()
	sh.m[t.id] = t
	sh.mu.Unlock()
	s.live.Add(1)
	if !t.expires.IsZero() {
		s.expMu.Lock()
		heap.Push(&s.exp, expiry{at: t.expires, t: t})
		s.expMu.Unlock()
	}
}

// lookup returns the live task with id, or nil.
func (s *store) lookup(id string) *task {
	sh := s.shardOf(id)
	sh.mu.RLock()
	t := sh.m[id]
	sh.mu.RUnlock()
	return t
}

// remove deletes t if it is still stored and reports whether this call deleted it.
func (s *store) remove(t *task) bool {
	sh := s.shardOf(t.id)
	sh.mu.Lock()
	cur, ok := sh.m[t.id]
	if ok && cur == t {
		delete(sh.m, t.id)
	}
	sh.mu.Unlock()
	if !ok || cur != t {
		return false
	}
	s.live.Add(-1)
	return true
}

// expired pops every task whose expiry is at or before now.
func (s *store) expired(now time.Time) []*task {
	s.expMu.Lock()
	defer s.expMu.Unlock()
	var out []*task
	for s.exp.Len() > 0 && !s.exp[0].at.After(now) {
		out = append(out, heap.Pop(&s.exp).(expiry).t)
	}
	return out
}

// each calls f for every stored task, one shard at a time, until f returns false. f must not
// call back into the store nor lock a task: a shard lock may be taken while a task's lock is
// held (early_expiry, faults.go), never the other way round.
func (s *store) each(f func(*task) bool) {
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		for _, t := range sh.m {
			if !f(t) {
				sh.mu.RUnlock()
				return
			}
		}
		sh.mu.RUnlock()
	}
}

type expiry struct {
	at time.Time
	t  *task
}

// expiryHeap is a min-heap of expiries for container/heap.
type expiryHeap []expiry

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(expiry)) }
func (h *expiryHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = expiry{}
	*h = old[:len(old)-1]
	return x
}
