package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/scenarios"
)

// runFlags are the flags of `tasksim run`.
type runFlags struct {
	target, out, rate, tool, args string
	protocol, sourceAddrs         string
	shard, startAt                string
	clients, shards               int
	duration, pollInterval        time.Duration
	headers, sets                 []string
	seed                          uint64
	dryRun, noProgress, contract  bool
	fs                            *pflag.FlagSet
}

// parseRunFlags parses run's command line; -h or --help returns a helpRequest with run's
// help (main prints it on stdout), so nothing is written here.
func parseRunFlags(args []string, _ io.Writer) (*runFlags, string, error) {
	f := &runFlags{}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fs.Usage = func() { runUsage(fs) }
	fs.StringVar(&f.target, "target", "", "`URL` of a real MCP endpoint (target; default: the embedded mock server)")
	fs.StringVar(&f.out, "out", "", "output `DIR` (default runs/<scenario>-<UTC time>)")
	fs.IntVar(&f.clients, "clients", 0, "number of clients (workload.clients; in the open model the client pool)")
	fs.StringVar(&f.rate, "rate", "", "switch to the open model at this arrival `RATE`, e.g. 50/s (workload.model, workload.rate)")
	fs.DurationVar(&f.duration, "duration", 0, "length of the load phase (duration)")
	fs.DurationVar(&f.pollInterval, "poll-interval", 0, "pollInterval the embedded server advertises, and the clients' fallback interval (server.poll_interval, client.poll.interval)")
	fs.StringVar(&f.tool, "tool", "", "`NAME` of the tool to call (tool)")
	fs.StringVar(&f.protocol, "protocol", "auto", "the era the clients speak, `auto|2025-11-25|2026-07-28` (protocol): auto asks server/discover first (E32)")
	fs.StringVar(&f.args, "args", "", "tool arguments as a `JSON` object, replacing the scenario's args, e.g. '{\"duration_ms\":2000}'")
	fs.StringArrayVar(&f.headers, "header", nil, "extra HTTP header for the target, `'K: V'` (headers; repeatable; values are never printed)")
	fs.Uint64Var(&f.seed, "seed", 0, "seed of the run's random source (seed)")
	fs.StringVar(&f.sourceAddrs, "source-addrs", "", "dial the clients' connections from these local addresses, round robin: a comma-separated `LIST` of addresses, ranges A-B and prefixes A/N, e.g. 127.0.0.1-127.0.0.8 (client.source_addresses)")
	fs.StringArrayVar(&f.sets, "set", nil, "override a scenario field, `path=value` (repeatable), e.g. client.poll.policy=fixed")
	fs.BoolVar(&f.contract, "contract", false, "run the contract suite against the target before the load: the run's contract gate (contract)")
	fs.StringVar(&f.shard, "shard", "", "run slice `I/N` of the scenario (0 <= I < N): its clients, arrivals and tenants split as in docs/ARCHITECTURE.md#shards")
	fs.IntVar(&f.shards, "shards", 0, "run one of `N` slices, the index from "+jobIndexEnv+" (a Kubernetes Indexed Job sets it); --shard wins")
	fs.StringVar(&f.startAt, "start-at", "", "start the load at this `RFC3339` instant (at most 24h ahead), the same in every shard; a start past by over 1s is reported")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the plan (load, cancels, faults, thresholds) and run nothing")
	fs.BoolVar(&f.noProgress, "no-progress", false, "no progress bars (they show only when stderr is a terminal)")
	f.fs = fs
	if err := parseFlags(fs, args); err != nil {
		return nil, "", err
	}
	if fs.NArg() > 1 {
		return nil, "", usagef("run takes one scenario NAME or FILE, got %d arguments", fs.NArg())
	}
	name := "baseline"
	if fs.NArg() == 1 {
		name = fs.Arg(0)
	}
	return f, name, nil
}

// scenario loads the scenario and applies the flags; every problem is a usage error.
func (f *runFlags) scenario(name string) (*scenarios.Scenario, error) {
	sc, err := scenarios.Load(name)
	if err != nil {
		return nil, usageError{err}
	}
	var errs []error
	set := func(flag, path, value string) { // a problem names the flag, not --set
		if err := sc.SetFrom("--"+flag, path, value); err != nil {
			errs = append(errs, err)
		}
	}
	changed := f.fs.Changed
	if changed("target") {
		sc.Target = f.target
	}
	if changed("clients") {
		set("clients", "workload.clients", strconv.Itoa(f.clients))
	}
	if changed("rate") {
		set("rate", "workload.model", "open")
		set("rate", "workload.rate", f.rate)
	}
	if changed("duration") {
		set("duration", "duration", f.duration.String())
	}
	if changed("poll-interval") {
		set("poll-interval", "server.poll_interval", f.pollInterval.String())
		set("poll-interval", "client.poll.interval", f.pollInterval.String())
	}
	if changed("tool") {
		sc.Tool = f.tool
	}
	if changed("source-addrs") {
		var list []string
		for e := range strings.SplitSeq(f.sourceAddrs, ",") {
			list = append(list, strings.TrimSpace(e))
		}
		b, _ := json.Marshal(list) // a JSON array is a YAML flow sequence
		set("source-addrs", "client.source_addresses", string(b))
	}
	if changed("protocol") {
		switch f.protocol {
		case "auto", loadgen.ProtocolLegacy, loadgen.ProtocolModern:
			set("protocol", "protocol", strings.TrimPrefix(f.protocol, "auto"))
		default:
			errs = append(errs, fmt.Errorf("--protocol %q: want auto, %s or %s", f.protocol, loadgen.ProtocolLegacy, loadgen.ProtocolModern))
		}
	}
	if changed("args") {
		var a map[string]any
		if err := json.Unmarshal([]byte(f.args), &a); err != nil {
			errs = append(errs, fmt.Errorf("--args: not a JSON object: %v", err))
		} else {
			sc.Args = a
		}
	}
	for _, h := range f.headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" {
			errs = append(errs, errors.New(headerProblem(h)))
			continue
		}
		if sc.Headers == nil {
			sc.Headers = map[string]scenarios.Secret{}
		}
		sc.Headers[strings.TrimSpace(k)] = scenarios.Secret(strings.TrimSpace(v))
	}
	if changed("seed") {
		sc.Seed = f.seed
	}
	if changed("contract") {
		set("contract", "contract", strconv.FormatBool(f.contract))
	}
	errs = append(errs, applySets(sc, f.sets)...)
	if len(errs) > 0 {
		return nil, usageError{errors.Join(errs...)}
	}
	if err := validate(sc); err != nil {
		return nil, usageError{err}
	}
	return sc, nil
}

