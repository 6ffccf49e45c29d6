package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/pflag"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/runner"
	"github.com/tasksim/tasksim/scenarios"
	"github.com/tasksim/tasksim/sweep"
)

// `tasksim sweep` is the tuning tool, the command line of package sweep: it parses the
// flags into a sweep.Plan whose cells are `tasksim run` command lines (cellBuilder), has
// the plan checked before anything is created, runs it (sweep.Run: each cell's scenario in
// process, into a run directory of its own) with progress bars and the signals, writes
// sweep.json, sweep.csv and sweep.html, prints the answer and exits as the result says.

// varyAliases map the short names of --vary onto run flags; any other name is a scenario
// path passed as --set.
var varyAliases = map[string]string{
	"poll_interval": "--poll-interval", // advertised by the embedded server and the clients' fallback (sweep.Plan.TargetNote)
	"clients":       "--clients",
	"rate":          "--rate",
	"duration":      "--duration",
	"protocol":      "--protocol", // the era, auto among the values
}

// sweepFlags are sweep's flags: those that become every cell's run flags (cellArgs), and
// the sweep's own.
type sweepFlags struct {
	vary, slo, sets, headers []string
	target, out, protocol    string
	cellDuration             time.Duration
	noProgress               bool
}

// parseSweepFlags reads sweep's command line: the flags, the scenario NAME or FILE
// (default baseline) and the --vary dimensions. Every --slo must parse.
func parseSweepFlags(args []string, _ io.Writer) (*sweepFlags, string, []sweep.Vary, error) {
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
`, sweep.JSONFile, sweep.CSVFile, sweep.HTMLFile)
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
	vars, err := sweep.ParseVary(f.vary)
	if err != nil {
		return nil, "", nil, err
	}
	for _, s := range f.slo {
		if _, err := results.ParseThreshold(s); err != nil {
			return nil, "", nil, usagef("--slo %q: %v", s, err)
		}
	}
	return f, name, vars, nil
}

// sweepPlan is the plan of the sweep the flags ask for: each cell is a run of the scenario
// name with those flags and the cell's values (cellBuilder).
func sweepPlan(f *sweepFlags, name string, vars []sweep.Vary) *sweep.Plan {
	return &sweep.Plan{Scenario: name, Vary: vars, SLOs: f.slo, Build: cellBuilder{f: f, name: name, vars: vars}}
}

// cellBuilder makes a cell's scenario as `tasksim run` makes a run's from its flags
// (cellArgs), so that a cell is exactly the run of those flags, and a problem names the
// flag as run would.
type cellBuilder struct {
	f    *sweepFlags
	name string
	vars []sweep.Vary
}

var _ sweep.Builder = cellBuilder{}

// Scenario is the scenario of the cell with values: the scenario name, with the sweep's
// flags and the cell's values applied as run applies its flags, validated. Every problem
// is a usage error.
func (b cellBuilder) Scenario(values map[string]string) (*scenarios.Scenario, error) {
	rf, n, err := parseRunFlags(cellArgs(b.f, b.name, b.vars, values), io.Discard)
	if err != nil {
		return nil, err
	}
	return rf.scenario(n)
}

// CheckValues checks each --vary value on its own (checkVaryValues).
func (b cellBuilder) CheckValues(vars []sweep.Vary) error { return checkVaryValues(b.name, vars) }

// cellArgs is the `tasksim run` command line of the cell with values, without --out and
// --no-progress: the definition of a cell's scenario (cellBuilder).
func cellArgs(f *sweepFlags, name string, vars []sweep.Vary, values map[string]string) []string {
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
			args = append(args, flag, values[v.Name])
		} else {
			args = append(args, "--set", v.Name+"="+values[v.Name])
		}
	}
	return args
}

// checkVaryValues checks each --vary value on its own: a run flag's value is parsed as that
// flag, a scenario path's value is set on the scenario (which is not validated). It returns
// every distinct problem.
func checkVaryValues(name string, vars []sweep.Vary) error {
	var sc *scenarios.Scenario
	var errs []error
	add := func(err error) {
		if !slices.ContainsFunc(errs, func(e error) bool { return e.Error() == err.Error() }) {
			errs = append(errs, err)
		}
	}
	for _, v := range vars {
		for _, val := range v.Values {
			if flag, alias := varyAliases[v.Name]; alias {
				if _, _, err := parseRunFlags([]string{flag, val}, io.Discard); err != nil {
					add(fmt.Errorf("--vary %s=%s: %w", v.Name, val, err))
				}
				continue
			}
			if sc == nil {
				var err error
				if sc, err = scenarios.Load(name); err != nil {
					return usageError{err}
				}
			}
			if err := sc.SetFrom("--vary", v.Name, val); err != nil {
				add(err)
			}
		}
	}
	if len(errs) > 0 {
		return usageError{errors.Join(errs...)}
	}
	return nil
}

// runSweep is `tasksim sweep`: the plan checked before anything is created, its cells run,
// the files written from the result, the answer printed, the exit code the result's.
func runSweep(p process, args []string, stdout, stderr io.Writer) error {
	f, name, vars, err := parseSweepFlags(args, stderr)
	if err != nil {
		return err
	}
	plan := sweepPlan(f, name, vars)
	r, err := plan.Check() // before anything is created
	if err != nil {
		return err
	}
	note, err := plan.TargetNote()
	if err != nil {
		return err
	}
	dir := cmp.Or(f.out, sweep.DefaultDir(name, time.Now()))
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
	err = runCells(p, plan, dir, r, sweepObserver{bars: bars, stderr: stderr})
	bars.wait()
	if err != nil {
		return err
	}
	if err := sweep.WriteFiles(dir, r); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	sweep.WriteText(stdout, r, dir)
	fmt.Fprintf(stdout, "files       %s, %s, %s and one run directory per cell in %s\n",
		sweep.JSONFile, sweep.CSVFile, sweep.HTMLFile, filepath.Clean(dir))
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

// runCells runs the plan's cells (sweep.Run), each into dir/cell-NN, and ranks r. The first
// SIGINT or SIGTERM stops the cell it interrupts gracefully (its files are written), and the
// sweep there: the cells after it are not run; a second stops the cell at once.
func runCells(p process, plan *sweep.Plan, dir string, r *sweep.Result, obs sweep.Observer) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := make(chan struct{})
	defer onSignals(func() func() { close(stop); return cancel })()
	return sweep.Run(ctx, plan, r, sweep.Options{Dir: dir, Observer: obs,
		Run: runner.Options{Stop: stop, GCSetBy: p.gc.SetBy, GCMaxHeadroom: p.gc.MaxHeadroom}})
}

// sweepObserver shows the sweep's progress on the bars (none when nil) and says on stderr
// which cells failed.
type sweepObserver struct {
	bars   *sweepBars
	stderr io.Writer
}

var _ sweep.Observer = sweepObserver{}

func (o sweepObserver) CellStarted(label string) { o.bars.startCell(label) }
func (o sweepObserver) CellEnded(string)         { o.bars.endCell() }
func (o sweepObserver) CellFailed(label, err string) {
	fmt.Fprintf(o.stderr, "tasksim sweep: cell %s failed: %s\n", label, err)
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
