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