// validate checks the scenario and its threshold expressions, every problem at once.
func validate(sc *scenarios.Scenario) error {
	return errors.Join(sc.Validate(), results.CheckThresholds(sc))
}

// headerProblem says what is wrong with a --header value that is not 'Key: Value', without
// showing the value: it may be a token.
func headerProblem(h string) string {
	k, _, ok := strings.Cut(h, ":")
	switch {
	case !ok:
		return fmt.Sprintf("--header: want 'Key: Value', got %d characters without a ':' between the name and the value (not shown)", len(h))
	default:
		return fmt.Sprintf("--header: want 'Key: Value', got %q: the name before ':' is empty", strings.TrimSpace(k)+": ***")
	}
}

func runRun(args []string, stdout, stderr io.Writer) error {
	f, name, err := parseRunFlags(args, stderr)
	if err != nil {
		return err
	}
	sc, err := f.scenario(name)
	if err != nil {
		return err
	}
	shard, err := runShard(f.shard, f.shards, f.fs.Changed("shards"), os.Getenv)
	if err != nil {
		return err
	}
	now := time.Now()
	startAt, err := parseStartAt(f.startAt, now)
	if err != nil {
		return err
	}
	noteScenarioSecrets(sc)
	cfg := engineConfig(sc)
	cfg.Shard = shard
	if pool := sc.Workload.PoolSize(); shard.Size(pool) == 0 {
		return usagef("shard %d/%d owns no client: the scenario has %d, fewer than the %d shards (fewer shards, or more clients)",
			shard.Index, shard.Count, pool, shard.Count)
	}
	net, err := runNet(sc, &cfg)
	if err != nil {
		return err
	}
	if f.dryRun {
		printPlan(stdout, sc, &cfg, net)
		if !startAt.IsZero() {
			fmt.Fprintf(stdout, "start at     %s: the load waits for it (a start past by over 1s is reported late)\n", startAt.UTC().Format(time.RFC3339Nano))
		}
		return nil
	}
	r := &runRequest{sc: sc, cfg: &cfg, net: net, dir: f.out, start: now, progress: !f.noProgress,
		stdout: stdout, stderr: stderr, startAt: startAt}
	if r.dir == "" {
		r.dir = filepath.Join("runs", sc.Name+"-"+r.start.UTC().Format("20060102T150405Z"))
	}
	err = r.run()
	if err != nil && !r.summarized {
		// The run stopped before its summary: a pipeline reading summary.json still gets an
		// answer, "error" and why (exit code 1, or 2 for a capability the scenario refuses
		// to do without).
		r.writeErrorSummary(err)
	}
	return err
}

// runRequest is one `tasksim run` of a scenario, from the start of the run to its output.
type runRequest struct {
	sc       *scenarios.Scenario
	cfg      *loadgen.Config
	net      clientNet // how the clients reach the target
	dir      string    // output directory
	start    time.Time // the run's start: every figure counts from it
	progress bool      // progress bars on stderr, when it is a terminal
	stdout   io.Writer
	stderr   io.Writer

	startAt    time.Time         // --start-at: the load's common start; zero = none
	lateBy     time.Duration     // how late the load started after startAt
	manifest   *loadgen.Manifest // nil until the target was probed
	contract   *results.Contract // the contract suite's result; nil when it did not run
	summarized bool              // summary.json holds the run's summary
}

// run runs the scenario and writes its outputs. Until summarized is true, an error left
// no summary.
func (r *runRequest) run() error {
	// First Ctrl-C: stop starting tasks and drain; second: stop at once. Files already
	// written stay valid either way.
	hard, cancelHard := context.WithCancel(context.Background())
	defer cancelHard()
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)

	if r.sc.Contract {
		// A signal during the suite stops it (its cases end skipped, what it created is
		// cancelled, conform.json is written) and the load never starts.
		// A second signal ends the process (signal.Stop restores the default), as in
		// conform: the suite's cleanup may wait on a target that does not answer.
		ctx, stop := context.WithCancel(hard)
		var interrupted atomic.Bool
		watch, watched := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(watched)
			select {
			case <-sig:
				interrupted.Store(true)
				fmt.Fprintln(r.stderr, "\ntasksim run: stopping the contract suite (Ctrl-C again to stop at once); the load will not start")
				signal.Stop(sig)
				stop()
			case <-watch:
			}
		}()
		err := r.runContract(ctx)
		close(watch)
		<-watched // a signal that came as the suite ended is seen here, not lost
		stop()
		if interrupted.Load() && r.contract == nil {
			return interruptedError{"the contract suite, before its first case; no load was run"}
		}
		if err != nil {
			return err
		}
		if interrupted.Load() {
			return interruptedError{"the contract suite's cases that ran before the signal, in conform.json; no load was run"}
		}
		r.start = time.Now() // the load's figures count from its own start
	}
	if r.startAt.After(r.start) {
		// The run's clock, its windows and files count from the common start, so that every
		// shard's seconds line up; the probe before it falls in the first window, as always.
		r.start = r.startAt
	}
	rec := metrics.NewRecorder(r.cfg.Shards, r.start)
	var events *metrics.Events
	if r.sc.Faults.On() {
		events = metrics.NewEvents(0)
		r.cfg.Events = events
	}
	target, srv, closeTarget, err := r.reach(hard, rec, events)
	if err != nil {
		return err
	}
	defer closeTarget()
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	eng, err := loadgen.New(*r.cfg, target, r.manifest, rec)
	if err != nil {
		return usageError{err}
	}
	col, err := newCollector(r.dir, r.start, rec, eng, srv, r.sc)
	if err != nil {
		return err
	}
	if r.progress && isTerminal(r.stderr) {
		col.progress = newProgress(r.stderr, time.Duration(r.sc.Duration))
	}
	fmt.Fprintf(r.stderr, "tasksim run: %s against %s: %s\n", r.sc.Name, targetName(r.sc), planLine(r.sc, r.cfg))
	if err := r.waitStart(hard, sig); err != nil {
		return err
	}

	interrupted := r.onSignals(sig, eng, hard, cancelHard)
	col.begin()
	runErr := eng.Run(hard)
	col.stop()
	return r.finish(runErr, func() *results.Summary {
		sum := summarize(r.sc, r.cfg, r.start, r.manifest, srv, eng, rec, col.tally, interrupted.Load(), events, r.contract)
		sum.Runtime = runRuntime{runtimeInfo(), r.net}
		sum.Aborted = col.aborted
		if sum.Shard = r.shardInfo(sum); sum.Shard != nil { // what a merge needs to judge the whole
			sum.Shard.PollIntervalMS = float64(advisedInterval(r.manifest, r.cfg)) / float64(time.Millisecond)
			sum.Shard.TasksUnknownWithID = eng.UnknownCreated()
		}
		if runErr != nil { // what was measured is kept, and judges nothing
			sum.Verdict, sum.Error = results.VerdictError, redactKnown(runErr.Error())
		}
		return sum
	}, eng, events, col.aborted)
}

