package cliflags

import (
	"cmp"
	"time"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/runner"
	"github.com/tasksim/tasksim/scenarios"
)

// Run is the flags of `tasksim run` that are not the scenario's (BindRun): where and when
// the run goes (--out, --shard, --shards, --start-at), the bound on its probe, its live
// metrics endpoint (--metrics-listen) and OpenTelemetry export (--otlp-endpoint...), what it
// is judged against (--baseline, --baseline-target, --budget, --allow) and --force. The fields
// hold the values as given.
type Run struct {
	Out            string            // --out: the run's directory; "" is runner.DefaultDir
	Shard          string            // --shard I/N
	Shards         int               // --shards N, the index from runner.JobIndexEnv
	StartAt        string            // --start-at: an RFC 3339 instant
	ProbeTimeout   time.Duration     // --probe-timeout
	MetricsListen  string            // --metrics-listen: the live /metrics endpoint; "" = none
	Baseline       string            // --baseline: a saved run's directory
	BaselineTarget string            // --baseline-target: the stable side of an A/B run
	Budgets        []string          // --budget, each 'METRIC CHANGE'
	Allow          []string          // --allow: configuration fields that may differ
	Force          bool              // --force: replace the run in --out
	Telemetry      *runner.Telemetry // --otlp-endpoint, --trace-sample-ratio, --trace-max-per-second (telemetry.go)

	fs *pflag.FlagSet // says whether --shards was given
}

// BindRun defines run's own flags on fs.
func BindRun(fs *pflag.FlagSet) *Run {
	r := &Run{fs: fs}
	fs.StringVar(&r.Out, "out", "", "output `DIR` (default runs/<scenario>-<UTC time>)")
	fs.StringVar(&r.Shard, "shard", "", "run slice `I/N` of the scenario (0 <= I < N): its clients, arrivals and tenants split as in docs/ARCHITECTURE.md#shards")
	fs.IntVar(&r.Shards, "shards", 0, "run one of `N` slices, the index from "+runner.JobIndexEnv+" (a Kubernetes Indexed Job sets it); --shard I/N wins over its index, and must name the same N")
	fs.StringVar(&r.StartAt, "start-at", "", "start the load at this `RFC3339` instant (at most 24h ahead), the same in every shard; a start past by over 1s is reported")
	fs.DurationVar(&r.ProbeTimeout, "probe-timeout", runner.DefaultProbeTimeout, "bound on the probe of the target before the load (server/discover, initialize, tools/list)")
	fs.StringVar(&r.MetricsListen, "metrics-listen", "", "serve the run's live Prometheus metrics at http://`ADDR`/metrics while it goes on, e.g. 127.0.0.1:0 (port 0: a free one, printed); docs/METRICS.md#live")
	fs.StringVar(&r.Baseline, "baseline", "", "judge the run against the saved run in `DIR` as well ('tasksim compare DIR OUT'), writing compare.json and compare.html beside summary.json")
	fs.StringVar(&r.BaselineTarget, "baseline-target", "", "A/B run: drive the stable `URL` and --target (the canary) at once, the clients split between them, interleaved; writes canary/, baseline/ and the comparison into --out")
	fs.StringArrayVar(&r.Budgets, "budget", nil, "a regression budget for --baseline or --baseline-target, `'METRIC CHANGE'`, e.g. 'latency_tasks_get.p99 +20%' (repeatable; 'tasksim compare --help')")
	fs.StringSliceVar(&r.Allow, "allow", nil, "configuration `FIELDS` that may differ from --baseline's run: scenario,duration,tool,clients,protocol,shards,compare,config")
	fs.BoolVar(&r.Force, "force", false, "write into an --out DIR that already holds a run, replacing its files (without it such a DIR is refused, exit 2)")
	r.Telemetry = BindTelemetry(fs)
	return r
}

// Check refuses what is wrong in these flags alone: a probe bound that is not positive,
// two baselines, budgets with nothing to judge. Each problem is a *runner.UsageError.
func (r *Run) Check() error {
	switch {
	case r.ProbeTimeout <= 0:
		return usageErrorf("--probe-timeout must be > 0, got %v", r.ProbeTimeout)
	case r.Baseline != "" && r.BaselineTarget != "":
		return usageErrorf("--baseline and --baseline-target: give one (an A/B run is its own baseline)")
	case (len(r.Budgets) > 0 || len(r.Allow) > 0) && r.Baseline == "" && r.BaselineTarget == "":
		return usageErrorf("--budget and --allow judge a comparison: give --baseline DIR or --baseline-target URL")
	}
	return r.Telemetry.Check()
}

// Compare are the options of the comparison the run is judged by: --budget and --allow.
func (r *Run) Compare() results.CompareOptions {
	return results.CompareOptions{Budgets: r.Budgets, Allow: results.AllowFields(r.Allow)}
}

// Place is where and when sc runs, checked before anything starts: its shard
// (runner.ParseShard, the index from getenv), its common start (runner.ParseStartAt, at
// most a day after now), sc valid as that shard (runner.Validate) and, with --baseline, a
// run that can be judged against the saved one (runner.CheckBaseline). Every problem is a
// *runner.UsageError naming its flag.
func (r *Run) Place(sc *scenarios.Scenario, now time.Time, getenv func(string) string) (scenarios.Shard, time.Time, error) {
	shard, err := runner.ParseShard(r.Shard, r.Shards, r.fs.Changed("shards"), getenv)
	if err != nil {
		return shard, time.Time{}, err
	}
	startAt, err := runner.ParseStartAt(r.StartAt, now)
	if err != nil {
		return shard, startAt, err
	}
	if err := runner.Validate(sc, shard); err != nil {
		return shard, startAt, err
	}
	if r.Baseline != "" {
		err = runner.CheckBaseline(r.Baseline, r.Out, sc, shard, r.Compare())
	}
	return shard, startAt, err
}

// Options are the run's options from these flags for sc as shard, starting at startAt
// (zero: at once), started at now: the directory (--out, else runner.DefaultDir), --force,
// the probe's bound and the live metrics endpoint. The caller adds what is its own: stop, observer, notes, the
// collector's policy.
func (r *Run) Options(sc *scenarios.Scenario, shard scenarios.Shard, startAt, now time.Time) runner.Options {
	return runner.Options{Dir: cmp.Or(r.Out, runner.DefaultDir(sc, now)), Shard: shard, StartAt: startAt, Start: now,
		Overwrite: r.Force, ProbeTimeout: r.ProbeTimeout, MetricsListen: r.MetricsListen, Telemetry: *r.Telemetry}
}
