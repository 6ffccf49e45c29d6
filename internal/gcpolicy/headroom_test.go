package gcpolicy

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestCappedPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		base           int
		live, headroom int64
		want           int
	}{
		{400, 80 * mib, 512 * mib, 400},  // 10,000 clients and their server: untouched
		{400, 128 * mib, 512 * mib, 400}, // at the bound: 4 x 128 MiB = 512 MiB
		{400, 190 * mib, 512 * mib, 269}, // 100,000 clients: goal 190 + 512 MiB, not 5 x 190
		{400, 1024 * mib, 512 * mib, 50},
		{400, 100 * 1024 * mib, 512 * mib, minPercent}, // never below minPercent
		{400, 0, 512 * mib, 400},                       // nothing known yet
		{100, 600 * mib, 512 * mib, 85},
	} {
		if got := cappedPercent(c.base, c.live, c.headroom); got != c.want {
			t.Errorf("cappedPercent(%d, %d MiB, %d MiB) = %d, want %d", c.base, c.live/mib, c.headroom/mib, got, c.want)
		}
	}
}

// TestHeadroomFollowsTheLiveHeap: with a cap far below what the live heap's percent allows,
// a collection lowers the percent in effect; once stopped, the hook changes nothing more.
func TestHeadroomFollowsTheLiveHeap(t *testing.T) {
	old := debug.SetGCPercent(400)
	t.Cleanup(func() { debug.SetGCPercent(old) })
	live := make([]byte, 8<<20) // 8 MiB live: 400% would be 32 MiB of headroom
	h := startHeadroom(400, 1<<20)
	defer h.stop()
	// The finalizer runs after the cycle that freed the sentinel, on the finalizer goroutine:
	// collect until it has (each GC also waits for the previous cycle's sweep).
	for i := 0; i < 100 && Current().GOGC == 400; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	got := Current().GOGC
	if want := cappedPercent(400, 8<<20, 1<<20); got > 400/2 || got < want/2 {
		t.Errorf("GOGC = %d after collections with 8 MiB live and a 1 MiB cap; want about %d", got, want)
	}
	runtime.KeepAlive(live)
	h.stop()
	debug.SetGCPercent(400)
	for range 3 {
		runtime.GC()
	}
	if got := Current().GOGC; got != 400 {
		t.Errorf("GOGC = %d after stop; want 400 (the hook stopped)", got)
	}
}
