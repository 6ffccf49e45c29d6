package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/runner"
)

// mergeHelp is merge's help before its flags, formatted with the files it writes.
const mergeHelp = `Usage: tasksim merge DIR... --out DIR [--allow-missing]

Adds up the run directories of the shards of one scenario ('tasksim run --shard I/N',
ideally with one --start-at) into the result of the whole, judged as a run is judged:
histograms merged exactly, second by second (aligned by wall-clock second from the
earliest shard's start); every count summed; the gates and thresholds (per-second windows
included) evaluated on the merged whole. Gauges are summed per second; a second's high
is the sum of the shards' highs, an upper bound.

Refuses (exit 2), naming the field, shards that do not belong together: no shard block, a
different scenario_hash, protocol, target or shard count, an index twice, or an index
missing; --allow-missing merges a partial set, and summary.json's "merge" block, the
report and the text summary say so.

Writes into --out: %s (with a "merge" block), %s, %s, %s,
%s (when a shard has one, events in time order) and %s, and prints a text
summary on stdout.

Exit codes:
  0    every gate and threshold passed on the merged whole
  1    runtime error: a directory cannot be read or --out written, or a shard ended in an
       error (verdict error)
  2    usage error, or shards that do not belong together
  99   a gate or threshold failed on the merged whole
  130  a shard was stopped early by a signal, and nothing failed

Flags:
`

// runMerge is `tasksim merge DIR... --out DIR`: results.MergeRuns does the work; this
// parses, prints and maps the verdict to the exit code as run does.
func runMerge(args []string, stdout, _ io.Writer) error {
	fs := pflag.NewFlagSet("merge", pflag.ContinueOnError)
	out := fs.String("out", "", "the merged run's directory (required)")
	allowMissing := fs.Bool("allow-missing", false, "merge a partial set of shards, saying so, instead of refusing it")
	setHelp(fs, fmt.Sprintf(mergeHelp, results.SummaryJSONFile, results.SummaryCSVFile, results.TimeseriesFile, results.HistogramLogFile,
		results.EventsFile, results.ReportFile))
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("want the shards' run directories (see 'tasksim merge --help')")
	}
	if *out == "" {
		return usagef("--out DIR is required (see 'tasksim merge --help')")
	}
	err := results.CheckMergeDirs(fs.Args(), *out)
	var sum *results.Summary
	if err == nil {
		sum, err = results.MergeRuns(fs.Args(), *out, results.MergeOptions{AllowMissing: *allowMissing})
	}
	var mismatch *results.MismatchError
	if errors.As(err, &mismatch) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	if err := results.WriteText(stdout, sum, *out); err != nil {
		return err
	}
	switch sum.ExitCode() {
	case results.ExitRuntimeError:
		return errors.New(sum.Error)
	case results.ExitGateFailed:
		if sum.Merge != nil && sum.Merge.FailedAsPartial != "" {
			return &runner.GateError{Why: sum.Merge.FailedAsPartial}
		}
		return &runner.GateError{}
	case results.ExitInterrupted:
		return &runner.InterruptedError{What: "a shard was stopped early by a signal; nothing failed in what the shards measured"}
	}
	return nil
}
