package sweep

import (
	"errors"
	"fmt"
	"slices"

	"github.com/tasksim/tasksim/internal/cliflags"
	"github.com/tasksim/tasksim/runner"
	"github.com/tasksim/tasksim/scenarios"
)

// varyAliases map the short names of --vary onto `tasksim run` flags (cliflags.Load); any
// other name is a scenario path, set as --set sets it.
var varyAliases = map[string]string{
	"poll_interval": "--poll-interval", // advertised by the embedded server and the clients' fallback (Plan.TargetNote)
	"clients":       "--clients",
	"rate":          "--rate",
	"duration":      "--duration",
	"protocol":      "--protocol", // the era, auto among the values
}

// RunFlags is the Builder of `tasksim sweep`: a cell is exactly the `tasksim run` of the
// scenario Name with the flags Args every cell shares, then the cell's values as run flags
// (CellArgs), so that its scenario is the one that run would make (cliflags.Load) and a
// problem names the flag as run would.
type RunFlags struct {
	Name string   // the scenario NAME or FILE
	Args []string // run's load flags every cell is given first, e.g. --target URL, --set path=value
	Vary []Vary   // the grid's dimensions, in the order their flags follow Args
}

var _ Builder = RunFlags{}

// CellArgs are the run flags of the cell with values: Args, then for each dimension its
// alias's flag (varyAliases) or --set NAME=VALUE.
func (b RunFlags) CellArgs(values map[string]string) []string {
	args := slices.Clone(b.Args)
	for _, v := range b.Vary {
		if flag, ok := varyAliases[v.Name]; ok {
			args = append(args, flag, values[v.Name])
		} else {
			args = append(args, "--set", v.Name+"="+values[v.Name])
		}
	}
	return args
}

// Scenario is the validated scenario of the cell with values: Name with CellArgs applied
// as run applies its flags. Every problem is a *runner.UsageError.
func (b RunFlags) Scenario(values map[string]string) (*scenarios.Scenario, error) {
	l, err := cliflags.ParseLoad(b.CellArgs(values))
	if err != nil {
		return nil, err
	}
	return l.Scenario(b.Name)
}

// CheckValues checks each value of vars on its own: an alias's value is parsed as its run
// flag, a scenario path's value is set on the scenario (not validated). It returns every
// distinct problem in a *runner.UsageError.
func (b RunFlags) CheckValues(vars []Vary) error {
	var sc *scenarios.Scenario
	var errs []error
	add := func(err error) {
		if !slices.ContainsFunc(errs, func(e error) bool { return e.Error() == err.Error() }) {
			errs = append(errs, err)
		}
	}
	for _, v := range vars {
		for _, val := range v.Values {
			if flag, alias := varyAliases[v.Name]; alias {
				if _, err := cliflags.ParseLoad([]string{flag, val}); err != nil {
					add(fmt.Errorf("--vary %s=%s: %w", v.Name, val, err))
				}
				continue
			}
			if sc == nil {
				var err error
				if sc, err = scenarios.Load(b.Name); err != nil {
					return &runner.UsageError{Err: err}
				}
			}
			if err := sc.SetFrom("--vary", v.Name, val); err != nil {
				add(err)
			}
		}
	}
	if len(errs) > 0 {
		return &runner.UsageError{Err: errors.Join(errs...)}
	}
	return nil
}
