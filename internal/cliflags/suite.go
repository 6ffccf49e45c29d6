package cliflags

import (
	"net/http"
	"time"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/conform"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/redact"
	"github.com/tasksim/tasksim/runner"
)

// Suite is the flags of `tasksim conform` that make the contract suite's options
// (BindSuite, Options): the target and its two identities, the era, the tools' arguments,
// the case selection and the budget. The fields hold the values as given.
type Suite struct {
	Target     string        // --target, required
	Headers    []string      // --header, each 'K: V': every request's
	Others     []string      // --other-header: a second identity, replacing same-named --header
	Protocol   string        // --protocol: an era, both, or "" for every era served
	Tool       string        // --tool: the lifecycle cases' task tool
	ToolArgs   string        // --args: --tool's arguments, a JSON object
	FailArgs   string        // --fail-args: arguments that end in a tool error
	ErrorArgs  string        // --error-args: arguments that end in a protocol error
	PerTool    []string      // --tool-args, each NAME=JSON
	Only, Skip []string      // --only, --skip: case ids or prefixes
	Budget     time.Duration // --budget: bound on every wait
	TLS        TLS           // the TLS flags
}

// BindSuite defines conform's suite flags on fs.
func BindSuite(fs *pflag.FlagSet) *Suite {
	s := &Suite{}
	fs.StringVar(&s.Target, "target", "", "`URL` of the MCP endpoint (required)")
	fs.StringArrayVar(&s.Headers, "header", nil, "HTTP header of every request, `'K: V'` (repeatable; values are never printed)")
	fs.StringArrayVar(&s.Others, "other-header", nil, "header of a second identity, `'K: V'`, replacing the same-named --header (repeatable): enables the isolation cases")
	fs.StringVar(&s.Protocol, "protocol", "", "the suite to run, `ERA`: 2025-11-25, 2026-07-28 or both (default: every era the target serves)")
	fs.StringVar(&s.Tool, "tool", "", "`NAME` of the task tool of the lifecycle cases (default: the first tool that supports tasks)")
	fs.StringVar(&s.ToolArgs, "args", "", "--tool's arguments as a `JSON` object (default: the minimal ones its inputSchema requires)")
	fs.StringVar(&s.FailArgs, "fail-args", "", "arguments, a `JSON` object, that make the lifecycle tool (--tool, or the suite's default) end in a tool error (isError: true): enables the R51/E49 checks of result.failed and modern.result.completed on any server")
	fs.StringVar(&s.ErrorArgs, "error-args", "", "arguments, a `JSON` object, that make the lifecycle tool end in a protocol error (a JSON-RPC error): enables result.failed's and modern.result.failed's checks on any server")
	fs.StringArrayVar(&s.PerTool, "tool-args", nil, "arguments of one tool in the taskSupport cases, `NAME=JSON` (repeatable)")
	fs.StringSliceVar(&s.Only, "only", nil, "run only these cases, `ID,...`")
	fs.StringSliceVar(&s.Skip, "skip", nil, "leave out these cases, `ID,...`")
	fs.DurationVar(&s.Budget, "budget", conform.DefaultBudget, "bound on every wait: a task to end, an expired task to go; a longer granted ttl skips ttl.expiry")
	s.TLS.Bind(fs)
	return s
}

// Check refuses what is wrong in the flags alone (the target URL, --budget, --protocol, the
// case selection), before anything is built or sent. Each problem is a *runner.UsageError.
func (s *Suite) Check() error {
	if err := CheckTarget(s.Target); err != nil {
		return err
	}
	if s.Budget <= 0 {
		return usageErrorf("--budget must be > 0, got %v", s.Budget)
	}
	switch s.Protocol {
	case conform.ProtocolAuto, conform.ProtocolLegacy, conform.ProtocolModern, conform.ProtocolBoth:
	default:
		return usageErrorf("--protocol %q: want %s, %s or %s", s.Protocol, conform.ProtocolLegacy, conform.ProtocolModern, conform.ProtocolBoth)
	}
	if err := conform.CheckSelection(s.Only, s.Skip); err != nil {
		return &runner.UsageError{Err: err}
	}
	return nil
}

// Options are the suite's options from the checked flags: the target with its headers
// (their values noted in secrets, never printed), the second identity of the isolation
// cases, which must differ from the first, and the tools' arguments. Each problem is a
// *runner.UsageError.
func (s *Suite) Options(secrets *redact.Set) (conform.Options, error) {
	hc, err := s.TLS.Client(4)
	if err != nil {
		return conform.Options{}, err
	}
	t := &client.Target{
		URL:        s.Target,
		Header:     http.Header{},
		Client:     hc,
		ClientInfo: mcp.Implementation{Name: "tasksim-conform", Version: runner.Version},
	}
	if err := AddHeaders(t.Header, s.Headers, "--header", secrets); err != nil {
		return conform.Options{}, err
	}
	o := conform.Options{Target: t, Tool: s.Tool, Only: s.Only, Skip: s.Skip, Budget: s.Budget, Version: runner.Version, Protocol: s.Protocol}
	if len(s.Others) > 0 {
		o.Other = http.Header{}
		if err := AddHeaders(o.Other, s.Others, "--other-header", secrets); err != nil {
			return conform.Options{}, err
		}
		if conform.SameIdentity(t.Header, o.Other) {
			return conform.Options{}, usageErrorf("--other-header gives the same headers as --header: the second identity must be another (another tenant's token)")
		}
	}
	if err := o.SetArgs(s.ToolArgs, s.FailArgs, s.ErrorArgs, s.PerTool); err != nil {
		return conform.Options{}, &runner.UsageError{Err: err}
	}
	return o, nil
}