// waitStart waits for the common start (--start-at), if any, and notes how late the load
// starts after it, saying so on stderr past lateAfter. A signal during the wait stops the run
// before its load.
func (r *runRequest) waitStart(ctx context.Context, sig <-chan os.Signal) error {
	if r.startAt.IsZero() {
		return nil
	}
	if d := time.Until(r.startAt); d > 0 {
		fmt.Fprintf(r.stderr, "tasksim run: waiting %v for --start-at %s\n", d.Round(time.Millisecond), r.startAt.UTC().Format(time.RFC3339Nano))
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var signalled atomic.Bool
	go func() {
		select {
		case <-sig:
			signalled.Store(true)
			stop()
		case <-ctx.Done():
		}
	}()
	late, err := waitStart(ctx, r.startAt)
	if err != nil {
		if signalled.Load() {
			return interruptedError{"waiting for --start-at; no load was run"}
		}
		return err
	}
	r.lateBy = late
	if note := lateNote(late, r.startAt); note != "" {
		fmt.Fprintln(r.stderr, "tasksim run: "+note)
	}
	return nil
}

// shardInfo is the summary's shard block: nil for a run of the whole scenario without a
// common start.
func (r *runRequest) shardInfo(sum *results.Summary) *results.ShardInfo {
	sh := r.cfg.Shard
	if sh == (scenarios.Shard{}) && r.startAt.IsZero() { // no --shard, --shards or --start-at
		return nil
	}
	return results.NewShardInfo(sum, sh.Index, sh.Count, r.sc.Hash(), r.startAt, r.lateBy)
}

// reach starts the target (the embedded server, or the URL given), reads its manifest and
// decides how to call the tool (r.manifest), and puts the chaos proxy in front of it when
// the scenario has network faults. closeTarget stops what reach started.
func (r *runRequest) reach(ctx context.Context, rec *metrics.Recorder, events *metrics.Events) (
	target *loadgen.Target, srv *mockserver.Server, closeTarget func(), err error) {
	sc := r.sc
	var closers []func()
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	defer func() {
		if err != nil {
			closeAll() // the results are zeroed by then: not closeTarget
		}
	}()
	target, srv, err = startTarget(sc, sc.Workload.PoolSize(), r.net.addrs, rec.Shard(0), events)
	if err != nil {
		return nil, nil, nil, err
	}
	if srv != nil {
		closers = append(closers, srv.Close)
		r.cfg.Reconciler = embeddedReconciler(sc, srv)
	}
	probeCtx, cancelProbe := context.WithTimeout(ctx, 15*time.Second)
	manifest, err := probeRun(probeCtx, target, srv != nil, sc)
	cancelProbe()
	if err != nil {
		return nil, nil, nil, err // unreachable target, or not of the era pinned: exit 1 with the reason
	}
	r.manifest = manifest
	fb := loadgen.FallbackRefuse
	if sc.Fallback == scenarios.FallbackSync {
		fb = loadgen.FallbackSync
	}
	if err := manifest.Decide(fb); err != nil {
		var ce *loadgen.CapabilityError
		if errors.As(err, &ce) {
			return nil, nil, nil, usageError{fmt.Errorf("%s: %w", targetName(sc), err)}
		}
		return nil, nil, nil, err
	}
	if sc.Faults.Network.On() {
		// After the manifest: the capability check goes straight to the target, so that a
		// toxic drawn for its connection cannot end the run before it starts.
		proxied, stopChaos, err := startChaos(target.URL, sc.Faults.Network, sc.Seed, events)
		if err != nil {
			return nil, nil, nil, err
		}
		closers = append(closers, stopChaos)
		target.URL = proxied
	}
	return target, srv, closeAll, nil
}

// probeRun reads the manifest a run needs, in the era its clients will speak: the one the
// scenario pins (protocol), else the one the target answers first by E32 (server/discover,
// docs/RULES.md#e32): 2026-07-28 where it is served, 2025-11-25 otherwise, the fallback said
// in the manifest (era_detection). The embedded server is spoken to without detection, in
// 2025-11-25 unless pinned. A target that does not serve the era pinned is told plainly, as
// the runtime error it is (exit 1): a modern-only one pinned to 2025-11-25 is a
// loadgen.ModernOnlyError, a legacy-only one pinned to 2026-07-28 an error naming what its
// server/discover answered.
func probeRun(ctx context.Context, target *loadgen.Target, embedded bool, sc *scenarios.Scenario) (*loadgen.Manifest, error) {
	target.Protocol = runProtocol(sc, embedded)
	if target.Protocol == loadgen.ProtocolLegacy {
		return loadgen.Probe(ctx, target, sc.Tool) // a modern-only target: a *loadgen.ModernOnlyError
	}
	return loadgen.ProbeWith(ctx, target, loadgen.ProbeOptions{Tool: sc.Tool})
}

// runProtocol is the era a run pins before it asks (loadgen.Target.Protocol): the scenario's
// protocol; on the embedded server, when that is auto, the era it serves alone
// (server.protocols modern), else 2025-11-25, spoken without detection.
func runProtocol(sc *scenarios.Scenario, embedded bool) string {
	switch {
	case sc.Protocol != loadgen.ProtocolAuto || !embedded:
		return sc.Protocol
	case mockserver.Protocols(sc.Server.Protocols) == mockserver.ProtocolsModern:
		return loadgen.ProtocolModern
	}
	return loadgen.ProtocolLegacy
}

// onSignals has the first signal stop the load (in-flight tasks drain) and the second stop
// everything (cancelHard); the result says whether a signal came.
func (r *runRequest) onSignals(sig <-chan os.Signal, eng *loadgen.Engine, hard context.Context, cancelHard func()) *atomic.Bool {
	var interrupted atomic.Bool
	go func() {
		select {
		case <-sig:
			interrupted.Store(true)
			fmt.Fprintln(r.stderr, "\ntasksim run: stopping: draining in-flight tasks (Ctrl-C again to stop at once)")
			eng.Stop()
		case <-hard.Done():
			return
		}
		select {
		case <-sig:
			cancelHard()
		case <-hard.Done():
		}
	}()
	return &interrupted
}

// finish writes the run's files and text summary from build's summary (events.csv first,
// then summary.json, summary.csv and report.html: a failure among them leaves the error
// summary in their place), scans them for secrets (a find rebuilds the summary, whose hard
// gate then fails, and writes it all again), and returns the run's error or the error of
// its exit code.
func (r *runRequest) finish(runErr error, build func() *results.Summary, eng *loadgen.Engine, events *metrics.Events, aborted string) error {
	sum := build()
	if aborted != "" {
		fmt.Fprintln(r.stderr, "tasksim run: aborted: "+aborted)
	}
	if events != nil { // first: the report shows them
		kept, dropped := events.Kept()
		if err := results.WriteEvents(r.dir, r.start, kept, dropped); err != nil {
			return fmt.Errorf("writing results: %w", err)
		}
	}
	text, err := r.write(sum)
	if err != nil {
		return err // not summarized: the error summary replaces what was written
	}
	if scanOutputs(eng, r.dir, text) > 0 {
		// A planted secret or a token reached tasksim's own output: the hard gate fails, and
		// the files are written again to say so (where, never the secret).
		sum = build()
		if text, err = r.write(sum); err != nil {
			return err // likewise: never the first pass's summary, which missed the find
		}
	}
	r.summarized = true
	if _, err := r.stdout.Write(text); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	switch sum.ExitCode() {
	case results.ExitGateFailed:
		return gateError{}
	case results.ExitInterrupted:
		return interruptedError{}
	}
	return nil
}

// write writes summary.json, summary.csv and report.html of sum, and returns its text
// summary.
func (r *runRequest) write(sum *results.Summary) ([]byte, error) {
	if err := results.WriteSummary(r.dir, sum); err != nil {
		return nil, fmt.Errorf("writing results: %w", err)
	}
	if err := results.WriteReport(r.dir); err != nil {
		return nil, fmt.Errorf("writing results: %w", err)
	}
	var text bytes.Buffer
	if err := results.WriteText(&text, sum, r.dir); err != nil {
		return nil, err
	}
	return text.Bytes(), nil
}

// writeErrorSummary writes the summary of a run that err stopped before it could be
// summarized: verdict "error" and the reason, every secret redacted. A failure to write it
// is reported on stderr; err stays the run's error.
func (r *runRequest) writeErrorSummary(err error) {
	sc := r.sc
	info := results.RunInfo{
		Version: version, Scenario: sc.Name, Seed: sc.Seed, Target: summaryTarget(sc),
		StartedAt: r.start.UTC(), Duration: time.Since(r.start), Runtime: runRuntime{runtimeInfo(), r.net},
		Thresholds: sc.Thresholds, ErrorBudget: errorBudget(sc), Error: redactKnown(err.Error()),
	}
	if r.manifest != nil {
		info.Manifest, info.Protocol = r.manifest, r.manifest.ProtocolVersion
	}
	sum := results.ErrorSummary(info)
	sum.Shard = r.shardInfo(sum)
	if werr := results.WriteSummary(r.dir, sum); werr != nil {
		fmt.Fprintf(r.stderr, "tasksim run: no %s written: %s\n", results.SummaryJSONFile, redactKnown(werr.Error()))
		return
	}
	files := results.SummaryJSONFile
	if werr := results.WriteReport(r.dir); werr == nil { // the same verdict, for a reader of the page
		files += " and " + results.ReportFile
	}
	fmt.Fprintf(r.stderr, "tasksim run: the run failed: %s in %s say \"verdict\": \"error\", with the reason below\n", files, filepath.Clean(r.dir))
}

// errorBudget is the scenario's error budget, in percent, as results.RunInfo takes it.
func errorBudget(sc *scenarios.Scenario) *float64 {
	b := float64(sc.ErrorBudget)
	return &b
}

// gateError is a failed gate or threshold: exit code 99, the reasons are in the summary.
type gateError struct{ why string }

func (e gateError) Error() string {
	if e.why != "" {
		return e.why
	}
	return "a gate or threshold failed (see the summary above)"
}

// interruptedError is a run (or sweep) a signal stopped early: exit code 130. what says
// what was kept; "" is a run in which nothing failed.
type interruptedError struct{ what string }

func (e interruptedError) Error() string {
	if e.what != "" {
		return "interrupted before the end: " + e.what
	}
	return "interrupted before the end: the files hold what was measured, and nothing failed in it"
}

// startTarget returns the target of the run: the URL given, or an embedded mock server on
// 127.0.0.1:0 configured from the scenario's server section; the clients' connections are
// dialed from sources (nil = the system's choice).
func startTarget(sc *scenarios.Scenario, pool int, sources []netip.Addr, serverMetrics *metrics.Shard, events *metrics.Events) (*loadgen.Target, *mockserver.Server, error) {
	t := &loadgen.Target{
		Header:     http.Header{},
		Client:     loadgen.NewHTTPClientWith(loadgen.ClientOptions{IdleConns: 2 * pool, SourceAddrs: sources}),
		ClientInfo: mcp.Implementation{Name: "tasksim", Version: version},
	}
	for k, v := range sc.Headers {
		t.Header.Set(k, v.Reveal())
	}
	if sc.Target != "" {
		u, err := url.Parse(sc.Target)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, nil, usagef("target %q is not an http(s) URL", sc.Target)
		}
		t.URL = sc.Target
		if tenants := runTenants(sc); len(tenants) > 0 && t.Header.Get("Authorization") == "" {
			// As on the embedded server: the manifest probe, the cleanup probes and the
			// contract suite use the first tenant's token.
			t.Header.Set("Authorization", "Bearer "+tenants[0].Token.Reveal())
		}
		return t, nil, nil
	}
	scfg := serverConfig(sc)
	scfg.Metrics = serverMetrics
	scfg.Events = events
	srv, err := mockserver.NewServer(scfg)
	if err != nil {
		return nil, nil, err
	}
	t.URL = srv.URL
	if tenants := runTenants(sc); len(tenants) > 0 && t.Header.Get("Authorization") == "" {
		// The manifest probe and the cleanup probes use the first tenant's token; the
		// virtual clients use their own tenant's (loadgen.Security.Tenants).
		t.Header.Set("Authorization", "Bearer "+tenants[0].Token.Reveal())
	}
	return t, srv, nil
}

