package scenarios

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Duration is a time.Duration written as a Go duration string ("500ms", "5s", "1m30s").
// A bare number is rejected (except 0) because its unit would be a guess.
// The zero value is 0s; convert with time.Duration(d).
type Duration time.Duration

var (
	_ yaml.Unmarshaler = (*Duration)(nil)
	_ yaml.Unmarshaler = (*Rate)(nil)
	_ yaml.Unmarshaler = (*Threshold)(nil)
	_ yaml.Unmarshaler = (*Percent)(nil)
)

// String formats d like time.Duration does ("1m30s").
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText writes d as a Go duration string, so YAML and JSON encoders print "5s".
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	v, err := time.ParseDuration(s)
	if err != nil {
		if _, numErr := strconv.ParseFloat(s, 64); numErr == nil {
			return fmt.Errorf("duration %q has no unit (write it like %ss or %sms)", s, s, s)
		}
		return fmt.Errorf("invalid duration %q (want a Go duration like 500ms, 5s or 1m30s)", s)
	}
	*d = Duration(v)
	return nil
}

// UnmarshalYAML accepts a scalar holding a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if err := wantScalar(n, "a duration like 5s"); err != nil {
		return err
	}
	return d.UnmarshalText([]byte(n.Value))
}

// Rate is an arrival rate written "COUNT/UNIT": "50/s", "3000/m", "0.5/s", "10/h", or with a
// Go duration as the unit: "25/500ms". The zero value is no arrivals (0/s); every zero rate
// decodes to it.
type Rate struct {
	Count float64       // events per Per; >= 0
	Per   time.Duration // the unit; 0 only in the zero Rate
}

// PerSecond is the rate in events per second: Count / Per (0 for the zero Rate).
func (r Rate) PerSecond() float64 {
	if r.Per <= 0 {
		return 0
	}
	return r.Count / r.Per.Seconds()
}

// IsZero reports whether r is no arrivals at all (yaml's omitempty uses it).
func (r Rate) IsZero() bool { return r.Count == 0 }

// String formats r as it is written: "50/s", "3000/m", "25/500ms".
func (r Rate) String() string {
	unit := r.Per.String()
	switch r.Per {
	case 0, time.Second:
		unit = "s"
	case time.Minute:
		unit = "m"
	case time.Hour:
		unit = "h"
	}
	format := byte('f')
	if r.Count != 0 && (r.Count < 1e-6 || r.Count >= 1e15) {
		format = 'g'
	}
	return strconv.FormatFloat(r.Count, format, -1, 64) + "/" + unit
}

// MarshalText writes r as String does.
func (r Rate) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText parses "COUNT/UNIT" where UNIT is s, m, h, ms or a Go duration ("500ms").
func (r *Rate) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	num, unit, ok := strings.Cut(s, "/")
	if !ok {
		return fmt.Errorf("invalid rate %q (want COUNT/UNIT, like 50/s or 3000/m)", s)
	}
	count, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(count) || math.IsInf(count, 0) {
		return fmt.Errorf("invalid rate %q: %q is not a number", s, num)
	}
	if count < 0 {
		return fmt.Errorf("invalid rate %q: the count must be >= 0", s)
	}
	unit = strings.TrimSpace(unit)
	if unit != "" && (unit[0] < '0' || unit[0] > '9') && unit[0] != '.' {
		unit = "1" + unit
	}
	per, err := time.ParseDuration(unit)
	if err != nil || per <= 0 {
		return fmt.Errorf("invalid rate %q: the unit must be s, m, h or a positive duration like 500ms", s)
	}
	*r = Rate{Count: count, Per: per}
	if count == 0 {
		*r = Rate{} // one zero rate, whatever its unit
	}
	return nil
}

// UnmarshalYAML accepts a scalar "COUNT/UNIT".
func (r *Rate) UnmarshalYAML(n *yaml.Node) error {
	if err := wantScalar(n, "a rate like 50/s"); err != nil {
		return err
	}
	return r.UnmarshalText([]byte(n.Value))
}

// Secret is a string that is never printed: every fmt verb, MarshalText (hence YAML and JSON
// encoding) and String give "[redacted]". Reveal returns the value for the one place that
// sends it (an HTTP header). The zero value is the empty secret.
type Secret string

const redacted = "[redacted]"

// Reveal returns the secret value.
func (s Secret) Reveal() string { return string(s) }

// String returns "[redacted]".
func (s Secret) String() string { return redacted }

// GoString returns "[redacted]", for %#v.
func (s Secret) GoString() string { return redacted }

// Format writes "[redacted]" whatever the verb, so no fmt call can leak the value.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redacted)) }

