package conform

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/tasksim/tasksim/results"
)

// An eraSuite is one protocol era's part of the suite: how the suite reaches the target in
// that era, and how it cleans up and lets go after the era's cases. The one runner (runEra)
// runs every era the same way, over the one case list (cases.go), each case in the era it
// declares: a new era is an entry of eraSuites and the cases that declare it.
type eraSuite struct {
	// name is the Options.Protocol value that selects the era, and what a caseDef declares.
	name string
	// open reaches the target in the era (initialize, or server/discover), lists its tools
	// and plans the task cases. Its error is only that the target could not be reached or
	// refused the era's first request, or an option that cannot be used against the target.
	open func(s *suite, ctx context.Context, res *results.Contract) error
	// cleanup brings the era's tasks the suite created and did not see end to an end, before
	// the final cases judge everything seen.
	cleanup func(s *suite, ctx context.Context)
	// close lets go of what open opened (sessions), after the final cases.
	close func(s *suite, ctx context.Context)
}

// eraSuites are the eras in the order their suites run when a target is tested in several.
var eraSuites = []eraSuite{
	{name: ProtocolLegacy, open: (*suite).openLegacy, cleanup: (*suite).cleanup, close: (*suite).closeLegacy},
	{name: ProtocolModern, open: (*suite).openModern, cleanup: (*suite).cleanupModern, close: func(*suite, context.Context) {}},
}

// runEra runs the cases of era e into res: it opens the target in e, runs the cases that are
// not final, cleans up, runs the final ones (which judge everything seen) and closes.
func (s *suite) runEra(ctx context.Context, res *results.Contract, e eraSuite, sel selection) error {
	if err := e.open(s, ctx, res); err != nil {
		return err
	}
	for _, c := range casesIn(e.name) {
		if !c.final {
			s.runCase(ctx, res, c, sel)
		}
	}
	e.cleanup(s, ctx)
	for _, c := range casesIn(e.name) {
		if c.final {
			s.runCase(ctx, res, c, sel)
		}
	}
	e.close(s, ctx)
	return nil
}

// runEras runs the suite of each era in tested, in order, into res. An era whose suite has
// not started when ctx ends does not start: what ran is the result, and a note says so.
func (s *suite) runEras(ctx context.Context, res *results.Contract, tested []eraSuite, sel selection) error {
	for i, e := range tested {
		if i > 0 && ctx.Err() != nil {
			s.notes = append(s.notes, "the "+e.name+" suite did not start: the suite was interrupted")
			continue
		}
		if err := s.runEra(ctx, res, e, sel); err != nil {
			return err
		}
	}
	return nil
}

// casesIn are the cases of era, in the order of the case list.
func casesIn(era string) []caseDef {
	var in []caseDef
	for _, c := range cases {
		if c.era == era {
			in = append(in, c)
		}
	}
	return in
}

// erasNamed are the eras of eraSuites whose names are in names, in eraSuites' order.
func erasNamed(names ...string) []eraSuite {
	var out []eraSuite
	for _, e := range eraSuites {
		if slices.Contains(names, e.name) {
			out = append(out, e)
		}
	}
	return out
}

// inEras reports a selection that leaves no case in the suites of tested: the cases it
// selects all belong to eras the target is not tested in.
func (sel selection) inEras(tested []eraSuite) error {
	var names []string
	for _, e := range tested {
		if slices.ContainsFunc(casesIn(e.name), func(c caseDef) bool { return sel.wants(c.id) }) {
			return nil
		}
		names = append(names, e.name)
	}
	var other []string
	for _, e := range eraSuites {
		if !slices.Contains(names, e.name) && slices.ContainsFunc(casesIn(e.name), func(c caseDef) bool { return sel.wants(c.id) }) {
			other = append(other, e.name)
		}
	}
	them := strings.Join(other, " and ")
	return fmt.Errorf("--only and --skip leave no case of the %s suite, the one the target is tested in: the cases selected are of the %s suite (--protocol %s, where the target serves it)",
		strings.Join(names, " and "), them, strings.Join(other, " or --protocol "))
}
