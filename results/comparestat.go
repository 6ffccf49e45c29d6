package results

import (
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// The estimates of `tasksim compare` and their 95% intervals (docs/METRICS.md#compare):
// each figure of a run comes with the range its sampling noise allows, and the change
// between two runs with the range both noises allow, so that two runs of one configuration
// do not report a regression and a small real one is caught when the runs have the samples.

// z95 is the standard normal quantile of a two-sided 95% interval.
const z95 = 1.959963984540054

// MinTail is the fewest samples a run must hold beyond a quantile (n·(1−q)) for the
// quantile to be judged: fewer, and its order-statistic interval reaches past the largest
// sample, so the run cannot say how large the quantile is. p99 needs 1000 samples, p95 200,
// p50 20.
const MinTail = 10

// Estimate is a run's figure with its 95% interval, in the metric's unit.
type Estimate struct {
	Value float64 `json:"value"`
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
	// Samples is what the figure is estimated from: values in the histogram, requests for a
	// rate, tasks for a throughput or a count.
	Samples int64 `json:"samples"`
}

// quantileEstimate is the q-quantile (0 < q < 1) of hh, scaled to the metric's unit, with
// its distribution-free order-statistic interval: the number of samples at or below the
// true quantile is Binomial(n, q), so the values at ranks n·q ∓ z·sqrt(n·q·(1−q)) bracket
// it with 95% confidence whatever the latency distribution. ok is false when fewer than
// MinTail samples lie beyond the quantile: the estimate is returned, without an interval
// worth judging by.
func quantileEstimate(hh *hdrhistogram.Histogram, q, scale float64) (Estimate, bool) {
	n := hh.TotalCount()
	nf := float64(n)
	e := Estimate{Value: float64(hh.ValueAtQuantile(100*q)) * scale, Samples: n}
	half := z95 * math.Sqrt(nf*q*(1-q))
	lo := max(1, int64(math.Floor(nf*q-half)))
	hi := min(n, int64(math.Ceil(nf*q+half)))
	e.Low = float64(valueAtRank(hh, lo)) * scale
	e.High = float64(valueAtRank(hh, hi)) * scale
	return e, nf*(1-q) >= MinTail
}

// valueAtRank is the k-th smallest value of hh (1 <= k <= n), at the histogram's
// resolution (the highest value equivalent to its bucket, as ValueAtQuantile reports).
func valueAtRank(hh *hdrhistogram.Histogram, k int64) int64 {
	return hh.ValueAtQuantile(100 * (float64(k) - 0.25) / float64(hh.TotalCount()))
}

// meanEstimate is the mean of hh with its normal interval, ±z·sd/sqrt(n); ok is false
// below MinTail samples.
func meanEstimate(hh *hdrhistogram.Histogram, scale float64) (Estimate, bool) {
	n := hh.TotalCount()
	m := hh.Mean() * scale
	half := z95 * hh.StdDev() * scale / math.Sqrt(float64(n))
	return Estimate{Value: m, Low: m - half, High: m + half, Samples: n}, n >= MinTail
}

// rateEstimate is 100·k/n, in percent, with its Wilson score interval, which stays inside
// 0..100 and keeps its coverage for the rare events an error rate counts (k = 0 included).
func rateEstimate(k, n int64) Estimate {
	if n <= 0 {
		return Estimate{}
	}
	p, nf := float64(k)/float64(n), float64(n)
	z2 := z95 * z95
	centre := (p + z2/(2*nf)) / (1 + z2/nf)
	half := z95 / (1 + z2/nf) * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	return Estimate{Value: 100 * p, Low: 100 * max(0, centre-half), High: 100 * min(1, centre+half), Samples: n}
}

// countRateEstimate is k events over span seconds, per second, with the interval of a
// Poisson count, k ± z·sqrt(k) (at least ±z for k = 0, so that a run without events still
// admits some). Samples is k.
func countRateEstimate(k int64, span float64) Estimate {
	if span <= 0 {
		return Estimate{}
	}
	half := z95 * math.Sqrt(max(1, float64(k)))
	return Estimate{Value: float64(k) / span, Low: max(0, float64(k)-half) / span, High: (float64(k) + half) / span, Samples: k}
}

// Change is the candidate's figure against the baseline's, with its 95% interval.
type Change struct {
	// Abs is candidate − baseline, in the metric's unit (percentage points for a rate).
	Abs     float64 `json:"abs"`
	AbsLow  float64 `json:"abs_low"`
	AbsHigh float64 `json:"abs_high"`
	// Rel is candidate / baseline − 1, a ratio (0.2 = +20%); null when the baseline's
	// figure is 0. RelLow and RelHigh are its interval; null also when either run's
	// interval reaches 0 (no ratio to speak of).
	Rel     *float64 `json:"rel"`
	RelLow  *float64 `json:"rel_low"`
	RelHigh *float64 `json:"rel_high"`
}

// changeOf is the change from b to c. The interval of a difference of two independent
// estimates is recovered from the intervals of each (MOVER, Zou and Donner 2008: the
// Newcombe interval for a difference of two rates when they are Wilson intervals), which
// keeps the asymmetry of an order-statistic interval; the relative change is the same
// construction on the logarithms.
func changeOf(b, c Estimate) Change {
	lo, hi := mover(c.Value, c.Low, c.High, b.Value, b.Low, b.High)
	ch := Change{Abs: c.Value - b.Value, AbsLow: lo, AbsHigh: hi}
	if b.Value > 0 {
		rel := c.Value/b.Value - 1
		ch.Rel = &rel
	}
	if b.Value > 0 && c.Value > 0 && b.Low > 0 && c.Low > 0 {
		l := math.Log
		llo, lhi := mover(l(c.Value), l(c.Low), l(c.High), l(b.Value), l(b.Low), l(b.High))
		rlo, rhi := math.Exp(llo)-1, math.Exp(lhi)-1
		ch.RelLow, ch.RelHigh = &rlo, &rhi
	}
	return ch
}

// mover is the interval of x1 − x2 from the intervals [l1, u1] of x1 and [l2, u2] of x2.
func mover(x1, l1, u1, x2, l2, u2 float64) (lo, hi float64) {
	d := x1 - x2
	return d - math.Hypot(x1-l1, u2-x2), d + math.Hypot(u1-x1, x2-l2)
}

// Sections is the number of equal time sections of a run whose figures make the
// batch-means interval of a change; MinSections the fewest sections both runs must hold the
// figure in.
//
// The order-statistic and normal intervals assume independent samples. A fleet's samples
// are not: clients started together poll in step, a pause of the machine slows every
// request of a second, so two runs of one configuration differ by more than their sampling
// noise. The change's spread between the sections of the two runs, section by section
// (batch means, or sectioning, in simulation output analysis, paired), measures that
// variation, and the interval judged by is the wider of the two. Pairing matters: both runs
// follow one schedule (a ramp of arrivals, a window of faults, and in an A/B run one wall
// clock), and the spread of a figure along the schedule is no noise: it cancels in the
// section-by-section change.
const (
	Sections    = 10
	MinSections = 5
)

// tCrit95 are Student's t quantiles for a two-sided 95% interval, by degrees of freedom
// 1 .. Sections-1.
var tCrit95 = [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262}

// batchHalf is the half-width of the 95% batch-means interval of the mean of d: Student's
// t with len(d) − 1 degrees of freedom times the standard error.
func batchHalf(d []float64) float64 {
	n := len(d)
	var sum, sq float64
	for _, v := range d {
		sum += v
	}
	mean := sum / float64(n)
	for _, v := range d {
		sq += (v - mean) * (v - mean)
	}
	return tCrit95[min(n-1, len(tCrit95))-1] * math.Sqrt(sq/float64(n-1)) / math.Sqrt(float64(n))
}

// widenPaired returns ch with its intervals widened to the batch-means intervals of the
// section-by-section changes from b to c (b[i], c[i] the figure in section i of each run;
// NaN where a section lacks it), centred on ch; ok is false when fewer than MinSections
// sections hold the figure in both runs: the runs' own variation cannot be told.
func widenPaired(ch Change, b, c []float64) (Change, int, bool) {
	var diffs, logs []float64
	positive := true
	for i := range min(len(b), len(c)) {
		if math.IsNaN(b[i]) || math.IsNaN(c[i]) {
			continue
		}
		diffs = append(diffs, c[i]-b[i])
		if b[i] > 0 && c[i] > 0 {
			logs = append(logs, math.Log(c[i]/b[i]))
		} else {
			positive = false
		}
	}
	if len(diffs) < MinSections {
		return ch, len(diffs), false
	}
	half := batchHalf(diffs)
	ch.AbsLow, ch.AbsHigh = min(ch.AbsLow, ch.Abs-half), max(ch.AbsHigh, ch.Abs+half)
	if positive && ch.Rel != nil && ch.RelLow != nil && *ch.Rel > -1 {
		h := batchHalf(logs)
		centre := math.Log1p(*ch.Rel)
		lo, hi := min(*ch.RelLow, math.Expm1(centre-h)), max(*ch.RelHigh, math.Expm1(centre+h))
		ch.RelLow, ch.RelHigh = &lo, &hi
	}
	return ch, len(diffs), true
}

// sectionQuantiles are the q-quantiles of the sections, scaled; NaN for a section without
// a value beyond the quantile (n·(1−q) < 1).
func sectionQuantiles(sections []*hdrhistogram.Histogram, q, scale float64) []float64 {
	out := make([]float64, len(sections))
	for i, hh := range sections {
		out[i] = math.NaN()
		if hh != nil && float64(hh.TotalCount())*(1-q) >= 1 {
			out[i] = float64(hh.ValueAtQuantile(100*q)) * scale
		}
	}
	return out
}

// sectionMeans are the means of the sections, scaled; NaN for a section with fewer than
// two values.
func sectionMeans(sections []*hdrhistogram.Histogram, scale float64) []float64 {
	out := make([]float64, len(sections))
	for i, hh := range sections {
		out[i] = math.NaN()
		if hh != nil && hh.TotalCount() >= 2 {
			out[i] = hh.Mean() * scale
		}
	}
	return out
}

// finite says whether every figure of e is a finite number (encoding/json refuses NaN and
// infinities; a figure that is one is a bad input, never a verdict).
func (e *Estimate) finite() bool {
	return e == nil || allFinite(e.Value, e.Low, e.High)
}

func (ch *Change) finite() bool {
	if ch == nil {
		return true
	}
	ok := allFinite(ch.Abs, ch.AbsLow, ch.AbsHigh)
	for _, p := range []*float64{ch.Rel, ch.RelLow, ch.RelHigh} {
		ok = ok && (p == nil || allFinite(*p))
	}
	return ok
}

func allFinite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}
