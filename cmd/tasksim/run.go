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
	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/runner"
	"github.com/tasksim/tasksim/scenarios"
)

// runFlags are the flags of `tasksim run`: those that set the scenario (cliflags.Load,
// shared with every sweep cell), and run's own.
type runFlags struct {
	*cliflags.Load
	out, shard, startAt      string
	baseline, baselineTarget string
	budgets, allow           []string
	shards                   int
	probeTimeout             time.Duration
	dryRun, noProgress       bool
	force                    bool
	fs                       *pflag.FlagSet
}

// parseRunFlags parses run's command line into its flags and the scenario NAME or FILE
// (default baseline); -h or --help returns a helpRequest with run's help (main prints it
// on stdout), so nothing is written here.
func parseRunFlags(args []string, _ io.Writer) (*runFlags, string, error) {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	f := &runFlags{Load: cliflags.BindLoad(fs), fs: fs}
	setHelp(fs, runHelp())
	fs.StringVar(&f.out, "out", "", "output `DIR` (default runs/<scenario>-<UTC time>)")
	fs.StringVar(&f.shard, "shard", "", "run slice `I/N` of the scenario (0 <= I < N): its clients, arrivals and tenants split as in docs/ARCHITECTURE.md#shards")
	fs.IntVar(&f.shards, "shards", 0, "run one of `N` slices, the index from "+runner.JobIndexEnv+" (a Kubernetes Indexed Job sets it); --shard I/N wins over its index, and must name the same N")
	fs.StringVar(&f.startAt, "start-at", "", "start the load at this `RFC3339` instant (at most 24h ahead), the same in every shard; a start past by over 1s is reported")
	fs.DurationVar(&f.probeTimeout, "probe-timeout", runner.DefaultProbeTimeout, "bound on the probe of the target before the load (server/discover, initialize, tools/list)")
	fs.StringVar(&f.baseline, "baseline", "", "judge the run against the saved run in `DIR` as well ('tasksim compare DIR OUT'), writing compare.json and compare.html beside summary.json")
	fs.StringVar(&f.baselineTarget, "baseline-target", "", "A/B run: drive the stable `URL` and --target (the canary) at once, the clients split between them, interleaved; writes canary/, baseline/ and the comparison into --out")
	fs.StringArrayVar(&f.budgets, "budget", nil, "a regression budget for --baseline or --baseline-target, `'METRIC CHANGE'`, e.g. 'latency_tasks_get.p99 +20%' (repeatable; 'tasksim compare --help')")
	fs.StringSliceVar(&f.allow, "allow", nil, "configuration `FIELDS` that may differ from --baseline's run: scenario,duration,tool,clients,protocol,shards,compare,config")
	fs.BoolVar(&f.force, "force", false, "write into an --out DIR that already holds a run, replacing its files (without it such a DIR is refused, exit 2)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the plan (load, cancels, faults, thresholds) and run nothing")
	fs.BoolVar(&f.noProgress, "no-progress", false, "no progress bars (they show only when stderr is a terminal)")
	if err := parseFlags(fs, args); err != nil {
		return nil, "", err
	}
	switch {
	case f.probeTimeout <= 0:
		return nil, "", usagef("--probe-timeout must be > 0, got %v", f.probeTimeout)
	case f.baseline != "" && f.baselineTarget != "":
		return nil, "", usagef("--baseline and --baseline-target: give one (an A/B run is its own baseline)")
	case (len(f.budgets) > 0 || len(f.allow) > 0) && f.baseline == "" && f.baselineTarget == "":
		return nil, "", usagef("--budget and --allow judge a comparison: give --baseline DIR or --baseline-target URL")
	case fs.NArg() > 1:
		return nil, "", usagef("run takes one scenario NAME or FILE, got %d arguments", fs.NArg())
	}
	return f, cmp.Or(fs.Arg(0), "baseline"), nil
}

// scenario is the scenario NAME or FILE with the flags applied (cliflags.Load.Scenario);
// every problem is a usage error.
func (f *runFlags) scenario(name string) (*scenarios.Scenario, error) {
	return f.Load.Scenario(name)
}

