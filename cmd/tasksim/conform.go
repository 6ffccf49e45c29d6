package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/conform"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/redact"
	"github.com/tasksim/tasksim/results"
)

// runConform is `tasksim conform --target URL [flags]`: the contract suite against a
// target, a verdict per case. Exit codes: 0 every case that ran passed, 99 a case failed
// (or none ran), 1 the target could not be reached, 2 usage, 130 interrupted with nothing
// failed.
func runConform(args []string, stdout, stderr io.Writer) (err error) {
	secrets := &redact.Set{} // the --header and --other-header values: never printed
	defer func() { err = secrets.Error(err) }()
	f, err := parseConformFlags(args)
	if err != nil {
		return err
	}
	o, err := conformOptions(f, secrets)
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
	if errors.As(err, &oe) {
		return usageError{errors.New(secrets.String(oe.Msg))}
	}
	if err != nil && ctx.Err() != nil {
		return interruptedError{"before the suite's first case: nothing was written"}
	}
	if err != nil {
		return errors.New(secrets.String(err.Error())) // exit 1
	}
	interrupted := res.Interrupted
	if err := results.WriteContractFiles(out, f.junit, res); err != nil {
		return err
	}
	if err := results.WriteContractText(stdout, res); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nWritten to %s\n", out)
	switch {
	case res.Counts.Fail > 0:
		return gateError{fmt.Sprintf("%d contract case(s) failed", res.Counts.Fail)}
	case interrupted:
		return interruptedError{"the contract cases that ran before the interruption"}
	case res.Verdict != results.VerdictPass:
		return gateError{"no contract case ran: nothing was shown to pass"}
	}
	return nil
}

// conformFlags are the values of conform's flags, as given.
type conformFlags struct {
	target, tool, toolArgs, junit, out string
	failArgs, errorArgs                string
	protocol                           string
	headers, others, perTool           []string
	only, skip                         []string
	budget                             time.Duration
	noProgress                         bool
}

// parseConformFlags parses conform's command line and refuses what is wrong in it alone
// (arguments, the target URL, --budget, --protocol, the case selection) as usage errors,
// before anything is sent.
func parseConformFlags(args []string) (*conformFlags, error) {
	f := &conformFlags{}
	fs := pflag.NewFlagSet("conform", pflag.ContinueOnError)
	fs.Usage = func() { conformUsage(fs) }
	fs.StringVar(&f.target, "target", "", "`URL` of the MCP endpoint (required)")
	fs.StringArrayVar(&f.headers, "header", nil, "HTTP header of every request, `'K: V'` (repeatable; values are never printed)")
	fs.StringArrayVar(&f.others, "other-header", nil, "header of a second identity, `'K: V'`, replacing the same-named --header (repeatable): enables the isolation cases")
	fs.StringVar(&f.protocol, "protocol", "", "the suite to run, `ERA`: 2025-11-25, 2026-07-28 or both (default: every era the target serves)")
	fs.StringVar(&f.tool, "tool", "", "`NAME` of the task tool of the lifecycle cases (default: the first tool that supports tasks)")
	fs.StringVar(&f.toolArgs, "args", "", "--tool's arguments as a `JSON` object (default: the minimal ones its inputSchema requires)")
	fs.StringVar(&f.failArgs, "fail-args", "", "arguments, a `JSON` object, that make the lifecycle tool (--tool, or the suite's default) end in a tool error (isError: true): enables the R51/E49 checks of result.failed and modern.result.completed on any server")
	fs.StringVar(&f.errorArgs, "error-args", "", "arguments, a `JSON` object, that make the lifecycle tool end in a protocol error (a JSON-RPC error): enables result.failed's and modern.result.failed's checks on any server")
	fs.StringArrayVar(&f.perTool, "tool-args", nil, "arguments of one tool in the taskSupport cases, `NAME=JSON` (repeatable)")
	fs.StringSliceVar(&f.only, "only", nil, "run only these cases, `ID,...`")
	fs.StringSliceVar(&f.skip, "skip", nil, "leave out these cases, `ID,...`")
	fs.DurationVar(&f.budget, "budget", conform.DefaultBudget, "bound on every wait: a task to end, an expired task to go; a longer granted ttl skips ttl.expiry")
	fs.StringVar(&f.junit, "junit", "", "also write JUnit XML to `FILE`")
	fs.StringVar(&f.out, "out", "", "output `DIR` (default runs/conform-<UTC time>)")
	fs.BoolVar(&f.noProgress, "no-progress", false, "do not print each case on stderr as it ends")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usagef("conform takes no arguments, got %q", fs.Args())
	}
	if err := checkTarget(f.target); err != nil {
		return nil, err
	}
	if f.budget <= 0 {
		return nil, usagef("--budget must be > 0, got %v", f.budget)
	}
	switch f.protocol {
	case conform.ProtocolAuto, conform.ProtocolLegacy, conform.ProtocolModern, conform.ProtocolBoth:
	default:
		return nil, usagef("--protocol %q: want %s, %s or %s", f.protocol, conform.ProtocolLegacy, conform.ProtocolModern, conform.ProtocolBoth)
	}
	if err := conform.CheckSelection(f.only, f.skip); err != nil {
		return nil, usageError{err}
	}
	return f, nil
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

// conformOptions builds the suite's options from the flags: the target with its headers
// (their values noted in secrets, never printed), the second identity of the isolation
// cases, and the tools' arguments.
func conformOptions(f *conformFlags, secrets *redact.Set) (conform.Options, error) {
	t := &client.Target{
		URL:        f.target,
		Header:     http.Header{},
		Client:     client.NewHTTPClient(4),
		ClientInfo: mcp.Implementation{Name: "tasksim-conform", Version: version},
	}
	if err := addHeaders(t.Header, f.headers, "--header", secrets); err != nil {
		return conform.Options{}, err
	}
	o := conform.Options{Target: t, Tool: f.tool, Only: f.only, Skip: f.skip, Budget: f.budget, Version: version, Protocol: f.protocol}
	if len(f.others) > 0 {
		o.Other = http.Header{}
		if err := addHeaders(o.Other, f.others, "--other-header", secrets); err != nil {
			return conform.Options{}, err
		}
		if conform.SameIdentity(t.Header, o.Other) {
			return conform.Options{}, usagef("--other-header gives the same headers as --header: the second identity must be another (another tenant's token)")
		}
	}
	if err := o.SetArgs(f.toolArgs, f.failArgs, f.errorArgs, f.perTool); err != nil {
		return conform.Options{}, usageError{err}
	}
	return o, nil
}

// addHeaders parses 'K: V' flags into h; their values become secrets, never printed.
func addHeaders(h http.Header, flags []string, flag string, secrets *redact.Set) error {
	for _, s := range flags {
		k, v, ok := strings.Cut(s, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return usagef("%s", strings.Replace(headerProblem(s), "--header", flag, 1))
		}
		v = strings.TrimSpace(v)
		h.Set(strings.TrimSpace(k), v)
		secrets.Note(v)
	}
	return nil
}
