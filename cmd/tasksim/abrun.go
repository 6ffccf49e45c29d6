package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/runner"
	"github.com/tasksim/tasksim/scenarios"
)

// An A/B run (`run --target CANARY --baseline-target STABLE`, docs/METRICS.md#ab-runs):
// the scenario driven against both targets at once, its clients split between them as two
// shards are split (client i to the canary when i is even, to the stable target when odd:
// interleaved arrivals, each client with its global index and so its seed), both loads
// started at one instant, so that the machine's noise and the time of day fall on both
// alike. Each side is a run directory of its own; the comparison of the canary with the
// stable side is the one verdict.

// abStartDelay is how far ahead an A/B run sets its common start when --start-at does not,
// from the instant both sides are ready for their loads (their contract suites done): time
// for both targets' probes, so that the two loads begin together.
const abStartDelay = 2 * time.Second

// meeting is where the sides of an A/B run wait for each other before their loads: the
// last to arrive sets the common start, abStartDelay ahead. A side that ends before it
// arrives stops the other (runAllWithSignals), whose wait then ends.
type meeting struct {
	mu    sync.Mutex
	count int           // sides yet to arrive
	at    time.Time     // the common start, once all have arrived
	all   chan struct{} // closed when all have arrived
}

func newMeeting(sides int) *meeting {
	return &meeting{count: sides, all: make(chan struct{})}
}

