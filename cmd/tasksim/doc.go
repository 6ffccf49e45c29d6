// Command tasksim is the command line of tasksim, a load and chaos simulator for fleets of
// MCP Tasks: subcommands, flags (pflag), signals and exit codes. It is the only package that
// wires the others together; the engines never exit or touch signals themselves.
//
// Exit codes: 0 pass, 1 runtime error, 2 usage or invalid input,
// 99 a gate or threshold failed; 130 a run stopped early by a signal with nothing failed.
package main