// runTenants are the tenants clients are spread over, sorted by name: server.tokens on the
// embedded server, security.tenants on a real target; none without tokens.
func runTenants(sc *scenarios.Scenario) []loadgen.Tenant {
	tokens := sc.Server.Tokens
	if sc.Target != "" {
		tokens = sc.Security.Tenants
	}
	var out []loadgen.Tenant
	for _, name := range slices.Sorted(maps.Keys(tokens)) {
		out = append(out, loadgen.Tenant{Name: name, Token: tokens[name]})
	}
	return out
}

// securityConfig maps the scenario's tenants and security section onto the load generator.
func securityConfig(sc *scenarios.Scenario) loadgen.Security {
	sec := sc.Security
	out := loadgen.Security{Tenants: runTenants(sc), ProbeShare: sec.ProbeShare, Canaries: sec.Canaries,
		WatchInjection: sec.Inject}
	for _, r := range sec.Revoke {
		out.Revoked = append(out.Revoked, loadgen.Revocation{Tenant: r.Tenant, At: time.Duration(r.At),
			Scope: string(cmp.Or(r.Scope, scenarios.RevokeAll))})
	}
	return out
}

// embeddedReconciler finds a task by idempotency key in the embedded server's ledger, for
// the reconciliation of creates whose reply was lost. Keys are unique within a
// run, so it looks in every tenant's ledger.
func embeddedReconciler(sc *scenarios.Scenario, srv *mockserver.Server) loadgen.Reconciler {
	tenants := []string{""}
	if len(sc.Server.Tokens) > 0 {
		tenants = slices.Sorted(maps.Keys(sc.Server.Tokens))
	}
	return loadgen.ReconcilerFunc(func(_ context.Context, key string) (string, bool, error) {
		for _, tenant := range tenants {
			if id, ok := srv.LookupKey(tenant, key); ok {
				return id, true, nil
			}
		}
		return "", false, nil
	})
}

