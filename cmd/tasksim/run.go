package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/runner"
	"github.com/tasksim/tasksim/scenarios"
)

// runFlags are the flags of `tasksim run`.
type runFlags struct {
	target, out, rate, tool, args string
	protocol, sourceAddrs         string
	shard, startAt                string
	baseline, baselineTarget      string
	budgets, allow                []string
	clients, shards               int
	duration, pollInterval        time.Duration
	probeTimeout                  time.Duration
	headers, sets                 []string
	seed                          uint64
	dryRun, noProgress, contract  bool
	force                         bool
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
	fs.IntVar(&f.shards, "shards", 0, "run one of `N` slices, the index from "+runner.JobIndexEnv+" (a Kubernetes Indexed Job sets it); --shard I/N wins over its index, and must name the same N")
	fs.StringVar(&f.startAt, "start-at", "", "start the load at this `RFC3339` instant (at most 24h ahead), the same in every shard; a start past by over 1s is reported")
	fs.DurationVar(&f.probeTimeout, "probe-timeout", runner.DefaultProbeTimeout, "bound on the probe of the target before the load (server/discover, initialize, tools/list)")
	fs.StringVar(&f.baseline, "baseline", "", "judge the run against the saved run in `DIR` as well ('tasksim compare DIR OUT'), writing compare.json and compare.html beside summary.json")
	fs.StringVar(&f.baselineTarget, "baseline-target", "", "A/B run: drive the stable `URL` and --target (the canary) at once, the clients split between them, interleaved; writes canary/, baseline/ and the comparison into --out")
	fs.StringArrayVar(&f.budgets, "budget", nil, "a regression budget for --baseline or --baseline-target, `'METRIC CHANGE'`, e.g. 'latency_tasks_get.p99 +20%' (repeatable; 'tasksim compare --help')")
	fs.StringSliceVar(&f.allow, "allow", nil, "configuration `FIELDS` that may differ from --baseline's run: scenario,duration,tool,clients,protocol,shards,compare,config")
	fs.BoolVar(&f.force, "force", false, "write into an --out DIR that already holds a run, replacing its files (without it such a DIR is refused, exit 2)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the plan (load, cancels, faults, thresholds) and run nothing")
	fs.BoolVar(&f.noProgress, "no-progress", false, "no progress bars (they show only when stderr is a terminal)")
	f.fs = fs
	if err := parseFlags(fs, args); err != nil {
		return nil, "", err
	}
	if f.probeTimeout <= 0 {
		return nil, "", usagef("--probe-timeout must be > 0, got %v", f.probeTimeout)
	}
	if f.baseline != "" && f.baselineTarget != "" {
		return nil, "", usagef("--baseline and --baseline-target: give one (an A/B run is its own baseline)")
	}
	if (len(f.budgets) > 0 || len(f.allow) > 0) && f.baseline == "" && f.baselineTarget == "" {
		return nil, "", usagef("--budget and --allow judge a comparison: give --baseline DIR or --baseline-target URL")
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
		case "auto", client.ProtocolLegacy, client.ProtocolModern:
			set("protocol", "protocol", strings.TrimPrefix(f.protocol, "auto"))
		default:
			errs = append(errs, fmt.Errorf("--protocol %q: want auto, %s or %s", f.protocol, client.ProtocolLegacy, client.ProtocolModern))
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
	errs = append(errs, addScenarioHeaders(sc, f.headers)...)
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

// addScenarioHeaders adds the --header values ('Key: Value') to the scenario's headers, a
// later one replacing a same-named header; it returns a problem for each value that is not a
// header, without showing the value (it may be a token).
func addScenarioHeaders(sc *scenarios.Scenario, headers []string) []error {
	var errs []error
	for _, h := range headers {
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
	return errs
}

// validate checks the scenario and its threshold expressions, every problem at once.
func validate(sc *scenarios.Scenario) error {
	return errors.Join(sc.Validate(), results.CheckThresholds(sc), results.CheckBudgets(sc))
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

func runRun(p process, args []string, stdout, stderr io.Writer) error {
	f, name, err := parseRunFlags(args, stderr)
	if err != nil {
		return err
	}
	sc, err := f.scenario(name)
	if err != nil {
		return err
	}
	shard, err := runner.ParseShard(f.shard, f.shards, f.fs.Changed("shards"), os.Getenv)
	if err != nil {
		return err
	}
	now := time.Now()
	startAt, err := runner.ParseStartAt(f.startAt, now)
	if err != nil {
		return err
	}
	if err := runner.Validate(sc, shard); err != nil {
		return err
	}
	cmpOpts := results.CompareOptions{Budgets: f.budgets, Allow: results.AllowFields(f.allow)}
	if f.baseline != "" {
		if err := runner.CheckBaseline(f.baseline, f.out, sc, shard, cmpOpts); err != nil {
			return err
		}
	}
	if f.baselineTarget != "" && !f.dryRun {
		return runAB(p, abRun{name: name, sc: sc, stable: f.baselineTarget, shard: shard, startAt: startAt, now: now, f: f, cmp: cmpOpts}, stdout, stderr)
	}
	if f.dryRun && f.baselineTarget != "" {
		if err := runner.CheckAB(sc, f.baselineTarget, shard); err != nil {
			return err
		}
		fmt.Fprintln(stdout, runner.ABPlanLine(sc, f.baselineTarget, shard))
	}
	if f.dryRun {
		plan, err := runner.NewPlan(sc, shard, startAt, now)
		if err != nil {
			return err
		}
		plan.WriteText(stdout)
		return nil
	}
	opts := runner.Options{Dir: cmp.Or(f.out, runner.DefaultDir(sc, now)), Shard: shard, StartAt: startAt, Start: now,
		GCSetBy: p.gc.SetBy, GCMaxHeadroom: p.gc.MaxHeadroom, Overwrite: f.force, ProbeTimeout: f.probeTimeout, Notes: func(line string) { fmt.Fprintln(stderr, "tasksim run: "+line) }}
	if f.baseline != "" && f.force {
		if err := results.RemoveComparison(opts.Dir); err != nil {
			return fmt.Errorf("--force: %w", err)
		}
	}
	obs := &runObserver{w: stderr, bars: !f.noProgress && isTerminal(stderr), duration: time.Duration(sc.Duration)}
	sum, err := runWithSignals(sc, opts, obs, stderr)
	if sum != nil && !errors.Is(err, runner.ErrNoRunSummary) { // the run's own summary, as text
		write := results.WriteText
		if f.baseline != "" && sum.Verdict != results.VerdictError {
			write = results.WriteTextCompared
		}
		if werr := write(stdout, sum, opts.Dir); werr != nil && err == nil {
			return werr
		}
	}
	if f.baseline == "" || sum == nil || sum.Verdict == results.VerdictError || errors.Is(err, runner.ErrNoRunSummary) {
		return err
	}
	return judgeAgainstBaseline(f.baseline, opts.Dir, cmpOpts, err, stdout)
}

// judgeAgainstBaseline compares the finished run in dir with the baseline run, prints the
// comparison after the run's summary and writes it beside it. The run's own error (a
// failed gate, an interruption) stays the command's; a comparison that does not pass
// makes a passing run exit 99.
func judgeAgainstBaseline(baseline, dir string, opts results.CompareOptions, runErr error, stdout io.Writer) error {
	c, err := results.Compare(baseline, dir, opts)
	if err != nil {
		if runErr != nil { // the run's own verdict stands; the refusal is said beside it
			fmt.Fprintf(stdout, "\nno comparison with the baseline %s: %v\n", baseline, err)
			return runErr
		}
		return usagef("--baseline %s: %w", baseline, err)
	}
	fmt.Fprintf(stdout, "\ncompared with the baseline %s:\n", baseline)
	if err := results.WriteComparisonText(stdout, c); err != nil {
		return err
	}
	if err := results.WriteComparison(dir, c); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nfiles       %s and %s in %s\n", results.CompareJSONFile, results.CompareHTMLFile, dir)
	if runErr != nil {
		return runErr
	}
	return comparisonError(c)
}

// runWithSignals runs sc as a command line does (withSignals).
func runWithSignals(sc *scenarios.Scenario, opts runner.Options, obs *runObserver, stderr io.Writer) (sum *results.Summary, err error) {
	withSignals(obs, stderr, func(ctx context.Context, stop <-chan struct{}) {
		opts.Stop, opts.Observer = stop, obs
		sum, err = runner.Run(ctx, sc, opts)
	})
	return sum, err
}

// withSignals calls run (a run, or both sides of an A/B run) as a command line does: the
// first SIGINT or SIGTERM closes stop, a graceful stop (runner.Options.Stop: the contract
// suite stops and the load never starts, or the load drains, and the files are written),
// the second cancels ctx, a stop at once, except during the contract suite, where it ends
// the process (the default action, restored): the suite's cleanup may wait on a target
// that does not answer. obs tells the run's phase.
func withSignals(obs *runObserver, stderr io.Writer, run func(ctx context.Context, stop <-chan struct{})) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := make(chan struct{})
	defer onSignals(func() func() {
		switch obs.phase.Load() {
		case int32(runner.PhaseContract):
			fmt.Fprintln(stderr, "\ntasksim run: stopping the contract suite (Ctrl-C again to stop at once); the load will not start")
			close(stop)
			return nil
		case int32(runner.PhaseWait): // the run stops before its load, and says so
		default:
			fmt.Fprintln(stderr, "\ntasksim run: stopping: draining in-flight tasks (Ctrl-C again to stop at once)")
		}
		close(stop)
		return cancel
	})()
	run(ctx, stop)
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
