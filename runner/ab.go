package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/scenarios"
)

// An A/B run (`run --target CANARY --baseline-target STABLE`, docs/METRICS.md#ab-runs):
// the scenario driven against both targets at once, its clients split between them as two
// shards are split (client i to the canary when i is even, to the stable target when odd:
// interleaved arrivals, each client with its global index and so its seed), both loads
// started at one instant, so that the machine's noise and the time of day fall on both
// alike. Each side is a run directory of its own; the comparison of the canary with the
// stable side is the one verdict. It lives here, not in the command line, so that a
// pipeline can run a canary judgement as a library call.

// abStartDelay is how far ahead an A/B run sets its common start when Options.StartAt does
// not, from the instant both sides are ready for their loads (their contract suites done):
// time for both targets' probes, so that the two loads begin together.
const abStartDelay = 2 * time.Second

// AB is an A/B run: two scenarios alike but for their targets, run as the two halves of
// one shard.
type AB struct {
	// Canary is the scenario against the canary (its Target); Stable is the same scenario
	// against the stable target. Both validated.
	Canary, Stable *scenarios.Scenario
	// Shard is the slice of the whole the A/B run takes (ABSides splits it); zero = all.
	Shard scenarios.Shard
	// Compare are the budgets and allowed differences of the comparison.
	Compare results.CompareOptions
	// Options are both sides' options; Dir is the A/B run's directory (each side writes into
	// Dir/canary and Dir/baseline, the comparison into Dir), and Stop stops both sides.
	// Shard, ABSide, StartTogether, Observer and Notes are set per side from this AB.
	Options Options
	// CanaryObserver and StableObserver follow each side; nil = none.
	CanaryObserver, StableObserver Observer
	// Notes receives each side's remarks with the side's name; nil = discarded.
	Notes func(side, line string)
}

// ABOutcome is how one side of an A/B run ended.
type ABOutcome struct {
	Side    string // results.ABCanary or results.ABBaseline
	Target  string // the side's target URL
	Dir     string // the side's run directory
	Summary *results.Summary
	Err     error // Run's error
}

// Failed is the side's error when it ended in an error (no summary, or verdict error),
// naming the side; nil otherwise.
func (o ABOutcome) Failed() error {
	if o.Summary != nil && o.Summary.Verdict != results.VerdictError {
		return nil
	}
	err := o.Err
	if err == nil {
		err = errors.New(o.Summary.Error)
	}
	return fmt.Errorf("%s side (%s): %w", o.Side, o.Target, err)
}

// ABResult is what an A/B run gives: both sides, and the comparison of the canary with the
// stable side when both ended without an error.
type ABResult struct {
	Dir   string       // the A/B run's directory, where the comparison belongs
	Sides [2]ABOutcome // the canary, then the stable side
	// Interrupted: a side was stopped early (Options.Stop or the context).
	Interrupted bool
	// SideErrors joins the sides that ended in an error; the comparison is then not made.
	SideErrors error
	// Comparison is the canary judged against the stable side (results.Compare), not yet
	// written; nil when SideErrors or CompareErr is set.
	Comparison *results.Comparison
	// CompareErr is why the two sides could not be compared.
	CompareErr error
}

// ABSides are the two sides' shards of the run's shard sh (I/N): the canary 2I/2N, the
// stable side 2I+1/2N, so that merging each side's shards of every I gives that side whole.
func ABSides(sh scenarios.Shard) (canary, stable scenarios.Shard) {
	n := max(sh.Count, 1)
	return scenarios.Shard{Index: 2 * sh.Index, Count: 2 * n}, scenarios.Shard{Index: 2*sh.Index + 1, Count: 2 * n}
}

// CheckAB refuses an A/B run of sc (the canary's scenario) against stable that cannot be
// judged: no canary, one server twice, or clients that do not split evenly. Every problem
// is a *UsageError.
func CheckAB(sc *scenarios.Scenario, stable string, sh scenarios.Shard) error {
	if sc.Target == "" {
		return usageErrorf("--baseline-target needs --target: the canary judged against the stable target")
	}
	if sc.Target == stable {
		return usageErrorf("--target and --baseline-target are both %s: an A/B run compares two servers", stable)
	}
	canaryShard, stableShard := ABSides(sh)
	if pool := sc.Workload.PoolSize(); canaryShard.Size(pool) != stableShard.Size(pool) {
		return usageErrorf("A/B run: %s split %d:%d between the canary and the stable target: give an even split (--clients), or the side with more load looks worse or faster",
			plural(pool, "client"), canaryShard.Size(pool), stableShard.Size(pool))
	}
	return nil
}

// ABPlanLine is the A/B run's line of a dry run: each side's target, shard and clients.
func ABPlanLine(sc *scenarios.Scenario, stable string, sh scenarios.Shard) string {
	c, st := ABSides(sh)
	pool := sc.Workload.PoolSize()
	return fmt.Sprintf("A/B run      canary %s: shard %s, %d clients; stable %s: shard %s, %d clients; one start, one comparison",
		sc.Target, c, c.Size(pool), stable, st, st.Size(pool))
}

