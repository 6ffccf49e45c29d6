package loadgen

import (
	"testing"
	"time"
)

// TestIdleClientsOldestFirst: an arrival goes to the client idle the longest; after close
// the pool takes no client back and hands out the idle ones, oldest first.
func TestIdleClientsOldestFirst(t *testing.T) {
	var p idleClients
	p.init(3)
	a, b, c := &vu{idx: 0}, &vu{idx: 1}, &vu{idx: 2}
	if p.get() != nil {
		t.Fatal("an empty pool handed out a client")
	}
	for _, v := range []*vu{a, b, c} {
		if !p.put(v) {
			t.Fatal("put refused before close")
		}
	}
	if got := p.get(); got != a {
		t.Fatalf("got client %d, want 0 (idle the longest)", got.idx)
	}
	p.put(a) // the ring wraps: b, c, a
	if got := p.get(); got != b {
		t.Fatalf("got client %d, want 1", got.idx)
	}
	idle := p.close()
	if len(idle) != 2 || idle[0] != c || idle[1] != a {
		t.Fatalf("close returned %d clients, want c then a", len(idle))
	}
	if p.put(b) {
		t.Error("put accepted a client after close")
	}
	if p.get() != nil {
		t.Error("a closed pool handed out a client")
	}
}

// TestSleepHeap: the sleepers come out earliest first, whatever the order they went in and
// whichever were taken out of the middle (an interrupt), and every client's slot is its index
// (-1 once out).
func TestSleepHeap(t *testing.T) {
	base := time.Unix(1_700_000_000, 0)
	var h sleepHeap
	vus := make([]*vu, 40)
	for i := range vus {
		// 0, 17, 34, 11, ... (mod 40): every instant once, in a scrambled order.
		vus[i] = &vu{idx: i, wakeAt: base.Add(time.Duration(i*17%40) * time.Millisecond)}
		h.push(vus[i])
	}
	check := func() {
		for i, v := range h {
			if v.slot != i {
				t.Fatalf("client %d in slot %d says %d", v.idx, i, v.slot)
			}
		}
	}
	check()
	for _, i := range []int{5, 23, 38} { // interrupted
		v := vus[i]
		if got := h.remove(v.slot); got != v || v.slot != -1 {
			t.Fatalf("remove took client %d (slot %d), want %d out", got.idx, v.slot, i)
		}
		check()
	}
	var last time.Time
	for n := 0; len(h) > 0; n++ {
		v := h.remove(0)
		if v.wakeAt.Before(last) {
			t.Fatalf("client %d due %v after one due %v", v.idx, v.wakeAt, last)
		}
		last = v.wakeAt
		check()
	}
}

// TestDueNow: a sender done with a client takes the earliest sleeper at once when its time
// has come (no park, no tick), marked woken and out of the heap, and leaves it when it is
// due later.
func TestDueNow(t *testing.T) {
	x := newExecutor()
	defer x.timer.Stop()
	now := time.Now()
	late, soon := &vu{idx: 0, slot: -1, sleeping: sleepWork}, &vu{idx: 1, slot: -1, sleeping: sleepWork}
	late.wakeAt, soon.wakeAt = now.Add(time.Hour), now.Add(-time.Millisecond)
	x.sleeps.push(late)
	if v := x.dueNow(); v != nil {
		t.Fatalf("client %d taken an hour early", v.idx)
	}
	x.sleeps.push(soon)
	v := x.dueNow()
	if v != soon || !v.woke || v.sleeping != 0 || v.slot != -1 {
		t.Fatalf("took %v (woke %v, sleeping %d, slot %d), want client 1 woken and out", v, v != nil && v.woke, v.sleeping, v.slot)
	}
	if len(x.sleeps) != 1 || x.sleeps[0] != late {
		t.Fatalf("%d sleepers left, want the late one", len(x.sleeps))
	}
}
