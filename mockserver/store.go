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

// shardOf returns the shard of id.
func (s *store) shardOf(id string) *shard { return &s.shards[fnv1a(id)%numShards] }

// fnv1a hashes id by FNV-1a, computed inline so that it does not allocate.
func fnv1a[ID string | []byte](id ID) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(id); i++ {
		h ^= uint32(id[i])
		h *= 16777619
	}
	return h
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
		s.exp.push(expiry{at: t.expires, t: t})
		s.expMu.Unlock()
	}
}

// lookup returns the live task with id, or nil. id is held as bytes: a request's taskId,
// read as a span of the request (params.go), is looked up without being copied into a string.
func (s *store) lookup(id []byte) *task {
	sh := &s.shards[fnv1a(id)%numShards]
	sh.mu.RLock()
	t := sh.m[string(id)] // the compiler indexes with the bytes: no string is made
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
		out = append(out, s.exp.pop().t)
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

// expiring is the number of tasks in the expiry heap.
func (s *store) expiring() int {
	s.expMu.Lock()
	defer s.expMu.Unlock()
	return s.exp.Len()
}

type expiry struct {
	at time.Time
	t  *task
}

// expiryHeap is a min-heap of expiries for container/heap. Use push and pop, not heap.Push and
// heap.Pop, which box every expiry into an interface: an allocation per task.
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

// push adds x: heap.Push without the boxing (heap.Fix of the new last element sifts it up).
func (h *expiryHeap) push(x expiry) {
	*h = append(*h, x)
	heap.Fix(h, len(*h)-1)
}

// pop removes and returns the soonest expiry: heap.Pop without the boxing.
func (h *expiryHeap) pop() expiry {
	old := *h
	n := len(old) - 1
	x := old[0]
	old[0], old[n] = old[n], expiry{}
	*h = old[:n]
	if n > 0 {
		heap.Fix(h, 0)
	}
	return x
}
