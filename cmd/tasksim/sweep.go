package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/runner"
	"github.com/tasksim/tasksim/scenarios"
)

// `tasksim sweep` is the tuning tool. It checks every cell of the grid of --vary values as
// `tasksim run` would, then runs each cell's scenario in process (runner.Run), each into a
// run directory of its own (kept), takes each cell's summary, and answers two questions
// (sweep_rank.go): for each client count, which cell (which pollInterval) keeps the
// server's request rate lowest while passing and meeting every SLO; and, with --vary
// clients, the largest client count the server carries (its capacity). The answer is
// sweep.json; the printout, sweep.csv and sweep.html are rendered from it (sweep_page.go).

// Files of a sweep directory, besides sweep.json.
const (
	sweepCSVFile  = "sweep.csv"
	sweepHTMLFile = "sweep.html"
)

// varyAliases map the short names of --vary onto run flags; any other name is a scenario
// path passed as --set.
var varyAliases = map[string]string{
	"poll_interval": "--poll-interval", // advertised by the embedded server and the clients' fallback (checkVariedAgainstTarget)
	"clients":       "--clients",
	"rate":          "--rate",
	"duration":      "--duration",
	"protocol":      "--protocol", // the era, auto among the values
}

type sweepFlags struct {
	vary, slo, sets, headers []string
	target, out, protocol    string
	cellDuration             time.Duration
	noProgress               bool
	slos                     []results.Threshold // slo, parsed
}

func parseSweepFlags(args []string, _ io.Writer) (*sweepFlags, string, []sweepVary, error) {
	f := &sweepFlags{}
	fs := pflag.NewFlagSet("sweep", pflag.ContinueOnError)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, `Usage: tasksim sweep [NAME|FILE] --vary NAME=V1,V2,... [--vary ...] [flags]

Runs the scenario (default: baseline) once per cell of the grid of --vary values and
recommends, for each client count, the cell with the lowest server request rate that passes
and meets every --slo; with --vary clients, also the capacity (the largest client count that
does, below the first that does not). Cells whose request rates differ by less than the
noise of the runs are "indistinguishable": nothing is recommended on them. NAME is
poll_interval, clients, rate, duration or any scenario path (as for --set); against a
--target whose advice the clients follow, vary client.poll.interval (with
client.poll.policy=fixed) rather than poll_interval. Writes %s, %s, %s and one run directory per
cell (cell-00, ...) under --out, and prints the recommendations, the capacity and why each
other cell lost. The whole grid is checked before anything runs or is written.

Exit codes: 0 a cell is recommended or the passing cells are indistinguishable (with --vary
clients: a capacity was found), 1 runtime
error (no cell produced a result), 2 usage (or a cell's scenario is invalid), 99 cells ran
but none qualifies (with --vary clients: the smallest count failed), 130 stopped by Ctrl-C
or SIGTERM (the cells run so far are written; nothing is recommended).

Flags:
`, sweepJSONFile, sweepCSVFile, sweepHTMLFile)
		fs.PrintDefaults()
	}
	fs.StringArrayVar(&f.vary, "vary", nil, "a dimension of the grid, `NAME=V1,V2,...` (repeatable)")
	fs.StringArrayVar(&f.slo, "slo", nil, "threshold `EXPR` every recommended cell must meet (repeatable), e.g. 'detection_lag.p99 < 2s'")
	fs.DurationVar(&f.cellDuration, "cell-duration", 0, "load phase of each cell (default: the scenario's duration)")
	fs.StringVar(&f.target, "target", "", "`URL` of a real MCP endpoint (default: the embedded mock server)")
	fs.StringArrayVar(&f.headers, "header", nil, "extra HTTP header for the target, `'K: V'` (repeatable; values are never printed)")
	fs.StringVar(&f.protocol, "protocol", "", "the era every cell's clients speak, `auto|2025-11-25|2026-07-28` (as run's --protocol; --vary protocol=... compares eras)")
	fs.StringArrayVar(&f.sets, "set", nil, "override a scenario field in every cell, `path=value` (repeatable)")
	fs.StringVar(&f.out, "out", "", "output `DIR` (default runs/sweep-<scenario>-<UTC time>)")
	fs.BoolVar(&f.noProgress, "no-progress", false, "no progress bars")
	if err := parseFlags(fs, args); err != nil {
		return nil, "", nil, err
	}
	if fs.NArg() > 1 {
		return nil, "", nil, usagef("sweep takes one scenario NAME or FILE, got %d arguments", fs.NArg())
	}
	name := "baseline"
	if fs.NArg() == 1 {
		name = fs.Arg(0)
	}
	if len(f.vary) == 0 {
		return nil, "", nil, usagef("sweep needs at least one --vary NAME=V1,V2,...")
	}
	vars, err := parseVary(f.vary)
	if err != nil {
		return nil, "", nil, err
	}
	for _, s := range f.slo {
		th, err := results.ParseThreshold(s)
		if err != nil {
			return nil, "", nil, usagef("--slo %q: %v", s, err)
		}
		f.slos = append(f.slos, th)
	}
	return f, name, vars, nil
}

