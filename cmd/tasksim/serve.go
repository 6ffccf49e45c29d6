package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/mockserver"
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
	fmt.Fprintln(stdout, srv.URL) // first stdout line: the endpoint (DESIGN.md section 6)
	if len(cfg.Tokens) == 0 {
		fmt.Fprintln(stderr, "tasksim serve: no --token given: tasks are not bound to a tenant and tasks/list is off (R54)")
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

// parseServeFlags turns serve's flags into a server config; every bad flag is a usage error.
func parseServeFlags(args []string, stderr io.Writer) (mockserver.Config, error) {
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: tasksim serve [--listen 127.0.0.1:PORT] [--poll-interval D] [--ttl D] [--max-ttl D] [--token TENANT=TOKEN]...")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "Runs the mock MCP Tasks server (protocol 2025-11-25) and prints its endpoint URL")
		fmt.Fprintln(stderr, "as the first line on stdout. Stops gracefully on SIGINT or SIGTERM.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	var (
		cfg    mockserver.Config
		tokens []string
	)
	fs.StringVar(&cfg.Addr, "listen", "127.0.0.1:0", "listen address; port 0 picks a free port")
	fs.DurationVar(&cfg.PollInterval, "poll-interval", time.Second, "pollInterval advertised on every task")
	fs.DurationVar(&cfg.DefaultTTL, "ttl", 5*time.Minute, "ttl granted to tasks that request none")
	fs.DurationVar(&cfg.MaxTTL, "max-ttl", time.Hour, "largest ttl granted; larger requests are clamped")
	fs.BoolVar(&cfg.UnlimitedTTL, "null-ttl", false, "grant ttl null (unlimited) to tasks that request none")
	fs.DurationVar(&cfg.ReaperInterval, "reaper-interval", time.Second, "how often expired tasks are swept")
	fs.IntVar(&cfg.ListPageSize, "list-page-size", 50, "tasks per tasks/list page")
	fs.DurationVar(&cfg.DefaultDuration, "duration", time.Second, "work duration of calls without duration_ms")
	fs.StringArrayVar(&tokens, "token", nil, "bearer token of a tenant, as TENANT=TOKEN (repeatable); binds tasks to tenants")
	fs.StringArrayVar(&cfg.AllowedOrigins, "allow-origin", nil, "extra allowed Origin, e.g. https://app.example (repeatable)")
	fs.Int64Var(&cfg.MaxBodyBytes, "max-body", 4<<20, "largest accepted POST body, in bytes")
	fs.BoolVar(&cfg.StatusNotifications, "status-notifications", false, "send notifications/tasks/status on the owning session's GET stream")
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			return cfg, err
		}
		return cfg, usageError{err}
	}
	if fs.NArg() > 0 {
		return cfg, usagef("unexpected argument %q (scenario files come with a later release)", fs.Arg(0))
	}
	if _, _, err := net.SplitHostPort(cfg.Addr); err != nil {
		return cfg, usagef("--listen %q: %v", cfg.Addr, err)
	}
	cfg.Tokens = map[string]string{}
	for _, t := range tokens {
		tenant, tok, ok := strings.Cut(t, "=")
		if !ok || tenant == "" || tok == "" {
			return cfg, usagef("--token %q: want TENANT=TOKEN", redact(t))
		}
		if prev, dup := cfg.Tokens[tok]; dup && prev != tenant {
			return cfg, usagef("--token: one token is given to two tenants, %q and %q", prev, tenant)
		}
		cfg.Tokens[tok] = tenant
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usageError{err}
	}
	return cfg, nil
}

// redact hides a token's secret part in messages: tokens never appear in any output.
func redact(flag string) string {
	if tenant, _, ok := strings.Cut(flag, "="); ok {
		return tenant + "=***"
	}
	return "***"
}
