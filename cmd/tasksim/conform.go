package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/conform"
	"github.com/tasksim/tasksim/internal/cliflags"
	"github.com/tasksim/tasksim/internal/progress"
	"github.com/tasksim/tasksim/internal/redact"
	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/runner"
)

// runConform is `tasksim conform --target URL [flags]`: the contract suite against a
// target (conform.Run, its options from cliflags.Suite), its files written and its table
// printed, the verdict mapped to the exit code (help/conform.txt lists them).
func runConform(args []string, stdout, stderr io.Writer) (err error) {
	secrets := &redact.Set{} // the --header and --other-header values: never printed
	defer func() { err = secrets.Error(err) }()
	f, err := parseConformFlags(args)
	if err != nil {
		return err
	}
	o, err := f.suite.Options(secrets)
	if err != nil {
		return err
	}
	out := cmp.Or(f.out, conform.DefaultDir(time.Now()))
	stopLines := func() {}
	if !f.noProgress { // each case as it ends; off a terminal, a status line every f.every too
		cases := progress.NewCases(stderr, progress.For(stderr, false, f.every))
		o.Progress, stopLines = cases.Ended, cases.Start()
	}

	// First signal: the cases stop, the suite cancels what it left running and the outputs
	// are written; a second signal ends the process (the default behaviour, restored).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer onSignals(func() func() {
		fmt.Fprintln(stderr, "tasksim conform: interrupted: cancelling the tasks the suite left running, writing what ran (Ctrl-C again to stop at once)")
		cancel()
		return nil
	})()
	res, err := conform.Run(ctx, o)
	stopLines()
	var oe *conform.OptionError
	switch {
	case errors.As(err, &oe):
		return usageError(errors.New(secrets.String(oe.Msg)))
	case err != nil && ctx.Err() != nil:
		return &runner.InterruptedError{What: "before the suite's first case: nothing was written"}
	case err != nil:
		return errors.New(secrets.String(err.Error())) // exit 1
	}
	if err := results.WriteContractFiles(out, f.junit, res); err != nil {
		return err
	}
	if err := results.WriteContractText(stdout, res); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nWritten to %s\n", out)
	return runner.ContractError(res)
}

// conformFlags are conform's flags: those of the suite (cliflags.Suite) and where its
// results go.
type conformFlags struct {
	suite      *cliflags.Suite
	junit, out string
	noProgress bool
	every      time.Duration // --progress-interval
}

// parseConformFlags parses conform's command line and refuses what is wrong in it alone
// (arguments, then the suite's flags: cliflags.Suite.Check) as usage errors, before
// anything is sent.
func parseConformFlags(args []string) (*conformFlags, error) {
	fs := pflag.NewFlagSet("conform", pflag.ContinueOnError)
	f := &conformFlags{suite: cliflags.BindSuite(fs)}
	setHelp(fs)
	fs.StringVar(&f.junit, "junit", "", "also write JUnit XML to `FILE`")
	fs.StringVar(&f.out, "out", "", "output `DIR` (default runs/conform-<UTC time>)")
	fs.BoolVar(&f.noProgress, "no-progress", false, "do not print each case on stderr as it ends, nor status lines")
	fs.DurationVar(&f.every, "progress-interval", 5*time.Second, "with stderr not a terminal (CI, kubectl logs), a plain status line this often")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usagef("conform takes no arguments, got %q", fs.Args())
	}
	return f, f.suite.Check()
}