// parseVary reads the --vary flags: each NAME=V1,V2,... with at least one value, no value
// twice, no name twice, and at most one of the names that set the client count.
func parseVary(flags []string) ([]sweepVary, error) {
	var vars []sweepVary
	for _, v := range flags {
		k, list, ok := strings.Cut(v, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, usagef("--vary %q: want NAME=V1,V2,...", v)
		}
		if slices.ContainsFunc(vars, func(x sweepVary) bool { return x.Name == k }) {
			return nil, usagef("--vary %s given twice", k)
		}
		if isClientsVar(k) && slices.ContainsFunc(vars, func(x sweepVary) bool { return isClientsVar(x.Name) }) {
			return nil, usagef("--vary clients and --vary workload.clients set the same field: give one")
		}
		var vals []string
		for _, x := range strings.Split(list, ",") {
			x = strings.TrimSpace(x)
			if x == "" {
				continue
			}
			if slices.Contains(vals, x) {
				return nil, usagef("--vary %s: value %s given twice", k, x)
			}
			vals = append(vals, x)
		}
		if len(vals) == 0 {
			return nil, usagef("--vary %q: want NAME=V1,V2,...", v)
		}
		vars = append(vars, sweepVary{Name: k, Values: vals})
	}
	return vars, nil
}

// grid returns every combination of the variables' values, the last varying fastest.
func grid(vars []sweepVary) []sweepCell {
	combos := [][]string{{}}
	for _, v := range vars {
		var next [][]string
		for _, c := range combos {
			for _, val := range v.Values {
				next = append(next, append(slices.Clone(c), val))
			}
		}
		combos = next
	}
	cells := make([]sweepCell, len(combos))
	for i, combo := range combos {
		values := make(map[string]string, len(vars))
		for j, v := range vars {
			values[v.Name] = combo[j]
		}
		cells[i] = sweepCell{Index: i, Cell: cellName(i), Values: values, Failed: []string{}, SLOFails: []string{}}
	}
	return cells
}

// cellArgs is the `tasksim run` command line of cell c, without --out and --no-progress:
// the definition of a cell's scenario (cellScenario), so that a cell is exactly the run of
// those flags, and a problem names the flag as run would.
func cellArgs(f *sweepFlags, name string, vars []sweepVary, c *sweepCell) []string {
	args := []string{name}
	if f.cellDuration > 0 {
		args = append(args, "--duration", f.cellDuration.String())
	}
	if f.target != "" {
		args = append(args, "--target", f.target)
	}
	for _, h := range f.headers {
		args = append(args, "--header", h)
	}
	if f.protocol != "" {
		args = append(args, "--protocol", f.protocol)
	}
	for _, s := range f.sets {
		args = append(args, "--set", s)
	}
	for _, v := range vars {
		if flag, ok := varyAliases[v.Name]; ok {
			args = append(args, flag, c.Values[v.Name])
		} else {
			args = append(args, "--set", v.Name+"="+c.Values[v.Name])
		}
	}
	return args
}

