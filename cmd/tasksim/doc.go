// Command tasksim is the command line of tasksim, a load and chaos simulator for fleets of
// MCP Tasks: subcommands, flags (pflag; those that set a library's input are bound by
// internal/cliflags), progress bars, printing, signals and exit codes, over the library
// that runs a scenario (package runner), as vegeta's CLI over its lib. It is the only
// package that exits or touches signals.
//
// Exit codes: 0 pass, 1 runtime error, 2 usage or invalid input,
// 99 a gate or threshold failed; 130 a run stopped early by a signal with nothing failed.
package main
