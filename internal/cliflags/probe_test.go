package cliflags

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/redact"
	"github.com/tasksim/tasksim/runner"
)

// parseProbe parses probe's flags of the target and the probe alone.
func parseProbe(t *testing.T, args ...string) *Probe {
	t.Helper()
	fs := pflag.NewFlagSet("probe", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	p := BindProbe(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestProbeOptions: auto is client.ProtocolAuto, an era stays pinned, --create-task's task
// and arguments become the probe's options, and the headers are secrets.
func TestProbeOptions(t *testing.T) {
	p := parseProbe(t, "--target", "http://127.0.0.1:9/mcp", "--header", "Authorization: Bearer s3cret")
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	secrets := &redact.Set{}
	tg, opts, err := p.Options(secrets)
	if err != nil || tg.Protocol != client.ProtocolAuto || opts.CreateTask || opts.Args != nil ||
		tg.Header.Get("Authorization") != "Bearer s3cret" || strings.Contains(secrets.String("Bearer s3cret"), "s3cret") {
		t.Errorf("Options = %+v, %+v, %v", tg, opts, err)
	}
	p = parseProbe(t, "--target", "http://127.0.0.1:9/mcp", "--protocol", client.ProtocolModern, "--create-task",
		"--tool", "work_task", "--args", `{"n":1}`)
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	tg, opts, err = p.Options(&redact.Set{})
	if err != nil || tg.Protocol != client.ProtocolModern || !opts.CreateTask || opts.Tool != "work_task" || opts.Args["n"] != float64(1) {
		t.Errorf("Options = %+v, %+v, %v", tg, opts, err)
	}
}

// TestProbeProblems: what is wrong in the flags alone is a *runner.UsageError naming it.
func TestProbeProblems(t *testing.T) {
	target := []string{"--target", "http://127.0.0.1:9/mcp"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--target URL is required"},
		{append(target, "--timeout", "0s"), "--timeout must be > 0"},
		{append(target, "--tool", "x"), "give --create-task too"},
		{append(target, "--create-task", "--args", "[1]"), "--args: not a JSON object: [1]"},
		{append(target, "--create-task", "--args", "null"), "--args: not a JSON object: null"},
		{append(target, "--protocol", "2024"), `--protocol "2024": want auto`},
	} {
		err := parseProbe(t, tc.args...).Check()
		var ue *runner.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want a usage error saying %q", tc.args, err, tc.want)
		}
	}
	_, _, err := parseProbe(t, append(target, "--header", "s3cret")...).Options(&redact.Set{})
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("--header s3cret: %v, want a problem that does not show it", err)
	}
}
