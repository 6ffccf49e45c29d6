package runner

import (
	"errors"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/scenarios"
)

// TestComparisonError: a passing comparison is no error, any other a *GateError giving
// its first reason.
func TestComparisonError(t *testing.T) {
	if err := ComparisonError(&results.Comparison{Verdict: results.CompareVerdictPass}); err != nil {
		t.Errorf("pass: %v", err)
	}
	var gate *GateError
	err := ComparisonError(&results.Comparison{Verdict: results.CompareVerdictFail, Failures: []string{"p99 +40%"}})
	if !errors.As(err, &gate) || !strings.Contains(err.Error(), "p99 +40%") {
		t.Errorf("fail: %v", err)
	}
	if err := ComparisonError(&results.Comparison{}); err == nil || errors.As(err, &gate) {
		t.Errorf("no verdict: %v, want a plain error", err)
	}
	if (&GateError{}).Error() == "" || (&GateError{Why: "why"}).Error() != "why" {
		t.Error("GateError: the reason, or the run's default message")
	}
}

// TestABResultErr: the A/B run's one verdict from how its sides and comparison ended.
func TestABResultErr(t *testing.T) {
	sides := [2]ABOutcome{{Target: "http://canary"}, {Target: "http://stable"}}
	inconclusive := &results.Comparison{Verdict: results.CompareVerdictInconclusive, Inconclusive: []string{"a side was cut short"}}
	var gate *GateError
	var intr *InterruptedError
	var usage *UsageError
	for _, tc := range []struct {
		name string
		r    ABResult
		ok   func(error) bool
	}{
		{"pass", ABResult{Comparison: &results.Comparison{Verdict: results.CompareVerdictPass}}, func(err error) bool { return err == nil }},
		{"side error", ABResult{SideErrors: errors.New("canary side: down")}, func(err error) bool {
			return err != nil && strings.HasPrefix(err.Error(), "A/B run: no comparison: canary side")
		}},
		{"refused", ABResult{CompareErr: errors.New("not comparable")}, func(err error) bool { return errors.As(err, &usage) }},
		{"refused, stopped", ABResult{CompareErr: errors.New("x"), Interrupted: true}, func(err error) bool { return errors.As(err, &intr) }},
		{"inconclusive, stopped", ABResult{Comparison: inconclusive, Interrupted: true}, func(err error) bool { return errors.As(err, &intr) }},
		{"inconclusive", ABResult{Comparison: inconclusive}, func(err error) bool {
			return errors.As(err, &gate) && strings.HasPrefix(err.Error(), "canary http://canary against stable http://stable: inconclusive")
		}},
	} {
		tc.r.Sides = sides
		if err := tc.r.Err(); !tc.ok(err) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// TestCheckScenario: the scenario's fields and its threshold expressions, every problem at
// once, in a *UsageError.
func TestCheckScenario(t *testing.T) {
	sc, err := scenarios.Load("smoke")
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckScenario(sc); err != nil {
		t.Fatalf("smoke: %v", err)
	}
	sc.Workload.Clients = -1
	sc.Thresholds = append(sc.Thresholds, scenarios.Threshold{Expr: "nonsense <"})
	var usage *UsageError
	if err := CheckScenario(sc); !errors.As(err, &usage) || !strings.Contains(err.Error(), "workload.clients") || !strings.Contains(err.Error(), "nonsense") {
		t.Errorf("CheckScenario = %v, want both problems", err)
	}
}
