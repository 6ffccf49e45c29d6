package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/redact"
	"github.com/tasksim/tasksim/internal/telemetry"
	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/scenarios"
)

// Version is the tasksim version a run reports: summary.json's tasksim_version, the embedded
// server's serverInfo and the clients' clientInfo.
const Version = "0.1.0"

// Options is how a scenario is run. The target, its headers, the era pinned and the contract
// suite are the scenario's (Target, Headers, Protocol, Contract): they are part of what a
// run is, and of its hash. The zero Options runs the whole scenario into
// runs/<scenario>-<UTC start>, stops at its end, shows nothing and says nothing.
type Options struct {
	// Dir is the output directory, created if needed; "" = DefaultDir.
	Dir string
	// Shard is the slice of the scenario this run takes (docs/ARCHITECTURE.md#shards); the
	// zero Shard is the whole scenario.
	Shard scenarios.Shard
	// ABSide is the side of an A/B run this run is, results.ABCanary or results.ABBaseline
	// (its shard block says so, for `tasksim merge`); "" = not an A/B run.
	ABSide string
	// StartAt is the common instant the load starts at in every shard (--start-at): the run
	// waits for it, and its clock, windows and files count from it. The zero time = none.
	StartAt time.Time
	// StartTogether, when set, is called once the contract suite (if the scenario runs it)
	// is done, before the probe, and returns the common start, which then stands for
	// StartAt: the sides of an A/B run meet there, so that a suite that takes longer against
	// one target does not start one side's load late. Options.Stop ends the wait (the run stops
	// before its load); nil = StartAt as given.
	StartTogether func(ctx context.Context) (time.Time, error)
	// Start is the run's start, the instant every figure counts from (and the default Dir's
	// name); the zero time = when Run is called. The contract suite, when the scenario runs
	// it, comes first: the figures then count from its end.
	Start time.Time

	// Stop, once closed, stops the run gracefully: the contract suite stops and the load
	// never starts, or the load stops starting tasks and drains; the files are written and
	// the summary says interrupted. Cancelling Run's context stops everything at once (the
	// files are still written). nil = no graceful stop.
	Stop <-chan struct{}
	// Observer is told of the run's phases and, once a second during the load, of its
	// figures (progress bars); nil = none.
	Observer Observer
	// Notes receives the run's remarks as they come, one line each without a newline: the
	// plan, the contract suite's cases, waiting for StartAt, an abort, why no summary was
	// written. Secrets are redacted. nil = discarded.
	Notes func(line string)
	// InProcess runs the embedded server without a socket: the clients reach its
	// http.Handler in process (client.HandlerTransport), so that a run works inside a
	// testing/synctest bubble, in virtual time. It needs the embedded server (no Target) and
	// no network faults (the chaos proxy moves bytes between sockets); false = a real
	// server on 127.0.0.1:0.
	InProcess bool
	// GCSetBy is who chose the garbage collector's settings, as summary.json's
	// runtime.gc_set_by records it ("tasksim" when the command line applied
	// internal/gcpolicy); "" = "embedding process". GCMaxHeadroom is the cap on the heap
	// GOGC lets grow beyond the live heap that the process set (gcpolicy.Policy.MaxHeadroom),
	// runtime.max_headroom_bytes; 0 = none.
	GCSetBy       string
	GCMaxHeadroom int64
	// Overwrite lets Dir hold an earlier run's files, which this run replaces (--force);
	// false = a Dir that already holds a run (RunInDir) is refused before anything runs, so
	// that a run never mixes its files with, or destroys, another's.
	Overwrite bool
	// ProbeTimeout bounds the probe of the target before the load (era detection, the
	// manifest): a target that has not answered by then ends the run (exit 1), saying so;
	// 0 = DefaultProbeTimeout.
	ProbeTimeout time.Duration
	// MetricsListen is the address of the run's live Prometheus endpoint, /metrics
	// (livemetrics.go; `--metrics-listen`), e.g. "127.0.0.1:0" (port 0 picks a free one; its
	// URL goes to Notes); "" = none.
	MetricsListen string
	// Telemetry is the run's OpenTelemetry export (telemetry.go; `--otlp-endpoint`): traces
	// of its requests and tasks, and its live figures, over OTLP/HTTP. The zero value
	// exports nothing unless the OTEL_EXPORTER_OTLP_* variables name an endpoint.
	Telemetry Telemetry
}

