package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/runner"
)

// Exit codes, as a command line exits: of each cell's run (Cell.ExitCode) and of the sweep
// (Result.ExitCode).
const (
	exitOK      = 0
	exitRuntime = 1
	exitUsage   = 2
	exitGate    = 99
	exitSignal  = results.ExitInterrupted
)

// Options say where and how a sweep runs its cells. The zero value runs them under
// runner's defaults, into cell-NN directories of the current directory, observed by no one.
type Options struct {
	// Dir is the sweep directory: cell i runs into Dir/cell-NN (kept; overwritten if
	// there). It is not created here: "" is the current directory.
	Dir string
	// Run is the runner.Options of every cell, but for Dir and Overwrite, which Run sets per
	// cell. Its Stop, once closed, stops the cell it interrupts gracefully (its files are
	// written) and the sweep there: the cells after it are not run.
	Run runner.Options
	// Observer is told as each cell starts and ends; nil = nobody.
	Observer Observer
}

// Observer follows a sweep cell by cell, for progress bars and messages (the sweep prints
// nothing). label names a cell by its values, "poll_interval=1s clients=500". Its methods
// are called from the goroutine that called Run.
type Observer interface {
	// CellStarted is called as the cell's run begins.
	CellStarted(label string)
	// CellEnded is called as its run returns, whatever it gave.
	CellEnded(label string)
	// CellFailed reports a cell whose run ended in an error of its own (not a failed gate,
	// not a signal); the sweep goes on. err is the run's error, its secrets redacted.
	CellFailed(label, err string)
}

// Run runs the cells of r (as Plan.Check returned it) in order, each through runner.Run
// with its scenario (Plan.Build), records what each measured, and ranks the result: each
// cell's role and why, the recommendations, the capacity and ExitCode (rank.go). A cell
// interrupted by opts.Run.Stop or ctx stops the sweep there, and the cells after it are not
// run. It returns an error only when the sweep cannot go on: a cell's scenario cannot be
// built, or a *runner.UsageError from the target (it refuses the scenario); the result is
// then not ranked.
func Run(ctx context.Context, p *Plan, r *Result, opts Options) error {
	slos, err := p.thresholds()
	if err != nil {
		return err
	}
	obs := opts.Observer
	if obs == nil {
		obs = quiet{}
	}
	for i := range r.Cells {
		c := &r.Cells[i]
		if r.Interrupted {
			c.Error = "not run: the sweep was interrupted"
			continue
		}
		if err := runCell(ctx, p, r, c, slos, opts, obs); err != nil {
			return err
		}
	}
	rank(r)
	return nil
}

// runCell runs cell c of r and records what it measured; see Run.
func runCell(ctx context.Context, p *Plan, r *Result, c *Cell, slos []results.Threshold, opts Options, obs Observer) error {
	label := r.label(c)
	sc, err := p.Build.Scenario(c.Values) // checked by Plan.Check: no problem left
	if err != nil {
		return fmt.Errorf("cell %s: %w", label, err)
	}
	c.Run = true
	obs.CellStarted(label)
	ro := opts.Run
	ro.Dir, ro.Overwrite = filepath.Join(opts.Dir, c.Cell), true
	sum, runErr := runner.Run(ctx, sc, ro)
	obs.CellEnded(label)
	c.ExitCode = exitCode(runErr)
	stopped := c.ExitCode == exitSignal // a signal stopped the cell: it stops the sweep too
	switch {
	case errors.As(runErr, new(*runner.UsageError)) && !slices.ContainsFunc(r.Vary, func(v Vary) bool { return v.Name == "protocol" }):
		// Every cell's scenario was checked before the sweep began: what is left is the
		// target refusing the scenario (it lacks the Tasks capability the tool needs),
		// which no other cell would get past. The cell's directory says so (summary.json,
		// verdict error); the sweep stops (exit 2). Cells of another era may get past it
		// (a target with tasks in one era only): with --vary protocol, the cell fails and
		// the sweep goes on, as below.
		return fmt.Errorf("cell %s: %w", label, runErr) // redacted by the run
	case c.ExitCode != exitOK && c.ExitCode != exitGate && !stopped:
		c.Error = runErr.Error() // the cell's own error, its secrets redacted by the run
		obs.CellFailed(label, c.Error)
		return nil
	}
	if sum == nil {
		c.Error = "no " + results.SummaryJSONFile + " was written"
	} else {
		measureCell(c, sum, slos)
		stopped = stopped || sum.Interrupted // also when a gate failed in what it measured (exit 99)
	}
	if stopped {
		r.Interrupted, r.InterruptedIn = true, c.Cell+" ("+label+")"
	}
	return nil
}

// quiet is the Observer of a sweep nobody watches.
type quiet struct{}

var _ Observer = quiet{}

func (quiet) CellStarted(string)        {}
func (quiet) CellEnded(string)          {}
func (quiet) CellFailed(string, string) {}

// exitCode is the exit code of a cell whose run returned err, as `tasksim run` would exit:
// 2 for a *runner.UsageError, 99 for a failed gate or threshold, 130 for an interruption, 1
// for any other error.
func exitCode(err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, new(*runner.UsageError)):
		return exitUsage
	case errors.As(err, new(*runner.GateError)):
		return exitGate
	case errors.As(err, new(*runner.InterruptedError)):
		return exitSignal
	}
	return exitRuntime
}

// measureCell records what the cell's run measured, and which SLOs it missed.
func measureCell(c *Cell, s *results.Summary, slos []results.Threshold) {
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
	c.Figures = &Figures{
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
