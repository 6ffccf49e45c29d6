package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/internal/gcpolicy"
	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/runner"
	"github.com/tasksim/tasksim/scenarios"
)

// Exit codes, the same for every command (each command's --help lists those it can give).
const (
	exitOK      = 0
	exitRuntime = 1
	exitUsage   = 2
	exitGate    = 99
	exitSignal  = results.ExitInterrupted // a run stopped early by a signal, nothing failed
)

// usageError marks err as a problem with the command line or its input: exit code 2, as
// for a library's *runner.UsageError, the one type of both.
func usageError(err error) error { return &runner.UsageError{Err: err} }

func usagef(format string, args ...any) error { return usageError(fmt.Errorf(format, args...)) }

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

// commands are the subcommands of a process that main (or a test) set up as p says.
func commands(p process) []command {
	return []command{
		{"run", "run a scenario against the embedded mock server or --target", func(args []string, stdout, stderr io.Writer) error {
			return runRun(p, args, stdout, stderr)
		}},
		{"serve", "run the mock MCP Tasks server until interrupted", runServe},
		{"probe", "print a target's capability manifest as JSON", runProbe},
		{"conform", "run the contract suite against a target: a verdict per case", runConform},
		{"report", "re-render report.html from a saved run directory (sweep.html from a sweep directory)", runReport},
		{"compare", "judge a candidate run against a baseline run: regression budgets, exit 99 on a regression", runCompare},
		{"merge", "add up the run directories of a scenario's shards into one verdict", runMerge},
		{"sweep", "run a grid of pollInterval/concurrency cells and recommend one", func(args []string, stdout, stderr io.Writer) error {
			return runSweep(p, args, stdout, stderr)
		}},
		{"scenarios", "list the built-in scenarios", runScenarios},
		{"validate", "check a scenario: every decoding problem (unknown field, wrong type) at file:line:col, then, once it decodes, every invalid value at once", runValidate},
		{"version", "print the tasksim version", runVersion},
	}
}

func main() {
	p := process{gc: gcpolicy.Apply()}
	os.Exit(p.run(os.Args[1:], os.Stdout, os.Stderr))
}

// process is what main set up for the commands of this process: the garbage collector's
// policy (internal/gcpolicy), which summary.json records. The zero process is a test's:
// the commands then run inside another program, which set the collector.
type process struct {
	gc gcpolicy.Policy
}

// run executes one command line in a process main did not set up (a test's).
func run(args []string, stdout, stderr io.Writer) int { return process{}.run(args, stdout, stderr) }

// run executes one command line and returns its exit code. Help that was asked for
// (`tasksim help [COMMAND]`, `tasksim --help`, `tasksim COMMAND --help`) goes to stdout with
// exit code 0; no command at all is a usage error: the list of commands on stderr, exit 2.
// Each command keeps the secrets it learns out of the error it returns.
func (p process) run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help", "help":
		if len(args) > 1 && args[0] == "help" {
			return p.run([]string{args[1], "--help"}, stdout, stderr) // help COMMAND
		}
		usage(stdout)
		return exitOK
	}
	for _, c := range commands(p) {
		if c.name != args[0] {
			continue
		}
		err := c.run(args[1:], stdout, stderr)
		var help helpRequest
		if errors.As(err, &help) {
			if _, err := io.WriteString(stdout, help.text); err != nil {
				return exitRuntime
			}
			return exitOK
		}
		if err == nil || errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(stderr, "tasksim %s: %s\n", c.name, err) // redacted by the command: never a token
		return exitCode(err)
	}
	fmt.Fprintf(stderr, "tasksim: unknown command %q\n\n", args[0])
	usage(stderr)
	return exitUsage
}

// usage writes tasksim's own help: the commands and the exit codes they share.
func usage(w io.Writer) { fmt.Fprint(w, helpText("tasksim")) }

// runVersion is `tasksim version`.
func runVersion(args []string, stdout, _ io.Writer) error {
	if err := noArgs("version", args); err != nil {
		return err
	}
	return runner.BuildInfo().WriteText(stdout)
}

// runScenarios is `tasksim scenarios` (scenarios.WriteBuiltins).
func runScenarios(args []string, stdout, _ io.Writer) error {
	if err := noArgs("scenarios", args); err != nil {
		return err
	}
	return scenarios.WriteBuiltins(stdout)
}

func runValidate(args []string, stdout, _ io.Writer) error {
	args, err := noFlags("validate", args)
	if err != nil {
		return err
	}
	if len(args) != 1 {
		return usagef("want one scenario FILE or NAME, got %d arguments (see 'tasksim validate --help')", len(args))
	}
	sc, err := scenarios.Load(args[0])
	if err != nil {
		return usageError(err)
	}
	if err := runner.CheckScenario(sc); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: valid scenario %q\n", args[0], sc.Name)
	return nil
}

// exitCode is the exit code of a command that returned err: 2 for a usage error
// (*runner.UsageError: the command line's or a library's), 99 for a verdict that did not pass
// (*runner.GateError), 130 for an interruption (*runner.InterruptedError), 1 for any other
// error.
func exitCode(err error) int {
	switch {
	case err == nil || errors.Is(err, pflag.ErrHelp):
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
