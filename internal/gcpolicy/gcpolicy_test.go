package gcpolicy

import (
	"runtime/debug"
	"testing"
)

func TestChoose(t *testing.T) {
	const gib = 1 << 30
	for _, c := range []struct {
		name              string
		gogcSet, limitSet bool
		avail             int64
		percent           int
		limit             int64
		setBy             string
	}{
		{"nothing set", false, false, 8 * gib, DefaultPercent, 4 * gib, "tasksim"},
		{"GOGC set", true, false, 8 * gib, 0, 4 * gib, "environment"},
		{"GOMEMLIMIT set", false, true, 8 * gib, DefaultPercent, 0, "environment"},
		{"both set", true, true, 8 * gib, 0, 0, "environment"},
		// Without a known memory size a raised GOGC has no bound: keep Go's defaults.
		{"memory unknown", false, false, 0, 0, 0, "go defaults"},
		{"memory unknown, GOGC set", true, false, 0, 0, 0, "environment"},
	} {
		t.Run(c.name, func(t *testing.T) {
			percent, limit, setBy := choose(c.gogcSet, c.limitSet, c.avail)
			if percent != c.percent || limit != c.limit || setBy != c.setBy {
				t.Errorf("choose = %d, %d, %q; want %d, %d, %q", percent, limit, setBy, c.percent, c.limit, c.setBy)
			}
		})
	}
}

func TestMemAvailable(t *testing.T) {
	meminfo := []byte("MemTotal:       24683520 kB\nMemFree:        20981760 kB\nMemAvailable:   24202240 kB\nBuffers:          123 kB\n")
	if got, want := memAvailable(meminfo), int64(24202240)<<10; got != want {
		t.Errorf("memAvailable = %d, want %d", got, want)
	}
	for _, bad := range []string{"", "MemTotal: 1 kB\n", "MemAvailable: lots kB\n", "MemAvailable: -5 kB\n"} {
		if got := memAvailable([]byte(bad)); got != 0 {
			t.Errorf("memAvailable(%q) = %d, want 0", bad, got)
		}
	}
}

// Current reads back what debug.SetGCPercent and debug.SetMemoryLimit set.
func TestCurrentReadsTheRuntime(t *testing.T) {
	oldPercent := debug.SetGCPercent(321)
	oldLimit := debug.SetMemoryLimit(3 << 30)
	t.Cleanup(func() {
		debug.SetGCPercent(oldPercent)
		debug.SetMemoryLimit(oldLimit)
	})
	p := Current()
	if p.GOGC != 321 || p.MemoryLimit != 3<<30 || p.GOMAXPROCS < 1 || p.Go == "" {
		t.Errorf("Current = %+v; want gogc 321, limit 3 GiB", p)
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(1<<63 - 1)
	if p := Current(); p.GOGC != -1 || p.MemoryLimit != 0 {
		t.Errorf("Current with GC off and no limit = %+v; want gogc -1, limit 0", p)
	}
}
