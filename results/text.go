package results

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

// textLatencies are the histograms WriteText shows, with their labels.
var textLatencies = []struct {
	label string
	h     metrics.Hist
}{
	{mcp.OpToolsCall.Name(), metrics.LatencyToolsCall},
	{mcp.OpTasksGet.Name(), metrics.LatencyTasksGet},
	{"task_e2e", metrics.TaskE2E},
	{"detection_lag", metrics.DetectionLag},
	{"schedule_lag", metrics.ScheduleLag},
}

// textErrorKinds is how many kinds of failed request WriteText names.
const textErrorKinds = 5

// WriteText writes a short human summary of s to w, for stdout at the end of a run:
// outcomes, requests and the top kinds of error, input, key percentiles, fleet figures,
// whether the run is trustworthy, each gate and threshold, the verdict and, when dir is
// not "", where the files are.
func WriteText(w io.Writer, s *Summary, dir string) error {
	return writeText(w, s, dir, false)
}

// WriteTextCompared is WriteText for a run a comparison judges next (run --baseline, a side
// of an A/B run): the verdict line says the run's own verdict, and that the exit code is
// the comparison's.
func WriteTextCompared(w io.Writer, s *Summary, dir string) error {
	return writeText(w, s, dir, true)
}

// writeText is WriteText and WriteTextCompared: compared says whether a comparison judges the
// run next, which only changes the verdict line.
func writeText(w io.Writer, s *Summary, dir string, compared bool) error {
	p := &printer{w: w}
	headerText(p, s)
	tasksText(p, s)
	requestsText(p, s)
	if in := s.Input; in != nil && *in != (Input{}) {
		p.f("input       input_required seen %d; elicitations received %d: accepted %d, declined %d, cancelled %d\n",
			in.InputRequiredSeen, in.Received, in.Accepted, in.Declined, in.Cancelled)
	}
	latencyText(p, s)
	amp, reads, pps := s.Fleet.Measured()
	p.f("fleet       poll amplification %s, status reads per task %s, polls per second %s\n",
		measuredText(s.Fleet.PollAmplification, amp), measuredText(s.Fleet.StatusReadsPerTask, reads),
		measuredText(s.Fleet.PollsPerSecond, pps))
	switch {
	case !s.Trustworthy:
		p.f("trust       NOT TRUSTWORTHY: %s\n", s.TrustNote)
	case s.TrustNote != "":
		p.f("trust       trustworthy (%s)\n", s.TrustNote)
	default:
		p.f("trust       trustworthy\n")
	}
	judgementText(p, s)
	verdictText(p, s, compared)
	if dir != "" {
		filesText(p, dir)
	}
	return p.err
}

// headerText writes what run this is (identity, start, length), what slice of a sharded or
// A/B run it covers, and the notes that say its figures are partial: an interruption, an
// abort, an error.
func headerText(p *printer, s *Summary) {
	p.f("tasksim %s: scenario %s, seed %d, protocol %s, target %s\n",
		s.TasksimVersion, s.Scenario, s.Seed, s.Protocol, s.Target)
	p.f("started %s, ran %ss\n", s.StartedAt.Format("2006-01-02T15:04:05Z07:00"), num(s.DurationS))
	if sh := s.Shard; sh != nil && s.Merge == nil && sh.Count > 1 {
		shardText(p, sh)
	}
	if m := s.Merge; m != nil {
		p.f("merged      %d of %d shards (tasksim merge)\n", len(m.Merged), m.Count)
		if m.Note != "" {
			p.f("MERGE NOTE: %s\n", m.Note)
		}
	}
	if s.TLSUnverified {
		p.f("TLS UNVERIFIED (--insecure-skip-verify): the target's certificate was not checked; nothing proves which server answered\n")
	}
	if s.Interrupted {
		p.f("INTERRUPTED by a signal (Ctrl-C or SIGTERM): the figures cover the part of the run that happened\n")
	}
	if s.Aborted != "" {
		p.f("ABORTED: %s\n", s.Aborted)
	}
	if s.Verdict == VerdictError {
		p.f("ERROR: %s\n", s.Error)
	}
}

// shardText writes the line that says an unmerged shard's figures are only its slice (or its
// side of an A/B run), so that nobody reads them as the whole run's.
func shardText(p *printer, sh *ShardInfo) {
	late := ""
	if sh.LateByS > 1 {
		late = fmt.Sprintf(", started %ss late", num(sh.LateByS))
	}
	if sh.ABSide != "" {
		parity := "odd"
		if sh.Index%2 == 0 {
			parity = "even"
		}
		p.f("A/B side    %s: the %s clients (shard %d of %d for tasksim merge%s): the figures are this side's\n",
			sh.ABSide, parity, sh.Index, sh.Count, late)
	} else {
		p.f("shard       %d of %d (tasksim run --shard %d/%d%s): the figures are this slice's; tasksim merge judges the whole\n",
			sh.Index, sh.Count, sh.Index, sh.Count, late)
	}
}

