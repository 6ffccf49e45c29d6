package results

import (
	"math"
	"math/rand/v2"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tasksim/tasksim/metrics"
)

// expHist draws n latencies from an exponential distribution of mean meanMS, shifted by
// shiftMS, into a latency histogram (microseconds, as the recorder keeps them).
func expHist(r *rand.Rand, n int, meanMS, shiftMS float64) *hdrhistogram.Histogram {
	hh := metrics.NewHistogram(metrics.LatencyTasksGet)
	for range n {
		_ = hh.RecordValue(int64(1000 * (shiftMS + r.ExpFloat64()*meanMS)))
	}
	return hh
}

// TestQuantileIntervalCoverage checks the order-statistic interval against an analytic
// case: the p50, p95 and p99 of an exponential distribution of mean 2 ms are known
// (-2 ln(1-q) ms), and the 95% interval of each, from 2000 samples, holds the true value
// in about 95% of 400 seeded draws (90% .. 99%: the coverage of a 95% interval with a
// binomial spread of ±2.2 points over 400 trials, the histogram's 3-digit buckets aside).
func TestQuantileIntervalCoverage(t *testing.T) {
	const trials, n, mean = 400, 2000, 2.0
	scale := metrics.LatencyTasksGet.Scale()
	for _, q := range []float64{0.5, 0.95, 0.99} {
		truth := -mean * math.Log(1-q)
		covered := 0
		r := rand.New(rand.NewPCG(1, uint64(100*q)))
		for range trials {
			e, ok := quantileEstimate(expHist(r, n, mean, 0), q, scale)
			if !ok {
				t.Fatalf("p%v of %d samples: not judged", 100*q, n)
			}
			if e.Low <= truth && truth <= e.High {
				covered++
			}
		}
		if share := float64(covered) / trials; share < 0.90 || share > 0.99 {
			t.Errorf("p%v: the 95%% interval held the true %.3fms in %.1f%% of %d draws, want 90..99%%", 100*q, truth, 100*share, trials)
		}
	}
}

// TestChangeIntervalAnalytic checks the interval of a change between two runs: for two
// runs of one distribution it excludes no change in about 5% of draws (the false alarms
// of the interval alone, before any budget), and for a candidate 30 ms slower (a shift:
// every quantile moves by exactly 30 ms) it holds +30 ms in about 95% of draws and never
// admits no change.
func TestChangeIntervalAnalytic(t *testing.T) {
	const trials, n = 400, 2000
	scale := metrics.LatencyTasksGet.Scale()
	for _, q := range []float64{0.5, 0.99} {
		r := rand.New(rand.NewPCG(2, uint64(100*q)))
		alarms, covered, missed := 0, 0, 0
		for range trials {
			b, _ := quantileEstimate(expHist(r, n, 2, 0), q, scale)
			same, _ := quantileEstimate(expHist(r, n, 2, 0), q, scale)
			slow, _ := quantileEstimate(expHist(r, n, 2, 30), q, scale)
			if ch := changeOf(b, same); ch.AbsLow > 0 || ch.AbsHigh < 0 {
				alarms++
			}
			ch := changeOf(b, slow)
			if ch.AbsLow <= 30 && 30 <= ch.AbsHigh {
				covered++
			}
			if ch.AbsLow <= 0 {
				missed++
			}
		}
		if share := float64(alarms) / trials; share > 0.10 {
			t.Errorf("p%v: identical runs: the change's interval excluded 0 in %.1f%% of draws, want <= 10%%", 100*q, 100*share)
		}
		if share := float64(covered) / trials; share < 0.90 {
			t.Errorf("p%v: +30ms: the change's interval held +30ms in %.1f%% of draws, want >= 90%%", 100*q, 100*share)
		}
		if missed > 0 {
			t.Errorf("p%v: +30ms: the change's interval admitted no change in %d of %d draws", 100*q, missed, trials)
		}
	}
}

// TestTooFewSamples: a quantile is judged only with MinTail samples beyond it.
func TestTooFewSamples(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	scale := metrics.LatencyTasksGet.Scale()
	for _, c := range []struct {
		n  int
		q  float64
		ok bool
	}{{999, 0.99, false}, {1000, 0.99, true}, {199, 0.95, false}, {200, 0.95, true}, {19, 0.5, false}, {20, 0.5, true}} {
		if _, ok := quantileEstimate(expHist(r, c.n, 2, 0), c.q, scale); ok != c.ok {
			t.Errorf("p%v of %d samples: judged %v, want %v", 100*c.q, c.n, ok, c.ok)
		}
	}
}

// TestWilson checks the rate interval against published values (Newcombe 1998, table I):
// 0 of 10 is 0 .. 27.75%, 81 of 263 is 25.53 .. 36.62%.
func TestWilson(t *testing.T) {
	for _, c := range []struct {
		k, n      int64
		low, high float64
	}{{0, 10, 0, 27.75}, {81, 263, 25.53, 36.62}} {
		e := rateEstimate(c.k, c.n)
		if math.Abs(e.Low-c.low) > 0.01 || math.Abs(e.High-c.high) > 0.01 {
			t.Errorf("%d of %d: interval %.2f..%.2f%%, want %.2f..%.2f%%", c.k, c.n, e.Low, e.High, c.low, c.high)
		}
	}
}

// TestWidenPaired: the batch-means interval of a change is that of the section-by-section
// changes. Two runs that share a ramp (the figure grows along the schedule in both) and
// differ by a factor of 1.3 in every section get a tight interval around +30%: the ramp
// cancels, as it does not when each run's spread is taken alone. Sections that disagree
// widen the interval; fewer than MinSections paired sections refuse to judge.
func TestWidenPaired(t *testing.T) {
	var b, c []float64
	for i := range 10 {
		b = append(b, 5+10*float64(i))
		c = append(c, 1.3*(5+10*float64(i)))
	}
	ch := changeOf(Estimate{Value: 50, Low: 49, High: 51}, Estimate{Value: 65, Low: 64, High: 66})
	got, n, ok := widenPaired(ch, b, c)
	if !ok || n != 10 {
		t.Fatalf("ramp: ok %v with %d sections", ok, n)
	}
	if got.AbsLow <= 0 || *got.RelLow < 0.26 || *got.RelHigh > 0.34 { // the order statistics' interval, not widened
		t.Errorf("ramp ×1.3: abs %.3f..%.3f, rel %.4f..%.4f: want a change beyond 0 and +30%% tight", got.AbsLow, got.AbsHigh, *got.RelLow, *got.RelHigh)
	}
	noisy := []float64{40, 60, 40, 60, 40, 60}
	base := []float64{50, 50, 50, 50, 50, 50}
	got, _, _ = widenPaired(changeOf(Estimate{Value: 50, Low: 49.9, High: 50.1}, Estimate{Value: 50, Low: 49.9, High: 50.1}), base, noisy)
	// the differences ±10, sd 10.954, t(5) 2.571, sqrt(6): half 11.5
	if math.Abs(got.AbsHigh-11.498) > 0.01 || math.Abs(got.AbsLow+11.498) > 0.01 {
		t.Errorf("disagreeing sections: %.3f..%.3f, want -11.498..11.498", got.AbsLow, got.AbsHigh)
	}
	nan := math.NaN()
	if _, n, ok := widenPaired(ch, []float64{1, 2, 3, 4, nan, 6}, []float64{1, 2, 3, 4, 5, nan}); ok || n != 4 {
		t.Errorf("4 paired sections: ok %v, %d: want too few", ok, n)
	}
}
