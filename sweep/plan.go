package sweep

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/runner"
	"github.com/tasksim/tasksim/scenarios"
)

// Plan is a sweep before it runs: the scenario, the dimensions of its grid, the SLOs every
// recommended cell must meet, and how a cell's values make its scenario. The cells are
// every combination of the dimensions' values, the last varying fastest (Check lists them).
type Plan struct {
	// Scenario is the scenario NAME or FILE, as given; sweep.json records it.
	Scenario string
	// Vary are the dimensions, in the order given: at least one, each with at least one
	// value, no name twice, at most one that SetsClients.
	Vary []Vary
	// SLOs are threshold expressions (results.ParseThreshold) every recommended cell meets;
	// sweep.json records them as given. None: a cell qualifies on its run's verdict alone.
	SLOs []string
	// Build makes each cell's scenario from its values; required.
	Build Builder
}

// Builder makes the scenario of each cell of a plan: the seam between a plan, which is
// names and values, and what a value does to a scenario. Under `tasksim sweep` a name is
// what run's flag of that alias, or --set of that path, does with the sweep's own flags.
type Builder interface {
	// CheckValues checks each value of vars on its own, before any cell is built, so that
	// a value wrong in itself (an unknown path, a malformed duration) is one problem that
	// names it rather than one per cell. nil when every value is sound.
	CheckValues(vars []Vary) error
	// Scenario returns the validated scenario of the cell with values (by Vary name). Each
	// line of its error is one problem.
	Scenario(values map[string]string) (*scenarios.Scenario, error)
}

// grid returns every combination of the variables' values, the last varying fastest.
func grid(vars []Vary) []Cell {
	combos := [][]string{{}}
	for _, v := range vars {
		var next [][]string
		for _, c := range combos {
			for _, val := range v.Values {
				next = append(next, append(slices.Clone(c), val))
			}
		}
		combos = next
	}
	cells := make([]Cell, len(combos))
	for i, combo := range combos {
		values := make(map[string]string, len(vars))
		for j, v := range vars {
			values[v.Name] = combo[j]
		}
		cells[i] = Cell{Index: i, Cell: cellName(i), Values: values, Failed: []string{}, SLOFails: []string{}}
	}
	return cells
}

// thresholds parses the plan's SLOs.
func (p *Plan) thresholds() ([]results.Threshold, error) {
	var ths []results.Threshold
	for _, s := range p.SLOs {
		th, err := results.ParseThreshold(s)
		if err != nil {
			return nil, usageErrorf("--slo %q: %v", s, err)
		}
		ths = append(ths, th)
	}
	return ths, nil
}

// Check checks the whole grid before anything is created (so that a bad command line
// leaves no output directory behind) and returns the result the sweep fills in: its cells
// in grid order, each with its client count. Every problem is reported at once, in a
// *runner.UsageError (or the Builder's own error for a value):
//
//  1. the SLOs, and each --vary value on its own (Builder.CheckValues);
//  2. then, only when those are sound, each cell's scenario (Builder.Scenario). A problem
//     every cell has is reported once; one that exactly the cells of one --vary value have
//     is reported as that value's ("--vary clients=0: ..."); any other by cell.
func (p *Plan) Check() (*Result, error) {
	if _, err := p.thresholds(); err != nil {
		return nil, err
	}
	if err := p.Build.CheckValues(p.Vary); err != nil {
		return nil, err
	}
	r := &Result{TasksimVersion: runner.Version, Scenario: p.Scenario, Vary: p.Vary,
		SLOs: append([]string{}, p.SLOs...), Cells: grid(p.Vary)}
	type problem struct {
		msg   string
		cells []int
	}
	var probs []*problem
	for i := range r.Cells {
		c := &r.Cells[i]
		sc, err := p.Build.Scenario(c.Values)
		if err == nil {
			c.Clients = sc.Workload.PoolSize()
			continue
		}
		for _, msg := range strings.Split(err.Error(), "\n") {
			k := slices.IndexFunc(probs, func(pr *problem) bool { return pr.msg == msg })
			if k < 0 {
				probs = append(probs, &problem{msg: msg})
				k = len(probs) - 1
			}
			probs[k].cells = append(probs[k].cells, i)
		}
	}
	var errs []error
	for _, pr := range probs {
		if len(pr.cells) == len(r.Cells) {
			errs = append(errs, errors.New(pr.msg))
		} else if v, ok := r.varyValueOf(pr.cells); ok {
			errs = append(errs, fmt.Errorf("--vary %s: %s", v, pr.msg))
		} else {
			for _, i := range pr.cells {
				errs = append(errs, fmt.Errorf("cell %s: %s", r.label(&r.Cells[i]), pr.msg))
			}
		}
	}
	if len(errs) > 0 {
		return nil, &runner.UsageError{Err: errors.Join(errs...)}
	}
	return r, nil
}