// RunAB checks the A/B run (CheckAB, Validate of each side), removes a comparison an
// earlier run left in its directory (with Options.Overwrite), runs both sides at once and
// compares them. The error is one that stopped it before anything ran; how the sides and
// the comparison ended is in the result.
func RunAB(ctx context.Context, ab AB) (*ABResult, error) {
	if err := CheckAB(ab.Canary, ab.Stable.Target, ab.Shard); err != nil {
		return nil, err
	}
	canaryShard, stableShard := ABSides(ab.Shard)
	if err := Validate(ab.Canary, canaryShard); err != nil {
		return nil, fmt.Errorf("A/B run, canary side: %w", err)
	}
	if err := Validate(ab.Stable, stableShard); err != nil {
		return nil, fmt.Errorf("A/B run, stable side: %w", err)
	}
	dir := ab.Options.Dir
	if dir == "" {
		dir = DefaultDir(ab.Canary, ab.Options.Start)
	}
	if ab.Options.Overwrite {
		if err := results.RemoveComparison(dir); err != nil {
			return nil, fmt.Errorf("--force: %w", err)
		}
	}
	res := &ABResult{Dir: dir, Sides: [2]ABOutcome{
		{Side: results.ABCanary, Target: ab.Canary.Target, Dir: filepath.Join(dir, results.ABCanary)},
		{Side: results.ABBaseline, Target: ab.Stable.Target, Dir: filepath.Join(dir, results.ABBaseline)},
	}}
	runSides(ctx, ab, res)
	var errs []error
	for _, o := range res.Sides {
		res.Interrupted = res.Interrupted || (o.Summary != nil && !errors.Is(o.Err, ErrNoRunSummary) && o.Summary.Interrupted)
		if err := o.Failed(); err != nil {
			errs = append(errs, err)
		}
	}
	if res.SideErrors = errors.Join(errs...); res.SideErrors != nil {
		return res, nil
	}
	res.Comparison, res.CompareErr = results.Compare(res.Sides[1].Dir, res.Sides[0].Dir, ab.Compare)
	return res, nil
}

// runSides runs both sides of ab at once, into res.Sides, stopped together: by
// ab.Options.Stop, or by a side that ends in an error (there is nothing left to compare it
// with). Without a common start the sides meet before their loads (meeting).
func runSides(ctx context.Context, ab AB, res *ABResult) {
	stop := make(chan struct{})
	var once sync.Once
	halt := func() { once.Do(func() { close(stop) }) }
	defer halt()
	if ext := ab.Options.Stop; ext != nil {
		go func() {
			select {
			case <-ext:
				halt()
			case <-stop:
			}
		}()
	}
	var together func(context.Context) (time.Time, error)
	if ab.Options.StartAt.IsZero() { // with StartAt, the sides start at the instant the fleet's shards do
		together = newMeeting(2).arrive
	}
	canaryShard, stableShard := ABSides(ab.Shard)
	sides := []struct {
		sc  *scenarios.Scenario
		sh  scenarios.Shard
		obs Observer
	}{{ab.Canary, canaryShard, ab.CanaryObserver}, {ab.Stable, stableShard, ab.StableObserver}}
	var wg sync.WaitGroup
	for i, s := range sides {
		o := &res.Sides[i]
		opts := ab.Options
		opts.Dir, opts.Shard, opts.ABSide, opts.StartTogether, opts.Stop, opts.Observer = o.Dir, s.sh, o.Side, together, stop, s.obs
		opts.Notes = nil
		if ab.Notes != nil {
			opts.Notes = func(line string) { ab.Notes(o.Side, line) }
		}
		wg.Go(func() {
			o.Summary, o.Err = Run(ctx, s.sc, opts)
			if o.Summary == nil || o.Summary.Verdict == results.VerdictError {
				halt()
			}
		})
	}
	wg.Wait()
}

// meeting is where the sides of an A/B run wait for each other before their loads: the
// last to arrive sets the common start, abStartDelay ahead. A side that ends before it
// arrives stops the other (runSides), whose wait then ends.
type meeting struct {
	mu    sync.Mutex
	count int           // sides yet to arrive
	at    time.Time     // the common start, once all have arrived
	all   chan struct{} // closed when all have arrived
}

func newMeeting(sides int) *meeting {
	return &meeting{count: sides, all: make(chan struct{})}
}

// arrive waits for the other sides and returns the common start: Options.StartTogether.
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

// plural is n and what, pluralized.
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Err is the A/B run's one verdict as a command's error: the sides' errors (then no
// comparison was made); a comparison that could not be made, a *UsageError, or an
// *InterruptedError when a side was stopped early; the comparison's own verdict
// (ComparisonError) as a *GateError naming both targets, or an *InterruptedError when it is
// inconclusive because a side was stopped early; nil when it passed.
func (r *ABResult) Err() error {
	switch {
	case r.SideErrors != nil:
		return fmt.Errorf("A/B run: no comparison: %w", r.SideErrors)
	case r.CompareErr != nil && r.Interrupted:
		return &InterruptedError{fmt.Sprintf("no comparison: %v", r.CompareErr)}
	case r.CompareErr != nil:
		return usageErrorf("A/B run: %w", r.CompareErr)
	}
	err := ComparisonError(r.Comparison)
	switch {
	case err == nil:
		return nil
	case r.Interrupted && r.Comparison.Verdict == results.CompareVerdictInconclusive:
		return &InterruptedError{"the comparison is inconclusive: a side was stopped early"}
	}
	return &GateError{Why: fmt.Sprintf("canary %s against stable %s: %s", r.Sides[0].Target, r.Sides[1].Target, err)}
}
