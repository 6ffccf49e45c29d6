package runner

import (
	"errors"
	"fmt"
	"io"

	"github.com/tasksim/tasksim/results"
)

// Conclude ends an A/B run for whoever shows it (`tasksim run --baseline-target`): both
// sides' text summaries on w, each under its target, then, when it was made, the comparison,
// which it writes into Dir beside them; it returns the A/B run's verdict (Err).
func (r *ABResult) Conclude(w io.Writer) error {
	for _, o := range r.Sides {
		if o.Summary != nil && !errors.Is(o.Err, ErrNoRunSummary) {
			fmt.Fprintf(w, "== %s side: %s\n", o.Side, o.Target)
			if err := results.WriteTextCompared(w, o.Summary, o.Dir); err != nil {
				return err
			}
			fmt.Fprintln(w)
		}
	}
	if r.Comparison == nil {
		return r.Err()
	}
	fmt.Fprintf(w, "== canary %s against stable %s\n", r.Sides[0].Target, r.Sides[1].Target)
	if err := results.WriteComparisonText(w, r.Comparison); err != nil {
		return err
	}
	if err := results.WriteComparison(r.Dir, r.Comparison); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nfiles       %s/, %s/, %s and %s in %s\n", results.ABCanary, results.ABBaseline, results.CompareJSONFile, results.CompareHTMLFile, r.Dir)
	return r.Err()
}

// JudgeAgainstBaseline judges the finished run in dir against the saved run in baseline
// (`tasksim run --baseline`): the comparison on w, after the run's own summary, and written
// beside the run. The run's own error runErr (a failed gate, an interruption) stays the
// verdict, with a refused comparison said beside it; without one, a refused comparison is a
// *UsageError, and a comparison that does not pass is the verdict (ComparisonError).
func JudgeAgainstBaseline(w io.Writer, baseline, dir string, opts results.CompareOptions, runErr error) error {
	c, err := results.Compare(baseline, dir, opts)
	if err != nil {
		if runErr != nil {
			fmt.Fprintf(w, "\nno comparison with the baseline %s: %v\n", baseline, err)
			return runErr
		}
		return usageErrorf("--baseline %s: %w", baseline, err)
	}
	fmt.Fprintf(w, "\ncompared with the baseline %s:\n", baseline)
	if err := results.WriteComparisonText(w, c); err != nil {
		return err
	}
	if err := results.WriteComparison(dir, c); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nfiles       %s and %s in %s\n", results.CompareJSONFile, results.CompareHTMLFile, dir)
	if runErr != nil {
		return runErr
	}
	return ComparisonError(c)
}
