package main

import (
	"errors"
	"io"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/runner"
)

// runMerge is `tasksim merge DIR... --out DIR`: results.MergeRuns does the work; this
// parses, prints and maps the verdict to the exit code as run does.
func runMerge(args []string, stdout, _ io.Writer) error {
	fs := pflag.NewFlagSet("merge", pflag.ContinueOnError)
	out := fs.String("out", "", "the merged run's directory (required)")
	allowMissing := fs.Bool("allow-missing", false, "merge a partial set of shards, saying so, instead of refusing it")
	setHelp(fs)
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
		return usageError(err)
	}
	if err != nil {
		return err
	}
	if err := results.WriteText(stdout, sum, *out); err != nil {
		return err
	}
	return runner.MergeError(sum)
}
