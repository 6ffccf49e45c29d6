package main

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/results"
)

// helpRequest is a command's answer to -h or --help: its help text, which main prints on
// stdout with exit code 0. Requested help is the command's output, not a diagnostic, so it
// goes where output goes (`tasksim run --help | less` works); usage errors go to stderr.
// It unwraps to pflag.ErrHelp.
type helpRequest struct{ text string }

func (helpRequest) Error() string { return "help requested" }
func (helpRequest) Unwrap() error { return pflag.ErrHelp }

// parseFlags parses a command's arguments with fs. fs.Usage writes the command's help to
// fs.Output(); -h or --help then returns a helpRequest holding it. Any other problem is a
// usage error that names the command's --help.
func parseFlags(fs *pflag.FlagSet, args []string) error {
	var help bytes.Buffer
	fs.SetOutput(&help)
	err := fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, pflag.ErrHelp):
		return helpRequest{help.String()}
	}
	return usagef("%v (see 'tasksim %s --help')", err, fs.Name())
}

// setHelp makes text, then fs's flags, the help of fs's command: text is its usage line,
// what it does, its exit codes and the heading of its flags.
func setHelp(fs *pflag.FlagSet, text string) {
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), text)
		fs.PrintDefaults()
	}
}

// noFlags parses the arguments of a command that takes no flags, so that -h and --help
// give its help (text) like every other command's.
func noFlags(name, text string, args []string) ([]string, error) {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	setHelp(fs, text)
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	return fs.Args(), nil
}

// noArgs is noFlags for a command that takes no arguments either.
func noArgs(name, text string, args []string) error {
	args, err := noFlags(name, text, args)
	if err == nil && len(args) > 0 {
		return usagef("%s takes no arguments", name)
	}
	return err
}

// runHelp is run's help before its flags: what it does, every file it writes, its exit
// codes.
func runHelp() string {
	var files strings.Builder
	for _, f := range []struct{ name, what string }{
		{results.SummaryJSONFile, "the result: verdict, gates, thresholds, metrics (what pipelines read)"},
		{results.SummaryCSVFile, "one row per metric"},
		{results.TimeseriesFile, "one row per second, flushed as the run goes"},
		{results.HistogramLogFile, "every histogram per second, as an HdrHistogram interval log"},
		{results.EventsFile, "the fault timeline; only when the scenario injects faults"},
		{results.ReportFile, "the self-contained HTML report ('tasksim report DIR' renders it again)"},
	} {
		fmt.Fprintf(&files, "  %-16s %s\n", f.name, f.what)
	}
	return `Usage: tasksim run [NAME|FILE] [flags]

Runs a scenario (default: the built-in baseline; 'tasksim scenarios' lists them) against
the embedded mock server, or against --target. The flags override the scenario's fields and
--set overrides any field. --dry-run prints the plan (load, cancels, faults, thresholds)
and runs nothing.

--shard I/N runs slice I of N of the scenario (clients and arrivals i with i mod N = I, each
with its global index; --shards N takes I from JOB_COMPLETION_INDEX); --start-at starts the
load at one instant in every shard. summary.json then has a "shard" block.

Writes into --out (default runs/<scenario>-<UTC time>/):
` + files.String() + `and prints a text summary on stdout.

The first Ctrl-C (or SIGTERM) stops starting tasks, lets in-flight ones drain for the
scenario's grace and writes every file; a second one stops at once.

Exit codes:
  0    every gate and threshold passed
  1    runtime error (e.g. the target is unreachable, the output directory cannot be written)
  2    usage error, invalid scenario, or the target cannot run the tool as a task and
       the scenario says fallback: refuse
  99   a gate or threshold failed, or an abort_on_fail threshold stopped the load
  130  stopped early by Ctrl-C or SIGTERM, nothing failed in what was measured

Flags:
`
}