// DefaultProbeTimeout is the probe's limit when Options.ProbeTimeout is 0.
const DefaultProbeTimeout = 15 * time.Second

// Observer follows a run for a display. Its methods are called from the run's goroutines, one
// at a time, and must return quickly.
type Observer interface {
	// Phase says the run entered p.
	Phase(p Phase)
	// Window gives the run's figures at the end of each second of its load.
	Window(p Progress)
}

// Phase is a step of a run, in the order a run goes through those it has.
type Phase int

const (
	// PhaseContract: the contract suite runs against the target (scenario contract: true).
	PhaseContract Phase = iota + 1
	// PhaseSetup: the target is started (or reached) and probed, the chaos proxy started.
	PhaseSetup
	// PhaseWait: the run waits for Options.StartAt.
	PhaseWait
	// PhaseLoad: the load runs (then drains), Progress.Duration long.
	PhaseLoad
	// PhaseLoadDone: the load ended; the summary and files are being written.
	PhaseLoadDone
)

// Progress is a run's figures at the end of one second of its load.
type Progress struct {
	Elapsed        time.Duration // since the run's start
	Duration       time.Duration // the load phase planned (the scenario's duration)
	Created        int64         // tasks created so far
	Completed      int64         // tasks completed so far
	InFlight       int64         // tasks in flight now
	Polls          int64         // tasks/get polls sent so far
	Errors         int64         // failed requests so far
	PollsPerSecond float64       // polls sent in the last second
	Requests       int64         // requests sent so far
	RequestRate    float64       // requests sent in the last second
	// Worst is the threshold that fares worst so far (results.WindowTally.Worst); "" when
	// none has failed in a window.
	Worst string
}

// Line is p as one plain status line, for a log that is no terminal (CI, kubectl logs):
// "load 0:15/0:50  created 120  done 100  in flight 20  450 req/s  errors 0  worst: ...".
func (p Progress) Line() string {
	clock := func(d time.Duration) string {
		s := int64(d / time.Second)
		return fmt.Sprintf("%d:%02d", s/60, s%60)
	}
	line := fmt.Sprintf("load %s/%s  created %d  done %d  in flight %d  %.0f req/s  errors %d",
		clock(p.Elapsed), clock(p.Duration), p.Created, p.Completed, p.InFlight, p.RequestRate, p.Errors)
	if p.Worst != "" {
		line += "  worst: " + p.Worst
	}
	return line
}

// Run runs the scenario sc (validated: Validate) as opts says, writes its output files into
// opts.Dir and returns its summary, the one summary.json holds.
//
// The error says how the run ended, its message free of every secret the run knew: nil (a
// pass), *GateError (verdict fail), *InterruptedError (stopped early, nothing failed),
// *UsageError (the scenario or options cannot be run: nothing ran, or the target cannot run
// the tool as asked), *TargetError (the target could not be used), or any other runtime error
// (verdict error). An error that ended the run before its summary wraps ErrNoRunSummary; the
// summary returned is then the error summary written in its place (nil when even that could
// not be written, or when sc or opts were refused before anything was written).
func Run(ctx context.Context, sc *scenarios.Scenario, opts Options) (*results.Summary, error) {
	r := newRunRequest(sc, opts)
	if err := Validate(sc, opts.Shard); err != nil {
		return nil, r.secrets.Error(err)
	}
	if !opts.Overwrite {
		if f := RunInDir(r.dir); f != "" {
			return nil, &UsageError{fmt.Errorf("output directory %s already holds a run (%s): choose another --out, or --force to replace it", r.dir, f)}
		}
	}
	if opts.InProcess && (sc.Target != "" || sc.Faults.Network.On()) {
		return nil, &UsageError{errors.New("an in-process run needs the embedded server and no network faults: the target and the chaos proxy are reached through sockets")}
	}
	sum, err := r.run(ctx)
	if err != nil && !r.summarized {
		// The run stopped before its summary: a pipeline reading summary.json still gets an
		// answer, "error" and why.
		sum = r.writeErrorSummary(err)
		err = &beforeSummary{err}
	}
	return sum, r.secrets.Error(err)
}

