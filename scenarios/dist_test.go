package scenarios

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestDistSample checks bounds and the mean of n samples for each kind.
//
// The sample mean of n independent draws has standard error sigma/sqrt(n). With n = 100000 the
// test accepts |mean - mu| <= 5 * sigma/sqrt(n); a correct sampler fails that with probability
// about 6e-7 (two-sided normal tail at 5 sigma), and the seeded source makes every run the same
// draw anyway. A sampler biased by more than 5 standard errors (1.6% of sigma at this n) fails.
func TestDistSample(t *testing.T) {
	const n = 100000
	ms := func(x float64) float64 { return x * float64(time.Millisecond) }
	lnMean := func(p50, p99 float64) (mean, sd float64) { // lognormal from its quantiles
		mu, sigma := math.Log(p50), (math.Log(p99)-math.Log(p50))/z99
		mean = math.Exp(mu + sigma*sigma/2)
		sd = math.Sqrt((math.Exp(sigma*sigma) - 1) * math.Exp(2*mu+sigma*sigma))
		return mean, sd
	}
	lm, lsd := lnMean(ms(100), ms(1000))
	tests := []struct {
		name     string
		d        Dist
		mean, sd float64 // of the distribution, in ns
		lo, hi   time.Duration
	}{
		{"fixed", Dist{Kind: DistFixed, Value: Duration(3 * time.Second)}, ms(3000), 0, 3 * time.Second, 3 * time.Second},
		{"uniform", Dist{Kind: DistUniform, Min: Duration(time.Second), Max: Duration(2 * time.Second)},
			ms(1500), ms(1000) / math.Sqrt(12), time.Second, 2 * time.Second},
		{"exponential", Dist{Kind: DistExponential, Mean: Duration(time.Second)}, ms(1000), ms(1000), 0, math.MaxInt64},
		{"normal", Dist{Kind: DistNormal, Mean: Duration(10 * time.Second), StdDev: Duration(time.Second)},
			ms(10000), ms(1000), 0, math.MaxInt64},
		{"lognormal", Dist{Kind: DistLognormal, P50: Duration(100 * time.Millisecond), P99: Duration(time.Second)},
			lm, lsd, 0, math.MaxInt64},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			var sum float64
			for range n {
				x := tc.d.Sample(r)
				if x < tc.lo || x > tc.hi {
					t.Fatalf("Sample() = %v, outside [%v, %v]", x, tc.lo, tc.hi)
				}
				sum += float64(x)
			}
			mean := sum / n
			if tol := 5 * tc.sd / math.Sqrt(n); math.Abs(mean-tc.mean) > tol {
				t.Errorf("mean of %d samples = %v, want %v +- %v (5 standard errors)",
					n, time.Duration(mean), time.Duration(tc.mean), time.Duration(tol))
			}
		})
	}
}

// TestDistLognormalQuantiles checks that P50 and P99 are the distribution's quantiles: the
// share of n samples below the p-quantile has standard error sqrt(p(1-p)/n); 5 of them again.
func TestDistLognormalQuantiles(t *testing.T) {
	const n = 100000
	d := Dist{Kind: DistLognormal, P50: Duration(200 * time.Millisecond), P99: Duration(3 * time.Second)}
	r := rand.New(rand.NewPCG(3, 4))
	var below50, below99 int
	for range n {
		x := d.Sample(r)
		if x < time.Duration(d.P50) {
			below50++
		}
		if x < time.Duration(d.P99) {
			below99++
		}
	}
	for _, q := range []struct {
		p     float64
		count int
	}{{0.5, below50}, {0.99, below99}} {
		got, tol := float64(q.count)/n, 5*math.Sqrt(q.p*(1-q.p)/n)
		if math.Abs(got-q.p) > tol {
			t.Errorf("share below the %v quantile = %v, want %v +- %v", q.p, got, q.p, tol)
		}
	}
}

