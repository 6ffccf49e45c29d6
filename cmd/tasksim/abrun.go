package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/tasksim/tasksim/internal/progress"
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

// runAB runs both sides (runner.RunAB) under the signals, then prints both summaries and
// the comparison, writes the comparison into --out and returns the one verdict
// (runner.ABResult.Conclude).
func runAB(p process, ab abRun, stdout, stderr io.Writer) error {
	stableSc, err := ab.f.Scenario(ab.name)
	if err != nil {
		return err
	}
	stableSc.Target = ab.f.BaselineTarget
	obs := progress.NewRun(stderr, progress.For(stderr, ab.f.noProgress, ab.f.every), "tasksim run [canary]: ", time.Duration(ab.sc.Duration))
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
	return res.Conclude(stdout)
}
