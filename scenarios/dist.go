package scenarios

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// DistKind names a distribution of durations.
type DistKind string

// Distribution kinds and the fields each one uses (every other field must be 0).
const (
	DistFixed       DistKind = "fixed"       // Value
	DistUniform     DistKind = "uniform"     // Min <= x <= Max, Max > 0
	DistExponential DistKind = "exponential" // Mean > 0; optional clamps Min, Max
	DistNormal      DistKind = "normal"      // Mean > 0, StdDev; optional clamps Min, Max
	DistLognormal   DistKind = "lognormal"   // 0 < P50 <= P99; optional clamps Min, Max
	DistPareto      DistKind = "pareto"      // 0 < P50 < P99; optional clamps Min, Max
)

var distKinds = []DistKind{DistFixed, DistUniform, DistExponential, DistNormal, DistLognormal, DistPareto}

// z99 is the 0.99 quantile of the standard normal distribution, Phi^-1(0.99).
const z99 = 2.3263478740408408

// Dist is a distribution of durations, written {dist: KIND, ...} or, as a shorthand for
// fixed, a bare duration ("1s"). In a file it is replaced whole: the fields not written are 0.
// The zero Dist has no kind and is invalid where a distribution is required; it samples 0.
type Dist struct {
	Kind   DistKind `yaml:"dist"`             // required: fixed|uniform|exponential|normal|lognormal|pareto
	Value  Duration `yaml:"value,omitempty"`  // fixed: the value
	Min    Duration `yaml:"min,omitempty"`    // uniform: lower bound; others: lower clamp (0 = none)
	Max    Duration `yaml:"max,omitempty"`    // uniform: upper bound; others: upper clamp (0 = none)
	Mean   Duration `yaml:"mean,omitempty"`   // exponential, normal: the mean
	StdDev Duration `yaml:"stddev,omitempty"` // normal: the standard deviation
	P50    Duration `yaml:"p50,omitempty"`    // lognormal, pareto: the median
	P99    Duration `yaml:"p99,omitempty"`    // lognormal, pareto: the 0.99 quantile
}

func (*Dist) replacedWhole() {}

// Sample draws one duration from d using r; the result is never negative.
//
//	fixed:       Value
//	uniform:     Min + U[0, Max-Min] (both ends included, nanosecond grain)
//	exponential: Mean * E, E ~ Exp(1)
//	normal:      Mean + StdDev * Z, Z ~ N(0, 1)
//	lognormal:   exp(mu + sigma * Z), mu = ln(P50), sigma = (ln(P99) - ln(P50)) / Phi^-1(0.99)
//	pareto:      xm / U^(1/alpha), U ~ U(0, 1], alpha = ln(50) / ln(P99/P50), xm = P50 / 2^(1/alpha)
//	             (the quantile function xm * (1-q)^(-1/alpha) gives P50 at q = 0.5, P99 at 0.99)
//
// then, except for fixed and uniform, clamped to [Min, Max] (a Max of 0 is no upper bound) and
// to 0 from below.
func (d Dist) Sample(r *rand.Rand) time.Duration {
	var x float64 // nanoseconds
	switch d.Kind {
	case DistFixed:
		return max(time.Duration(d.Value), 0)
	case DistUniform:
		lo, hi := max(time.Duration(d.Min), 0), time.Duration(d.Max)
		if hi <= lo {
			return lo
		}
		span := uint64(hi-lo) + 1
		return lo + time.Duration(r.Uint64N(span))
	case DistExponential:
		x = r.ExpFloat64() * float64(d.Mean)
	case DistNormal:
		x = float64(d.Mean) + float64(d.StdDev)*r.NormFloat64()
	case DistLognormal:
		if d.P50 <= 0 {
			return max(time.Duration(d.Min), 0)
		}
		mu := math.Log(float64(d.P50))
		sigma := 0.0
		if d.P99 > d.P50 {
			sigma = (math.Log(float64(d.P99)) - mu) / z99
		}
		x = math.Exp(mu + sigma*r.NormFloat64())
	case DistPareto:
		if d.P50 <= 0 {
			return max(time.Duration(d.Min), 0)
		}
		if d.P99 <= d.P50 { // invalid (Validate says so): degenerate at P50
			return d.clamp(float64(d.P50))
		}
		alpha := math.Log(50) / math.Log(float64(d.P99)/float64(d.P50))
		xm := float64(d.P50) / math.Pow(2, 1/alpha)
		x = xm / math.Pow(1-r.Float64(), 1/alpha)
	default:
		return 0
	}
	return d.clamp(x)
}

