package sweep

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/runner"
)

// Ranking a sweep is a pure function of its cells (rank), so each rule below is tested
// on cells made by hand:
//
//	qualifies    the cell's run ended whole and passed (exit code 0, verdict pass: every gate,
//	             every threshold of the scenario and its default error budget), the cell
//	             met every --slo, and the server pushed back no create (429, 503 with
//	             Retry-After, a capacity refusal): backpressure is not an error, so it fails
//	             no verdict, but a server that turns clients away does not carry them
//	recommended  for each client count (one count when clients are not varied): the
//	             qualifying cell with the lowest request rate, ties to the earlier cell; the
//	             next one is the runner-up. With --vary poll_interval this is the interval
//	             that costs the server least at that count while meeting every SLO.
//	noise        a recommendation never rests on noise: with n_i requests over d_i seconds,
//	             a cell's rate r_i = n_i/d_i has the noise s_i = sqrt(n_i)/d_i (one standard
//	             deviation of a count), and the cheapest cell is recommended only when
//	             r_runner-up - r_best > 2*sqrt(s_best^2 + s_runner-up^2) (about 95%
//	             confidence). Otherwise that count has no recommendation: "cells
//	             indistinguishable"; its qualifying cells within the noise of the cheapest
//	             are marked indistinguishable, and the count still carried its clients.
//	capacity     with --vary clients: going up the counts tried, the largest count below the
//	             first count that has no qualifying cell. Counts that qualify above that
//	             failure do not raise it (a fleet growing to them passes through the failing
//	             count); they are reported as passed_above, and the capacity as not contiguous.
//	             No capacity when the smallest count has no qualifying cell.
//	interrupted  a sweep a signal stopped recommends nothing and reports no capacity
//	exit code    130 interrupted; else 0 when there is a capacity (--vary clients) or a
//	             recommendation or indistinguishable cells (clients not varied: any of
//	             them will do); else 99 when a cell produced a
//	             result; else 1 (no cell produced one: runtime errors only)

// qualifies reports whether c may be recommended.
func qualifies(c *Cell) bool {
	return c.Figures != nil && c.ExitCode == exitOK && c.Verdict == results.VerdictPass &&
		!c.Interrupted && len(c.SLOFails) == 0 && c.Figures.CreatesPushedBack == 0
}

// countGroup is the cells of one client count, in grid order.
type countGroup struct {
	label   string // "clients=500"; "" when clients are not varied
	clients int
	cells   []*Cell
}

// groups splits the cells by the value of the clients dimension, in increasing client
// count (ties in the order of the values); a single group when clients are not varied.
func (r *Result) groups() []*countGroup {
	ci := r.clientsVar()
	if ci < 0 {
		g := &countGroup{}
		for i := range r.Cells {
			g.cells = append(g.cells, &r.Cells[i])
		}
		if len(g.cells) > 0 {
			g.clients = g.cells[0].Clients
		}
		return []*countGroup{g}
	}
	v := r.Vary[ci]
	var gs []*countGroup
	for _, val := range v.Values {
		g := &countGroup{label: v.Name + "=" + val}
		for i := range r.Cells {
			if c := &r.Cells[i]; c.Values[v.Name] == val {
				g.cells = append(g.cells, c)
			}
		}
		if len(g.cells) == 0 {
			continue
		}
		g.clients = g.cells[0].Clients
		gs = append(gs, g)
	}
	slices.SortStableFunc(gs, func(a, b *countGroup) int { return cmp.Compare(a.clients, b.clients) })
	return gs
}

// pick returns the group's cell in role, nil if none.
func (g *countGroup) pick(role string) *Cell {
	for _, c := range g.cells {
		if c.Role == role {
			return c
		}
	}
	return nil
}

// carrier is the cell that shows the group's count was carried: its recommended cell, else
// its cheapest indistinguishable one; nil when no cell qualified.
func (g *countGroup) carrier() *Cell {
	if c := g.pick(RoleRecommended); c != nil {
		return c
	}
	return g.pick(RoleIndistinguishable)
}

// distinguishable reports whether b's request rate is above a's by more than the noise of
// the two runs: b.rate - a.rate > 2*sqrt(a.noise^2 + b.noise^2) (the noise rule above).
// Without a noise for either (a sweep.json written before it) the cheaper, else the earlier,
// cell wins, as it always did.
func distinguishable(a, b *Cell) bool {
	fa, fb := a.Figures, b.Figures
	if fa.RequestRateNoise == 0 && fb.RequestRateNoise == 0 {
		return true
	}
	return fb.RequestRate-fa.RequestRate > 2*math.Hypot(fa.RequestRateNoise, fb.RequestRateNoise)
}

