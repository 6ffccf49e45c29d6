package results

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteComparisonText prints the comparison as `tasksim compare` shows it: the verdict
// first, the two runs, the metric table, the pass/fail rows that changed, then why the
// verdict is what it is and what was not judged.
func WriteComparisonText(w io.Writer, c *Comparison) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "verdict     %s\n", verdictLine(c))
	for _, r := range []struct {
		name string
		run  CompareRun
	}{{"baseline ", c.Baseline}, {"candidate", c.Candidate}} {
		fmt.Fprintf(ew, "%s   %s: %s, %s, seed %d, %ss, verdict %s\n", r.name, r.run.Dir, r.run.Target, r.run.Protocol, r.run.Seed, num(r.run.DurationS), r.run.Verdict)
	}
	for _, d := range c.Differences {
		fmt.Fprintf(ew, "allowed     %s\n", d)
	}
	fmt.Fprintln(ew)
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "METRIC\tBASELINE\tCANDIDATE\tCHANGE\t95% INTERVAL\tBUDGET\tVERDICT")
	for _, m := range c.Metrics {
		change, interval := "", ""
		if m.Change != nil {
			change = changeText(m.Unit, m.Change)
			if def, _ := compareMetric(m.Metric); def.kind != mRare {
				interval = intervalText(m.Unit, m.Change)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Metric, estimateText(m.Unit, m.Baseline), estimateText(m.Unit, m.Candidate),
			change, interval, m.Budget, verdictCell(m.Verdict))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	rows := changedRows(c)
	if len(rows) > 0 {
		fmt.Fprintln(ew)
		for _, r := range rows {
			fmt.Fprintln(ew, r)
		}
	}
	lists := []struct {
		title string
		lines []string
	}{{"failures", c.Failures}, {"inconclusive", c.Inconclusive}, {"not judged", c.NotJudged}}
	for _, l := range lists {
		if len(l.lines) == 0 {
			continue
		}
		fmt.Fprintf(ew, "\n%s:\n", l.title)
		for _, line := range l.lines {
			fmt.Fprintf(ew, "  - %s\n", line)
		}
	}
	if len(c.ManifestDrift) > 0 {
		fmt.Fprintln(ew, "\nmanifest drift (listed, not judged):")
		for _, d := range c.ManifestDrift {
			fmt.Fprintf(ew, "  - %s\n", d)
		}
	}
	return ew.err
}

// verdictLine is the first line: the verdict, its exit code, and its first reason.
func verdictLine(c *Comparison) string {
	switch c.Verdict {
	case CompareVerdictFail:
		return fmt.Sprintf("fail (exit 99): %s", plural(len(c.Failures), "failure"))
	case CompareVerdictInconclusive:
		return fmt.Sprintf("inconclusive (exit 99): %s", c.Inconclusive[0])
	}
	if len(c.NotJudged) > 0 { // a pass vouches only for what it judged
		return fmt.Sprintf("pass (exit 0): no regression beyond the budgets in what was judged; %s not judged (listed below)",
			plural(len(c.NotJudged), "figure"))
	}
	return "pass (exit 0): no regression beyond the budgets"
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// verdictCell is a metric verdict as the table shows it: a regression in capitals.
func verdictCell(v string) string {
	if v == MetricRegression {
		return "REGRESSION"
	}
	return v
}

// estimateText is a figure with its unit; "-" when not measured.
func estimateText(unit string, e *Estimate) string {
	if e == nil {
		return "-"
	}
	s := num(round3(e.Value))
	switch unit {
	case "ms":
		return s + "ms"
	case "%":
		return s + "%"
	case "per_s":
		return s + "/s"
	}
	return s
}

// changedRows are the gates, thresholds and contract cases the text lists (VerdictChange.
// shown), one line each, then how many neither run judged.
func changedRows(c *Comparison) []string {
	var out []string
	unjudged := 0
	for _, set := range c.rowSets() {
		what, _, _ := strings.Cut(set.what, " ")
		for _, r := range set.rows {
			if r.unjudged() {
				unjudged++
			}
			if r.shown() {
				out = append(out, fmt.Sprintf("%-9s %s: %s -> %s: %s", what, r.Name, orDash(r.Baseline), orDash(r.Candidate), strings.ToUpper(r.Verdict)))
			}
		}
	}
	if unjudged > 0 {
		out = append(out, fmt.Sprintf("(%s judged in neither run: gates not evaluated, contract cases skipped, thresholds without data; in %s)",
			plural(unjudged, "row"), CompareJSONFile))
	}
	return out
}

// errWriter is a writer that keeps the first error of a run of prints.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return len(p), nil
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, nil
}