// clamp converts x nanoseconds to a Duration within [max(Min, 0), Max] (Max 0 = no bound).
func (d Dist) clamp(x float64) time.Duration {
	lo := max(float64(d.Min), 0)
	if math.IsNaN(x) || x < lo {
		x = lo
	}
	if d.Max > 0 && x > float64(d.Max) {
		x = float64(d.Max)
	}
	if x >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(x)
}

// String formats d for plans and reports, e.g. "uniform(1s..2s)", "lognormal(p50=100ms, p99=1s)".
func (d Dist) String() string {
	var b strings.Builder
	switch d.Kind {
	case DistFixed:
		return d.Value.String()
	case DistUniform:
		return fmt.Sprintf("uniform(%v..%v)", d.Min, d.Max)
	case DistExponential:
		fmt.Fprintf(&b, "exponential(mean=%v", d.Mean)
	case DistNormal:
		fmt.Fprintf(&b, "normal(mean=%v, stddev=%v", d.Mean, d.StdDev)
	case DistLognormal:
		fmt.Fprintf(&b, "lognormal(p50=%v, p99=%v", d.P50, d.P99)
	case DistPareto:
		fmt.Fprintf(&b, "pareto(p50=%v, p99=%v", d.P50, d.P99)
	default:
		return "none"
	}
	if d.Min > 0 {
		fmt.Fprintf(&b, ", min=%v", d.Min)
	}
	if d.Max > 0 {
		fmt.Fprintf(&b, ", max=%v", d.Max)
	}
	b.WriteString(")")
	return b.String()
}

// problems appends to v every problem with d, which sits at path.
func (d Dist) problems(v *validator, path string) {
	fields := []struct {
		name string
		val  Duration
	}{
		{"value", d.Value}, {"min", d.Min}, {"max", d.Max}, {"mean", d.Mean},
		{"stddev", d.StdDev}, {"p50", d.P50}, {"p99", d.P99},
	}
	for _, f := range fields {
		if f.val < 0 {
			v.add(path+"."+f.name, "must be >= 0, got %v", f.val)
		}
	}
	var uses []string
	switch d.Kind {
	case DistFixed:
		uses = []string{"value"}
	case DistUniform:
		uses = []string{"min", "max"}
		if d.Max <= 0 {
			v.add(path+".max", "must be > 0 with dist uniform, got %v", d.Max)
		} else if d.Min > d.Max {
			v.add(path+".min", "must be <= max (%v), got %v", d.Max, d.Min)
		}
	case DistExponential, DistNormal, DistLognormal, DistPareto:
		switch d.Kind {
		case DistExponential:
			uses = []string{"mean", "min", "max"}
		case DistNormal:
			uses = []string{"mean", "stddev", "min", "max"}
		default:
			uses = []string{"p50", "p99", "min", "max"}
		}
		switch {
		case d.Kind == DistLognormal || d.Kind == DistPareto:
			switch {
			case d.P50 <= 0:
				v.add(path+".p50", "must be > 0 with dist %s, got %v", d.Kind, d.P50)
			case d.Kind == DistLognormal && d.P99 < d.P50:
				v.add(path+".p99", "must be >= p50 (%v), got %v", d.P50, d.P99)
			case d.Kind == DistPareto && d.P99 <= d.P50:
				v.add(path+".p99", "must be > p50 (%v) with dist pareto, got %v", d.P50, d.P99)
			}
		case d.Mean <= 0:
			v.add(path+".mean", "must be > 0 with dist %s, got %v", d.Kind, d.Mean)
		}
		if d.Max > 0 && d.Min > d.Max {
			v.add(path+".min", "must be <= max (%v), got %v", d.Max, d.Min)
		}
	case "":
		v.add(path+".dist", "required, one of %s", kindList())
		return
	default:
		v.add(path+".dist", "must be one of %s, got %q", kindList(), d.Kind)
		return
	}
	for _, f := range fields {
		if f.val != 0 && !slices.Contains(uses, f.name) {
			v.add(path+"."+f.name, "is not used with dist %s (it uses %s)",
				d.Kind, strings.Join(uses, ", "))
		}
	}
}

func kindList() string {
	s := make([]string, len(distKinds))
	for i, k := range distKinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}
