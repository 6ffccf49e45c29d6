package cliflags

import (
	"errors"
	"net"
	"time"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/internal/redact"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/runner"
	"github.com/tasksim/tasksim/scenarios"
)

// serverFields are serve's flags that set a field of the scenario's server section, by
// name: given, the flag's value as pflag prints it (a duration as 1m30s) is set on the
// path, the problem naming the flag. Their defaults are scenarios.Default()'s (BindServer).
var serverFields = [...]struct{ flag, path string }{
	{"poll-interval", "server.poll_interval"},
	{"ttl", "server.ttl"},
	{"max-ttl", "server.max_ttl"},
	{"null-ttl", "server.null_ttl"},
	{"reaper-interval", "server.reaper_interval"},
	{"list-page-size", "server.list_page_size"},
	{"status-notifications", "server.status_notifications"},
	{"protocols", "server.protocols"},
}

// Server is the flags of `tasksim serve` (BindServer): those of serverFields, the
// tenants' tokens, --set, and what only a standalone server is given (its address, the
// default work duration, origins, limits, fixtures), which go to Config as they are.
type Server struct {
	base   mockserver.Config // --listen, --duration, --allow-origin, --max-body, --max-subscriptions, --fixtures
	tokens []string          // --token, each TENANT=TOKEN
	sets   []string          // --set, each path=value
	fs     *pflag.FlagSet
}

// BindServer defines serve's flags on fs. A flag of a server.* field shows the built-in
// default it stands for.
func BindServer(fs *pflag.FlagSet) *Server {
	s := &Server{fs: fs}
	def := scenarios.Default().Server
	fs.StringVar(&s.base.Addr, "listen", "127.0.0.1:0", "listen `ADDRESS`; port 0 picks a free port")
	fs.Duration("poll-interval", time.Duration(def.PollInterval), "pollInterval advertised on every task; 0s = none (server.poll_interval)")
	fs.Duration("ttl", time.Duration(def.TTL), "ttl granted to tasks that request none (server.ttl)")
	fs.Duration("max-ttl", time.Duration(def.MaxTTL), "largest ttl granted; larger requests are clamped (server.max_ttl)")
	fs.Bool("null-ttl", def.NullTTL, "grant ttl null (unlimited) to tasks that request none (server.null_ttl)")
	fs.Duration("reaper-interval", time.Duration(def.ReaperInterval), "how often expired tasks are swept (server.reaper_interval)")
	fs.Int("list-page-size", def.ListPageSize, "tasks per tasks/list page (server.list_page_size)")
	fs.DurationVar(&s.base.DefaultDuration, "duration", time.Second, "work duration of calls without duration_ms or a server.tools profile")
	fs.StringArrayVar(&s.tokens, "token", nil, "bearer token of a tenant, as `TENANT=TOKEN` (repeatable); binds tasks to tenants (server.tokens)")
	fs.StringArrayVar(&s.base.AllowedOrigins, "allow-origin", nil, "extra allowed `ORIGIN`, e.g. https://app.example (repeatable); loopback origins are always allowed")
	fs.Int64Var(&s.base.MaxBodyBytes, "max-body", 4<<20, "largest accepted POST body, in `BYTES`; larger ones get 413")
	fs.IntVar(&s.base.MaxSubscriptions, "max-subscriptions", 1024, "open subscriptions/listen streams (2026-07-28) at most, in `STREAMS`; one more gets 429")
	fs.Bool("status-notifications", def.StatusNotifications, "send task status notifications: notifications/tasks/status on the owning session's GET stream (2025-11-25), notifications/tasks on subscriptions/listen streams (2026-07-28) (server.status_notifications)")
	fs.String("protocols", "both", "protocol eras answered, `ERAS`: both (each request in its era), modern (2026-07-28 with the Tasks extension only) or legacy (2025-11-25 and older only) (server.protocols)")
	fs.BoolVar(&s.base.Fixtures, "fixtures", true, "list the official conformance suite's fixture tools (greet, slow_compute, failing_job, protocol_error_job, confirm_delete, multi_input, test_tool_with_task) after tasksim's own (docs/ARCHITECTURE.md#fixture-tools)")
	fs.StringArrayVar(&s.sets, "set", nil, "override a scenario field, `path=value` (repeatable), e.g. server.backpressure.workers=4")
	return s
}

// Config is the server configuration of the parsed flags: the server section of the
// scenario NAME or FILE (default, "": scenarios.Default()), then the serverFields flags that
// were given, then --token, then --set, validated and mapped by runner.ServeConfig as a run
// maps its embedded server's. Every problem is a *runner.UsageError, without the tokens.
func (s *Server) Config(name string) (_ mockserver.Config, err error) {
	secrets := &redact.Set{} // the --token values: never in an error
	defer func() { err = secrets.Error(err) }()
	if _, _, err := net.SplitHostPort(s.base.Addr); err != nil {
		return s.base, usageErrorf("--listen %q: %v", s.base.Addr, err)
	}
	sc, err := s.scenario(name, secrets)
	if err != nil {
		return s.base, err
	}
	return runner.ServeConfig(sc, s.base)
}

// scenario is the scenario NAME or FILE with the flags applied and its server section
// validated (Config).
func (s *Server) scenario(name string, secrets *redact.Set) (*scenarios.Scenario, error) {
	sc := scenarios.Default()
	if name != "" {
		var err error
		if sc, err = scenarios.Load(name); err != nil {
			return nil, &runner.UsageError{Err: err}
		}
	}
	var errs []error
	for _, f := range serverFields {
		if !s.fs.Changed(f.flag) {
			continue
		}
		if err := sc.SetFrom("--"+f.flag, f.path, s.fs.Lookup(f.flag).Value.String()); err != nil {
			errs = append(errs, err)
		}
	}
	if err := runner.AddServerTokens(sc, s.tokens, secrets); err != nil {
		return nil, err
	}
	if err := errors.Join(append(errs, ApplySets(sc, s.sets)...)...); err != nil {
		return nil, &runner.UsageError{Err: err}
	}
	if err := sc.ValidateServer(); err != nil {
		return nil, &runner.UsageError{Err: err}
	}
	return sc, nil
}
