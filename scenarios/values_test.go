package scenarios

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestRateParse(t *testing.T) {
	tests := []struct {
		in        string
		perSecond float64
		str       string // String() of the result
		err       string // substring of the error; "" = no error
	}{
		{in: "50/s", perSecond: 50, str: "50/s"},
		{in: "3000/m", perSecond: 50, str: "3000/m"},
		{in: "7200/h", perSecond: 2, str: "7200/h"},
		{in: "0.5/s", perSecond: 0.5, str: "0.5/s"},
		{in: " 25 / 500ms ", perSecond: 50, str: "25/500ms"},
		{in: "10/2s", perSecond: 5, str: "10/2s"},
		{in: "1/ms", perSecond: 1000, str: "1/1ms"},
		{in: "0/s", perSecond: 0, str: "0/s"},
		{in: "0/m", perSecond: 0, str: "0/s"},
		{in: "1e3/m", perSecond: 1000.0 / 60, str: "1000/m"},
		{in: "2000000/s", perSecond: 2e6, str: "2000000/s"},
		{in: "1e-9/s", perSecond: 1e-9, str: "1e-09/s"},
		{in: "50", err: "want COUNT/UNIT"},
		{in: "", err: "want COUNT/UNIT"},
		{in: "x/s", err: "is not a number"},
		{in: "NaN/s", err: "is not a number"},
		{in: "inf/s", err: "is not a number"},
		{in: "1e999/s", err: "is not a number"},
		{in: "-5/s", err: "must be >= 0"},
		{in: "5/", err: "the unit must be"},
		{in: "5/d", err: "the unit must be"},
		{in: "5/0s", err: "the unit must be"},
		{in: "5/-1s", err: "the unit must be"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			var r Rate
			err := r.UnmarshalText([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("UnmarshalText(%q) = %v, want an error containing %q", tc.in, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("UnmarshalText(%q): %v", tc.in, err)
			}
			if got := r.PerSecond(); got != tc.perSecond {
				t.Errorf("PerSecond() = %v, want %v", got, tc.perSecond)
			}
			if got := r.String(); got != tc.str {
				t.Errorf("String() = %q, want %q", got, tc.str)
			}
			var back Rate // the printed form parses to the same rate
			if err := back.UnmarshalText([]byte(r.String())); err != nil || back != r {
				t.Errorf("round trip of %q: got %+v, %v; want %+v", r.String(), back, err, r)
			}
		})
	}
	if got := (Rate{}).PerSecond(); got != 0 {
		t.Errorf("zero Rate PerSecond() = %v, want 0", got)
	}
}

func TestDurationParse(t *testing.T) {
	tests := []struct {
		yaml string
		want time.Duration
		err  string
	}{
		{yaml: "500ms", want: 500 * time.Millisecond},
		{yaml: "1m30s", want: 90 * time.Second},
		{yaml: `"5s"`, want: 5 * time.Second},
		{yaml: "0", want: 0},
		{yaml: "-1s", want: -time.Second}, // decodes; Validate rejects negatives where they matter
		{yaml: "60", err: `duration "60" has no unit (write it like 60s or 60ms)`},
		{yaml: "1.5", err: `has no unit`},
		{yaml: "soon", err: `invalid duration "soon"`},
		{yaml: "[1s]", err: "expected a duration like 5s, got a sequence"},
		{yaml: "{a: 1}", err: "expected a duration like 5s, got a mapping"},
	}
	for _, tc := range tests {
		t.Run(tc.yaml, func(t *testing.T) {
			var d Duration
			err := yaml.Unmarshal([]byte(tc.yaml), &d)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("decode %q = %v, want an error containing %q", tc.yaml, err, tc.err)
				}
				return
			}
			if err != nil || time.Duration(d) != tc.want {
				t.Fatalf("decode %q = %v, %v; want %v", tc.yaml, d, err, tc.want)
			}
		})
	}
	out, err := yaml.Marshal(map[string]Duration{"d": Duration(1500 * time.Millisecond)})
	if err != nil || string(out) != "d: 1.5s\n" {
		t.Errorf("yaml.Marshal = %q, %v; want %q", out, err, "d: 1.5s\n")
	}
}

