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

// abRun is an A/B run as the command line asked for it (runner.RunAB does it): the canary's
// scenario sc (run's flags applied to NAME or FILE name), and where and when it runs.
type abRun struct {
	name         string // the scenario NAME or FILE, loaded again for the stable side
	sc           *scenarios.Scenario
	shard        scenarios.Shard
	startAt, now time.Time
	f            *runFlags
}

// runAB runs both sides (runner.RunAB) under the signals, prints both summaries and the
// comparison, writes the comparison into --out and returns the one verdict
// (runner.ABResult.Err).
func runAB(p process, ab abRun, stdout, stderr io.Writer) error {
	stableSc, err := ab.f.scenario(ab.name)
	if err != nil {
		return err
	}
	stableSc.Target = ab.f.BaselineTarget
	obs := &runObserver{w: stderr, bars: !ab.f.noProgress && isTerminal(stderr), duration: time.Duration(ab.sc.Duration)}
	var res *runner.ABResult
	withSignals(obs, stderr, func(ctx context.Context, stop <-chan struct{}) {
		res, err = runner.RunAB(ctx, runner.AB{Canary: ab.sc, Stable: stableSc, Shard: ab.shard, Compare: ab.f.Compare(), CanaryObserver: obs,
			Options: runner.Options{Dir: ab.f.Out, StartAt: ab.startAt, Start: ab.now, Stop: stop, GCSetBy: p.gc.SetBy,
				GCMaxHeadroom: p.gc.MaxHeadroom, Overwrite: ab.f.Force, ProbeTimeout: ab.f.ProbeTimeout},
			Notes: func(side, line string) { fmt.Fprintf(stderr, "tasksim run [%s]: %s\n", side, line) }})
	})
	if err != nil {
		return err
	}
	return printAB(res, stdout)
}

// printAB prints both sides and, when it was made, the comparison, which it writes into the
// A/B run's directory; it returns the A/B run's verdict.
func printAB(res *runner.ABResult, stdout io.Writer) error {
	for _, o := range res.Sides {
		if o.Summary != nil && !errors.Is(o.Err, runner.ErrNoRunSummary) {
			fmt.Fprintf(stdout, "== %s side: %s\n", o.Side, o.Target)
			if err := results.WriteTextCompared(stdout, o.Summary, o.Dir); err != nil {
				return err
			}
			fmt.Fprintln(stdout)
		}
	}
	if res.Comparison == nil {
		return res.Err()
	}
	fmt.Fprintf(stdout, "== canary %s against stable %s\n", res.Sides[0].Target, res.Sides[1].Target)
	if err := results.WriteComparisonText(stdout, res.Comparison); err != nil {
		return err
	}
	if err := results.WriteComparison(res.Dir, res.Comparison); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nfiles       %s/, %s/, %s and %s in %s\n", results.ABCanary, results.ABBaseline, results.CompareJSONFile, results.CompareHTMLFile, res.Dir)
	return res.Err()
}