// scanOutputs scans every file of the run directory, and the text report, for the run's
// planted secrets and tokens (loadgen.Engine.ScanOutput) and returns how many it found.
func scanOutputs(eng *loadgen.Engine, dir string, text []byte) int {
	n := eng.ScanOutput("stdout", text)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return n
	}
	for _, de := range entries {
		if !de.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, de.Name()))
		if err != nil {
			continue
		}
		n += eng.ScanOutput(de.Name(), b)
	}
	return n
}

// securityInfo is the hard gate's view of the probes and the detector; nil when neither
// ran.
func securityInfo(eng *loadgen.Engine) *results.Security {
	r := eng.Security()
	if !r.Probes && !r.Canaries && len(r.Secrets) == 0 && len(r.Injections) == 0 && len(r.Leaks) == 0 {
		return nil
	}
	s := &results.Security{Probes: r.Probes, ProbesSent: r.ProbesSent, Inconclusive: r.Inconclusive,
		Leaks: r.Leaks, Touched: r.Touched, Canaries: r.Canaries, Secrets: r.Secrets, Injections: r.Injections}
	if len(r.LeakSample) > 0 {
		s.LeakSample = r.LeakSample
	}
	if len(r.SecretSample) > 0 {
		s.SecretSample = r.SecretSample
	}
	return s
}