// runRun is `tasksim run`: the scenario, its shard and start checked, then the plan printed
// (--dry-run), the A/B run, or the run under the signals, its summary printed and, with
// --baseline, judged against the saved run.
func runRun(p process, args []string, stdout, stderr io.Writer) error {
	f, name, err := parseRunFlags(args, stderr)
	if err != nil {
		return err
	}
	sc, err := f.scenario(name)
	if err != nil {
		return err
	}
	shard, err := runner.ParseShard(f.shard, f.shards, f.fs.Changed("shards"), os.Getenv)
	if err != nil {
		return err
	}
	now := time.Now()
	startAt, err := runner.ParseStartAt(f.startAt, now)
	if err != nil {
		return err
	}
	if err := runner.Validate(sc, shard); err != nil {
		return err
	}
	cmpOpts := results.CompareOptions{Budgets: f.budgets, Allow: results.AllowFields(f.allow)}
	if f.baseline != "" {
		if err := runner.CheckBaseline(f.baseline, f.out, sc, shard, cmpOpts); err != nil {
			return err
		}
	}
	if f.baselineTarget != "" && !f.dryRun {
		return runAB(p, abRun{name: name, sc: sc, shard: shard, startAt: startAt, now: now, f: f, cmp: cmpOpts}, stdout, stderr)
	}
	if f.dryRun && f.baselineTarget != "" {
		if err := runner.CheckAB(sc, f.baselineTarget, shard); err != nil {
			return err
		}
		fmt.Fprintln(stdout, runner.ABPlanLine(sc, f.baselineTarget, shard))
	}
	if f.dryRun {
		plan, err := runner.NewPlan(sc, shard, startAt, now)
		if err != nil {
			return err
		}
		plan.WriteText(stdout)
		return nil
	}
	opts := runner.Options{Dir: cmp.Or(f.out, runner.DefaultDir(sc, now)), Shard: shard, StartAt: startAt, Start: now,
		GCSetBy: p.gc.SetBy, GCMaxHeadroom: p.gc.MaxHeadroom, Overwrite: f.force, ProbeTimeout: f.probeTimeout, Notes: func(line string) { fmt.Fprintln(stderr, "tasksim run: "+line) }}
	if f.baseline != "" && f.force {
		if err := results.RemoveComparison(opts.Dir); err != nil {
			return fmt.Errorf("--force: %w", err)
		}
	}
	obs := &runObserver{w: stderr, bars: !f.noProgress && isTerminal(stderr), duration: time.Duration(sc.Duration)}
	var sum *results.Summary
	withSignals(obs, stderr, func(ctx context.Context, stop <-chan struct{}) {
		opts.Stop, opts.Observer = stop, obs
		sum, err = runner.Run(ctx, sc, opts)
	})
	if sum != nil && !errors.Is(err, runner.ErrNoRunSummary) { // the run's own summary, as text
		write := results.WriteText
		if f.baseline != "" && sum.Verdict != results.VerdictError {
			write = results.WriteTextCompared
		}
		if werr := write(stdout, sum, opts.Dir); werr != nil && err == nil {
			return werr
		}
	}
	if f.baseline == "" || sum == nil || sum.Verdict == results.VerdictError || errors.Is(err, runner.ErrNoRunSummary) {
		return err
	}
	return judgeAgainstBaseline(f.baseline, opts.Dir, cmpOpts, err, stdout)
}

// judgeAgainstBaseline compares the finished run in dir with the baseline run, prints the
// comparison after the run's summary and writes it beside it. The run's own error (a
// failed gate, an interruption) stays the command's; a comparison that does not pass
// makes a passing run exit 99.
func judgeAgainstBaseline(baseline, dir string, opts results.CompareOptions, runErr error, stdout io.Writer) error {
	c, err := results.Compare(baseline, dir, opts)
	if err != nil {
		if runErr != nil { // the run's own verdict stands; the refusal is said beside it
			fmt.Fprintf(stdout, "\nno comparison with the baseline %s: %v\n", baseline, err)
			return runErr
		}
		return usagef("--baseline %s: %w", baseline, err)
	}
	fmt.Fprintf(stdout, "\ncompared with the baseline %s:\n", baseline)
	if err := results.WriteComparisonText(stdout, c); err != nil {
		return err
	}
	if err := results.WriteComparison(dir, c); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nfiles       %s and %s in %s\n", results.CompareJSONFile, results.CompareHTMLFile, dir)
	if runErr != nil {
		return runErr
	}
	return runner.ComparisonError(c)
}
