// Package gcpolicy sets the Go garbage collector up for a load generator.
//
// A tasksim process keeps a steady live heap (one goroutine, session and histogram shard
// per virtual client, the embedded server's tasks) and allocates a little per request.
// With Go's default GOGC=100 the collector runs about once a second at 10,000 clients, and
// each cycle takes a quarter of the processors plus assists from the goroutines that
// allocate during it: every such cycle is a stall of the fleet's schedule (schedule_lag),
// and the collector's share of the CPU is taken from the requests. A load generator
// trades memory for a steady schedule, so tasksim runs with GOGC=DefaultPercent and a soft
// memory limit (runtime/debug.SetMemoryLimit) of half the memory the process may use: the
// collector runs a quarter as often, and runs sooner as the heap nears the limit instead
// of letting it grow past what the machine has.
//
// The environment decides when it speaks: GOGC or GOMEMLIMIT set (to any value) leave that
// setting as the Go runtime read it. Where the memory available cannot be read (no
// /proc/meminfo), the collector keeps Go's defaults: a raised GOGC without a limit could
// grow the heap without a bound.
package gcpolicy

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
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
}

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
	p := Current()
	p.SetBy = setBy
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

// available is the memory this process may use, in bytes: MemAvailable of /proc/meminfo,
// capped by the cgroup v2 limit (memory.max) when one is set; 0 when unknown.
func available() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	avail := memAvailable(b)
	if max, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil && avail > 0 {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(max)), 10, 64); err == nil && n > 0 {
			avail = min(avail, n)
		}
	}
	return avail
}

// memAvailable parses "MemAvailable:  123456 kB" out of /proc/meminfo; 0 when absent.
func memAvailable(meminfo []byte) int64 {
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), "MemAvailable:")
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