// varyValueOf returns "NAME=VALUE" when cells (increasing indexes) are exactly the cells of
// one --vary value.
func (r *Result) varyValueOf(cells []int) (string, bool) {
	for _, v := range r.Vary {
		for _, val := range v.Values {
			var of []int
			for i := range r.Cells {
				if r.Cells[i].Values[v.Name] == val {
					of = append(of, i)
				}
			}
			if slices.Equal(of, cells) {
				return v.Name + "=" + val, true
			}
		}
	}
	return "", false
}

// TargetNote refuses a dimension that cannot change what a cell does against a real target,
// so that the sweep never recommends noise. It returns a note for the operator when
// poll_interval is varied and meaningful (the clients do not follow the advice).
//
//   - poll_interval sets the embedded server's advice and the clients' fallback interval
//     (client.poll.interval). Against a target whose advice the clients follow
//     (client.poll.policy server) every cell polls alike: a usage error that says what to
//     vary instead. With client.poll.policy fixed or backoff the clients wait their own
//     interval, which it sets: meaningful, and said so.
//   - server.* configures the embedded server only: ignored against a target.
func (p *Plan) TargetNote() (note string, err error) {
	var errs []error
	cells := grid(p.Vary)
	for _, v := range p.Vary {
		if !strings.HasPrefix(v.Name, "server.") && v.Name != "poll_interval" {
			continue
		}
		follows, own := false, scenarios.PollPolicy("")
		target := false
		for i := range cells {
			sc, err := p.Build.Scenario(cells[i].Values)
			if err != nil {
				return "", err // Check reports it
			}
			if sc.Target == "" {
				continue
			}
			target = true
			if sc.Client.Poll.Policy == scenarios.PollServer {
				follows = true
			} else {
				own = sc.Client.Poll.Policy
			}
		}
		switch {
		case !target:
		case strings.HasPrefix(v.Name, "server."):
			errs = append(errs, fmt.Errorf("--vary %s: server.* configures the embedded server, and the sweep runs against a target: every cell would be the same", v.Name))
		case follows:
			errs = append(errs, fmt.Errorf("--vary poll_interval against a target: the clients follow the target's advertised pollInterval (client.poll.policy server), "+
				"so --poll-interval is only their fallback and every cell would poll alike. Vary the clients' own policy instead: "+
				"--set client.poll.policy=fixed --vary client.poll.interval=%s (or client.poll.policy=backoff with --vary client.poll.interval, "+
				"client.poll.multiplier, client.poll.max_interval)", strings.Join(v.Values, ",")))
		default:
			note = fmt.Sprintf("--vary poll_interval against a target: the clients poll by client.poll.policy %s, not by the target's advice, so each cell's value is the clients' own interval (client.poll.interval)", own)
		}
	}
	if len(errs) > 0 {
		return "", &runner.UsageError{Err: errors.Join(errs...)}
	}
	return note, nil
}
