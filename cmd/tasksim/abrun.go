package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/runner"
	"github.com/tasksim/tasksim/scenarios"
)

// abRun is an A/B run as the command line asked for it (runner.RunAB does it).
type abRun struct {
	name    string // the scenario NAME or FILE, loaded again for the stable side
	sc      *scenarios.Scenario
	stable  string // the stable target's URL
	shard   scenarios.Shard
	startAt time.Time
	now     time.Time
	f       *runFlags
	cmp     results.CompareOptions
}

// runAB runs both sides (runner.RunAB) under the signals, prints both summaries and the
// comparison, writes the comparison into --out and returns the one verdict: the
// comparison's, a side's runtime error, or an interruption.
func runAB(p process, ab abRun, stdout, stderr io.Writer) error {
	stableSc, err := ab.f.scenario(ab.name)
	if err != nil {
		return err
	}
	stableSc.Target = ab.stable
	obs := &runObserver{w: stderr, bars: !ab.f.noProgress && isTerminal(stderr), duration: time.Duration(ab.sc.Duration)}
	var res *runner.ABResult
	withSignals(obs, stderr, func(ctx context.Context, stop <-chan struct{}) {
		res, err = runner.RunAB(ctx, runner.AB{Canary: ab.sc, Stable: stableSc, Shard: ab.shard, Compare: ab.cmp, CanaryObserver: obs,
			Options: runner.Options{Dir: ab.f.out, StartAt: ab.startAt, Start: ab.now, Stop: stop, GCSetBy: p.gc.SetBy,
				GCMaxHeadroom: p.gc.MaxHeadroom, Overwrite: ab.f.force, ProbeTimeout: ab.f.probeTimeout},
			Notes: func(side, line string) { fmt.Fprintf(stderr, "tasksim run [%s]: %s\n", side, line) }})
	})
	if err != nil {
		return err
	}
	return abVerdict(ab, res, stdout)
}

// abVerdict prints both sides and the comparison and returns the A/B run's verdict.
func abVerdict(ab abRun, res *runner.ABResult, stdout io.Writer) error {
	for _, o := range res.Sides {
		if o.Summary != nil && !errors.Is(o.Err, runner.ErrNoRunSummary) {
			fmt.Fprintf(stdout, "== %s side: %s\n", o.Side, o.Target)
			if err := results.WriteTextCompared(stdout, o.Summary, o.Dir); err != nil {
				return err
			}
			fmt.Fprintln(stdout)
		}
	}
	if res.SideErrors != nil {
		return fmt.Errorf("A/B run: no comparison: %w", res.SideErrors)
	}
	c := res.Comparison
	if res.CompareErr != nil {
		if res.Interrupted {
			return interruptedError{fmt.Sprintf("no comparison: %v", res.CompareErr)}
		}
		return usagef("A/B run: %w", res.CompareErr)
	}
	fmt.Fprintf(stdout, "== canary %s against stable %s\n", ab.sc.Target, ab.stable)
	if err := results.WriteComparisonText(stdout, c); err != nil {
		return err
	}
	dir := res.Dir
	if err := results.WriteComparison(dir, c); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nfiles       %s/, %s/, %s and %s in %s\n", results.ABCanary, results.ABBaseline, results.CompareJSONFile, results.CompareHTMLFile, dir)
	if err := comparisonError(c); err != nil {
		if res.Interrupted && c.Verdict == results.CompareVerdictInconclusive {
			return interruptedError{"the comparison is inconclusive: a side was stopped early"}
		}
		return gateError{fmt.Sprintf("canary %s against stable %s: %s", ab.sc.Target, ab.stable, err)}
	}
	return nil
}
