// Package runner runs one tasksim scenario: the library under `tasksim run`, `tasksim
// sweep` and every shard of a distributed run, as vegeta's lib is under its CLI.
//
// Run takes a validated scenario (scenarios.Load, overrides, Validate) and Options (output
// directory, shard and common start, stop control, an Observer for progress, a sink for
// notes) and does the whole flow of docs/ARCHITECTURE.md#run-flow: the contract suite when
// the scenario asks for it, the embedded mock server on 127.0.0.1:0 unless the scenario
// names a target, the capability probe, the chaos proxy, the load with its per-second
// collector, the drain, the summary and every output file, the secret scan of those files.
// It returns the summary (results.Summary, as summary.json holds it) and an error whose type
// decides the exit code a command line gives (UsageError, GateError, InterruptedError,
// TargetError; anything else is a runtime error), as does the error of any command over
// runner's results (ComparisonError, ABResult.Err; sweep.Result.Err).
//
// Around Run, the pieces a command line would otherwise hold, so that any program can do
// what `tasksim run` and `tasksim serve` do: the check of a scenario on its own
// (CheckScenario, `tasksim validate`), the plan of a run before it runs (Plan, the text
// of --dry-run), the shard and common start as flags give them (ParseShard, ParseStartAt),
// the refusals of a run to be judged against a saved one (CheckBaseline), the A/B run
// (RunAB: both sides at once, then compared) and a standalone mock server's setup
// (ServeConfig, AddServerTokens, ServeNotes).
//
// With Options.InProcess the embedded server is reached through its http.Handler, without a
// socket: a whole run then works inside a testing/synctest bubble, in virtual time, as the
// scenario library's tests run it.
//
// Everything a run learns is held by the run: its secrets (redacted from every output and
// error), the embedded server's peaks, its collector. Runs in one process are independent,
// concurrent ones included.
//
// runner may import internal/*, metrics, scenarios, results, client, loadgen, loadgen/chaos,
// mockserver and conform; it prints nothing (its texts go to the io.Writer it is given),
// touches no signal and never exits: that is cmd/tasksim's part (flags, progress bars,
// printing, signals, exit codes).
package runner