// serverConfig maps the scenario's server section onto the mock server, knob for knob; run
// and serve both use it. Seed is server.seed, or the scenario's seed when that is 0.
func serverConfig(sc *scenarios.Scenario) mockserver.Config {
	s := sc.Server
	bp, ds := s.Backpressure, s.Downstream
	cfg := mockserver.Config{
		PollInterval:        time.Duration(s.PollInterval),
		DefaultTTL:          time.Duration(s.TTL),
		MaxTTL:              time.Duration(s.MaxTTL),
		UnlimitedTTL:        s.NullTTL,
		ReaperInterval:      time.Duration(s.ReaperInterval),
		ListPageSize:        s.ListPageSize,
		StatusNotifications: s.StatusNotifications,
		SSERetry:            time.Duration(s.SSERetry),
		ServerVersion:       version,
		Seed:                cmp.Or(s.Seed, sc.Seed),
		Latency:             maps.Clone(s.Latency),
		Stalls: mockserver.Stalls{
			Probability: s.Stalls.Probability,
			Duration:    time.Duration(s.Stalls.Duration),
			Every:       time.Duration(s.Stalls.Every),
			Window:      time.Duration(s.Stalls.Window),
		},
		Poll: mockserver.PollPolicy{
			Kind:    string(s.PollPolicy.Kind),
			Signal:  string(s.PollPolicy.Signal),
			Base:    time.Duration(s.PollPolicy.Base),
			PerUnit: time.Duration(s.PollPolicy.PerUnit),
			Max:     time.Duration(s.PollPolicy.Max),
		},
		Backpressure: mockserver.Backpressure{
			MaxTasks:            bp.MaxTasks,
			MaxTasksPerTenant:   bp.MaxTasksPerTenant,
			Workers:             bp.Workers,
			Queue:               bp.Queue,
			WhenFull:            string(bp.WhenFull),
			RetryAfter:          time.Duration(bp.RetryAfter),
			RaisedPollInterval:  time.Duration(bp.RaisedPollInterval),
			GetRatePerClient:    bp.RateLimits.GetPerClient.PerSecond(),
			GetRatePerTenant:    bp.RateLimits.GetPerTenant.PerSecond(),
			CreateRatePerClient: bp.RateLimits.CreatePerClient.PerSecond(),
			CreateRatePerTenant: bp.RateLimits.CreatePerTenant.PerSecond(),
			Burst:               bp.RateLimits.Burst,
		},
		Downstream: mockserver.Downstream{
			Capacity:         ds.Capacity,
			ServiceTime:      ds.ServiceTime,
			QueueLimit:       ds.QueueLimit,
			FailureRate:      ds.FailureRate,
			StallProbability: ds.Stall.Probability,
			StallDuration:    time.Duration(ds.Stall.Duration),
		},
		Faults:    sc.Faults.Server,
		NoTasks:   !s.Tasks,
		Protocol:  s.Protocol,
		Protocols: mockserver.Protocols(s.Protocols),
	}
	if s.Protocols == "" && sc.Protocol == loadgen.ProtocolModern {
		cfg.Protocols = mockserver.ProtocolsBoth // clients pinned to 2026-07-28 need it served
	}
	sec := sc.Security
	cfg.Inject = sec.Inject
	cfg.Insecure = mockserver.Insecure{
		SessionBound:   sec.Has(scenarios.InsecureSessionBound),
		NoTenantCheck:  sec.Has(scenarios.InsecureNoTenantCheck),
		PredictableIDs: sec.Has(scenarios.InsecurePredictableIDs),
		EchoSecrets:    sec.Has(scenarios.InsecureEchoSecrets),
	}
	cfg.KnownBad = mockserver.KnownBad{
		BlockingGet:        s.KnownBadOn(scenarios.KnownBadBlockingGet),
		NoPollInterval:     s.KnownBadOn(scenarios.KnownBadNoPollInterval),
		MissingFields:      s.KnownBadOn(scenarios.KnownBadMissingFields),
		CancelTerminalOK:   s.KnownBadOn(scenarios.KnownBadCancelTerminalOK),
		CancelNotFinal:     s.KnownBadOn(scenarios.KnownBadCancelNotFinal),
		EarlyResult:        s.KnownBadOn(scenarios.KnownBadEarlyResult),
		NoRelatedMeta:      s.KnownBadOn(scenarios.KnownBadNoRelatedMeta),
		IsErrorCompleted:   s.KnownBadOn(scenarios.KnownBadIsErrorCompleted),
		ListWithoutAuth:    s.KnownBadOn(scenarios.KnownBadListWithoutAuth),
		ListTruncated:      s.KnownBadOn(scenarios.KnownBadListTruncated),
		WrongErrorCodes:    s.KnownBadOn(scenarios.KnownBadWrongErrorCodes),
		NoTaskSupportCheck: s.KnownBadOn(scenarios.KnownBadNoTaskSupportCheck),
		NeverExpire:        s.KnownBadOn(scenarios.KnownBadNeverExpire),
		LostSession400:     s.KnownBadOn(scenarios.KnownBadLostSession400),
		Sessionless:        s.KnownBadOn(scenarios.KnownBadSessionless),
		AnyVersion:         s.KnownBadOn(scenarios.KnownBadAnyVersion),
		InputNoMeta:        s.KnownBadOn(scenarios.KnownBadInputNoMeta),
		IgnoreTaskParam:    s.KnownBadOn(scenarios.KnownBadIgnoreTaskParam),
		RefuseTaskParam:    s.KnownBadOn(scenarios.KnownBadRefuseTaskParam),
		SelfCancel:         s.KnownBadOn(scenarios.KnownBadSelfCancel),
		MissingSession404:  s.KnownBadOn(scenarios.KnownBadMissingSession404),
		BooleanLeaves:      s.KnownBadOn(scenarios.KnownBadBooleanLeaves),
		KnownBad2026:       knownBad2026(s),
	}
	for _, r := range sec.Revoke {
		cfg.Revocations = append(cfg.Revocations, mockserver.Revocation{Tenant: r.Tenant,
			At: time.Duration(r.At), Scope: mockserver.RevokeScope(r.Scope)})
	}
	if len(s.Tokens) > 0 {
		cfg.Tokens = map[string]string{}
		for tenant, tok := range s.Tokens {
			cfg.Tokens[tok.Reveal()] = tenant
		}
	}
	if len(s.Tools) > 0 {
		cfg.Tools = map[string]mockserver.ToolProfile{}
		for name, t := range s.Tools {
			cfg.Tools[name] = mockserver.ToolProfile{
				Duration:         t.Duration,
				Completed:        t.Outcomes.Completed,
				Failed:           t.Outcomes.Failed,
				Error:            t.Outcomes.Error,
				InputProbability: t.Input.Probability,
				InputRounds:      t.Input.Rounds,
			}
		}
	}
	if len(s.PollPolicy.PerTool) > 0 {
		cfg.Poll.PerTool = map[string]time.Duration{}
		for name, d := range s.PollPolicy.PerTool {
			cfg.Poll.PerTool[name] = time.Duration(d)
		}
	}
	for _, w := range ds.Stall.Windows {
		cfg.Downstream.StallWindows = append(cfg.Downstream.StallWindows,
			mockserver.Window{Start: time.Duration(w.Start), Duration: time.Duration(w.Duration)})
	}
	return cfg
}