// tasksText writes the tasks' outcomes, or, when the target ran the tool synchronously, the
// calls' outcomes under a line that says there were no tasks.
func tasksText(p *printer, s *Summary) {
	t := s.Tasks
	if t.Created == 0 && t.Completed+t.Failed > 0 && s.Gates.Compatibility.Evaluated {
		// The fallback called the tool synchronously: outcomes of calls, not of tasks.
		p.f("tasks       none created: tools/call ran synchronously (the target cannot run the tool as a task); calls completed %d, failed %d, unknown %d\n",
			t.Completed, t.Failed, t.Unknown)
		return
	}
	p.f("tasks       created %d, completed %d, failed %d, cancelled %d, expired %d, lost %d, result lost %d, unknown %d, dropped %d\n",
		t.Created, t.Completed, t.Failed, t.Cancelled, t.Expired, t.Lost, t.ResultLost, t.Unknown, t.Dropped)
	if n := s.Counters[metrics.SyncCalls.Name()]; n > 0 {
		p.f("            of which %d synchronous calls (no task: a fallback's plain tools/call), counted completed or failed\n", n)
	}
}

// latencyText writes the table of textLatencies' percentiles, a dash for a histogram the run
// did not record.
func latencyText(p *printer, s *Summary) {
	p.f("latency ms  %-14s %8s %10s %10s %10s %10s\n", "", "count", "p50", "p90", "p99", "max")
	for _, l := range textLatencies {
		st, ok := s.Metrics[l.h.Name()]
		if !ok {
			p.f("            %-14s %8s\n", l.label, "-")
			continue
		}
		p.f("            %-14s %8d %10.3f %10.3f %10.3f %10.3f\n", l.label, st.Count, st.P50, st.P90, st.P99, st.Max)
	}
}

// judgementText writes each gate (with the contract's cases and a failed gate's reasons under
// it) and each threshold, one a line.
func judgementText(p *printer, s *Summary) {
	for i, g := range s.Gates.list() {
		head := "gates      "
		if i > 0 {
			head = "           "
		}
		p.f("%s %-14s %s\n", head, g.name, gateText(g))
		if g.name == GateContract && s.Contract != nil {
			contractCasesText(p, s.Contract)
		}
		gateDetailText(p, g)
	}
	for i, r := range s.Thresholds {
		head := "thresholds "
		if i > 0 {
			head = "           "
		}
		p.f("%s %s\n", head, thresholdText(r))
	}
}

// verdictText writes the verdict and the exit code it gives, saying when something else
// (an error, an interruption, a partial merge, a comparison) decides the code.
func verdictText(p *printer, s *Summary, compared bool) {
	if code := s.ExitCode(); s.Verdict == VerdictError {
		p.f("verdict     ERROR: the run did not complete (exit code %d)\n", code)
	} else if code == ExitInterrupted {
		p.f("verdict     %s so far, but the run was interrupted (exit code %d)\n", strings.ToUpper(s.Verdict), code)
	} else if m := s.Merge; m != nil && m.FailedAsPartial != "" {
		p.f("verdict     %s (exit code %d): the partial merge alone (MERGE NOTE above)\n", strings.ToUpper(s.Verdict), code)
	} else if compared {
		p.f("verdict     %s on its own; the comparison below gives the exit code\n", strings.ToUpper(s.Verdict))
	} else {
		p.f("verdict     %s (exit code %d)\n", strings.ToUpper(s.Verdict), code)
	}
}

// filesText writes which files the run left in dir: the four every run writes, then those of
// the optional ones that exist.
func filesText(p *printer, dir string) {
	files := SummaryJSONFile + ", " + SummaryCSVFile + ", " + TimeseriesFile + ", " + HistogramLogFile
	for _, f := range []string{EventsFile, ReportFile, ContractFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			files += ", " + f
		}
	}
	p.f("files       %s in %s\n", files, filepath.Clean(dir))
}

// gateDetailText writes, under a failed gate's line, why it failed where its evidence says it
// in words (failures), and the drift of a pinned manifest.
func gateDetailText(p *printer, g namedGate) {
	const indent = "                           "
	if !g.evaluated || g.pass {
		return
	}
	for _, f := range list(g.evidence["failures"]) {
		p.f("%s%v\n", indent, f)
	}
	if g.name != GateCompatibility {
		return
	}
	for _, x := range list(g.evidence["manifest_drift"]) {
		m, _ := x.(map[string]any)
		p.f("%sdrift %v: pinned %v, now %v\n", indent, m["field"], m["pinned"], m["now"])
	}
}

// contractCasesText writes, under the contract gate's line, the failed cases with their
// rules and the tasks the suite left behind on the target.
func contractCasesText(p *printer, c *Contract) {
	const indent = "                           "
	var failed []string
	for _, k := range c.Cases {
		if k.Verdict == CaseFail {
			f := k.ID
			if len(k.Broken) > 0 {
				f += " (" + strings.Join(k.Broken, " ") + ")"
			}
			failed = append(failed, f)
		}
	}
	if len(failed) > 0 {
		p.f("%sfailed: %s\n", indent, strings.Join(failed, ", "))
	}
	if len(c.LeftBehind) > 0 {
		p.f("%sLEFT BEHIND on the target: %s\n", indent, strings.Join(c.LeftBehind, ", "))
	}
}

