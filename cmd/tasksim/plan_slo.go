package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/runner"
	"github.com/tasksim/tasksim/scenarios"
)

// pollText is the interval the clients will actually wait between polls, and where it comes
// from: against a target whose advice they follow it is not known before the run, and
// --poll-interval (client.poll.interval) is only their fallback.
func pollText(sc *scenarios.Scenario) string {
	p := sc.Client.Poll
	switch p.Policy {
	case scenarios.PollFixed:
		return fmt.Sprintf("clients poll every %v (client.poll.policy fixed: the server's advice is ignored)", p.Interval)
	case scenarios.PollBackoff:
		return fmt.Sprintf("clients poll after %v, then x%g up to %v (client.poll.policy backoff: the server's advice is ignored)",
			p.Interval, p.Multiplier, p.MaxInterval)
	}
	if sc.Target == "" && !sc.Server.KnownBadOn(scenarios.KnownBadNoPollInterval) {
		if in := runner.SLOInterval(sc, 0, false); in.Known {
			return fmt.Sprintf("clients follow the advertised pollInterval: %v (%s)", in.P, in.From)
		}
		return fmt.Sprintf("clients follow the embedded server's advertised pollInterval (server.poll_policy %s: it varies); %v if it advertises none",
			sc.Server.PollPolicy.Kind, p.Interval)
	}
	return fmt.Sprintf("clients follow the target's advertised pollInterval (not known before the run); --poll-interval %v is only the fallback when it advertises none",
		p.Interval)
}

// printSLOs prints the default SLOs the run will be judged by after its thresholds, each
// resolved where the interval is known, else with its formula "from the advertised
// interval", and those the scenario switched off or superseded.
func printSLOs(w io.Writer, sc *scenarios.Scenario) {
	in := runner.SLOInterval(sc, 0, false)
	fmt.Fprintln(w, "default SLOs relative to the advertised pollInterval P (docs/METRICS.md#default-slos; the")
	fmt.Fprintln(w, "             scenario's slo section overrides or switches off each)")
	for _, s := range results.DefaultSLOs(sc.SLO, in, sc.Thresholds) {
		var line string
		switch {
		case s.Skip != "":
			line = fmt.Sprintf("%-14s not judged: %s", s.Key, s.Skip)
		case s.Th.Expr == "":
			line = fmt.Sprintf("%-14s %s, %s", s.Key, s.Formula, s.Note)
		case s.Note != "" && !strings.HasPrefix(s.Formula, "set by"): // a formula, resolved
			line = fmt.Sprintf("%-14s %s  (%s; %s)", s.Key, s.Th.Expr, s.Formula, s.Note)
		default:
			line = fmt.Sprintf("%-14s %s", s.Key, s.Th.Expr)
			if s.Note != "" {
				line += "  (" + s.Note + ")"
			}
		}
		fmt.Fprintf(w, "             %s\n", line)
	}
}