// engineConfig maps the scenario onto the load generator.
func engineConfig(sc *scenarios.Scenario) loadgen.Config {
	c := sc.Client
	kind, _ := loadgen.ParsePollKind(string(c.Poll.Policy)) // validated already
	cfg := loadgen.Config{
		Tool:     sc.Tool,
		Args:     sc.Args,
		TaskTTL:  time.Duration(sc.TaskTTL),
		Clients:  sc.Workload.PoolSize(),
		Duration: time.Duration(sc.Duration),
		Grace:    time.Duration(sc.Grace),
		Poll: loadgen.PollPolicy{
			Kind: kind, Interval: time.Duration(c.Poll.Interval), Multiplier: c.Poll.Multiplier,
			MaxInterval: time.Duration(c.Poll.MaxInterval), Jitter: c.Poll.Jitter,
			Min: time.Duration(c.Poll.Min), Max: time.Duration(c.Poll.Max), Deadline: time.Duration(c.Poll.Deadline),
		},
		Input:    loadgen.InputPolicy{Accept: c.Input.Accept, Decline: c.Input.Decline, Cancel: c.Input.Cancel},
		Timeout:  time.Duration(c.RequestTimeout),
		Seed:     sc.Seed,
		Shards:   max(8, 2*runtime.GOMAXPROCS(0)),
		Faults:   sc.Faults.Client,
		Recovery: sc.Recovery,
		Security: securityConfig(sc), // tenants, probes, canaries
	}
	if sc.Target == "" {
		// Both ends of every connection live in this process and share its processors:
		// requests beyond what they can serve only queue, at two file descriptors each.
		// Against a real target a bound would cap the load a slow target sees, so none.
		cfg.MaxConns = loadgen.DefaultMaxConns
		if !sc.Faults.On() {
			// Nothing can lose a create here, so nothing needs reconciling: send no
			// idempotency key, and the server's ledger keeps no entry per task (a long soak
			// would otherwise grow it by one key per task for the whole run).
			cfg.Recovery.IdempotencyArg = ""
		}
	} else {
		// The store of a real target is out of sight: sample cleanup_lag by probing one
		// finished task in ten after its expiry (docs/METRICS.md#cleanup_lag).
		cfg.CleanupProbes = 10
	}
	if c.MaxConns > 0 {
		cfg.MaxConns = c.MaxConns
	}
	if sc.Fallback == scenarios.FallbackSync {
		cfg.Fallback = loadgen.FallbackSync
	}
	if c.Result == scenarios.ResultBlock {
		cfg.Result = loadgen.ResultBlock
	}
	if c.Cancel.Probability > 0 {
		d := c.Cancel.Delay
		cfg.Cancel = loadgen.CancelPolicy{Probability: c.Cancel.Probability, Delay: d.Sample}
	}
	if sc.Workload.Model == scenarios.ModelOpen {
		cfg.Model = loadgen.Open
		cfg.Rate = sc.Workload.Rate.PerSecond()
		cfg.MaxInFlight = sc.Workload.MaxInFlight
		for _, st := range sc.Workload.Stages {
			cfg.Stages = append(cfg.Stages, loadgen.Stage{Duration: time.Duration(st.Duration), Target: st.Target.PerSecond()})
		}
	} else {
		cfg.ThinkTime = time.Duration(sc.Workload.ThinkTime)
		cfg.Ramp = loadgen.DefaultRamp(cfg.Clients, cfg.Duration)
	}
	return cfg
}

func targetName(sc *scenarios.Scenario) string {
	if sc.Target == "" {
		return "the embedded mock server"
	}
	return sc.Target
}

func summaryTarget(sc *scenarios.Scenario) string {
	if sc.Target == "" {
		return "embedded"
	}
	return sc.Target
}

// advisedInterval is the poll interval the trust check compares schedule lag with.
func advisedInterval(m *loadgen.Manifest, cfg *loadgen.Config) time.Duration {
	if cfg.Poll.Kind == loadgen.PollServer {
		if d := m.FirstPollInterval(); d > 0 {
			return d
		}
	}
	if cfg.Poll.Interval > 0 {
		return cfg.Poll.Interval
	}
	return time.Second
}

func serverStats(srv *mockserver.Server) any {
	if srv == nil {
		return nil
	}
	st := srv.Stats()
	peaks := peaksOf(srv)
	defer peaksByServer.Delete(srv)
	// requests: {"tools_call": {"ok": n, "rpc_error": n, "http_error": n}, ...} for every
	// request method (always present, zeros included; "unknown", bodies the server could
	// not decode, only when there were some); rejections: {"429": n, ...} by HTTP status,
	// "other" for statuses without a slot of their own, only statuses seen.
	requests := map[string]map[string]uint64{}
	for op := range mcp.NumOps {
		switch op {
		case mcp.OpInitialized, mcp.OpTaskStatus, mcp.OpElicit, mcp.OpCancelled,
			mcp.OpSubscriptionsAcknowledged, mcp.OpDelete:
			continue // notifications, server-to-client requests, DELETE: never counted here
		case mcp.OpUnknown:
			if st.Requests.Total(op) == 0 {
				continue
			}
		}
		byOutcome := make(map[string]uint64, mockserver.NumOutcomes)
		for o := range mockserver.NumOutcomes {
			byOutcome[o.String()] = st.Requests[op][o]
		}
		requests[op.MetricName()] = byOutcome
	}
	faults := map[string]uint64{}
	st.Faults.Each(func(kind string, n uint64) {
		if n > 0 {
			faults[kind] = n
		}
	})
	rejections := map[string]uint64{}
	st.Rejections.Each(func(code int, n uint64) {
		if n == 0 {
			return
		}
		k := "other"
		if code != 0 {
			k = strconv.Itoa(code)
		}
		rejections[k] = n
	})
	return map[string]any{
		"tasks_created":      st.TasksCreated,
		"retained_tasks":     st.TasksLive,
		"expired_tasks":      st.TasksExpired,
		"orphaned_tasks":     st.OrphanedTasks,
		"max_cleanup_lag_ms": float64(st.MaxCleanupLag.Microseconds()) / 1000,
		"domain_effects":     st.Effects,
		"duplicate_effects":  st.DuplicateEffects,
		"sessions":           st.Sessions,

		// Backpressure: the executor (levels at the end and the highest sampled), creates
		// refused because the server was full, rate-limit 429s.
		"tasks_active":     st.TasksActive,
		"tasks_active_max": max(peaks.tasksActive.Load(), st.TasksActive),
		"queue_depth":      st.QueueDepth,
		"queue_depth_max":  max(peaks.queueDepth.Load(), st.QueueDepth),
		"overloaded":       st.Overloaded,
		"refusals":         st.Refusals.Total(),
		"refusals_by_cause": map[string]uint64{
			"max_tasks":            st.Refusals.MaxTasks,
			"max_tasks_per_tenant": st.Refusals.MaxTasksPerTenant,
			"executor":             st.Refusals.Executor,
		},
		"rate_limited": st.RateLimited,

		// The downstream system of record: levels at the end (their per-second samples are
		// the downstream_* gauges), rejections and failures.
		"downstream_in_flight":   st.DownstreamInFlight,
		"downstream_queue_depth": st.DownstreamQueueDepth,
		"downstream_rejections":  st.DownstreamRejections,
		"downstream_failures":    st.DownstreamFailures,
		"effects_after_cancel":   st.EffectsAfterCancel,
		"ledger": map[string]uint64{
			"operations":   st.Ledger.Operations,
			"applied":      st.Ledger.Applied,
			"failed":       st.Ledger.Failed,
			"rejected":     st.Ledger.Rejected,
			"duplicates":   st.Ledger.Duplicates,
			"after_cancel": st.Ledger.AfterCancel,
		},

		"requests":   requests,
		"rejections": rejections,

		// Idempotent creates and the faults that took effect.
		"idempotent_replays": st.IdempotentReplays,
		"idempotent_expired": st.IdempotentExpired,
		"faults":             faults,
	}
}