// requestsText writes the requests line (errors are the outcomes metrics.Outcome.IsError
// counts; backpressure and prescribed refusals are shown apart) and, when requests
// failed, the most frequent kinds of error.
func requestsText(p *printer, s *Summary) {
	var n, errs, expected, injected int64
	for _, rs := range s.Requests {
		n, errs = n+rs.Count, errs+rs.Errors
		expected += rs.ByOutcome["expected"]
		injected += rs.ByOutcome["injected"]
	}
	pctText := "no data"
	if pct, ok := rate(errs, n); ok {
		pctText = num(round3(pct)) + "%"
	}
	line := fmt.Sprintf("requests    %d sent, %d errors (%s), backpressure_signals %d", n, errs, pctText,
		s.Counters[metrics.BackpressureSignals.Name()])
	if expected > 0 {
		line += fmt.Sprintf(", %d replies the contract prescribes (not errors)", expected)
	}
	if injected > 0 {
		line += fmt.Sprintf(", %d cut by the scenario's own client faults (not errors)", injected)
	}
	p.f("%s\n", line)
	for i, k := range s.Errors[:min(len(s.Errors), textErrorKinds)] {
		head := "errors     "
		if i > 0 {
			head = "           "
		}
		p.f("%s %s\n", head, errorKindText(k))
	}
	if more := len(s.Errors) - textErrorKinds; more > 0 {
		p.f("            (%d more kinds in %s)\n", more, SummaryJSONFile)
	}
}

// errorKindText is one kind of failed request: "tools/call -32602 x9000: message".
func errorKindText(k ErrorKind) string {
	how := k.Outcome
	switch {
	case k.Code != 0:
		how = strconv.Itoa(k.Code)
	case k.Status != 0:
		how = "HTTP " + strconv.Itoa(k.Status)
	}
	line := fmt.Sprintf("%s %s x%d", k.Method, how, k.Count)
	if k.Message != "" {
		line += ": " + k.Message
	}
	return line
}

// measuredText is a figure, or "-" when it was not measured.
func measuredText(v float64, measured bool) string {
	if !measured {
		return "-"
	}
	return num(v)
}

// gateText is one gate's line: its verdict and its scalar evidence, and what was not
// checked, with why when the evidence says.
func gateText(g namedGate) string {
	if !g.evaluated {
		if g.pass {
			return "not evaluated: " + fmt.Sprint(g.evidence["reason"])
		}
		return "NOT EVALUATED: " + fmt.Sprint(g.evidence["reason"])
	}
	var b strings.Builder
	if g.pass {
		b.WriteString("pass")
	} else {
		b.WriteString("FAIL")
	}
	for _, k := range slices.Sorted(maps.Keys(g.evidence)) {
		switch v := g.evidence[k].(type) {
		case float64: // every number, in the map view
			fmt.Fprintf(&b, " %s=%s", k, num(v))
		case string, bool:
			fmt.Fprintf(&b, " %s=%v", k, v)
		}
	}
	if nc := stringList(g.evidence["not_checked"]); len(nc) > 0 {
		notes, _ := g.evidence["notes"].(map[string]any)
		for i, name := range nc {
			if why, _ := notes[name].(string); why != "" {
				nc[i] = name + " (" + why + ")"
			}
		}
		b.WriteString("; not checked: " + strings.Join(nc, ", "))
	}
	return b.String()
}

// stringList returns a copy of v as a list of strings: []string from Build, []any from
// ReadSummary.
func stringList(v any) []string {
	switch x := v.(type) {
	case []string:
		return slices.Clone(x)
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
	if r.Source == SourceEvidence && r.Note == evidenceInterrupted {
		return fmt.Sprintf("---- %s: %s (evidence; %s)", r.Expr, withUnit(r.Value, r.Unit), r.Note)
	}
	line := fmt.Sprintf("%s %s: %s", verdict, r.Expr, withUnit(r.Value, r.Unit))
	if r.NoData {
		line = fmt.Sprintf("%s %s: no data", verdict, r.Expr)
		if r.OnNoData == "pass" {
			line += " (on_no_data: pass)"
		}
	}
	switch r.Source {
	case SourceErrorBudget:
		line += " (error budget)"
	case SourceEvidence:
		line += " (evidence: a task ended without failing)"
	case SourceSLO:
		line += " (default SLO"
		if r.Note != "" {
			line += ": " + r.Note
		}
		line += ")"
	default: // the scenario's own: a note only when the run's interruption changed what it judged
		if r.Note != "" {
			line += " (" + r.Note + ")"
		}
	}
	if r.WindowsFailed > 0 {
		line += fmt.Sprintf(" (%d of %d windows failed", r.WindowsFailed, r.WindowsEvaluated)
		if r.WorstWindow >= 0 { // -1: an odd summary without its worst window
			line += fmt.Sprintf(", worst %s in window %d", withUnit(r.WorstValue, r.Unit), r.WorstWindow)
		}
		line += ")"
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
