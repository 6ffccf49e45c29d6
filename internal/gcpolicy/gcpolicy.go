package gcpolicy

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"path"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
)

// DefaultPercent is the GOGC tasksim sets: the heap may grow to five times the live heap
// between collections (Go's default is 100: twice).
const DefaultPercent = 400

// Policy is the collector setting in effect, as summary.json records it.
type Policy struct {
	Go         string `json:"go"`         // runtime.Version()
	GOMAXPROCS int    `json:"gomaxprocs"` // processors the scheduler uses
	GOGC       int    `json:"gogc"`       // percent; -1 = off
	// MemoryLimit is the soft memory limit in bytes; 0 = none.
	MemoryLimit int64 `json:"memory_limit_bytes"`
	// SetBy says who chose GOGC and the limit: "tasksim", "environment" (GOGC and/or
	// GOMEMLIMIT; tasksim set the other one, if any), or "go defaults" (the memory
	// available could not be read).
	SetBy string `json:"gc_set_by"`
	// MaxHeadroom is the cap on the heap GOGC lets grow beyond the live heap (MaxHeadroom,
	// headroom.go), in bytes, when tasksim set GOGC; 0 = none. GOGC is then the percent in
	// effect when the Policy was read.
	MaxHeadroom int64 `json:"max_headroom_bytes,omitempty"`

	hook *headroom // the cap's hook, for Stop; nil when none runs
}

// Stop ends the headroom cap Apply started, if any (a process that applies the policy for
// a while, as a benchmark does, then sets the collector back).
func (p Policy) Stop() { p.hook.stop() }

// Apply sets the collector as the package documentation says and returns what is in
// effect. Call it once, at the start of the process.
func Apply() Policy {
	_, gogcSet := os.LookupEnv("GOGC")
	_, limitSet := os.LookupEnv("GOMEMLIMIT")
	percent, limit, setBy := choose(gogcSet, limitSet, available())
	if percent != 0 {
		debug.SetGCPercent(percent)
	}
	if limit != 0 {
		debug.SetMemoryLimit(limit)
	}
	var hook *headroom
	if percent != 0 { // GOGC is tasksim's: so is the cap on the headroom it gives
		hook = startHeadroom(percent, MaxHeadroom)
	}
	p := Current()
	p.SetBy = setBy
	if hook != nil {
		p.MaxHeadroom, p.hook = MaxHeadroom, hook
	}
	return p
}

// choose decides from whether the environment set GOGC and GOMEMLIMIT and the bytes the
// process may use (0 = unknown): the percent and limit to set (0 = leave as is) and who
// set them.
func choose(gogcSet, limitSet bool, avail int64) (percent int, limit int64, setBy string) {
	switch {
	case gogcSet && limitSet:
		return 0, 0, "environment"
	case avail <= 0:
		if gogcSet || limitSet {
			return 0, 0, "environment"
		}
		return 0, 0, "go defaults"
	}
	setBy = "tasksim"
	if gogcSet || limitSet {
		setBy = "environment"
	}
	if !gogcSet {
		percent = DefaultPercent
	}
	if !limitSet {
		limit = avail / 2
	}
	return percent, limit, setBy
}

// Current reads the collector settings in effect; SetBy is left empty.
func Current() Policy {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(s)
	p := Policy{Go: runtime.Version(), GOMAXPROCS: runtime.GOMAXPROCS(0), GOGC: -1}
	if s[0].Value.Kind() == metrics.KindUint64 {
		if v := s[0].Value.Uint64(); v != 0 { // GOGC=off reads as 0
			p.GOGC = int(v)
		}
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		if v := s[1].Value.Uint64(); v < math.MaxInt64 { // MaxInt64 = no limit
			p.MemoryLimit = int64(v)
		}
	}
	return p
}

// available is the memory this process may use, in bytes: MemTotal of /proc/meminfo,
// capped by the memory limits of the process's cgroup and its ancestors (v2 memory.max, v1
// memory.limit_in_bytes); 0 when unknown. It is the machine's size, not what is free at the
// start: a busy moment must not give a run a limit below what it needs.
func available() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	avail := memTotal(b)
	if avail <= 0 {
		return 0
	}
	if cg, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		for _, f := range cgroupLimitFiles(string(cg)) {
			if b, err := os.ReadFile(f); err == nil {
				if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 {
					avail = min(avail, n) // "max" (v2) does not parse; v1's unlimited is huge
				}
			}
		}
	}
	return avail
}

// cgroupLimitFiles lists the files holding the memory limits that apply to a process whose
// /proc/self/cgroup reads cgroup: its cgroup's and every ancestor's, for cgroup v2 (the
// "0::" line) and for v1's memory controller.
func cgroupLimitFiles(cgroup string) []string {
	var files []string
	for _, line := range strings.Split(cgroup, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 || !strings.HasPrefix(parts[2], "/") {
			continue
		}
		var dir, file string
		switch {
		case parts[0] == "0" && parts[1] == "":
			dir, file = "/sys/fs/cgroup", "memory.max"
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			dir, file = "/sys/fs/cgroup/memory", "memory.limit_in_bytes"
		default:
			continue
		}
		for p := path.Clean(parts[2]); ; p = path.Dir(p) {
			files = append(files, path.Join(dir, p, file))
			if p == "/" {
				break
			}
		}
	}
	return files
}

// memTotal parses "MemTotal:  123456 kB" out of /proc/meminfo; 0 when absent.
func memTotal(meminfo []byte) int64 {
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil || n <= 0 {
			return 0
		}
		return n << 10
	}
	return 0
}
