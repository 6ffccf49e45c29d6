// Package cliflags is the command line's flags that set a scenario, defined once: the load
// flags of `tasksim run` (Load, load.go), which a cell of `tasksim sweep` is made with too
// (a cell is exactly the run command line of its values: ParseLoad) and any later command
// that runs a scenario binds; run's own flags of where, when and against what it runs
// (Run, run.go: the shard, the common start, the checks before a run, its options); the
// flags a sweep hands on to every cell (Cell); the server flags of `tasksim serve`
// (Server, server.go); conform's suite flags (Suite) and probe's (Probe); and the values
// every command that reaches a target reads alike: --target and --header (target.go). Defined here rather than in cmd/tasksim so that each flag's name, help and
// effect exist once, and so that sweep builds its cells from them without the binary.
//
// A flag that was given sets its scenario field as --set would (scenarios.Scenario.SetFrom,
// the problem naming the flag); one that was not leaves the scenario's own value. Every
// problem is a *runner.UsageError (exit code 2), all of a command line's at once, and a
// header's value (a token, often) is never in one.
//
// It prints nothing and never exits. It may import scenarios, results, client, mockserver,
// internal/redact and runner (for UsageError and the serve setup); cmd/tasksim and sweep
// import it.
package cliflags