// TestDistParetoQuantiles checks the pareto sampler against its quantile function
// Q(q) = xm * (1-q)^(-1/alpha): for each q, the share of n samples below Q(q) is a binomial
// proportion with standard error sqrt(q(1-q)/n) (at most 0.0016 for n = 100000); the test
// accepts 5 of them, which a correct sampler exceeds with probability about 6e-7 per check
// (the seeded source makes every run the same draw anyway). It also checks the support: no
// sample below the scale xm.
func TestDistParetoQuantiles(t *testing.T) {
	const n = 100000
	for _, d := range []Dist{
		{Kind: DistPareto, P50: Duration(100 * time.Millisecond), P99: Duration(5 * time.Second)}, // alpha 1
		{Kind: DistPareto, P50: Duration(10 * time.Millisecond), P99: Duration(40 * time.Millisecond)},
	} {
		alpha := math.Log(50) / math.Log(float64(d.P99)/float64(d.P50))
		xm := float64(d.P50) / math.Pow(2, 1/alpha)
		quantile := func(q float64) float64 { return xm * math.Pow(1-q, -1/alpha) }
		qs := []float64{0.1, 0.5, 0.9, 0.99, 0.999}
		below := make([]int, len(qs))
		r := rand.New(rand.NewPCG(7, 8))
		for range n {
			x := float64(d.Sample(r))
			if x < math.Floor(xm) {
				t.Fatalf("%v: Sample() = %v, below the scale xm = %v", d, time.Duration(x), time.Duration(xm))
			}
			for i, q := range qs {
				if x < quantile(q) {
					below[i]++
				}
			}
		}
		for i, q := range qs {
			got, tol := float64(below[i])/n, 5*math.Sqrt(q*(1-q)/n)
			if math.Abs(got-q) > tol {
				t.Errorf("%v: share below the %v quantile (%v) = %v, want %v +- %v",
					d, q, time.Duration(quantile(q)), got, q, tol)
			}
		}
	}
	// The quantile function at 0.5 and 0.99 is P50 and P99 whatever the ratio.
	for _, ratio := range []float64{1.5, 10, 1000} {
		p50, p99 := float64(time.Second), ratio*float64(time.Second)
		a := math.Log(50) / math.Log(ratio)
		m := p50 / math.Pow(2, 1/a)
		if q50, q99 := m*math.Pow(0.5, -1/a), m*math.Pow(0.01, -1/a); math.Abs(q50-p50) > 1 || math.Abs(q99-p99)/p99 > 1e-9 {
			t.Errorf("ratio %v: Q(0.5) = %v, Q(0.99) = %v, want %v and %v", ratio, q50, q99, p50, p99)
		}
	}
}

// TestDistSampleNeverNegative covers clamps and distributions that reach below zero.
func TestDistSampleNeverNegative(t *testing.T) {
	tests := []struct {
		name   string
		d      Dist
		lo, hi time.Duration
	}{
		{"normal mostly negative", Dist{Kind: DistNormal, Mean: Duration(time.Millisecond), StdDev: Duration(time.Second)}, 0, math.MaxInt64},
		{"normal clamped", Dist{Kind: DistNormal, Mean: Duration(time.Second), StdDev: Duration(time.Second),
			Min: Duration(500 * time.Millisecond), Max: Duration(1200 * time.Millisecond)}, 500 * time.Millisecond, 1200 * time.Millisecond},
		{"exponential clamped", Dist{Kind: DistExponential, Mean: Duration(time.Second), Max: Duration(time.Second)}, 0, time.Second},
		{"lognormal huge", Dist{Kind: DistLognormal, P50: Duration(time.Hour), P99: Duration(math.MaxInt64)}, 0, math.MaxInt64},
		{"fixed negative", Dist{Kind: DistFixed, Value: -5}, 0, 0},
		{"uniform negative min", Dist{Kind: DistUniform, Min: -5, Max: 10}, 0, 10},
		{"uniform empty", Dist{Kind: DistUniform, Min: 7, Max: 3}, 7, 7},
		{"uniform widest", Dist{Kind: DistUniform, Max: math.MaxInt64}, 0, math.MaxInt64},
		{"zero", Dist{}, 0, 0},
		{"unknown kind", Dist{Kind: "weibull", Value: 5}, 0, 0},
		{"pareto huge", Dist{Kind: DistPareto, P50: 1, P99: math.MaxInt64}, 0, math.MaxInt64},
		{"pareto clamped", Dist{Kind: DistPareto, P50: Duration(time.Second), P99: Duration(time.Minute),
			Min: Duration(2 * time.Second), Max: Duration(3 * time.Second)}, 2 * time.Second, 3 * time.Second},
		{"pareto bad", Dist{Kind: DistPareto, P50: 5, P99: 5}, 5, 5},
		{"lognormal bad", Dist{Kind: DistLognormal, P50: -1}, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(5, 6))
			var sawLo, sawHi bool
			for range 20000 {
				x := tc.d.Sample(r)
				if x < tc.lo || x > tc.hi || x < 0 {
					t.Fatalf("Sample() = %v, want within [%v, %v] and >= 0", x, tc.lo, tc.hi)
				}
				sawLo, sawHi = sawLo || x == tc.lo, sawHi || x == tc.hi
			}
			if tc.name == "normal clamped" && !(sawLo && sawHi) {
				t.Errorf("clamps never hit: saw min %v, saw max %v", sawLo, sawHi)
			}
		})
	}
}

// TestDistSampleDeterministic: the same seed gives the same draws (repeatable chaos runs).
func TestDistSampleDeterministic(t *testing.T) {
	d := Dist{Kind: DistLognormal, P50: Duration(time.Millisecond), P99: Duration(time.Second)}
	a, b := rand.New(rand.NewPCG(9, 9)), rand.New(rand.NewPCG(9, 9))
	for i := range 1000 {
		if x, y := d.Sample(a), d.Sample(b); x != y {
			t.Fatalf("draw %d: %v != %v", i, x, y)
		}
	}
}