// Validate checks that sc can be run as the slice shard: the scenario and its threshold
// expressions, every problem at once, a shard that owns at least one client, source
// addresses that can reach the target (RunConnections), and the pin file of
// expect_manifest. Every problem is a *UsageError.
func Validate(sc *scenarios.Scenario, shard scenarios.Shard) error {
	if err := CheckScenario(sc); err != nil {
		return err
	}
	if pool := sc.Workload.PoolSize(); shard.Size(pool) == 0 {
		return &UsageError{fmt.Errorf("shard %d/%d owns no client: the scenario has %d, fewer than the %d shards (fewer shards, or more clients)",
			shard.Index, shard.Count, pool, shard.Count)}
	}
	if _, err := RunConnections(sc, shard); err != nil {
		return err
	}
	if sc.ExpectManifest != "" {
		if _, err := client.ReadPin(PinPath(sc)); err != nil {
			return &UsageError{fmt.Errorf("expect_manifest: %w", err)}
		}
	}
	return nil
}

// CheckScenario checks sc on its own, as `tasksim validate` does: its fields
// (Scenario.Validate), its threshold expressions and its compare budgets, every problem at
// once, in a *UsageError.
func CheckScenario(sc *scenarios.Scenario) error {
	if err := errors.Join(sc.Validate(), results.CheckThresholds(sc), results.CheckBudgets(sc)); err != nil {
		return &UsageError{err}
	}
	return nil
}

// runRequest is one run of a scenario, from its start to its output.
type runRequest struct {
	sc      *scenarios.Scenario
	cfg     *loadgen.Config
	opts    Options
	dir     string      // output directory
	start   time.Time   // the run's start: every figure counts from it
	secrets *redact.Set // every secret the scenario holds: never in an output or error

	lateBy     time.Duration     // how late the load started after opts.StartAt
	manifest   *client.Manifest  // nil until the target was probed
	contract   *results.Contract // the contract suite's result; nil when it did not run
	summarized bool              // summary.json holds the run's summary
	conns      Connections       // how the clients reach the target
	tracer     trace.Tracer      // the telemetry's (startTelemetry); nil: untraced
	late       lateMetrics       // the live figures as the telemetry's metrics, once they exist
}

func newRunRequest(sc *scenarios.Scenario, opts Options) *runRequest {
	cfg := EngineConfig(sc)
	cfg.Shard = opts.Shard
	r := &runRequest{sc: sc, cfg: &cfg, opts: opts, dir: opts.Dir, start: opts.Start, secrets: scenarioSecrets(sc)}
	r.conns, _ = RunConnections(sc, opts.Shard) // its error is Validate's
	if r.start.IsZero() {
		r.start = time.Now()
	}
	if r.dir == "" {
		r.dir = DefaultDir(sc, r.start)
	}
	return r
}

// RunInDir names the first file of a run's measurements (timeseries.csv, histograms.hlog,
// conform.json, summary.json) that dir holds; "" = none, or no such directory. A
// summary.json alone whose verdict is "error" (a run that ended before it measured
// anything, results.ErrorSummary) is no run: replacing it loses nothing.
func RunInDir(dir string) string {
	for _, f := range []string{results.TimeseriesFile, results.HistogramLogFile, results.ContractFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return f
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, results.SummaryJSONFile))
	if err != nil {
		return ""
	}
	var s struct {
		Verdict string `json:"verdict"`
	}
	if json.Unmarshal(b, &s) == nil && s.Verdict == results.VerdictError {
		return ""
	}
	return results.SummaryJSONFile
}

// DefaultDir is the output directory of a run of sc started at start that names none:
// runs/<scenario>-<UTC start>.
func DefaultDir(sc *scenarios.Scenario, start time.Time) string {
	return filepath.Join("runs", sc.Name+"-"+start.UTC().Format("20060102T150405Z"))
}

// scenarioSecrets is the set of every secret a scenario holds.
func scenarioSecrets(sc *scenarios.Scenario) *redact.Set {
	s := &redact.Set{}
	for _, v := range sc.Headers {
		s.Note(v.Reveal())
	}
	for _, v := range sc.Server.Tokens {
		s.Note(v.Reveal())
	}
	for _, v := range sc.Security.Tenants {
		s.Note(v.Reveal())
	}
	return s
}

// note sends one line to opts.Notes, redacted.
func (r *runRequest) note(format string, args ...any) {
	if r.opts.Notes != nil {
		r.opts.Notes(r.secrets.String(fmt.Sprintf(format, args...)))
	}
}

func (r *runRequest) phase(p Phase) {
	if r.opts.Observer != nil {
		r.opts.Observer.Phase(p)
	}
}

// stopped reports whether opts.Stop is closed.
func (r *runRequest) stopped() bool {
	select {
	case <-r.opts.Stop:
		return true
	default:
		return false
	}
}