// TestSecretNeverPrinted checks every way a secret could reach output.
func TestSecretNeverPrinted(t *testing.T) {
	const value = "s3cr3t-token"
	sec := Secret(value)
	holder := struct {
		H map[string]Secret
		S Secret
	}{map[string]Secret{"Authorization": sec}, sec}
	var outs []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10s", "%T"} {
		outs = append(outs, fmt.Sprintf(verb, sec), fmt.Sprintf(verb, holder))
	}
	outs = append(outs, fmt.Sprint(sec), fmt.Sprintln(holder), sec.String())
	j, err := json.Marshal(holder)
	if err != nil {
		t.Fatal(err)
	}
	y, err := yaml.Marshal(holder)
	if err != nil {
		t.Fatal(err)
	}
	outs = append(outs, string(j), string(y))
	for _, o := range outs {
		if strings.Contains(o, value) || strings.Contains(o, fmt.Sprintf("%x", value)) {
			t.Errorf("secret leaked: %q", o)
		}
	}
	if sec.Reveal() != value {
		t.Errorf("Reveal() = %q, want %q", sec.Reveal(), value)
	}
}

func TestThresholdPositions(t *testing.T) {
	src := "name: t\nduration: 1s\nworkload: {clients: 1}\nthresholds:\n  - \"latency_tasks_get.p99 < 200ms\"\n  -   tasks.failed_rate < 1%\n"
	s, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []Threshold{
		{Expr: "latency_tasks_get.p99 < 200ms", Line: 5, Column: 5},
		{Expr: "tasks.failed_rate < 1%", Line: 6, Column: 7},
	}
	if len(s.Thresholds) != len(want) {
		t.Fatalf("Thresholds = %+v, want %+v", s.Thresholds, want)
	}
	for i := range want {
		if s.Thresholds[i] != want[i] {
			t.Errorf("Thresholds[%d] = %+v, want %+v", i, s.Thresholds[i], want[i])
		}
	}
	if got := s.Where("thresholds[1]"); got != "t.yaml:6:7" {
		t.Errorf(`Where("thresholds[1]") = %q, want "t.yaml:6:7"`, got)
	}
}

// TestThresholdForms: a threshold is a string, or {expr, abort_on_fail, on_no_data}; each
// keeps the expression's position for error messages, and only an explicit
// on_no_data: pass lets a threshold pass without data.
func TestThresholdForms(t *testing.T) {
	s := mustParse(t, minimal+"thresholds:\n  - \"polls.count > 1\"\n  - {expr: \"task_e2e.p99 < 2s\", abort_on_fail: true}\n"+
		"  - {expr: \"detection_lag.p99 < 1s\", on_no_data: pass}\n  - {expr: \"cancel_latency.p99 < 1s\", on_no_data: fail}\n")
	want := []Threshold{
		{Expr: "polls.count > 1", Line: 5, Column: 5},
		{Expr: "task_e2e.p99 < 2s", AbortOnFail: true, Line: 6, Column: 12},
		{Expr: "detection_lag.p99 < 1s", OnNoData: NoDataPass, Line: 7, Column: 12},
		{Expr: "cancel_latency.p99 < 1s", OnNoData: NoDataFail, Line: 8, Column: 12},
	}
	if !slices.Equal(s.Thresholds, want) {
		t.Errorf("thresholds %#v, want %#v", s.Thresholds, want)
	}
	for i, pass := range []bool{false, false, true, false} {
		if got := s.Thresholds[i].PassesOnNoData(); got != pass {
			t.Errorf("thresholds[%d].PassesOnNoData() = %v, want %v", i, got, pass)
		}
	}
}

// TestErrorBudget: every scenario has an error budget, 5% unless it sets its own, written
// with a percent sign.
func TestErrorBudget(t *testing.T) {
	if s := mustParse(t, minimal); s.ErrorBudget != 5 {
		t.Errorf("default error budget %v, want 5%%", s.ErrorBudget)
	}
	s := mustParse(t, minimal+"error_budget: 0.5%\n")
	if s.ErrorBudget != 0.5 || s.ErrorBudget.String() != "0.5%" {
		t.Errorf("error budget %v (%s), want 0.5%%", float64(s.ErrorBudget), s.ErrorBudget)
	}
	for _, bad := range []string{"5", "five%", "%", "NaN%"} {
		var p Percent
		if err := p.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("Percent %q parsed as %v, want an error", bad, p)
		}
	}
	var zero Percent
	if err := zero.UnmarshalText([]byte("0")); err != nil || zero != 0 {
		t.Errorf("Percent \"0\" = %v, %v; want 0%%", zero, err)
	}
}
