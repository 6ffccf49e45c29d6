package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/internal/cliflags"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/runner"
)

// shutdownGrace bounds how long serve waits for in-flight requests after a signal.
const shutdownGrace = 10 * time.Second

// runServe is `tasksim serve`: the mock server its flags configure, its URL on stdout,
// until the first signal shuts it down (in-flight requests get shutdownGrace); a second
// ends the process at once, exit code 1.
func runServe(args []string, stdout, stderr io.Writer) error {
	cfg, tel, err := parseServeFlags(args, stderr)
	if err != nil {
		return err
	}
	var served runner.ServeMetrics // its /metrics, over OTLP too once the server exists
	otel, err := tel.StartServe(context.Background(), &served, func(line string) { fmt.Fprintln(stderr, "tasksim serve: "+line) })
	if err != nil {
		return err // a *runner.UsageError
	}
	defer otel.Shutdown(context.Background()) // the last spans, within telemetry.ShutdownTimeout
	cfg.Tracer = otel.Tracer()
	// Signals are caught before the URL is printed: whoever reads the URL may stop us at once.
	stopped := make(chan struct{})
	defer onSignals(func() func() {
		fmt.Fprintln(stderr, "tasksim serve: shutting down (Ctrl-C again to exit at once)")
		close(stopped)
		return func() { os.Exit(exitRuntime) }
	})()
	srv, err := mockserver.NewServer(cfg)
	if err != nil {
		return err
	}
	served.Set(srv.Gatherer())
	fmt.Fprintln(stdout, srv.URL) // first stdout line: the endpoint, for whoever started us
	for _, note := range runner.ServeNotes(cfg, srv.URL) {
		fmt.Fprintln(stderr, "tasksim serve: "+note)
	}
	fmt.Fprintln(stderr, "tasksim serve: serving; Ctrl-C to stop")
	<-stopped
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// parseServeFlags turns serve's arguments into a server config (cliflags.Server): the
// server section of the scenario NAME or FILE, the flags, then --set. Every problem is a
// usage error.
func parseServeFlags(args []string, _ io.Writer) (mockserver.Config, runner.Telemetry, error) {
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	setHelp(fs)
	s := cliflags.BindServer(fs)
	tel := cliflags.BindTelemetry(fs)
	if err := parseFlags(fs, args); err != nil {
		return mockserver.Config{}, *tel, err
	}
	if fs.NArg() > 1 {
		return mockserver.Config{}, *tel, usagef("serve takes one scenario NAME or FILE, got %d arguments", fs.NArg())
	}
	cfg, err := s.Config(fs.Arg(0))
	if err != nil {
		return cfg, *tel, usageError(err)
	}
	if err := tel.Check(); err != nil {
		return cfg, *tel, err // a *runner.UsageError
	}
	return cfg, *tel, nil
}