// run runs the scenario and writes its outputs. Until summarized is true, an error left
// no summary.
func (r *runRequest) run(ctx context.Context) (*results.Summary, error) {
	if err := r.beforeSetup(ctx); err != nil {
		return nil, err
	}
	r.phase(PhaseSetup)
	rec := metrics.NewRecorder(r.cfg.Shards, r.start)
	var events *metrics.Events
	if r.sc.Faults.On() {
		events = metrics.NewEvents(0)
		r.cfg.Events = events
	}
	tel, err := r.startTelemetry(ctx) // before the probe: its requests are spans too
	if err != nil {
		return nil, err
	}
	defer tel.Shutdown(ctx) // after the collector's last window: the final export has it
	target, srv, closeTarget, err := r.reach(ctx, rec, events)
	if err != nil {
		return nil, err
	}
	defer closeTarget()
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	r.rollbackPolicy(srv) // rollback.go
	live, err := r.startLive(target)
	if err != nil {
		return nil, err
	}
	if live != nil {
		r.late.set(live) // the OTLP metrics from now on
	}
	defer live.close()
	eng, err := loadgen.New(*r.cfg, target, r.manifest, rec)
	if err != nil {
		return nil, &UsageError{err}
	}
	col, err := newCollector(r.dir, r.start, rec, eng, srv, r.sc)
	if err != nil {
		return nil, err
	}
	col.observer = r.opts.Observer
	col.live = live
	r.note("%s against %s: %s", r.sc.Name, TargetName(r.sc), PlanLine(r.sc, r.cfg))
	if err := r.waitStart(ctx); err != nil {
		col.close()
		return nil, err
	}

	r.phase(PhaseLoad)
	interrupted, done := r.watchStop(ctx, eng)
	defer close(done)
	col.begin()
	disarm := r.armRollback(eng)
	runErr := eng.Run(ctx)
	disarm()
	col.stop()
	r.phase(PhaseLoadDone)
	return r.finish(runErr, func() *results.Summary {
		sum := summarize(r, srv, eng, rec, col, interrupted.Load(), events)
		sum.Aborted = col.aborted
		if sum.Shard = r.shardInfo(sum); sum.Shard != nil { // what a merge needs to judge the whole
			sum.Shard.PollIntervalMS = float64(advisedInterval(r.manifest, r.cfg)) / float64(time.Millisecond)
			sum.Shard.TasksUnknownWithID = eng.UnknownCreated()
		}
		if runErr != nil { // what was measured is kept, and judges nothing
			sum.Verdict, sum.Error = results.VerdictError, r.secrets.String(runErr.Error())
		}
		return sum
	}, eng, events, col.aborted)
}

// beforeSetup is what comes before a run's setup: the contract suite (scenario contract:
// true), after which the load's figures count from the load's own start; the meeting of an
// A/B run's sides (Options.StartTogether); and the common start of the shards
// (Options.StartAt), from which the run's clock, its windows and files count, so that every
// shard's seconds line up (the probe before it falls in the first window, as always).
func (r *runRequest) beforeSetup(ctx context.Context) error {
	if r.sc.Contract {
		if err := r.contractPhase(ctx); err != nil {
			return err
		}
		r.start = time.Now()
	}
	if r.opts.StartTogether != nil {
		if err := r.meet(ctx); err != nil {
			return err
		}
	}
	if r.opts.StartAt.After(r.start) {
		r.start = r.opts.StartAt
	}
	return nil
}

// startLive starts the run's live figures when something reads them: the /metrics of
// Options.MetricsListen (its URL noted), the OTLP export of Options.OTLPEndpoint; nil
// without either.
func (r *runRequest) startLive(target *client.Target) (*liveMetrics, error) {
	if r.opts.MetricsListen == "" && !telemetry.Configured(r.opts.Telemetry.Endpoint) {
		return nil, nil
	}
	m := newLiveMetrics(r.opts.Shard.Index, r.sc.Tool, r.manifest.ProtocolVersion,
		target.DialectInUse(), advisedInterval(r.manifest, r.cfg))
	m.start = r.start
	if r.opts.MetricsListen == "" {
		return m, nil
	}
	if err := m.listen(r.opts.MetricsListen); err != nil {
		return nil, err
	}
	r.note("metrics: %s", m.url)
	return m, nil
}

