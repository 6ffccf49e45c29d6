package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/runner"
)

// runCompare is `tasksim compare BASELINE CANDIDATE`: results.Compare judges, this
// parses, prints and maps the verdict to the exit code.
func runCompare(args []string, stdout, _ io.Writer) error {
	fs := pflag.NewFlagSet("compare", pflag.ContinueOnError)
	budgets := fs.StringArray("budget", nil, "a budget, `'METRIC CHANGE [CHANGE]'`, e.g. 'latency_tasks_get.p99 +20%' (repeatable)")
	allow := fs.StringSlice("allow", nil, "configuration `FIELDS` that may differ: scenario,duration,tool,clients,protocol,shards,compare,config")
	out := fs.String("out", "", "write compare.json and compare.html into `DIR`")
	force := fs.Bool("force", false, "replace a comparison already in --out (without it such a DIR is refused, exit 2)")
	setHelp(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	base, cand, err := results.CompareDirs(fs.Args())
	if err != nil {
		return usageError(err)
	}
	if *out != "" && !*force {
		if err := results.RefuseComparisonIn(*out); err != nil {
			return usageError(err)
		}
	}
	c, err := results.CompareRuns(base, cand, results.CompareOptions{Budgets: *budgets, Allow: results.AllowFields(*allow)})
	if err != nil {
		return usageError(err)
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
