package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/internal/cliflags"
	"github.com/tasksim/tasksim/internal/progress"
	"github.com/tasksim/tasksim/runner"
	"github.com/tasksim/tasksim/sweep"
)

// sweepFlags are sweep's flags: those every cell hands on to its run (cliflags.Cell), and
// the sweep's own.
type sweepFlags struct {
	cell       *cliflags.Cell
	vary, slo  []string
	out        string
	noProgress bool
	every      time.Duration // --progress-interval
}

// parseSweepFlags reads sweep's command line: the flags, the scenario NAME or FILE
// (default baseline) and the --vary dimensions (sweep.ParseVary).
func parseSweepFlags(args []string, _ io.Writer) (*sweepFlags, string, []sweep.Vary, error) {
	fs := pflag.NewFlagSet("sweep", pflag.ContinueOnError)
	f := &sweepFlags{cell: cliflags.BindCell(fs)}
	setHelp(fs)
	fs.StringArrayVar(&f.vary, "vary", nil, "a dimension of the grid, `NAME=V1,V2,...` (repeatable)")
	fs.StringArrayVar(&f.slo, "slo", nil, "threshold `EXPR` every recommended cell must meet (repeatable), e.g. 'detection_lag.p99 < 2s'")
	fs.StringVar(&f.out, "out", "", "output `DIR` (default runs/sweep-<scenario>-<UTC time>)")
	fs.BoolVar(&f.noProgress, "no-progress", false, "no progress: no bars on a terminal, no status lines elsewhere")
	fs.DurationVar(&f.every, "progress-interval", 5*time.Second, "with stderr not a terminal (CI, kubectl logs), a plain status line this often")
	if err := parseFlags(fs, args); err != nil {
		return nil, "", nil, err
	}
	if fs.NArg() > 1 {
		return nil, "", nil, usagef("sweep takes one scenario NAME or FILE, got %d arguments", fs.NArg())
	}
	vars, err := sweep.ParseVary(f.vary)
	return f, cmp.Or(fs.Arg(0), "baseline"), vars, err
}

// sweepPlan is the plan of the sweep the flags ask for: each cell is a run of the scenario
// name with the cell flags and the cell's values (sweep.RunFlags); the SLOs are checked
// with the plan (sweep.Plan.Check).
func sweepPlan(f *sweepFlags, name string, vars []sweep.Vary) *sweep.Plan {
	return &sweep.Plan{Scenario: name, Vary: vars, SLOs: f.slo, Build: sweep.RunFlags{Name: name, Args: f.cell.RunArgs(), Vary: vars}}
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

	obs := progress.NewSweep(stderr, progress.For(stderr, f.noProgress, f.every), len(r.Cells))
	err = runCells(p, plan, dir, r, obs)
	obs.Wait()
	if err != nil {
		return err
	}
	if err := sweep.WriteFiles(dir, r); err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	sweep.WriteText(stdout, r, dir)
	fmt.Fprintf(stdout, "files       %s, %s, %s and one run directory per cell in %s\n",
		sweep.JSONFile, sweep.CSVFile, sweep.HTMLFile, filepath.Clean(dir))
	return r.Err()
}

// runCells runs the plan's cells (sweep.Run), each into dir/cell-NN, and ranks r. The first
// SIGINT or SIGTERM stops the cell it interrupts gracefully (its files are written), and the
// sweep there: the cells after it are not run; a second stops the cell at once.
func runCells(p process, plan *sweep.Plan, dir string, r *sweep.Result, obs *progress.Sweep) (err error) {
	withSignals(nil, nil, func(ctx context.Context, stop <-chan struct{}) {
		err = sweep.Run(ctx, plan, r, sweep.Options{Dir: dir, Observer: obs,
			Run: runner.Options{Stop: stop, Observer: obs, GCSetBy: p.gc.SetBy, GCMaxHeadroom: p.gc.MaxHeadroom}})
	})
	return err
}
