package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/internal/redact"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/runner"
	"github.com/tasksim/tasksim/scenarios"
)

// shutdownGrace bounds how long serve waits for in-flight requests after a signal.
const shutdownGrace = 10 * time.Second

func runServe(args []string, stdout, stderr io.Writer) error {
	cfg, err := parseServeFlags(args, stderr)
	if err != nil {
		return err
	}
	// Signals are caught before the URL is printed: whoever reads the URL may stop us at once.
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	srv, err := mockserver.NewServer(cfg)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, srv.URL) // first stdout line: the endpoint, for whoever started us
	for _, note := range runner.ServeNotes(cfg, srv.URL) {
		fmt.Fprintln(stderr, "tasksim serve: "+note)
	}
	fmt.Fprintln(stderr, "tasksim serve: serving; Ctrl-C to stop")
	<-sig
	fmt.Fprintln(stderr, "tasksim serve: shutting down (Ctrl-C again to exit at once)")
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	go func() {
		select {
		case <-sig:
			os.Exit(exitRuntime)
		case <-ctx.Done():
		}
	}()
	if err := srv.Shutdown(ctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// parseServeFlags turns serve's arguments into a server config: the server section of the
// scenario NAME or FILE (default: scenarios.Default()), then the flags that were given, then
// --set, in that order, mapped by runner.ServerConfig as a run maps it. Every problem is a usage error.
func parseServeFlags(args []string, _ io.Writer) (_ mockserver.Config, err error) {
	secrets := &redact.Set{} // the --token values: never in an error
	defer func() { err = secrets.Error(err) }()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	fs.Usage = func() { serveUsage(fs) }
	var (
		cfg             mockserver.Config
		tokens, sets    []string
		pollInterval    time.Duration
		ttl, maxTTL     time.Duration
		reaper          time.Duration
		nullTTL, notify bool
		pageSize        int
		protocols       string
	)
	def := scenarios.Default().Server // the flags show the defaults they stand for
	fs.StringVar(&cfg.Addr, "listen", "127.0.0.1:0", "listen `ADDRESS`; port 0 picks a free port")
	fs.DurationVar(&pollInterval, "poll-interval", time.Duration(def.PollInterval), "pollInterval advertised on every task; 0s = none (server.poll_interval)")
	fs.DurationVar(&ttl, "ttl", time.Duration(def.TTL), "ttl granted to tasks that request none (server.ttl)")
	fs.DurationVar(&maxTTL, "max-ttl", time.Duration(def.MaxTTL), "largest ttl granted; larger requests are clamped (server.max_ttl)")
	fs.BoolVar(&nullTTL, "null-ttl", def.NullTTL, "grant ttl null (unlimited) to tasks that request none (server.null_ttl)")
	fs.DurationVar(&reaper, "reaper-interval", time.Duration(def.ReaperInterval), "how often expired tasks are swept (server.reaper_interval)")
	fs.IntVar(&pageSize, "list-page-size", def.ListPageSize, "tasks per tasks/list page (server.list_page_size)")
	fs.DurationVar(&cfg.DefaultDuration, "duration", time.Second, "work duration of calls without duration_ms or a server.tools profile")
	fs.StringArrayVar(&tokens, "token", nil, "bearer token of a tenant, as `TENANT=TOKEN` (repeatable); binds tasks to tenants (server.tokens)")
	fs.StringArrayVar(&cfg.AllowedOrigins, "allow-origin", nil, "extra allowed `ORIGIN`, e.g. https://app.example (repeatable); loopback origins are always allowed")
	fs.Int64Var(&cfg.MaxBodyBytes, "max-body", 4<<20, "largest accepted POST body, in `BYTES`; larger ones get 413")
	fs.IntVar(&cfg.MaxSubscriptions, "max-subscriptions", 1024, "open subscriptions/listen streams (2026-07-28) at most, in `STREAMS`; one more gets 429")
	fs.BoolVar(&notify, "status-notifications", def.StatusNotifications, "send task status notifications: notifications/tasks/status on the owning session's GET stream (2025-11-25), notifications/tasks on subscriptions/listen streams (2026-07-28) (server.status_notifications)")
	fs.StringVar(&protocols, "protocols", "both", "protocol eras answered, `ERAS`: both (each request in its era), modern (2026-07-28 with the Tasks extension only) or legacy (2025-11-25 and older only) (server.protocols)")
	fs.BoolVar(&cfg.Fixtures, "fixtures", true, "list the official conformance suite's fixture tools (greet, slow_compute, failing_job, protocol_error_job, confirm_delete, multi_input, test_tool_with_task) after tasksim's own (docs/ARCHITECTURE.md#fixture-tools)")
	fs.StringArrayVar(&sets, "set", nil, "override a scenario field, `path=value` (repeatable), e.g. server.backpressure.workers=4")
	if err := parseFlags(fs, args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 1 {
		return cfg, usagef("serve takes one scenario NAME or FILE, got %d arguments", fs.NArg())
	}
	if _, _, err := net.SplitHostPort(cfg.Addr); err != nil {
		return cfg, usagef("--listen %q: %v", cfg.Addr, err)
	}
	sc, err := serveScenario(fs, []serveOverride{
		{"poll-interval", "server.poll_interval", pollInterval.String()},
		{"ttl", "server.ttl", ttl.String()},
		{"max-ttl", "server.max_ttl", maxTTL.String()},
		{"null-ttl", "server.null_ttl", strconv.FormatBool(nullTTL)},
		{"reaper-interval", "server.reaper_interval", reaper.String()},
		{"list-page-size", "server.list_page_size", strconv.Itoa(pageSize)},
		{"status-notifications", "server.status_notifications", strconv.FormatBool(notify)},
		{"protocols", "server.protocols", protocols},
	}, tokens, sets, secrets)
	if err != nil {
		return cfg, err
	}
	if cfg, err = runner.ServeConfig(sc, cfg); err != nil {
		return cfg, usageError{err}
	}
	return cfg, nil
}

// serveOverride is a serve flag that sets a scenario field: a problem names the flag.
type serveOverride struct{ flag, path, value string }

// serveScenario is the scenario NAME or FILE that fs holds (default: scenarios.Default())
// with the overrides of the flags that were given, then --token, then --set applied, its
// server section validated. Every problem is a usage error.
func serveScenario(fs *pflag.FlagSet, overrides []serveOverride, tokens, sets []string, secrets *redact.Set) (*scenarios.Scenario, error) {
	sc := scenarios.Default()
	if fs.NArg() == 1 {
		var err error
		if sc, err = scenarios.Load(fs.Arg(0)); err != nil {
			return nil, usageError{err}
		}
	}
	var errs []error
	for _, f := range overrides {
		if !fs.Changed(f.flag) {
			continue
		}
		if err := sc.SetFrom("--"+f.flag, f.path, f.value); err != nil {
			errs = append(errs, err)
		}
	}
	if err := runner.AddServerTokens(sc, tokens, secrets); err != nil {
		return nil, usageError{err}
	}
	errs = append(errs, applySets(sc, sets)...)
	if len(errs) > 0 {
		return nil, usageError{errors.Join(errs...)}
	}
	if err := sc.ValidateServer(); err != nil {
		return nil, usageError{err}
	}
	return sc, nil
}

// serveUsage writes serve's help on fs's output: what the server answers, how it is
// configured and stopped, the exit codes, then the flags.
func serveUsage(fs *pflag.FlagSet) {
	w := fs.Output()
	fmt.Fprintf(w, `Usage: tasksim serve [NAME|FILE] [flags]

Runs the mock MCP Tasks server, answering both protocol eras on one endpoint: 2025-11-25
(with sessions; server.protocol caps the version) and 2026-07-28 with the Tasks extension
io.modelcontextprotocol/tasks (stateless; each request classified by itself), unless
--protocols says otherwise. It prints its endpoint URL as the first line on stdout; its Prometheus metrics URL goes to
stderr. The server section of the scenario NAME or FILE configures it (a file may hold only
a server: section; default: the built-in defaults); the flags below override it and --set
overrides both, e.g. --set server.backpressure.workers=4. The first SIGINT or SIGTERM
shuts it down gracefully (in-flight requests get %v); a second one exits at once.

Exit codes: 0 stopped by a signal, 1 runtime error (e.g. the address is in use, or a second
signal), 2 usage or invalid server section.

Flags (a flag that names a server.* field shows its built-in default; a scenario's own
value replaces that default):
`, shutdownGrace)
	fs.PrintDefaults()
}
