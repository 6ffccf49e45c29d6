package metrics

import (
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
)

// DurationBounds are the upper bounds, in seconds, of the request-duration buckets kept
// beside the HDR histograms for live exposition (Prometheus, OTLP): the bucket boundaries
// the OpenTelemetry MCP semantic conventions advise for mcp.client.operation.duration.
// The HDR histograms stay the figures of record; these exist because a scrape needs
// durations by method AND outcome (error.type), which the HDR histograms, one per method,
// do not split.
var DurationBounds = [...]float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// boundsUS are DurationBounds in microseconds, for a search without floating point.
var boundsUS = func() (b [len(DurationBounds)]int64) {
	for i, s := range DurationBounds {
		b[i] = int64(s * 1e6)
	}
	return b
}()

// DurationBuckets are the send -> reply durations of one method and outcome: Counts[i]
// requests took at most DurationBounds[i] (and more than the bound before it); the last
// slot holds the slower ones. SumUS is their total in microseconds.
type DurationBuckets struct {
	Counts [len(DurationBounds) + 1]int64
	SumUS  int64
}

// Durations holds DurationBuckets by method and outcome.
type Durations [mcp.NumOps][NumOutcomes]DurationBuckets

// record counts one reply of op, outcome o, that took us microseconds.
func (d *Durations) record(op mcp.Op, o Outcome, us int64) {
	b := &d[op][o]
	i := 0
	for i < len(boundsUS) && us > boundsUS[i] {
		i++
	}
	b.Counts[i]++
	b.SumUS += us
}

// moveFrom adds src into d and empties src.
func (d *Durations) moveFrom(src *Durations) {
	for op := range d {
		for o := range d[op] {
			s := &src[op][o]
			if s.SumUS == 0 && s.Counts == [len(DurationBounds) + 1]int64{} {
				continue
			}
			dst := &d[op][o]
			for i, c := range s.Counts {
				dst.Counts[i] += c
			}
			dst.SumUS += s.SumUS
			*s = DurationBuckets{}
		}
	}
}

// Add adds w's durations into d (a consumer's running total: the live exposition's).
func (d *Durations) Add(w *Durations) {
	for op := range d {
		for o := range d[op] {
			for i, c := range w[op][o].Counts {
				d[op][o].Counts[i] += c
			}
			d[op][o].SumUS += w[op][o].SumUS
		}
	}
}

// Total is the number of requests counted in b.
func (b *DurationBuckets) Total() int64 {
	var n int64
	for _, c := range b.Counts {
		n += c
	}
	return n
}

// Sum is b's total duration.
func (b *DurationBuckets) Sum() time.Duration { return time.Duration(b.SumUS) * time.Microsecond }