// cellScenario is the scenario of cell c: the scenario name, with the sweep's flags and the
// cell's values applied as run applies its flags, validated. Every problem is a usage error.
func cellScenario(f *sweepFlags, name string, vars []sweepVary, c *sweepCell) (*scenarios.Scenario, error) {
	rf, n, err := parseRunFlags(cellArgs(f, name, vars, c), io.Discard)
	if err != nil {
		return nil, err
	}
	return rf.scenario(n)
}

func runSweep(p process, args []string, stdout, stderr io.Writer) error {
	f, name, vars, err := parseSweepFlags(args, stderr)
	if err != nil {
		return err
	}
	r := &sweepResult{TasksimVersion: version, Scenario: name, Vary: vars, SLOs: append([]string{}, f.slo...), Cells: grid(vars)}
	if err := checkSweep(f, name, r); err != nil { // before anything is created
		return err
	}
	note, err := checkVariedAgainstTarget(f, name, r)
	if err != nil {
		return err
	}
	dir := f.out
	if dir == "" {
		base := strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
		dir = filepath.Join("runs", "sweep-"+base+"-"+time.Now().UTC().Format("20060102T150405Z"))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	fmt.Fprintf(stderr, "tasksim sweep: %s, %d cells\n", name, len(r.Cells))
	if note != "" {
		fmt.Fprintf(stderr, "tasksim sweep: %s\n", note)
	}

	var bars *sweepBars
	if !f.noProgress && isTerminal(stderr) {
		bars = newSweepBars(stderr, len(r.Cells))
	}
	err = runCells(p, f, name, dir, r, bars, stderr)
	bars.wait()
	if err != nil {
		return err
	}

	rankSweep(r)
	if err := writeSweepJSON(dir, r); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	if err := writeSweepCSV(filepath.Join(dir, sweepCSVFile), dir, r); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	if err := writeSweepReport(dir); err != nil { // from sweep.json, as `tasksim report` does
		return fmt.Errorf("writing results: %w", err)
	}
	writeSweepText(stdout, r, dir)
	fmt.Fprintf(stdout, "files       %s, %s, %s and one run directory per cell in %s\n",
		sweepJSONFile, sweepCSVFile, sweepHTMLFile, filepath.Clean(dir))
	switch r.ExitCode {
	case exitSignal: // a partial sweep is never a pass
		return interruptedError{what: "the sweep stopped in " + r.InterruptedIn +
			": the files hold the cells run so far, that one included, and recommend nothing"}
	case exitGate:
		// Cells ran, none qualified (or, with --vary clients, no capacity).
		return gateError{why: "no cell qualifies (see why each cell lost, above)"}
	case exitRuntime:
		return errors.New("no cell produced a result")
	}
	return nil
}

// writeSweepReport renders dir/sweep.html from dir/sweep.json.
func writeSweepReport(dir string) error {
	r, err := readSweepJSON(dir)
	if err != nil {
		return err
	}
	return writeSweepHTML(dir, r)
}

// runCells runs the cells in order, each into dir/cell-NN, and records what each measured.
// The first SIGINT or SIGTERM stops the cell it interrupts gracefully (its files are
// written), and the sweep there: the cells after it are not run; a second stops the cell at
// once.
func runCells(p process, f *sweepFlags, name, dir string, r *sweepResult, bars *sweepBars, stderr io.Writer) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := make(chan struct{})
	defer onSignals(func() func() { close(stop); return cancel })()
	for i := range r.Cells {
		c := &r.Cells[i]
		if r.Interrupted {
			c.Error = "not run: the sweep was interrupted"
			continue
		}
		sc, err := cellScenario(f, name, r.Vary, c) // checked by checkSweep: no problem left
		if err != nil {
			return fmt.Errorf("cell %s: %w", r.label(c), err)
		}
		c.Run = true
		bars.startCell(r.label(c))
		sum, runErr := runner.Run(ctx, sc, runner.Options{Dir: filepath.Join(dir, c.Cell), Overwrite: true, Stop: stop, GCSetBy: p.gc.SetBy, GCMaxHeadroom: p.gc.MaxHeadroom})
		bars.endCell()
		c.ExitCode = exitCode(runErr)
		stopped := c.ExitCode == exitSignal // Ctrl-C or SIGTERM stopped the cell: it stops the sweep too
		switch {
		case errors.As(runErr, new(*runner.UsageError)) && !slices.ContainsFunc(r.Vary, func(v sweepVary) bool { return v.Name == "protocol" }):
			// Every cell's scenario was checked before the sweep began: what is left is the
			// target refusing the scenario (it lacks the Tasks capability the tool needs),
			// which no other cell would get past. The cell's directory says so
			// (summary.json, verdict error); the sweep stops with exit 2. Cells of another
			// era may get past it (a target with tasks in one era only): with --vary
			// protocol, the cell fails and the sweep goes on, as below.
			return usagef("cell %s: %v", r.label(c), runErr) // redacted by the run
		case c.ExitCode != exitOK && c.ExitCode != exitGate && !stopped:
			c.Error = runErr.Error() // the cell's own error, its secrets redacted by the run
			fmt.Fprintf(stderr, "tasksim sweep: cell %s failed: %s\n", r.label(c), c.Error)
			continue
		}
		if sum == nil {
			c.Error = "no " + results.SummaryJSONFile + " was written"
		} else {
			measureCell(c, sum, f.slos)
			stopped = stopped || sum.Interrupted // also when a gate failed in what it measured (exit 99)
		}
		if stopped {
			r.Interrupted, r.InterruptedIn = true, c.Cell+" ("+r.label(c)+")"
		}
	}
	return nil
}

