package cliflags

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/redact"
	"github.com/tasksim/tasksim/runner"
)

// Probe is the flags of `tasksim probe` that say what to probe and how (BindProbe,
// Options): the target and its headers, the bound on the probe, the era, and the task of
// --create-task. The fields hold the values as given.
type Probe struct {
	Target     string        // --target, required
	Headers    []string      // --header, each 'K: V'
	Timeout    time.Duration // --timeout: bound on the whole probe
	CreateTask bool          // --create-task: create (and cancel) one task
	Tool       string        // --tool: with --create-task, the task tool
	Args       string        // --args: with --create-task, the tool's arguments, a JSON object
	Protocol   string        // --protocol: auto (the default) or an era
	TLS        TLS           // the TLS flags
}

// BindProbe defines probe's flags of the target and the probe on fs.
func BindProbe(fs *pflag.FlagSet) *Probe {
	p := &Probe{}
	fs.StringVar(&p.Target, "target", "", "`URL` of the MCP endpoint (required)")
	fs.StringArrayVar(&p.Headers, "header", nil, "extra HTTP header, `'K: V'` (repeatable; values are never printed)")
	fs.DurationVar(&p.Timeout, "timeout", 15*time.Second, "bound on the whole probe")
	fs.BoolVar(&p.CreateTask, "create-task", false, "create (and cancel) one task, to observe pollInterval and ttl; it runs real work on the target")
	fs.StringVar(&p.Tool, "tool", "", "with --create-task: the task tool to call (default: the first tool that supports tasks)")
	fs.StringVar(&p.Args, "args", "", "with --create-task: the tool's arguments as a JSON object (default: the minimal ones its inputSchema requires)")
	fs.StringVar(&p.Protocol, "protocol", "auto", "the era to speak, `auto|2025-11-25|2026-07-28`: auto finds it with server/discover (E32)")
	p.TLS.Bind(fs)
	return p
}

// Check refuses what is wrong in the flags alone (the target URL, --timeout, --tool or
// --args without --create-task, --args that is no JSON object, --protocol), before
// anything is sent. Each problem is a *runner.UsageError.
func (p *Probe) Check() error {
	if err := CheckTarget(p.Target); err != nil {
		return err
	}
	if p.Timeout <= 0 {
		return usageErrorf("--timeout must be > 0, got %v", p.Timeout)
	}
	if (p.Tool != "" || p.Args != "") && !p.CreateTask {
		return usageErrorf("--tool and --args choose the task of --create-task: give --create-task too")
	}
	if _, err := p.args(); err != nil {
		return err
	}
	switch p.Protocol {
	case "auto", client.ProtocolLegacy, client.ProtocolModern:
		return nil
	}
	return usageErrorf("--protocol %q: want auto, %s or %s", p.Protocol, client.ProtocolLegacy, client.ProtocolModern)
}

// args is --args decoded: nil when not given.
func (p *Probe) args() (map[string]any, error) {
	if p.Args == "" {
		return nil, nil
	}
	var a map[string]any
	if err := json.Unmarshal([]byte(p.Args), &a); err != nil || a == nil {
		return nil, usageErrorf("--args: not a JSON object: %s", p.Args)
	}
	return a, nil
}

// Options are what the checked flags probe: the target, speaking the era of --protocol (auto
// is client.ProtocolAuto) with the headers (their values noted in secrets, never printed),
// and the probe's options. A header that is not 'K: V' is a *runner.UsageError.
func (p *Probe) Options(secrets *redact.Set) (*client.Target, client.ProbeOptions, error) {
	hc, err := p.TLS.Client(2)
	if err != nil {
		return nil, client.ProbeOptions{}, err
	}
	t := &client.Target{
		URL:        p.Target,
		Header:     http.Header{},
		Client:     hc,
		ClientInfo: mcp.Implementation{Name: "tasksim", Version: runner.Version},
		Protocol:   p.Protocol,
	}
	if p.Protocol == "auto" {
		t.Protocol = client.ProtocolAuto
	}
	if err := AddHeaders(t.Header, p.Headers, "--header", secrets); err != nil {
		return nil, client.ProbeOptions{}, err
	}
	args, err := p.args()
	return t, client.ProbeOptions{CreateTask: p.CreateTask, Tool: p.Tool, Args: args}, err
}