// arrive waits for the other sides and returns the common start: runner.Options.StartTogether.
func (m *meeting) arrive(ctx context.Context) (time.Time, error) {
	m.mu.Lock()
	if m.count--; m.count == 0 {
		m.at = time.Now().Add(abStartDelay)
		close(m.all)
	}
	m.mu.Unlock()
	select {
	case <-m.all:
		return m.at, nil
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
}

// abRun is an A/B run as the command line asked for it.
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

// abSides are the two sides' shards of the run's shard sh (I/N): the canary 2I/2N, the
// stable side 2I+1/2N, so that merging each side's shards of every I gives that side whole.
func abSides(sh scenarios.Shard) (canary, stable scenarios.Shard) {
	n := max(sh.Count, 1)
	return scenarios.Shard{Index: 2 * sh.Index, Count: 2 * n}, scenarios.Shard{Index: 2*sh.Index + 1, Count: 2 * n}
}

// checkAB refuses an A/B run of sc (the canary's scenario) against stable that cannot be
// judged: no canary, one server twice, or clients that do not split evenly (run and
// --dry-run alike).
func checkAB(sc *scenarios.Scenario, stable string, sh scenarios.Shard) error {
	if sc.Target == "" {
		return usagef("--baseline-target needs --target: the canary judged against the stable target")
	}
	if sc.Target == stable {
		return usagef("--target and --baseline-target are both %s: an A/B run compares two servers", stable)
	}
	canaryShard, stableShard := abSides(sh)
	if pool := sc.Workload.PoolSize(); canaryShard.Size(pool) != stableShard.Size(pool) {
		return usagef("A/B run: %s split %d:%d between the canary and the stable target: give an even split (--clients), or the side with more load looks worse or faster",
			plural(pool, "client"), canaryShard.Size(pool), stableShard.Size(pool))
	}
	return nil
}

// runAB runs both sides, prints both summaries and the comparison, writes the comparison
// into --out and returns the one verdict: the comparison's, a side's runtime error, or an
// interruption.
func runAB(p process, ab abRun, stdout, stderr io.Writer) error {
	if err := checkAB(ab.sc, ab.stable, ab.shard); err != nil {
		return err
	}
	stableSc, err := ab.f.scenario(ab.name)
	if err != nil {
		return err
	}
	stableSc.Target = ab.stable
	canaryShard, stableShard := abSides(ab.shard)
	if err := runner.Validate(ab.sc, canaryShard); err != nil {
		return fmt.Errorf("A/B run, canary side: %w", err)
	}
	if err := runner.Validate(stableSc, stableShard); err != nil {
		return fmt.Errorf("A/B run, stable side: %w", err)
	}
	dir := cmp.Or(ab.f.out, runner.DefaultDir(ab.sc, ab.now))
	if err := removeComparison(dir, ab.f.force); err != nil {
		return err
	}
	var together func(context.Context) (time.Time, error)
	if ab.startAt.IsZero() { // with --start-at, the sides start at the instant the fleet's shards do
		together = newMeeting(2).arrive
	}
	plan := func(sc *scenarios.Scenario, side string, sh scenarios.Shard, bars bool) plannedRun {
		return plannedRun{sc: sc, obs: &runObserver{w: stderr, bars: bars, duration: time.Duration(sc.Duration)},
			opts: runner.Options{Dir: filepath.Join(dir, side), Shard: sh, StartAt: ab.startAt, StartTogether: together,
				Start: ab.now, ABSide: side, GCSetBy: p.gc.SetBy, GCMaxHeadroom: p.gc.MaxHeadroom, Overwrite: ab.f.force,
				ProbeTimeout: ab.f.probeTimeout, Notes: func(line string) { fmt.Fprintf(stderr, "tasksim run [%s]: %s\n", side, line) }}}
	}
	bars := !ab.f.noProgress && isTerminal(stderr)
	outs := runAllWithSignals([]plannedRun{
		plan(ab.sc, results.ABCanary, canaryShard, bars),
		plan(stableSc, results.ABBaseline, stableShard, false),
	}, stderr)
	return abVerdict(ab, dir, outs, stdout)
}

// abVerdict prints both sides and the comparison and returns the A/B run's verdict.
func abVerdict(ab abRun, dir string, outs []runOutcome, stdout io.Writer) error {
	sides := []struct{ name, target, dir string }{
		{results.ABCanary, ab.sc.Target, filepath.Join(dir, results.ABCanary)},
		{results.ABBaseline, ab.stable, filepath.Join(dir, results.ABBaseline)},
	}
	var sideErrs []error
	interrupted := false
	for i, o := range outs {
		s := sides[i]
		if o.sum != nil && !errors.Is(o.err, runner.ErrNoRunSummary) {
			fmt.Fprintf(stdout, "== %s side: %s\n", s.name, s.target)
			if err := results.WriteTextCompared(stdout, o.sum, s.dir); err != nil {
				return err
			}
			fmt.Fprintln(stdout)
			interrupted = interrupted || o.sum.Interrupted
		}
		if o.sum == nil || o.sum.Verdict == results.VerdictError {
			err := o.err
			if err == nil {
				err = errors.New(o.sum.Error)
			}
			sideErrs = append(sideErrs, fmt.Errorf("%s side (%s): %w", s.name, s.target, err))
		}
	}
	if len(sideErrs) > 0 {
		return fmt.Errorf("A/B run: no comparison: %w", errors.Join(sideErrs...))
	}
	c, err := results.Compare(sides[1].dir, sides[0].dir, ab.cmp)
	if err != nil {
		if interrupted {
			return interruptedError{fmt.Sprintf("no comparison: %v", err)}
		}
		return usagef("A/B run: %w", err)
	}
	fmt.Fprintf(stdout, "== canary %s against stable %s\n", ab.sc.Target, ab.stable)
	if err := results.WriteComparisonText(stdout, c); err != nil {
		return err
	}
	if err := results.WriteComparison(dir, c); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nfiles       %s/, %s/, %s and %s in %s\n", results.ABCanary, results.ABBaseline, results.CompareJSONFile, results.CompareHTMLFile, dir)
	if err := comparisonError(c); err != nil {
		if interrupted && c.Verdict == results.CompareVerdictInconclusive {
			return interruptedError{"the comparison is inconclusive: a side was stopped early"}
		}
		return gateError{fmt.Sprintf("canary %s against stable %s: %s", ab.sc.Target, ab.stable, err)}
	}
	return nil
}

// removeComparison removes the compare.json and compare.html an earlier run left in dir
// (with --force), so that a run that ends before its comparison leaves no stale verdict.
func removeComparison(dir string, force bool) error {
	if !force {
		return nil
	}
	for _, f := range []string{results.CompareJSONFile, results.CompareHTMLFile} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("--force: %w", err)
		}
	}
	return nil
}