// measureCell records what the cell's run measured, and which SLOs it missed.
func measureCell(c *sweepCell, s *results.Summary, slos []results.Threshold) {
	c.Verdict, c.Interrupted, c.Trustworthy, c.TrustNote = s.Verdict, s.Interrupted, s.Trustworthy, s.TrustNote
	c.Protocol = s.Protocol
	c.Failed = failedChecks(s)
	for _, th := range slos {
		if res := th.Eval(s, nil); !res.Pass || res.NoData {
			// An --slo has no on_no_data: a metric the cell did not measure misses it.
			value := num(res.Value) + unitSuffix(res.Unit)
			if res.NoData {
				value = "no data"
			}
			c.SLOFails = append(c.SLOFails, fmt.Sprintf("%s (%s)", th.Expr, value))
		}
	}
	var errs int64
	for _, rs := range s.Requests {
		errs += rs.Errors
	}
	c.Figures = &sweepFigures{
		RequestRate:         requestRate(s),
		RequestRateNoise:    requestRateNoise(s),
		PollsPerTaskMean:    stat(s, "polls_per_task").Mean,
		PollAmplification:   s.Fleet.PollAmplification,
		DetectionLagP50:     stat(s, "detection_lag").P50,
		DetectionLagP99:     stat(s, "detection_lag").P99,
		TaskE2EP99:          stat(s, "task_e2e").P99,
		Errors:              errs,
		BackpressureSignals: s.Counters[metrics.BackpressureSignals.Name()],
		CreatesPushedBack:   s.Requests[mcp.OpToolsCall.Name()].ByOutcome[metrics.OutcomeBackpressure.Name()],
		TasksCompleted:      s.Tasks.Completed,
	}
}

func stat(s *results.Summary, name string) metrics.Stat { return s.Metrics[name] }

