package cliflags

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/runner"
	"github.com/tasksim/tasksim/scenarios"
)

// parseServer parses serve's flags alone.
func parseServer(t *testing.T, args ...string) *Server {
	t.Helper()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	s := BindServer(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestServerConfig: no flag is the default scenario's server as serve runs it (both eras),
// every server.* flag given sets its field, --set comes after the flags, and what only a
// standalone server has goes through as given.
func TestServerConfig(t *testing.T) {
	cfg, err := parseServer(t).Config("")
	want := runner.ServerConfig(scenarios.Default())
	if err != nil || cfg.PollInterval != want.PollInterval || cfg.Seed != want.Seed || cfg.Protocols != mockserver.ProtocolsBoth ||
		cfg.Addr != "127.0.0.1:0" || cfg.DefaultDuration != time.Second || cfg.MaxBodyBytes != 4<<20 || !cfg.Fixtures {
		t.Fatalf("Config() = %+v, %v", cfg, err)
	}
	cfg, err = parseServer(t, "--poll-interval", "2s", "--ttl", "1m", "--max-ttl", "2h", "--null-ttl", "--reaper-interval", "3s",
		"--list-page-size", "7", "--status-notifications", "--protocols", "modern", "--set", "server.ttl=90s",
		"--token", "acme=tok", "--listen", "127.0.0.1:5", "--max-subscriptions", "3", "--fixtures=false").Config("")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PollInterval != 2*time.Second || cfg.DefaultTTL != 90*time.Second || cfg.MaxTTL != 2*time.Hour ||
		cfg.Protocols != mockserver.ProtocolsModern || cfg.Tokens["tok"] != "acme" || cfg.Addr != "127.0.0.1:5" ||
		cfg.MaxSubscriptions != 3 || cfg.Fixtures {
		t.Errorf("Config(flags) = %+v", cfg)
	}
}

// TestServerProblems: each problem is a *runner.UsageError naming its flag, and a token is
// never shown.
func TestServerProblems(t *testing.T) {
	for _, tc := range []struct {
		args []string
		name string
		want string
	}{
		{[]string{"--listen", "nope"}, "", `--listen "nope"`},
		{[]string{"--ttl", "2h"}, "", "--ttl: server.ttl: must be <= max_ttl"},
		{[]string{"--token", "s3cret"}, "", `--token "***": want TENANT=TOKEN`},
		{[]string{"--token", "a=s3cret", "--token", "b=s3cret"}, "", "one token is given to two tenants"},
		{[]string{"--token", "a=s3cret", "--set", "server.ttl=s3cret"}, "", "server.ttl"},
		{nil, "no-such-scenario", `unknown scenario "no-such-scenario"`},
	} {
		_, err := parseServer(t, tc.args...).Config(tc.name)
		var ue *runner.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Config(%q) = %v, want a usage error saying %q without the token", tc.args, err, tc.want)
		}
	}
}
