package runner

import (
	"errors"
	"fmt"

	"github.com/tasksim/tasksim/results"
)

// UsageError is a problem with what the run was asked to do, found before or while it
// started: an invalid scenario or threshold (every problem at once), a shard that owns no
// client, a target that cannot run the tool as the scenario asks (no Tasks capability,
// fallback refuse). The command line exits 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// GateError is a run whose verdict is "fail": a gate or a threshold failed (the summary says
// which), or any other verdict a command line gives that did not pass: a comparison, a
// sweep with no qualifying cell, a contract case, a pin's drift. Why says which, in one
// line; "" is a run's failed gate or threshold, named in its summary. The command line
// exits 99.
type GateError struct{ Why string }

func (e *GateError) Error() string {
	if e.Why != "" {
		return e.Why
	}
	return "a gate or threshold failed (see the summary above)"
}

// InterruptedError is a run stopped early (Options.Stop, or its context) with nothing failed
// in what it measured, or any other command a signal stopped so. What says what was kept;
// "" is a load that ran and was cut short, its files holding what was measured. The command
// line exits 130: a partial run is never a pass.
type InterruptedError struct{ What string }

func (e *InterruptedError) Error() string {
	if e.What != "" {
		return "interrupted before the end: " + e.What
	}
	return "interrupted before the end: the files hold what was measured, and nothing failed in it"
}

// TargetError is a target the run could not use: it cannot be reached, is not an MCP
// endpoint, refused the credentials or initialize, or does not speak the era pinned
// (docs/ARCHITECTURE.md#run-flow, step 6). The command line exits 1.
type TargetError struct{ Err error }

func (e *TargetError) Error() string { return e.Err.Error() }
func (e *TargetError) Unwrap() error { return e.Err }

// ErrNoRunSummary is wrapped by every error that ended a run before its summary was built:
// summary.json then holds the error summary (verdict "error" and why, nothing measured),
// which Run returns. Test it with errors.Is.
var ErrNoRunSummary = errors.New("the run ended before its summary")

// beforeSummary marks err as having ended the run before its summary (ErrNoRunSummary).
type beforeSummary struct{ err error }

func (e *beforeSummary) Error() string        { return e.err.Error() }
func (e *beforeSummary) Unwrap() error        { return e.err }
func (e *beforeSummary) Is(target error) bool { return target == ErrNoRunSummary }

// ContractError is the contract suite's verdict (`tasksim conform`) as the error of the
// command that ran it: a *GateError for a failed case or for a suite in which no case ran
// (nothing was shown to pass), an *InterruptedError for a suite a signal cut short with
// nothing failed, nil for a pass.
func ContractError(res *results.Contract) error {
	switch {
	case res.Counts.Fail > 0:
		return &GateError{Why: fmt.Sprintf("%d contract case(s) failed", res.Counts.Fail)}
	case res.Interrupted:
		return &InterruptedError{What: "no case failed of those that ran (their results are written); the cases after the interruption did not run"}
	case res.Verdict != results.VerdictPass:
		return &GateError{Why: "no contract case ran: nothing was shown to pass"}
	}
	return nil
}

// MergeError is the verdict of merged shards (`tasksim merge`, results.MergeRuns) as the
// error of the command that merged them, as Run's error is a run's: the shard's own error
// for a merge in error, a *GateError for a failed gate or threshold (or a partial set that
// cannot pass), an *InterruptedError for a shard a signal stopped with nothing failed.
func MergeError(sum *results.Summary) error {
	switch sum.ExitCode() {
	case results.ExitRuntimeError:
		return errors.New(sum.Error)
	case results.ExitGateFailed:
		if sum.Merge != nil && sum.Merge.FailedAsPartial != "" {
			return &GateError{Why: sum.Merge.FailedAsPartial}
		}
		return &GateError{}
	case results.ExitInterrupted:
		return &InterruptedError{What: "a shard was stopped early by a signal; nothing failed in what the shards measured"}
	}
	return nil
}