// failedChecks names the gates and thresholds of the run that failed: "gate hard",
// "threshold tasks.failed_rate < 1%".
func failedChecks(s *results.Summary) []string {
	failed := []string{}
	g := &s.Gates
	for _, g := range []struct {
		name              string
		evaluated, passed bool
	}{
		{results.GateHard, g.Hard.Evaluated, g.Hard.Pass},
		{results.GateRecovery, g.Recovery.Evaluated, g.Recovery.Pass},
		{results.GateCancellation, g.Cancellation.Evaluated, g.Cancellation.Pass},
		{results.GateCompatibility, g.Compatibility.Evaluated, g.Compatibility.Pass},
		{results.GateContract, g.Contract.Evaluated, g.Contract.Pass},
		{results.GateRollback, g.Rollback.Evaluated, g.Rollback.Pass},
	} {
		if g.evaluated && !g.passed {
			failed = append(failed, "gate "+g.name)
		}
	}
	for _, t := range s.Thresholds {
		if !t.Pass {
			failed = append(failed, "threshold "+t.Expr)
		}
	}
	return failed
}

// requestRate is the requests the cell sent per second of its run: what the server had to
// serve (embedded or not, every request counts once).
func requestRate(s *results.Summary) float64 {
	if s.DurationS <= 0 {
		return 0
	}
	return float64(requestCount(s)) / s.DurationS
}

// requestCount is the requests the run sent, of every method.
func requestCount(s *results.Summary) int64 {
	var n int64
	for _, r := range s.Requests {
		n += r.Count
	}
	return n
}

// requestRateNoise is one standard deviation of requestRate from the run's own counts:
// sqrt(N) / duration_s for N requests, as for any count of independent events.
func requestRateNoise(s *results.Summary) float64 {
	if s.DurationS <= 0 {
		return 0
	}
	return math.Sqrt(float64(requestCount(s))) / s.DurationS
}

// exitCode is the exit code of a command that returned err: 2 for a usage error (the
// command line's, or a run's *runner.UsageError), 99 for a failed gate or threshold, 130 for
// an interruption, 1 for any other error.
func exitCode(err error) int {
	switch {
	case err == nil || errors.Is(err, pflag.ErrHelp):
		return exitOK
	case errors.As(err, new(usageError)), errors.As(err, new(*runner.UsageError)):
		return exitUsage
	case errors.As(err, new(gateError)), errors.As(err, new(*runner.GateError)):
		return exitGate
	case errors.As(err, new(interruptedError)), errors.As(err, new(*runner.InterruptedError)):
		return exitSignal
	}
	return exitRuntime
}

// num formats a figure with at most 3 decimals and no trailing zeros.
func num(v float64) string { return strconv.FormatFloat(round3(v), 'f', -1, 64) }

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// unitSuffix is how a threshold's unit follows its value in a message.
func unitSuffix(unit string) string {
	switch unit {
	case "ms", "%":
		return unit
	case "per_s":
		return "/s"
	}
	return ""
}

// sweepBars are the sweep's progress bars (mpb): one overall bar (cells done of all) and
// one per cell, which shows the cell's values and its elapsed time and stays when it ends.
// A nil *sweepBars shows nothing (stderr not a terminal, or --no-progress).
type sweepBars struct {
	p       *mpb.Progress
	overall *mpb.Bar
	cell    *mpb.Bar
}

func newSweepBars(w io.Writer, cells int) *sweepBars {
	p := mpb.New(mpb.WithOutput(w), mpb.WithWidth(32), mpb.WithRefreshRate(250*time.Millisecond))
	overall := p.AddBar(int64(cells), mpb.BarPriority(1<<30), // always the last line
		mpb.PrependDecorators(decor.Name("sweep "), decor.CountersNoUnit("%d/%d cells")),
		mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_MMSS)))
	return &sweepBars{p: p, overall: overall}
}

func (b *sweepBars) startCell(label string) {
	if b == nil {
		return
	}
	b.cell = b.p.New(0, mpb.SpinnerStyle(), mpb.BarFillerClearOnComplete(),
		mpb.PrependDecorators(decor.Name(label+" ")),
		mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_MMSS)))
}

func (b *sweepBars) endCell() {
	if b == nil {
		return
	}
	b.cell.SetTotal(-1, true)
	b.overall.Increment()
}

func (b *sweepBars) wait() {
	if b == nil {
		return
	}
	b.overall.SetTotal(-1, true)
	b.p.Wait()
}
