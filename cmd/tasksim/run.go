package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/internal/cliflags"
	"github.com/tasksim/tasksim/internal/progress"
	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/runner"
)

// runFlags are the flags of `tasksim run`: those that set the scenario (cliflags.Load,
// shared with every sweep cell), those of where, when and against what it runs
// (cliflags.Run), and what only the command line does with a run.
type runFlags struct {
	*cliflags.Load
	*cliflags.Run
	dryRun, noProgress bool
	every              time.Duration // --progress-interval: the plain status line's period
	fs                 *pflag.FlagSet
}

// parseRunFlags parses run's command line into its flags and the scenario NAME or FILE
// (default baseline); -h or --help returns a helpRequest with run's help (main prints it
// on stdout), so nothing is written here.
func parseRunFlags(args []string, _ io.Writer) (*runFlags, string, error) {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	f := &runFlags{Load: cliflags.BindLoad(fs), Run: cliflags.BindRun(fs), fs: fs}
	setHelp(fs)
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the plan (load, cancels, faults, thresholds) and run nothing")
	fs.BoolVar(&f.noProgress, "no-progress", false, "no progress: no bars on a terminal, no status lines elsewhere")
	fs.DurationVar(&f.every, "progress-interval", 5*time.Second, "with stderr not a terminal (CI, kubectl logs), a plain status line this often")
	if err := parseFlags(fs, args); err != nil {
		return nil, "", err
	}
	if err := f.Run.Check(); err != nil {
		return nil, "", err
	}
	if fs.NArg() > 1 {
		return nil, "", usagef("run takes one scenario NAME or FILE, got %d arguments", fs.NArg())
	}
	return f, cmp.Or(fs.Arg(0), "baseline"), nil
}

// runRun is `tasksim run`: the scenario, its shard and start checked, then the plan printed
// (--dry-run), the A/B run, or the run under the signals, its summary printed and, with
// --baseline, judged against the saved run.
func runRun(p process, args []string, stdout, stderr io.Writer) error {
	f, name, err := parseRunFlags(args, stderr)
	if err != nil {
		return err
	}
	sc, err := f.Scenario(name)
	if err != nil {
		return err
	}
	now := time.Now()
	shard, startAt, err := f.Place(sc, now, os.Getenv)
	if err != nil {
		return err
	}
	if f.BaselineTarget != "" && !f.dryRun {
		return runAB(p, abRun{name: name, sc: sc, shard: shard, startAt: startAt, now: now, f: f}, stdout, stderr)
	}
	if f.dryRun && f.BaselineTarget != "" {
		if err := runner.CheckAB(sc, f.BaselineTarget, shard); err != nil {
			return err
		}
		fmt.Fprintln(stdout, runner.ABPlanLine(sc, f.BaselineTarget, shard))
	}
	if f.dryRun {
		plan, err := runner.NewPlan(sc, shard, startAt, now)
		if err != nil {
			return err
		}
		plan.WriteText(stdout)
		return nil
	}
	opts := f.Options(sc, shard, startAt, now)
	opts.GCSetBy, opts.GCMaxHeadroom = p.gc.SetBy, p.gc.MaxHeadroom
	opts.Notes = func(line string) { fmt.Fprintln(stderr, "tasksim run: "+line) }
	if f.Baseline != "" && f.Force {
		if err := results.RemoveComparison(opts.Dir); err != nil {
			return fmt.Errorf("--force: %w", err)
		}
	}
	obs := progress.NewRun(stderr, progress.For(stderr, f.noProgress, f.every), "tasksim run: ", time.Duration(sc.Duration))
	var sum *results.Summary
	withSignals(obs, stderr, func(ctx context.Context, stop <-chan struct{}) {
		opts.Stop, opts.Observer = stop, obs
		sum, err = runner.Run(ctx, sc, opts)
	})
	if sum != nil && !errors.Is(err, runner.ErrNoRunSummary) { // the run's own summary, as text
		write := results.WriteText
		if f.Baseline != "" && sum.Verdict != results.VerdictError {
			write = results.WriteTextCompared
		}
		if werr := write(stdout, sum, opts.Dir); werr != nil && err == nil {
			return werr
		}
	}
	if f.Baseline == "" || sum == nil || sum.Verdict == results.VerdictError || errors.Is(err, runner.ErrNoRunSummary) {
		return err
	}
	return runner.JudgeAgainstBaseline(stdout, f.Baseline, opts.Dir, f.Compare(), err)
}
