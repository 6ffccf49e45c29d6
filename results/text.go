package results

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tasksim/tasksim/metrics"
)

// textLatencies are the histograms WriteText shows, with their labels.
var textLatencies = []struct {
	label string
	h     metrics.Hist
}{
	{"tools/call", metrics.LatencyToolsCall},
	{"tasks/get", metrics.LatencyTasksGet},
	{"task_e2e", metrics.TaskE2E},
	{"detection_lag", metrics.DetectionLag},
	{"schedule_lag", metrics.ScheduleLag},
}

// WriteText writes a short human summary of s to w, for stdout at the end of a run:
// outcomes, key percentiles, fleet figures, whether the run is trustworthy, each gate and
// threshold, the verdict and, when dir is not "", where the files are.
func WriteText(w io.Writer, s *Summary, dir string) error {
	p := &printer{w: w}
	p.f("tasksim %s: scenario %s, seed %d, protocol %s, target %s\n",
		s.TasksimVersion, s.Scenario, s.Seed, s.Protocol, s.Target)
	p.f("started %s, ran %ss\n", s.StartedAt.Format("2006-01-02T15:04:05Z07:00"), num(s.DurationS))
	if s.Interrupted {
		p.f("INTERRUPTED by a signal (Ctrl-C or SIGTERM): the figures cover the part of the run that happened\n")
	}
	if s.Aborted != "" {
		p.f("ABORTED: %s\n", s.Aborted)
	}
	t := s.Tasks
	p.f("tasks       created %d, completed %d, failed %d, cancelled %d, expired %d, unknown %d, dropped %d\n",
		t.Created, t.Completed, t.Failed, t.Cancelled, t.Expired, t.Unknown, t.Dropped)
	var n, errs int64
	for _, rs := range s.Requests {
		n, errs = n+rs.Count, errs+rs.Errors
	}
	pct, _ := rate(errs, n)
	p.f("requests    %d sent, %d errors (%s%%)\n", n, errs, num(round3(pct)))
	p.f("latency ms  %-14s %8s %10s %10s %10s %10s\n", "", "count", "p50", "p90", "p99", "max")
	for _, l := range textLatencies {
		st, ok := s.Metrics[l.h.Name()]
		if !ok {
			p.f("            %-14s %8s\n", l.label, "-")
			continue
		}
		p.f("            %-14s %8d %10.3f %10.3f %10.3f %10.3f\n", l.label, st.Count, st.P50, st.P90, st.P99, st.Max)
	}
	p.f("fleet       poll amplification %s, status reads per task %s, polls per second %s\n",
		num(s.Fleet.PollAmplification), num(s.Fleet.StatusReadsPerTask), num(s.Fleet.PollsPerSecond))
	switch {
	case !s.Trustworthy:
		p.f("trust       NOT TRUSTWORTHY: %s\n", s.TrustNote)
	case s.TrustNote != "":
		p.f("trust       trustworthy (%s)\n", s.TrustNote)
	default:
		p.f("trust       trustworthy\n")
	}
	for i, g := range s.Gates.list() {
		head := "gates      "
		if i > 0 {
			head = "           "
		}
		p.f("%s %-14s %s\n", head, g.name, gateText(g.gate))
	}
	for i, r := range s.Thresholds {
		head := "thresholds "
		if i > 0 {
			head = "           "
		}
		p.f("%s %s\n", head, thresholdText(r))
	}
	if code := s.ExitCode(); code == ExitInterrupted {
		p.f("verdict     %s so far, but the run was interrupted (exit code %d)\n", strings.ToUpper(s.Verdict), code)
	} else {
		p.f("verdict     %s (exit code %d)\n", strings.ToUpper(s.Verdict), code)
	}
	if dir != "" {
		files := SummaryJSONFile + ", " + SummaryCSVFile + ", " + TimeseriesFile + ", " + HistogramLogFile
		for _, f := range []string{EventsFile, ReportFile} {
			if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
				files += ", " + f
			}
		}
		p.f("files       %s in %s\n", files, filepath.Clean(dir))
	}
	return p.err
}

// gateText is one gate's line: its verdict and its scalar evidence.
func gateText(g *Gate) string {
	if !g.Evaluated {
		return "not evaluated: " + fmt.Sprint(g.Evidence["reason"])
	}
	var b strings.Builder
	if g.Pass {
		b.WriteString("pass")
	} else {
		b.WriteString("FAIL")
	}
	for _, k := range slices.Sorted(maps.Keys(g.Evidence)) {
		switch v := g.Evidence[k].(type) {
		case float64: // from ReadSummary
			fmt.Fprintf(&b, " %s=%s", k, num(v))
		case string, bool, int, int64:
			fmt.Fprintf(&b, " %s=%v", k, v)
		}
	}
	if nc := stringList(g.Evidence["not_checked"]); len(nc) > 0 {
		b.WriteString("; not checked: " + strings.Join(nc, ", "))
	}
	return b.String()
}

// stringList returns v as a list of strings: []string from Build, []any from ReadSummary.
func stringList(v any) []string {
	switch x := v.(type) {
	case []string:
		return x
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			out = append(out, fmt.Sprint(e))
		}
		return out
	}
	return nil
}

// thresholdText is one threshold's line.
func thresholdText(r ThresholdResult) string {
	if r.Error != "" {
		return "FAIL " + r.Error
	}
	verdict := "pass"
	if !r.Pass {
		verdict = "FAIL"
	}
	line := fmt.Sprintf("%s %s: %s", verdict, r.Expr, withUnit(r.Value, r.Unit))
	if r.NoData {
		line += " (no data)"
	}
	if r.WindowsFailed > 0 {
		line += fmt.Sprintf(" (%d of %d windows failed, worst %s in window %d)",
			r.WindowsFailed, r.WindowsEvaluated, withUnit(r.WorstValue, r.Unit), r.WorstWindow)
	}
	return line
}

// withUnit formats a figure with its unit: 12.5ms, 3%, 1.2, 15/s.
func withUnit(v float64, unit string) string {
	switch unit {
	case "ms", "%":
		return num(v) + unit
	case "per_s":
		return num(v) + "/s"
	}
	return num(v)
}

// printer is fmt.Fprintf that keeps the first error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}