func TestDistString(t *testing.T) {
	tests := []struct {
		d    Dist
		want string
	}{
		{Dist{Kind: DistFixed, Value: Duration(time.Second)}, "1s"},
		{Dist{Kind: DistUniform, Min: Duration(time.Second), Max: Duration(2 * time.Second)}, "uniform(1s..2s)"},
		{Dist{Kind: DistExponential, Mean: Duration(time.Second), Max: Duration(5 * time.Second)}, "exponential(mean=1s, max=5s)"},
		{Dist{Kind: DistNormal, Mean: Duration(time.Second), StdDev: Duration(time.Millisecond)}, "normal(mean=1s, stddev=1ms)"},
		{Dist{Kind: DistLognormal, P50: Duration(time.Millisecond), P99: Duration(time.Second), Min: 1}, "lognormal(p50=1ms, p99=1s, min=1ns)"},
		{Dist{Kind: DistPareto, P50: Duration(time.Millisecond), P99: Duration(time.Second), Max: Duration(time.Minute)}, "pareto(p50=1ms, p99=1s, max=1m0s)"},
		{Dist{}, "none"},
	}
	for _, tc := range tests {
		if got := tc.d.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// TestDistValidate runs the per-kind rules through Validate on client.cancel.delay.
func TestDistValidate(t *testing.T) {
	tests := []struct {
		delay string
		want  []string // problems, as "PATH: MSG" after the position; nil = valid
	}{
		{delay: "2s"},
		{delay: "{dist: fixed, value: 0s}"},
		{delay: "{dist: uniform, min: 0s, max: 1s}"},
		{delay: "{dist: exponential, mean: 1s, min: 10ms, max: 5s}"},
		{delay: "{dist: normal, mean: 1s, stddev: 0s}"},
		{delay: "{dist: lognormal, p50: 1s, p99: 1s}"},
		{delay: "{dist: pareto, p50: 1s, p99: 10s, min: 1s, max: 1m}"},
		{delay: "{value: 1s}", want: []string{"client.cancel.delay.dist: required, one of fixed, uniform, exponential, normal, lognormal, pareto"}},
		{delay: "{dist: weibull}", want: []string{`client.cancel.delay.dist: must be one of fixed, uniform, exponential, normal, lognormal, pareto, got "weibull"`}},
		{delay: "{dist: pareto}", want: []string{"client.cancel.delay.p50: must be > 0 with dist pareto, got 0s"}},
		{delay: "{dist: pareto, p50: 1s, p99: 1s}", want: []string{"client.cancel.delay.p99: must be > p50 (1s) with dist pareto, got 1s"}},
		{delay: "{dist: pareto, p50: 1s, p99: 2s, mean: 1s, min: 3s, max: 2s}", want: []string{
			"client.cancel.delay.min: must be <= max (2s), got 3s",
			"client.cancel.delay.mean: is not used with dist pareto (it uses p50, p99, min, max)",
		}},
		{delay: "{dist: fixed, value: -1s}", want: []string{"client.cancel.delay.value: must be >= 0, got -1s"}},
		{delay: "{dist: fixed, value: 1s, max: 2s}", want: []string{"client.cancel.delay.max: is not used with dist fixed (it uses value)"}},
		{delay: "{dist: uniform, min: 1s}", want: []string{"client.cancel.delay.max: must be > 0 with dist uniform, got 0s"}},
		{delay: "{dist: uniform, min: 3s, max: 2s}", want: []string{"client.cancel.delay.min: must be <= max (2s), got 3s"}},
		{delay: "{dist: uniform, min: 1s, max: 2s, mean: 1s}", want: []string{"client.cancel.delay.mean: is not used with dist uniform (it uses min, max)"}},
		{delay: "{dist: exponential}", want: []string{"client.cancel.delay.mean: must be > 0 with dist exponential, got 0s"}},
		{delay: "{dist: exponential, mean: 1s, stddev: 1s}", want: []string{"client.cancel.delay.stddev: is not used with dist exponential (it uses mean, min, max)"}},
		{delay: "{dist: normal, mean: 1s, min: 2s, max: 1s}", want: []string{"client.cancel.delay.min: must be <= max (1s), got 2s"}},
		{delay: "{dist: normal, stddev: -1s}", want: []string{
			"client.cancel.delay.stddev: must be >= 0, got -1s",
			"client.cancel.delay.mean: must be > 0 with dist normal, got 0s",
		}},
		{delay: "{dist: lognormal, p99: 1s}", want: []string{"client.cancel.delay.p50: must be > 0 with dist lognormal, got 0s"}},
		{delay: "{dist: lognormal, p50: 2s, p99: 1s, value: 1s}", want: []string{
			"client.cancel.delay.p99: must be >= p50 (2s), got 1s",
			"client.cancel.delay.value: is not used with dist lognormal (it uses p50, p99, min, max)",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.delay, func(t *testing.T) {
			s := mustParse(t, minimal+"client:\n  cancel:\n    probability: 0.5\n    delay: "+tc.delay+"\n")
			checkProblems(t, s.Validate(), tc.want)
		})
	}
}

// checkProblems compares the problems in err, without their positions, to want.
func checkProblems(t *testing.T, err error, want []string) {
	t.Helper()
	var got []string
	for _, e := range problems(t, err) {
		got = append(got, e.Path+": "+e.Msg)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
