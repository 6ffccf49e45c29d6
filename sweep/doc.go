// Package sweep is the tuning grid under `tasksim sweep`, as a library: a Plan (the
// scenario, the dimensions that vary, the SLOs, and a Builder that makes each cell's
// scenario from its values), checked whole before anything runs (Plan.Check); its cells
// run one after another through runner.Run, each into a run directory of its own (Run); the
// answer ranked from the cells alone (rank.go: the qualifying rule, the recommendation for
// each client count, the noise rule, the capacity, the exit code); and the Result, which is
// sweep.json, with its renderings (sweep.csv, sweep.html, the printed answer: page.go), all
// functions of the result alone, so a saved sweep re-renders byte for byte.
//
// It prints nothing, touches no signal and never exits: progress goes to an Observer, a
// stop comes through Options.Run.Stop or the context, and Result.ExitCode says how a command
// line should exit (Result.Err, the same as an error). What a --vary name does to a
// scenario is the Builder's: RunFlags (runflags.go) makes each cell the `tasksim run`
// command line of its values, through run's own flags (internal/cliflags); the sweep's
// flags and its printing are cmd/tasksim's.
//
// sweep may import runner and what runner reaches (internal/*, metrics, scenarios, results,
// client, loadgen, mockserver, conform) and internal/cliflags; nothing but cmd/tasksim
// imports it.
package sweep
