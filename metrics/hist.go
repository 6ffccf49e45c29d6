package metrics

import (
	"strconv"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Hist identifies a histogram. Values are recorded in the unit noted; durations in
// microseconds. The names (Name) are stable: they appear in summary.json, CSV, HTML and as
// the Tag of every line of the HDR interval log (docs/METRICS.md#histograms).
type Hist uint8

// The histograms. Ranges: durations 0 us .. 1 h (HourUS), counts and milli-ratios
// 0 .. 1e6 (CountMax), all at 3 significant digits; values outside are clamped (see
// Shard.Record).
const (
	LatencyInitialize  Hist = iota // us, send -> reply of initialize
	LatencyToolsCall               // us, send -> reply of tools/call
	LatencyTasksGet                // us, send -> reply of tasks/get
	LatencyTasksResult             // us, send -> reply of tasks/result
	LatencyTasksList               // us, send -> reply of tasks/list
	LatencyTasksCancel             // us, send -> reply of tasks/cancel
	TaskE2E                        // us, intended start -> outcome known
	PollsPerTask                   // count of tasks/get sent for one task over its life
	PollAmplification              // milli-units: 1000 = 1.0 (polls sent / advised polls, per task)
	DetectionLag                   // us, server's terminal instant -> first terminal observation
	ResultLag                      // us, first terminal observation -> result payload in hand
	ScheduleLag                    // us, actual send time of a poll - its intended time
	CleanupLag                     // us, expiry instant (createdAt + ttl) -> record deleted
	CancelLatency                  // us, tasks/cancel sent -> cancelled observed
	DownstreamWait                 // us, time a task waited for a downstream slot
	LatencyTasksUpdate             // us, send -> reply of tasks/update (2026-07-28)
	NumHists                       // number of histograms; not a histogram
)

// Histogram geometry. Every histogram of one Hist has the same geometry, which is what
// makes merging shards, windows and runs exact.
const (
	// SigFigs is the precision of every histogram: values are kept to 3 significant
	// digits (relative error at most 1/1000).
	SigFigs = 3
	// HourUS is the largest duration recorded, in microseconds (1 hour).
	HourUS int64 = 3_600_000_000
	// CountMax is the largest count (PollsPerTask) and milli-ratio (PollAmplification,
	// 1e6 = 1000.0) recorded.
	CountMax int64 = 1_000_000
)

// Name returns the stable name of h ("latency_tasks_get", "task_e2e", ...).
func (h Hist) Name() string {
	switch h {
	case LatencyInitialize:
		return "latency_initialize"
	case LatencyToolsCall:
		return "latency_tools_call"
	case LatencyTasksGet:
		return "latency_tasks_get"
	case LatencyTasksResult:
		return "latency_tasks_result"
	case LatencyTasksList:
		return "latency_tasks_list"
	case LatencyTasksCancel:
		return "latency_tasks_cancel"
	case TaskE2E:
		return "task_e2e"
	case PollsPerTask:
		return "polls_per_task"
	case PollAmplification:
		return "poll_amplification"
	case DetectionLag:
		return "detection_lag"
	case ResultLag:
		return "result_lag"
	case ScheduleLag:
		return "schedule_lag"
	case CleanupLag:
		return "cleanup_lag"
	case CancelLatency:
		return "cancel_latency"
	case DownstreamWait:
		return "downstream_wait"
	case LatencyTasksUpdate:
		return "latency_tasks_update"
	}
	return "hist(" + strconv.Itoa(int(h)) + ")"
}

// String returns Name.
func (h Hist) String() string { return h.Name() }

// Unit returns the unit h is reported in: "ms" for durations (recorded in us), "count" for
// PollsPerTask, "ratio" for PollAmplification (recorded in milli-units).
func (h Hist) Unit() string {
	switch h {
	case PollsPerTask:
		return "count"
	case PollAmplification:
		return "ratio"
	}
	return "ms"
}

// Scale returns the factor from a recorded value to the reported unit: 0.001 for us -> ms,
// 1 for counts, 0.001 for milli-ratio -> ratio.
func (h Hist) Scale() float64 {
	if h == PollsPerTask {
		return 1
	}
	return 0.001
}

// Highest returns the largest value h records; Shard.Record clamps larger values to it.
// The smallest is 0.
func (h Hist) Highest() int64 {
	switch h {
	case PollsPerTask, PollAmplification:
		return CountMax
	}
	return HourUS
}

// ParseHist returns the Hist whose Name is name.
func ParseHist(name string) (Hist, bool) {
	for h := range NumHists {
		if h.Name() == name {
			return h, true
		}
	}
	return 0, false
}

// NewHistogram returns an empty histogram with h's geometry (1 .. h.Highest(), SigFigs
// digits), tagged with h's name. Histograms made here merge exactly with the recorder's.
// It holds histogramBytes(h) of counts.
func NewHistogram(h Hist) *hdrhistogram.Histogram {
	hh := hdrhistogram.New(1, h.Highest(), SigFigs)
	hh.SetTag(h.Name())
	return hh
}

// histogramBytes is the memory the counts of one histogram of h hold: 188,416 B (184 KiB) for a
// duration, 90,112 B (88 KiB) for PollsPerTask and PollAmplification.
func histogramBytes(h Hist) int {
	// 3 significant digits: 2048 sub-buckets, half of them (1024 counts) per bucket
	// beyond the first. 0..1 h in us needs 22 buckets, 0..1e6 needs 10; counts are
	// (buckets+1) * 1024 int64s.
	if h.Highest() == CountMax {
		return 11 * 1024 * 8
	}
	return 23 * 1024 * 8
}
