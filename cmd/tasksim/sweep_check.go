package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tasksim/tasksim/scenarios"
)

// checkSweep checks the whole grid before anything is created (so that a bad command line
// leaves no output directory behind) and records each cell's client count. Every problem is
// reported at once, as a usage error:
//
//  1. each --vary value on its own: a run flag's value must parse as that flag (--vary
//     poll_interval=1x), and a scenario path's must decode into the scenario, so that an
//     unknown path is one error naming --vary;
//  2. then, only when those are sound, each cell's `tasksim run` command line as run checks
//     it (flags, scenario, overrides, validation). A problem every cell has is reported
//     once; one that exactly the cells of one --vary value have is reported as that value's
//     ("--vary clients=0: ..."); any other by cell.
func checkSweep(f *sweepFlags, name string, r *sweepResult) error {
	if err := checkVaryValues(name, r.Vary); err != nil {
		return err
	}
	type problem struct {
		msg   string
		cells []int
	}
	var probs []*problem
	for i := range r.Cells {
		c := &r.Cells[i]
		sc, err := cellScenario(f, name, r.Vary, c)
		if err == nil {
			c.Clients = sc.Workload.PoolSize()
			continue
		}
		for _, msg := range strings.Split(err.Error(), "\n") {
			k := slices.IndexFunc(probs, func(p *problem) bool { return p.msg == msg })
			if k < 0 {
				probs = append(probs, &problem{msg: msg})
				k = len(probs) - 1
			}
			probs[k].cells = append(probs[k].cells, i)
		}
	}
	var errs []error
	for _, p := range probs {
		if len(p.cells) == len(r.Cells) {
			errs = append(errs, errors.New(p.msg))
		} else if v, ok := r.varyValueOf(p.cells); ok {
			errs = append(errs, fmt.Errorf("--vary %s: %s", v, p.msg))
		} else {
			for _, i := range p.cells {
				errs = append(errs, fmt.Errorf("cell %s: %s", r.label(&r.Cells[i]), p.msg))
			}
		}
	}
	if len(errs) > 0 {
		return usageError{errors.Join(errs...)}
	}
	return nil
}

// checkVaryValues checks each --vary value on its own: a run flag's value is parsed as that
// flag, a scenario path's value is set on the scenario (which is not validated). It returns
// every distinct problem.
func checkVaryValues(name string, vars []sweepVary) error {
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
				if _, _, err := parseRunFlags([]string{flag, val}, io.Discard); err != nil {
					add(fmt.Errorf("--vary %s=%s: %w", v.Name, val, err))
				}
				continue
			}
			if sc == nil {
				var err error
				if sc, err = scenarios.Load(name); err != nil {
					return usageError{err}
				}
			}
			if err := sc.SetFrom("--vary", v.Name, val); err != nil {
				add(err)
			}
		}
	}
	if len(errs) > 0 {
		return usageError{errors.Join(errs...)}
	}
	return nil
}

// varyValueOf returns "NAME=VALUE" when cells (increasing indexes) are exactly the cells of
// one --vary value.
func (r *sweepResult) varyValueOf(cells []int) (string, bool) {
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

// checkVariedAgainstTarget refuses a dimension that cannot change what a cell does against
// a real target, so that the sweep never recommends noise. It returns a note for stderr
// when poll_interval is varied and meaningful (the clients do not follow the advice).
//
//   - poll_interval sets the embedded server's advice and the clients' fallback interval
//     (client.poll.interval). Against a target whose advice the clients follow
//     (client.poll.policy server) every cell polls alike: a usage error that says what to
//     vary instead. With client.poll.policy fixed or backoff the clients wait their own
//     interval, which it sets: meaningful, and said so.
//   - server.* configures the embedded server only: ignored against a target.
func checkVariedAgainstTarget(f *sweepFlags, name string, r *sweepResult) (note string, err error) {
	var errs []error
	for _, v := range r.Vary {
		if !strings.HasPrefix(v.Name, "server.") && v.Name != "poll_interval" {
			continue
		}
		follows, own := false, scenarios.PollPolicy("")
		target := false
		for i := range r.Cells {
			sc, err := cellScenario(f, name, r.Vary, &r.Cells[i])
			if err != nil {
				return "", err // checkSweep reports it
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
		return "", usageError{errors.Join(errs...)}
	}
	return note, nil
}
