package gcpolicy

import (
	"runtime/debug"
	"slices"
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

func TestMemTotal(t *testing.T) {
	meminfo := []byte("MemTotal:       24683520 kB\nMemFree:        20981760 kB\nMemAvailable:   24202240 kB\nBuffers:          123 kB\n")
	if got, want := memTotal(meminfo), int64(24683520)<<10; got != want {
		t.Errorf("memTotal = %d, want %d", got, want)
	}
	for _, bad := range []string{"", "MemAvailable: 1 kB\n", "MemTotal: lots kB\n", "MemTotal: -5 kB\n"} {
		if got := memTotal([]byte(bad)); got != 0 {
			t.Errorf("memTotal(%q) = %d, want 0", bad, got)
		}
	}
}

func TestCgroupLimitFiles(t *testing.T) {
	for _, c := range []struct {
		cgroup string
		want   []string
	}{
		{"0::/\n", []string{"/sys/fs/cgroup/memory.max"}}, // in its own namespace
		{"0::/system.slice/run-u1.service\n", []string{ // systemd-run -p MemoryMax=..., no namespace
			"/sys/fs/cgroup/system.slice/run-u1.service/memory.max",
			"/sys/fs/cgroup/system.slice/memory.max",
			"/sys/fs/cgroup/memory.max"}},
		{"12:cpu,cpuacct:/a\n4:memory:/docker/abc\n1:name=systemd:/x\n", []string{ // cgroup v1
			"/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes",
			"/sys/fs/cgroup/memory/docker/memory.limit_in_bytes",
			"/sys/fs/cgroup/memory/memory.limit_in_bytes"}},
		{"", nil},
		{"garbage\n3:memory\n", nil},
	} {
		if got := cgroupLimitFiles(c.cgroup); !slices.Equal(got, c.want) {
			t.Errorf("cgroupLimitFiles(%q) =\n %q\nwant\n %q", c.cgroup, got, c.want)
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
