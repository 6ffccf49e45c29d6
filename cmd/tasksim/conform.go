package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/conform"
	"github.com/tasksim/tasksim/internal/cliflags"
	"github.com/tasksim/tasksim/internal/redact"
	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/runner"
)

// runConform is `tasksim conform --target URL [flags]`: the contract suite against a
// target (conform.Run, its options from cliflags.Suite), its files written and its table
// printed, the verdict mapped to the exit code (conformUsage lists them).
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
	if !f.noProgress {
		o.Progress = func(c results.ContractCase) {
			fmt.Fprintf(stderr, "conform: %-4s %s\n", c.Verdict, c.ID)
		}
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
	var oe *conform.OptionError
	switch {
	case errors.As(err, &oe):
		return usageError{errors.New(secrets.String(oe.Msg))}
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
	switch {
	case res.Counts.Fail > 0:
		return &runner.GateError{Why: fmt.Sprintf("%d contract case(s) failed", res.Counts.Fail)}
	case res.Interrupted:
		return &runner.InterruptedError{What: "the contract cases that ran before the interruption"}
	case res.Verdict != results.VerdictPass:
		return &runner.GateError{Why: "no contract case ran: nothing was shown to pass"}
	}
	return nil
}

// conformFlags are conform's flags: those of the suite (cliflags.Suite) and where its
// results go.
type conformFlags struct {
	suite      *cliflags.Suite
	junit, out string
	noProgress bool
}

// parseConformFlags parses conform's command line and refuses what is wrong in it alone
// (arguments, then the suite's flags: cliflags.Suite.Check) as usage errors, before
// anything is sent.
func parseConformFlags(args []string) (*conformFlags, error) {
	fs := pflag.NewFlagSet("conform", pflag.ContinueOnError)
	f := &conformFlags{suite: cliflags.BindSuite(fs)}
	fs.Usage = func() { conformUsage(fs) }
	fs.StringVar(&f.junit, "junit", "", "also write JUnit XML to `FILE`")
	fs.StringVar(&f.out, "out", "", "output `DIR` (default runs/conform-<UTC time>)")
	fs.BoolVar(&f.noProgress, "no-progress", false, "do not print each case on stderr as it ends")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usagef("conform takes no arguments, got %q", fs.Args())
	}
	return f, f.suite.Check()
}

// conformUsage writes conform's help on fs's output: what the suite does and to whom, its
// cases of each era, the exit codes, then the flags.
func conformUsage(fs *pflag.FlagSet) {
	w := fs.Output()
	fmt.Fprint(w, `Usage: tasksim conform --target URL [flags]

Runs the contract suite against the target: named cases, each checking rules of the MCP
Tasks protocol (docs/RULES.md), each with a verdict (pass, fail, or skip with the reason
and what would let it run) and its evidence (request and reply excerpts, credentials
redacted). Prints a table, writes conform.json and report.html into --out, and, with
--junit, JUnit XML with one testcase per case.

Two suites, one per protocol era: 2025-11-25 (initialize, sessions; rules R1-R62, H1-H11)
and 2026-07-28 with the Tasks extension (stateless; rules E1-E68, cases "modern."). The
eras the target serves choose (server/discover first, docs/RULES.md#e32): each era's suite
runs, a server of both eras getting both, one after the other; --protocol chooses one (or
both). The output says which protocol was tested.

THE SUITE CREATES TASKS, AND TASKS HAVE EFFECTS ON A REAL SERVER. It calls --tool (default:
the first tool that supports tasks) with --args (default: the minimal arguments its
inputSchema requires), and calls every listed tool once or twice in the taskSupport cases
(with --tool-args NAME=JSON, else their minimal arguments). It cancels every task it
created that is still running when it ends (where the server declares tasks/cancel), and
lists the ids it created and those it left behind. Point it at a staging server.

Every reply is checked against the official JSON schemas of its era, embedded in the
binary: a reply that fails them fails its case, naming the definition and the path.
--fail-args and --error-args give the calls that end in a tool error and in a protocol
error, so that the isError and failed checks (R51, E49) run on any server.

Against tasksim serve nothing needs to be given: its tools are known. With
--other-header (a second identity, e.g. another tenant's token) the isolation cases check
that it cannot read, fetch, cancel or list the first identity's tasks.

Cases (--only and --skip take ids, or prefixes ending in "." such as "cancel."), 2025-11-25:
`)
	for _, c := range conform.Cases() {
		fmt.Fprintf(w, "  %-19s %-20s %s\n", c.ID, strings.Join(c.Rules, ","), c.Title)
	}
	fmt.Fprint(w, "\n2026-07-28 with the Tasks extension:\n")
	for _, c := range conform.ModernCases() {
		fmt.Fprintf(w, "  %-30s %-13s %s\n", c.ID, strings.Join(c.Rules, ","), c.Title)
	}
	fmt.Fprint(w, `
Exit codes: 0 every case that ran passed, 99 a case failed or none ran, 1 the target could
not be reached, refused initialize or does not speak the --protocol asked for, 2 usage,
130 interrupted by Ctrl-C or SIGTERM with nothing failed in what ran (the outputs are
written either way).

Flags:
`)
	fs.PrintDefaults()
}
