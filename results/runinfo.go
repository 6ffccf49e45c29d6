package results

import (
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/scenarios"
)

// RunInfo is what the caller knows about a run beyond its measurements. Zero values are
// noted per field.
type RunInfo struct {
	Version  string // tasksim version
	Scenario string // scenario name
	Seed     uint64 // the run's seed
	Protocol string // wire dialect
	Target   string // target URL; "" or "embedded" = the embedded server
	// TLSUnverified says the target's certificate was not verified (--insecure-skip-verify):
	// nothing proved the run reached the server it names.
	TLSUnverified bool

	Config *RunConfig // what the run was asked to do (NewRunConfig); nil = absent

	StartedAt time.Time     // start of the run; reported in UTC
	Duration  time.Duration // length of the run; 0 = the span of the windows

	// Error is the runtime error that ended the run, secrets redacted; "" = none. With it
	// the verdict is "error" whatever was measured.
	Error string

	// Manifest is the capability manifest; nil = null.
	Manifest *client.Manifest
	// Runtime describes the load generator's process (or, merged, each shard's); zero = null.
	Runtime Runtimes
	// Server holds the embedded server's figures (or, merged, each shard's); zero = null.
	Server Server
	// Client holds client-side findings beyond the counters; nil = absent.
	Client *Client
	// PollInterval is the interval clients were advised (or used): the trust check compares
	// schedule_lag p99 with 10% of it. 0 = unknown: the check is skipped, with a note.
	PollInterval time.Duration
	// Interrupted says a signal (Ctrl-C, SIGTERM) stopped the run early.
	Interrupted bool
	// Aborted says which abort_on_fail threshold stopped the load early; "" = none.
	Aborted string
	// InvalidTransitionSample is a sample of the invalid transitions
	// (loadgen.Engine.Violations), the hard gate's invalid_transitions_detail; nil = absent.
	InvalidTransitionSample any
	// DuplicateEffects is the number of second domain effects for one idempotency key, from
	// the embedded server's ledger; -1 = unknown (external target): null in the evidence,
	// not checked.
	DuplicateEffects int64
	// DuplicateWindow is the embedded server's ledger window (server.ledger.window, or the
	// largest ttl it granted), within which a repeated key is detected; 0 with an external
	// target.
	DuplicateWindow time.Duration
	// Thresholds are the scenario's threshold expressions; a bad one fails the run with its
	// parse error in the result.
	Thresholds []scenarios.Threshold
	// ErrorBudget is the share of requests, in percent, that may fail: the run is judged by
	// requests.errors_rate <= ErrorBudget after its Thresholds. nil = no budget (only for
	// callers that judge no real run: every run has one).
	ErrorBudget *float64
	// SLOs are the run's default SLOs, resolved (DefaultSLOs): those judged follow the error
	// budget, source SourceSLO. nil = none (callers that judge no real run).
	SLOs []SLO
	// Windows, when set, is NewWindowTally(Thresholds, ErrorBudget) fed every window of the
	// run: the thresholds' windows are read from it, and Build's windows argument may be nil.
	Windows *WindowTally
	// Errors are the kinds of failed request, the most frequent first, their messages
	// redacted by the caller (loadgen.Engine.ErrorSamples); Build keeps MaxErrorKinds.
	Errors []ErrorKind

	// FaultsOn says the scenario injected faults: the recovery gate is evaluated.
	FaultsOn bool
	// Faults counts the faults injected, by "source.kind" (metrics.Events.Counts).
	Faults map[string]int64
	// SecondCreates is the number of tools/call that repeated an idempotency key the server
	// had already seen, from the embedded server; -1 = unknown (external target): null.
	SecondCreates int64
	// EffectsAfterCancel is the number of domain effects applied to tasks already cancelled
	// (from the embedded server's ledger); -1 = unknown: null.
	EffectsAfterCancel int64
	// Unknown is the reconciliation list: tasks of unknown outcome by reason
	// (loadgen.Engine.Unknown); the gate adds the tasks whose result was lost
	// (counter results_lost) as "result_lost". UnknownSample is a sample of both with their
	// idempotency keys (loadgen.Engine.Unknown, then Engine.ResultsLost).
	Unknown       map[string]int64
	UnknownSample any
	// cut is, in a merge, how many of the unknown tasks an interruption cut off: the
	// run_stopped ones of the shards a signal stopped, and no other shard's (judgedSummary);
	// nil for a run, whose own run_stopped tasks are cut when it was interrupted.
	cut *int64
	// LostAfterReconnect counts known, unfinished tasks that a new session could not see
	// (a finding: the server bound tasks to the session, or lost them).
	// LostAfterReconnectSample is a sample of their ids, the recovery gate's
	// tasks_lost_after_reconnect_detail; nil = absent.
	LostAfterReconnect       int64
	LostAfterReconnectSample any
	// UnknownCreated counts the unknown outcomes of tasks whose id the client knew; -1 =
	// not counted (the accounting check of the recovery gate is then skipped).
	UnknownCreated int64

	// Security holds what the isolation probes and the secret detector found; nil = neither
	// ran: cross_tenant_leaks and planted_secrets stay "not_checked".
	Security *Security

	// Compat holds the inputs of the compatibility gate: the target's tasks
	// capability for the run's tool and what the client and the embedded server did about
	// it. nil = no manifest: the gate is not evaluated.
	// Rollback is what a rollback drill showed; nil without one (rollback.go).
	Rollback *Rollback
	Compat   *Compat

	// Contract is the result of the contract suite when the run ran it (scenario
	// contract: true, or run --contract), its Count done: the contract gate, and
	// Summary.Contract. nil = the suite did not run: the gate is not evaluated.
	Contract *Contract
}
