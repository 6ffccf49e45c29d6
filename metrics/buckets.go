package metrics

import (
	"github.com/tasksim/tasksim/internal/mcp"
)

// Fixed buckets beside the HDR histograms, for live exposition (Prometheus, OTLP). The HDR
// histograms stay the figures of record; a scrape needs cumulative bucket counts, which an
// HDR histogram gives only by walking every one of its buckets, and request durations by
// method AND outcome (OpenTelemetry's error.type), which the HDR histograms, one per method,
// do not split. Counting into a fixed bucket is a search of at most maxBounds comparisons,
// under the shard lock the HDR record already holds.

// maxBounds is the most bounds a Hist's buckets have.
const maxBounds = 16

// Buckets are the values of one series in fixed buckets: Counts[i] values were at most
// the i-th bound (and above the one before); Counts[n] (n = the number of bounds) holds the
// larger ones. Sum is their total, in the recorded unit (Hist.Scale gives the reported one).
type Buckets struct {
	Counts [maxBounds + 1]int64
	Sum    int64
}

// DurationBounds are the bucket bounds of request durations, in seconds: those the
// OpenTelemetry MCP semantic conventions advise for mcp.client.operation.duration.
var DurationBounds = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// lagBounds are the bounds of the task-level durations (end to end, the lags, cancel
// latency), in seconds: from a millisecond to the hour a histogram records.
var lagBounds = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600}

// Bounds returns the bucket bounds of h in its reported unit (seconds for durations, a
// count for PollsPerTask, a ratio for PollAmplification).
func (h Hist) Bounds() []float64 {
	switch h {
	case PollsPerTask:
		return []float64{1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000, 10000}
	case PollAmplification:
		return []float64{0.5, 0.8, 0.9, 1, 1.1, 1.25, 1.5, 2, 3, 5, 10, 100}
	}
	if _, op := h.Op(); op {
		return DurationBounds
	}
	return lagBounds
}

// Op reports whether h is the latency of one operation (a request duration).
func (h Hist) Op() (mcp.Op, bool) {
	for op := range mcp.NumOps {
		if l, ok := LatencyOf(op); ok && l == h {
			return op, true
		}
	}
	return 0, false
}

// recordedBounds are Bounds in the recorded unit (microseconds for durations, milli-units
// for the ratio), by Hist, and durationBounds DurationBounds in microseconds.
var recordedBounds, durationBounds = func() (by [NumHists][]int64, dur []int64) {
	conv := func(b []float64, scale float64) []int64 {
		out := make([]int64, len(b))
		for i, v := range b {
			out[i] = int64(v/scale + 0.5)
		}
		return out
	}
	for h := range NumHists {
		scale := Hist(h).Scale()
		if Hist(h).Unit() == "ms" {
			scale = 1e-6 // bounds in seconds, values in microseconds
		}
		by[h] = conv(Hist(h).Bounds(), scale)
	}
	return by, conv(DurationBounds, 1e-6)
}()

// add counts v against bounds.
func (b *Buckets) add(bounds []int64, v int64) {
	i := 0
	for i < len(bounds) && v > bounds[i] {
		i++
	}
	b.Counts[i]++
	b.Sum += v
}

// Add adds o into b.
func (b *Buckets) Add(o *Buckets) {
	for i, c := range o.Counts {
		b.Counts[i] += c
	}
	b.Sum += o.Sum
}

// Total is the number of values counted in b.
func (b *Buckets) Total() int64 {
	var n int64
	for _, c := range b.Counts {
		n += c
	}
	return n
}

// Live is what a window adds to the live exposition: every histogram in fixed buckets, and
// the request durations by method and outcome (in microseconds, DurationBounds).
type Live struct {
	Hists     [NumHists]Buckets
	Durations [mcp.NumOps][NumOutcomes]Buckets
}

// Add adds o into l: a consumer's running total.
func (l *Live) Add(o *Live) {
	for h := range l.Hists {
		l.Hists[h].Add(&o.Hists[h])
	}
	for op := range l.Durations {
		for oc := range l.Durations[op] {
			l.Durations[op][oc].Add(&o.Durations[op][oc])
		}
	}
}

// moveFrom adds src into l and empties src.
func (l *Live) moveFrom(src *Live) {
	l.Add(src)
	*src = Live{}
}