// tie marks the qualifying cells of g (ok, cheapest first) that are within the noise of the
// cheapest as indistinguishable, each saying so, and returns the group's line: "clients=500:
// cell-00, cell-01 and cell-02 at 207.84..207.92 req/s, within the noise of the runs (±7.4
// req/s)".
func tie(g *countGroup, ok []*Cell) string {
	tied := []*Cell{ok[0]}
	for _, c := range ok[1:] {
		if !distinguishable(ok[0], c) {
			tied = append(tied, c)
		}
	}
	names := make([]string, len(tied))
	for i, c := range tied {
		names[i] = c.Cell
	}
	last := tied[len(tied)-1]
	bound := 2 * math.Hypot(ok[0].Figures.RequestRateNoise, last.Figures.RequestRateNoise)
	line := fmt.Sprintf("%s at %s..%s req/s, within the noise of the runs (±%s req/s at 2 sigma from their request counts)",
		strings.Join(names, ", "), num(round3(ok[0].Figures.RequestRate)), num(round3(last.Figures.RequestRate)), num(round3(bound)))
	for _, c := range tied {
		c.Role = RoleIndistinguishable
		c.Why = "indistinguishable: " + line
	}
	if g.label != "" {
		line = g.label + ": " + line
	}
	return line
}

// whyNone says why the group has no recommendation: its cell's reason when it has one cell.
func (g *countGroup) whyNone() string {
	if len(g.cells) == 1 {
		return g.cells[0].Why
	}
	return fmt.Sprintf("none of its %d cells passed and met every SLO", len(g.cells))
}

// rank fills in the answer of r from its cells: each cell's Qualifies, Role and Why,
// Recommended, Capacity, the reasons when there are none, and ExitCode.
func rank(r *Result) {
	r.Recommended, r.Capacity, r.NoRecommendation, r.NoCapacity = []Pick{}, nil, "", ""
	r.Indistinguishable = nil
	groups := r.groups()
	for _, g := range groups {
		var ok []*Cell
		for _, c := range g.cells {
			c.Qualifies = qualifies(c)
			c.Role, c.Why = RoleLost, ""
			if c.Qualifies && !r.Interrupted {
				ok = append(ok, c)
			}
		}
		slices.SortStableFunc(ok, func(a, b *Cell) int {
			return cmp.Compare(a.Figures.RequestRate, b.Figures.RequestRate)
		})
		var best *Cell
		switch {
		case len(ok) > 1 && !distinguishable(ok[0], ok[1]):
			r.Indistinguishable = append(r.Indistinguishable, tie(g, ok))
		case len(ok) > 0:
			best = ok[0]
			best.Role = RoleRecommended
			p := r.pickOf(best)
			if len(ok) > 1 {
				ok[1].Role = RoleRunnerUp
				p.RunnerUp = ok[1].Cell
			}
			r.Recommended = append(r.Recommended, p)
		}
		for _, c := range g.cells {
			if c != best && c.Role != RoleIndistinguishable {
				c.Why = whyNot(c, best, r.Interrupted)
			}
		}
	}
	switch {
	case r.Interrupted:
		r.NoRecommendation = "the sweep was interrupted in " + r.InterruptedIn + ": a partial sweep recommends nothing"
	case len(r.Recommended) > 0:
	case len(r.Indistinguishable) > 0:
		r.NoRecommendation = "no recommendation: cells indistinguishable (" + strings.Join(r.Indistinguishable, "; ") + ")"
	case slices.ContainsFunc(r.Cells, func(c Cell) bool { return c.Figures != nil }):
		r.NoRecommendation = "no cell passed and met every SLO"
	default:
		r.NoRecommendation = "no cell produced a result"
	}
	if r.clientsVar() >= 0 {
		r.rankCapacity(groups)
	}
	r.ExitCode = r.exitCode()
}

// pickOf is c as a recommendation.
func (r *Result) pickOf(c *Cell) Pick {
	p := Pick{Clients: c.Clients, PollInterval: c.Values["poll_interval"], Cell: c.Cell,
		Values: c.Values, RequestRate: c.Figures.RequestRate}
	if !c.Trustworthy {
		p.Warning = c.TrustNote
	}
	return p
}