func duplicateEffects(srv *mockserver.Server) int64 {
	if srv == nil {
		return -1
	}
	return int64(srv.Stats().DuplicateEffects)
}

// clientFindings is the summary's "client" object: creates refused, by JSON-RPC code
// (negative keys) or HTTP status, and the cleanup_lag probes that measured nothing; nil
// when there is neither.
func clientFindings(eng *loadgen.Engine) any {
	out := map[string]any{}
	if ref := eng.Refusals(); len(ref) > 0 {
		byKey := make(map[string]int64, len(ref))
		for k, n := range ref {
			byKey[strconv.Itoa(k)] = n
		}
		out["creates_refused"] = byKey
	}
	if cp := eng.CleanupProbes(); cp != (loadgen.CleanupProbeStats{}) {
		// cleanup_lag probes that measured nothing, and why: cut by the run's end (the ttl
		// outlasts the grace period), or blind (tasks bound to the session that made them).
		out["cleanup_probes_unmeasured"] = cp
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// summarize builds the run's summary from what the engine, the recorder and the embedded
// server (nil for a real target) measured.
func summarize(sc *scenarios.Scenario, cfg *loadgen.Config, start time.Time, manifest *loadgen.Manifest,
	srv *mockserver.Server, eng *loadgen.Engine, rec *metrics.Recorder, tally *results.WindowTally, interrupted bool,
	events *metrics.Events, contract *results.Contract) *results.Summary {
	unknown, sample := eng.Unknown()
	lost, lostIDs := eng.LostAfterReconnect()
	var unknownSample any
	if sample = append(sample, eng.ResultsLost()...); len(sample) > 0 {
		unknownSample = sample // the reconciliation list: unknown outcomes, then lost results
	}
	second, afterCancel := int64(-1), int64(-1)
	if srv != nil {
		st := srv.Stats()
		second = int64(st.IdempotentReplays + st.IdempotentExpired + st.Faults.NonIdempotent)
		afterCancel = int64(st.EffectsAfterCancel)
	}
	violations := eng.Violations()
	if violations == nil {
		violations = []loadgen.ViolationEvidence{} // a sample of none is [], not null
	}
	evidence := map[string]any{"hard": map[string]any{"invalid_transitions": violations}}
	if len(lostIDs) > 0 {
		evidence["recovery"] = map[string]any{"tasks_lost_after_reconnect": lostIDs}
	}
	return results.Build(results.RunInfo{
		FaultsOn:           sc.Faults.On(),
		Faults:             events.Counts(),
		SecondCreates:      second,
		EffectsAfterCancel: afterCancel,
		Unknown:            unknown,
		UnknownSample:      unknownSample,
		LostAfterReconnect: lost,
		UnknownCreated:     eng.UnknownCreated(),
		Security:           securityInfo(eng),
		Version:            version,
		Scenario:           sc.Name,
		Seed:               sc.Seed,
		Protocol:           manifest.ProtocolVersion,
		Target:             summaryTarget(sc),
		StartedAt:          start.UTC(),
		Duration:           time.Since(start),
		Manifest:           manifest,
		Runtime:            runtimeInfo(),
		Server:             serverStats(srv),
		PollInterval:       advisedInterval(manifest, cfg),
		Interrupted:        interrupted,
		Evidence:           evidence,
		Client:             clientFindings(eng),
		DuplicateEffects:   duplicateEffects(srv),
		Thresholds:         sc.Thresholds,
		ErrorBudget:        errorBudget(sc),
		Errors:             errorKinds(eng),
		Compat:             compatInfo(sc, manifest, srv),
		Windows:            tally,
		Contract:           contract,
	}, rec.Total(), nil)
}

// errorKinds are the kinds of failed request the run met, the most frequent first, their
// messages redacted: a target may echo a token back in an error.
func errorKinds(eng *loadgen.Engine) []results.ErrorKind {
	samples := eng.ErrorSamples()
	out := make([]results.ErrorKind, 0, min(len(samples), results.MaxErrorKinds))
	for _, e := range samples[:min(len(samples), results.MaxErrorKinds)] {
		out = append(out, results.ErrorKind{Method: e.Method, Outcome: e.Outcome, Code: e.Code, Status: e.Status,
			Count: e.Count, Message: redactKnown(e.Message)})
	}
	return out
}

// applySets applies --set path=value overrides in order and returns every problem.
func applySets(sc *scenarios.Scenario, sets []string) []error {
	var errs []error
	for _, kv := range sets {
		path, value, ok := strings.Cut(kv, "=")
		if !ok {
			errs = append(errs, fmt.Errorf("--set %q: want path=value", kv))
			continue
		}
		if err := sc.Set(path, value); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