// MarshalText returns "[redacted]".
func (s Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// Threshold is one user threshold expression, kept as written; the results package parses it.
// Line and Column locate it in Scenario.Source (both 0 when it came from --set or from code),
// so that package can report a bad expression as Source:Line:Column.
//
// In a file it is a string, or a mapping
//
//	{expr: "...", abort_on_fail: true, on_no_data: pass}
//
// abort_on_fail stops the load phase as soon as one window (one second) fails it; on_no_data
// says what a run with nothing to measure for its metric gives: fail (the default: nothing
// passes on missing evidence) or pass.
type Threshold struct {
	Expr        string   // e.g. "latency_tasks_get.p99 < 200ms"
	AbortOnFail bool     // stop the load (then drain) the first time a window fails it
	OnNoData    NoDataIs // verdict when the run has no data for the metric; "" = NoDataFail
	Line        int      // 1-based line of Expr in the scenario file; 0 = not from a file
	Column      int      // 1-based column; 0 = not from a file
}

// NoDataIs is the verdict of a threshold whose metric had no samples in the run.
type NoDataIs string

// The verdicts on no data.
const (
	NoDataFail NoDataIs = "fail" // the threshold fails, saying "no data"; also the zero value
	NoDataPass NoDataIs = "pass" // the scenario accepts a run without the metric (opt-in)
)

// PassesOnNoData reports whether the threshold passes when its metric has no data.
func (t Threshold) PassesOnNoData() bool { return t.OnNoData == NoDataPass }

// String returns the expression.
func (t Threshold) String() string { return t.Expr }

// MarshalText writes the expression alone.
func (t Threshold) MarshalText() ([]byte, error) { return []byte(t.Expr), nil }

// MarshalYAML writes the string form, or the mapping form when AbortOnFail or OnNoData is
// set.
func (t Threshold) MarshalYAML() (any, error) {
	if !t.AbortOnFail && t.OnNoData == "" {
		return t.Expr, nil
	}
	return struct {
		Expr        string   `yaml:"expr"`
		AbortOnFail bool     `yaml:"abort_on_fail,omitempty"`
		OnNoData    NoDataIs `yaml:"on_no_data,omitempty"`
	}{t.Expr, t.AbortOnFail, t.OnNoData}, nil
}

// UnmarshalText sets the threshold from its text, as --set gives it: an expression, or the
// mapping form in YAML flow style ({expr: "...", on_no_data: pass}). The position is
// cleared. An expression never starts with "{".
func (t *Threshold) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	if !strings.HasPrefix(s, "{") {
		*t = Threshold{Expr: string(b)}
		return nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(s), &doc); err != nil {
		return fmt.Errorf("invalid threshold mapping %q: %s", s, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var th Threshold
	if len(doc.Content) != 1 {
		return fmt.Errorf("invalid threshold mapping %q", s)
	}
	if err := th.UnmarshalYAML(doc.Content[0]); err != nil {
		return err
	}
	th.Line, th.Column = 0, 0
	*t = th
	return nil
}

// UnmarshalYAML accepts a scalar, or a mapping with expr, abort_on_fail and on_no_data, and
// records the expression's position.
func (t *Threshold) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		*t = Threshold{}
		var expr *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			switch k.Value {
			case "expr":
				if err := wantScalar(v, "a threshold expression string"); err != nil {
					return err
				}
				expr = v
			case "abort_on_fail":
				if err := v.Decode(&t.AbortOnFail); err != nil {
					return fmt.Errorf("abort_on_fail: expected true or false, got %s", describe(v))
				}
			case "on_no_data":
				if v.Kind != yaml.ScalarNode || (v.Value != string(NoDataFail) && v.Value != string(NoDataPass)) {
					return fmt.Errorf("on_no_data: expected fail or pass, got %s", describe(v))
				}
				t.OnNoData = NoDataIs(v.Value)
			default:
				return fmt.Errorf("%s: unknown field in a threshold (valid: expr, abort_on_fail, on_no_data)", k.Value)
			}
		}
		if expr == nil {
			return fmt.Errorf("a threshold mapping needs expr")
		}
		t.Expr, t.Line, t.Column = expr.Value, expr.Line, expr.Column
		return nil
	}
	if err := wantScalar(n, "a threshold expression string or {expr, abort_on_fail, on_no_data}"); err != nil {
		return err
	}
	*t = Threshold{Expr: n.Value, Line: n.Line, Column: n.Column}
	return nil
}

// Percent is a share written with a percent sign: "5%", "0.5%", "100%". A bare 0 is
// accepted; any other bare number is rejected, since 0.05 and 5 would both be guesses. The
// value is in percent (5% is 5); the zero value is 0%.
type Percent float64

// String formats p as it is written: "5%".
func (p Percent) String() string { return strconv.FormatFloat(float64(p), 'f', -1, 64) + "%" }

// MarshalText writes p as String does.
func (p Percent) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText parses "N%" (or a bare 0). The range is checked by Validate.
func (p *Percent) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	num, pct := strings.CutSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	switch {
	case err != nil || math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Errorf("invalid percentage %q (want a number with %%, like 5%% or 0.5%%)", s)
	case !pct && v != 0:
		return fmt.Errorf("percentage %q has no %%: write it like %s%%", s, num)
	}
	*p = Percent(v)
	return nil
}

// UnmarshalYAML accepts a scalar "N%".
func (p *Percent) UnmarshalYAML(n *yaml.Node) error {
	if err := wantScalar(n, "a percentage like 5%"); err != nil {
		return err
	}
	return p.UnmarshalText([]byte(n.Value))
}

// wantScalar fails unless n is a non-null scalar.
func wantScalar(n *yaml.Node, what string) error {
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		return fmt.Errorf("expected %s, got %s", what, describe(n))
	}
	return nil
}

// describe names a node's kind and, for scalars, its value, for error messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a sequence"
	case yaml.ScalarNode:
		v := n.Value
		if len(v) > 40 {
			v = v[:37] + "..."
		}
		switch n.ShortTag() {
		case "!!null":
			return "null"
		case "!!int":
			return "integer " + v
		case "!!float":
			return "number " + v
		case "!!bool":
			return "boolean " + v
		}
		return strconv.Quote(v)
	}
	return "an empty node"
}
