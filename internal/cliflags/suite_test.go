package cliflags

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/conform"
	"github.com/tasksim/tasksim/internal/redact"
	"github.com/tasksim/tasksim/runner"
)

// parseSuite parses conform's suite flags alone.
func parseSuite(t *testing.T, args ...string) *Suite {
	t.Helper()
	fs := pflag.NewFlagSet("conform", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	s := BindSuite(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSuiteOptions: the checked flags become the suite's options, the headers of both
// identities noted as secrets.
func TestSuiteOptions(t *testing.T) {
	s := parseSuite(t, "--target", "http://127.0.0.1:9/mcp", "--header", "Authorization: Bearer one", "--other-header",
		"Authorization: Bearer two", "--protocol", "both", "--tool", "work_task", "--only", "cancel.", "--budget", "30s")
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	secrets := &redact.Set{}
	o, err := s.Options(secrets)
	if err != nil {
		t.Fatal(err)
	}
	if o.Target.URL != "http://127.0.0.1:9/mcp" || o.Target.Header.Get("Authorization") != "Bearer one" ||
		o.Other.Get("Authorization") != "Bearer two" || o.Protocol != conform.ProtocolBoth || o.Tool != "work_task" ||
		o.Only[0] != "cancel." || o.Budget.Seconds() != 30 || o.Target.ClientInfo.Name != "tasksim-conform" {
		t.Errorf("Options = %+v", o)
	}
	if got := secrets.String("Bearer one, Bearer two"); strings.Contains(got, "one") || strings.Contains(got, "two") {
		t.Errorf("the header values are not secrets: %q", got)
	}
}

// TestSuiteProblems: what is wrong in the flags is a *runner.UsageError naming the flag,
// found by Check before anything is built, or by Options for what it builds.
func TestSuiteProblems(t *testing.T) {
	target := []string{"--target", "http://127.0.0.1:9/mcp"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--target URL is required"},
		{[]string{"--target", "ftp://x"}, `--target "ftp://x" is not an http(s) URL`},
		{append(target, "--budget", "0s"), "--budget must be > 0"},
		{append(target, "--protocol", "2024"), `--protocol "2024": want 2025-11-25, 2026-07-28 or both`},
		{append(target, "--only", "no.such.case"), "no.such.case"},
		{append(target, "--other-header", "s3cret"), "--other-header: want 'Key: Value'"},
		{append(target, "--header", "A: s3cret", "--other-header", "A: s3cret"), "--other-header gives the same headers"},
		{append(target, "--tool-args", "bad"), "bad"},
	} {
		s := parseSuite(t, tc.args...)
		err := s.Check()
		if err == nil {
			_, err = s.Options(&redact.Set{})
		}
		var ue *runner.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: %v, want a usage error saying %q", tc.args, err, tc.want)
		}
	}
}
