package sweep

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tasksim/tasksim/runner"
)

// ParseVary reads a grid's dimensions as `tasksim sweep --vary` gives them: each
// NAME=V1,V2,... with at least one value, no value twice, no name twice, and at most one of
// the names that set the client count (SetsClients), as Plan requires; none at all is a
// problem too. Every problem is a *runner.UsageError naming --vary, so that any caller
// reports it as the CLI does.
func ParseVary(flags []string) ([]Vary, error) {
	if len(flags) == 0 {
		return nil, usageErrorf("sweep needs at least one --vary NAME=V1,V2,...")
	}
	var vars []Vary
	for _, v := range flags {
		k, list, ok := strings.Cut(v, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, usageErrorf("--vary %q: want NAME=V1,V2,...", v)
		}
		if slices.ContainsFunc(vars, func(x Vary) bool { return x.Name == k }) {
			return nil, usageErrorf("--vary %s given twice", k)
		}
		if SetsClients(k) && slices.ContainsFunc(vars, func(x Vary) bool { return SetsClients(x.Name) }) {
			return nil, usageErrorf("--vary clients and --vary workload.clients set the same field: give one")
		}
		var vals []string
		for _, x := range strings.Split(list, ",") {
			x = strings.TrimSpace(x)
			if x == "" {
				continue
			}
			if slices.Contains(vals, x) {
				return nil, usageErrorf("--vary %s: value %s given twice", k, x)
			}
			vals = append(vals, x)
		}
		if len(vals) == 0 {
			return nil, usageErrorf("--vary %q: want NAME=V1,V2,...", v)
		}
		vars = append(vars, Vary{Name: k, Values: vals})
	}
	return vars, nil
}

// DefaultDir is the directory of a sweep of the scenario NAME or FILE started at start,
// when none is given: runs/sweep-<scenario>-<UTC time>, beside the runs of `tasksim run`.
func DefaultDir(scenario string, start time.Time) string {
	base := strings.TrimSuffix(filepath.Base(scenario), filepath.Ext(scenario))
	return filepath.Join("runs", "sweep-"+base+"-"+start.UTC().Format("20060102T150405Z"))
}

// usageErrorf is a *runner.UsageError with a formatted message.
func usageErrorf(format string, args ...any) error {
	return &runner.UsageError{Err: fmt.Errorf(format, args...)}
}
