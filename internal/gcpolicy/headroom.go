package gcpolicy

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// MaxHeadroom bounds the heap GOGC lets grow beyond the live heap, once the live heap is
// large: GOGC=DefaultPercent lets the heap reach five times the live heap, and the live heap
// of a shard of 100,000 clients is about 190 MiB, so its peak would be near 1 GiB, four
// fifths of it garbage waiting for the next cycle. Past MaxHeadroom/4 of live heap (128 MiB)
// the percent in effect is lowered so that the heap's goal is the live heap plus MaxHeadroom:
//
//	percent = min(base, max(minPercent, 100 * MaxHeadroom / live))
//
// re-read after every collection (headroom.cycle). Below 128 MiB of live heap (10,000
// clients and their embedded server: ~80 MiB) nothing changes; above it the collector runs
// once per MaxHeadroom allocated, still seconds apart at the allocation rate of 100,000
// clients (~35 MiB/s).
const MaxHeadroom = 512 << 20

// minPercent is the lowest percent the cap sets: with a live heap above 5 GiB, a collection
// every tenth of the live heap allocated.
const minPercent = 10

// cappedPercent is the percent in effect for a live heap of live bytes and a base percent.
func cappedPercent(base int, live, headroom int64) int {
	if live <= 0 || base <= 0 || live*int64(base)/100 <= headroom {
		return base
	}
	return max(minPercent, int(headroom*100/live))
}

// headroom re-applies the cap after each collection, from a finalizer on an object that
// each cycle frees (runtime.SetFinalizer runs it after the cycle that found it unreachable).
type headroom struct {
	base    int   // the percent set (DefaultPercent)
	max     int64 // MaxHeadroom
	percent int   // the percent in effect
	stopped atomic.Bool
}

// sentinel is the object whose finalizer marks the end of a collection.
type sentinel struct{ h *headroom }

func startHeadroom(base int, max int64) *headroom {
	h := &headroom{base: base, max: max, percent: base}
	h.arm()
	return h
}

func (h *headroom) arm() { runtime.SetFinalizer(&sentinel{h}, (*sentinel).cycle) }

// cycle runs after a collection: set the percent for the live heap found, and wait for the
// next one.
func (s *sentinel) cycle() {
	h := s.h
	if h.stopped.Load() {
		return
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() == metrics.KindUint64 {
		if p := cappedPercent(h.base, int64(sample[0].Value.Uint64()), h.max); p != h.percent {
			h.percent = p
			debug.SetGCPercent(p)
		}
	}
	h.arm()
}

// stop ends the cap; the percent stays as last set.
func (h *headroom) stop() {
	if h != nil {
		h.stopped.Store(true)
	}
}
