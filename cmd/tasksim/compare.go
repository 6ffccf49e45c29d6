package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/runner"
)

// compareHelp is compare's help before its flags, formatted with the quantiles' sample floor and compare's files.
const compareHelp = `Usage: tasksim compare BASELINE CANDIDATE [--budget 'METRIC CHANGE']... [--allow FIELD,...] [--out DIR [--force]]
       tasksim compare ABDIR [flags]

Judges the candidate run against the baseline run: two run directories ('tasksim run
--out'), merged shard directories ('tasksim merge --out'), sweep cells, or the two sides of
an A/B run ('tasksim run --baseline-target', given as its one directory ABDIR).

For each metric (throughput, error, backpressure and task failure rates, polls per task,
poll amplification, the p50/p95/p99 of every latency from the HDR histograms, the rare
events: lost and unknown tasks, invalid transitions, leaks) it prints both figures, the
change with its 95%% interval, the budget and a verdict: a regression is a change beyond the
budget that the two runs' noise cannot explain; beyond the budget within the noise, the
comparison is inconclusive. A quantile is judged only when both runs
hold at least %d samples beyond it (p99: 1000 samples). Every gate, threshold and contract
case that passed in the baseline and fails in the candidate is a regression, whatever the
budgets, and one the candidate fails is a failure, as is a candidate whose own verdict is
fail. The manifest's drift is listed.

Default budgets (docs/METRICS.md#budgets): throughput -10%%; p50 +10%% and +5ms, p95 +15%%
and +10ms, p99 +20%% and +20ms (both must be exceeded; for the latencies that wait on polls
the floor is at least half the poll interval); requests.errors_rate and
backpressure_rate, tasks.failed_rate and tasks.expired_rate +0.5pt; polls_per_task and
poll_amplification +10%%; rare events 0. --budget and the candidate scenario's
compare.budgets replace them, metric by metric ('task_e2e.p99 +15%% +5ms', 'throughput off').

Refuses (exit 2), naming each field, runs that are not comparable: another scenario,
duration, tool, client count, era (protocol), shard share or compare section, unless --allow
(or the candidate scenario's compare.allow) names the field (scenario, duration, tool,
clients, protocol, shards, compare, config); and one directory given twice.

Writes %s and %s into --out DIR (one that holds a comparison already only with --force).

Exit codes:
  0    no regression and nothing failing; both runs whole, trusted and judged
  1    --out could not be written
  2    usage error, a directory without a run, or runs that are not comparable
  99   a regression or a failing gate or threshold (fail), or a comparison that cannot
       vouch for the candidate (inconclusive: a run interrupted, untrusted or in error)

Flags:
`

// runCompare is `tasksim compare BASELINE CANDIDATE`: results.Compare judges, this
// parses, prints and maps the verdict to the exit code.
func runCompare(args []string, stdout, _ io.Writer) error {
	fs := pflag.NewFlagSet("compare", pflag.ContinueOnError)
	budgets := fs.StringArray("budget", nil, "a budget, `'METRIC CHANGE [CHANGE]'`, e.g. 'latency_tasks_get.p99 +20%' (repeatable)")
	allow := fs.StringSlice("allow", nil, "configuration `FIELDS` that may differ: scenario,duration,tool,clients,protocol,shards,compare,config")
	out := fs.String("out", "", "write compare.json and compare.html into `DIR`")
	force := fs.Bool("force", false, "replace a comparison already in --out (without it such a DIR is refused, exit 2)")
	setHelp(fs, fmt.Sprintf(compareHelp, results.MinTail, results.CompareJSONFile, results.CompareHTMLFile))
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	base, cand, err := results.CompareDirs(fs.Args())
	if err != nil {
		return usageError{err}
	}
	if *out != "" && !*force {
		if err := results.RefuseComparisonIn(*out); err != nil {
			return usageError{err}
		}
	}
	c, err := results.CompareRuns(base, cand, results.CompareOptions{Budgets: *budgets, Allow: results.AllowFields(*allow)})
	if err != nil {
		return usageError{err}
	}
	if err := results.WriteComparisonText(stdout, c); err != nil {
		return err
	}
	if *out != "" {
		if err := results.WriteComparison(*out, c); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nwrote %s and %s in %s\n", results.CompareJSONFile, results.CompareHTMLFile, *out)
	}
	return runner.ComparisonError(c)
}