// watchStop has opts.Stop (or the end of ctx) stop the load: no task starts, those in
// flight drain; ctx ending also cuts them (eng.Run watches it). interrupted says whether
// either came; closing done ends the watch.
func (r *runRequest) watchStop(ctx context.Context, eng *loadgen.Engine) (interrupted *atomic.Bool, done chan struct{}) {
	interrupted, done = &atomic.Bool{}, make(chan struct{})
	go func() {
		select {
		case <-r.opts.Stop:
		case <-ctx.Done():
		case <-done:
			return
		}
		interrupted.Store(true)
		eng.Stop()
	}()
	return interrupted, done
}

// finish writes the run's files from build's summary (events.csv first, then summary.json,
// summary.csv and report.html: a failure among them leaves the error summary in their
// place), scans them and the text summary for secrets (a find rebuilds the summary, whose
// hard gate then fails, and writes it all again), and returns the summary with the run's
// error or the error of its exit code.
func (r *runRequest) finish(runErr error, build func() *results.Summary, eng *loadgen.Engine, events *metrics.Events, aborted string) (*results.Summary, error) {
	sum := build()
	if aborted != "" {
		r.note("aborted: %s", aborted)
	}
	if events != nil { // first: the report shows them
		kept, dropped := events.Kept()
		if err := results.WriteEvents(r.dir, r.start, kept, dropped); err != nil {
			return nil, fmt.Errorf("writing results: %w", err)
		}
	}
	out, text, err := r.render(sum)
	if err != nil {
		return nil, err // not summarized: the error summary replaces what was written
	}
	if scanOutputs(eng, r.dir, text, out) > 0 {
		// A planted secret or a token reached tasksim's own output: the hard gate fails, and
		// the summary says so (where, never the secret). Nothing was written yet: the files
		// are written once, so that no reader ever sees the first pass's summary.
		sum = build()
		if out, _, err = r.render(sum); err != nil {
			return nil, err
		}
	}
	if err := out.Write(r.dir); err != nil {
		return nil, fmt.Errorf("writing results: %w", err)
	}
	r.summarized = true
	if runErr != nil {
		return sum, runErr
	}
	switch sum.ExitCode() {
	case results.ExitGateFailed:
		return sum, &GateError{}
	case results.ExitInterrupted:
		return sum, &InterruptedError{}
	}
	return sum, nil
}

// render renders summary.json, summary.csv and report.html of sum in memory, and its text
// summary (results.WriteText), which the caller prints: what the secret scan reads before
// anything is written.
func (r *runRequest) render(sum *results.Summary) (*results.Rendered, []byte, error) {
	out, err := results.RenderRun(r.dir, sum)
	if err != nil {
		return nil, nil, fmt.Errorf("writing results: %w", err)
	}
	var text bytes.Buffer
	if err := results.WriteText(&text, sum, r.dir); err != nil {
		return nil, nil, err
	}
	return out, text.Bytes(), nil
}

// writeErrorSummary writes the summary of a run that err stopped before it could be
// summarized: verdict "error" and the reason, every secret redacted, and returns it. A
// failure to write it is noted, and the result is nil; err stays the run's error.
func (r *runRequest) writeErrorSummary(err error) *results.Summary {
	sc := r.sc
	info := results.RunInfo{
		Version: Version, Scenario: sc.Name, Seed: sc.Seed, Target: summaryTarget(sc), Config: results.NewRunConfig(sc, r.opts.Shard),
		StartedAt: r.start.UTC(), Duration: time.Since(r.start), Runtime: r.runtimeInfo(),
		Thresholds: sc.Thresholds, ErrorBudget: errorBudget(sc), Error: r.secrets.String(err.Error()),
	}
	if r.manifest != nil {
		info.Manifest, info.Protocol = r.manifest.Snapshot(), r.manifest.ProtocolVersion
	}
	sum := results.ErrorSummary(info)
	sum.Shard = r.shardInfo(sum)
	if werr := results.WriteSummary(r.dir, sum); werr != nil {
		r.note("no %s written: %s", results.SummaryJSONFile, werr)
		return nil
	}
	files := results.SummaryJSONFile
	if werr := results.WriteReport(r.dir); werr == nil { // the same verdict, for a reader of the page
		files += " and " + results.ReportFile
	}
	r.note("the run failed: %s in %s say \"verdict\": \"error\", with the reason below", files, filepath.Clean(r.dir))
	return sum
}

// errorBudget is the scenario's error budget, in percent, as results.RunInfo takes it.
func errorBudget(sc *scenarios.Scenario) *float64 {
	b := float64(sc.ErrorBudget)
	return &b
}
