package runner

import (
	"errors"

	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/scenarios"
)

// CheckBaseline refuses, before anything runs, a run of sc as the slice shard into out
// that is to be judged against the saved run in baseline (`run --baseline`) and could not
// be: out is baseline's directory (the run would replace the run it is judged against), or
// the two runs are not comparable (results.CheckComparable). Every problem is a
// *UsageError. Checking first spares a run whose comparison would be refused at its end.
func CheckBaseline(baseline, out string, sc *scenarios.Scenario, shard scenarios.Shard, opts results.CompareOptions) error {
	if out != "" && results.SameDir(out, baseline) {
		return usageErrorf("--out %s is --baseline's directory: the run would replace the run it is judged against", out)
	}
	if err := results.CheckComparable(baseline, sc.Name, results.NewRunConfig(sc, shard), opts); err != nil {
		return usageErrorf("--baseline %s: %w", baseline, err)
	}
	return nil
}

// ComparisonError is a comparison's verdict as the error of the command that made it
// (`compare`, `run --baseline`, an A/B run): nil for a pass, a *GateError naming the first
// reason otherwise.
func ComparisonError(c *results.Comparison) error {
	if c.Verdict == results.CompareVerdictPass {
		return nil
	}
	if why := c.Reason(); why != "" {
		return &GateError{Why: why}
	}
	return errors.New("comparison without a verdict")
}
