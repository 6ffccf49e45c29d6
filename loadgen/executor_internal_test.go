package loadgen

import "testing"

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