// rankCapacity sets Capacity, or NoCapacity, from the groups ranked in increasing count.
func (r *Result) rankCapacity(groups []*countGroup) {
	if r.Interrupted {
		r.NoCapacity = "the sweep was interrupted in " + r.InterruptedIn + ": a partial sweep reports no capacity"
		return
	}
	if len(groups) == 0 {
		r.NoCapacity = "no cell was in the grid"
		return
	}
	first := slices.IndexFunc(groups, func(g *countGroup) bool { return g.carrier() == nil })
	above := []int{}
	if first >= 0 {
		for _, g := range groups[first+1:] {
			if g.carrier() != nil {
				above = append(above, g.clients)
			}
		}
	}
	if first == 0 {
		r.NoCapacity = groups[0].label + ", the smallest count tried, failed: " + groups[0].whyNone()
		if len(above) > 0 {
			r.NoCapacity += " (" + countList(r.Vary[r.clientsVar()].Name, above) + " passed above it: the passing counts are not contiguous)"
		}
		return
	}
	last := groups[len(groups)-1]
	if first > 0 {
		last = groups[first-1]
	}
	best := last.carrier()
	p := r.pickOf(best)
	r.Capacity = &Capacity{Clients: last.clients, Cell: best.Cell, PollInterval: p.PollInterval,
		Values: best.Values, Contiguous: len(above) == 0, PassedAbove: above, Warning: p.Warning}
	if first > 0 {
		r.Capacity.LimitFound = true
		r.Capacity.FirstFailure = &Failure{Clients: groups[first].clients, Why: groups[first].whyNone()}
	}
}

// countList is "clients=500, clients=1000".
func countList(name string, counts []int) string {
	s := make([]string, len(counts))
	for i, n := range counts {
		s[i] = name + "=" + strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// exitCode is the sweep's exit code, as the comment at the top of this file says.
func (r *Result) exitCode() int {
	switch {
	case r.Interrupted:
		return exitSignal
	case r.clientsVar() >= 0 && r.Capacity != nil, r.clientsVar() < 0 && len(r.Recommended)+len(r.Indistinguishable) > 0:
		return exitOK
	case slices.ContainsFunc(r.Cells, func(c Cell) bool { return c.Figures != nil }):
		return exitGate
	}
	return exitRuntime
}

// Err is the ranked result as a command's error, by its ExitCode: nil when a cell is
// recommended (or a capacity found), a *runner.GateError when cells ran and none
// qualifies, a *runner.InterruptedError for a partial sweep (never a pass), and a plain
// error when no cell produced a result.
func (r *Result) Err() error {
	switch r.ExitCode {
	case exitSignal:
		return &runner.InterruptedError{What: "the sweep stopped in " + r.InterruptedIn +
			": the files hold the cells run so far, that one included, and recommend nothing"}
	case exitGate:
		return &runner.GateError{Why: "no cell qualifies (see why each cell lost, above)"}
	case exitRuntime:
		return errors.New("no cell produced a result")
	}
	return nil
}

// whyNot says why c is not the recommendation best of its client count (best nil: there is
// none); interrupted is the sweep's.
func whyNot(c, best *Cell, interrupted bool) string {
	switch {
	case c.Figures == nil:
		return "no result: " + c.Error
	case c.Interrupted:
		return "interrupted before its end"
	case !c.Qualifies:
		var why []string
		if len(c.SLOFails) > 0 {
			why = append(why, "misses "+strings.Join(c.SLOFails, ", "))
		}
		if n := c.Figures.CreatesPushedBack; n > 0 {
			why = append(why, fmt.Sprintf("the server pushed back %d creates: it did not carry every client", n))
		}
		if c.ExitCode != exitOK || c.Verdict != results.VerdictPass {
			w := "a gate or threshold of the scenario failed (verdict " + c.Verdict
			if len(c.Failed) > 0 {
				w += ": " + strings.Join(c.Failed, ", ")
			}
			why = append(why, w+")")
		}
		return strings.Join(why, "; ")
	case interrupted:
		return "passed and met every SLO, but the sweep was interrupted"
	case best != nil:
		why := fmt.Sprintf("%s req/s, above the recommended %s req/s", num(round3(c.Figures.RequestRate)), num(round3(best.Figures.RequestRate)))
		if !c.Trustworthy {
			why += " (and not trustworthy: " + c.TrustNote + ")"
		}
		return why
	}
	return "not recommended"
}
