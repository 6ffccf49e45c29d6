package results

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tasksim/tasksim/scenarios"
)

// Comparable runs (docs/METRICS.md#comparable-runs): two runs are compared only when they
// drove the same load in the same way. Each field is checked on its own, and a difference
// refuses the comparison unless --allow (or the candidate's compare.allow) names it.

// The fields --allow may name.
var allowFields = []string{"scenario", "duration", "tool", "clients", "protocol", "shards", "compare", "config"}

// checkAllow is nil when name is a field --allow may name.
func checkAllow(name string) error {
	if slices.Contains(allowFields, name) {
		return nil
	}
	msg := fmt.Sprintf("unknown field %q", name)
	if c := closest(name, allowFields); len(c) > 0 {
		msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(c, ", "))
	}
	return fmt.Errorf("%s: want one of %s", msg, strings.Join(allowFields, ", "))
}

// Difference is one field in which the two runs differ.
type Difference struct {
	Field     string `json:"field"` // one of the --allow fields
	Baseline  string `json:"baseline"`
	Candidate string `json:"candidate"`
	Allowed   bool   `json:"allowed"` // named by --allow or compare.allow: compared anyway
}

func (d Difference) String() string {
	return fmt.Sprintf("%s: baseline %s, candidate %s", d.Field, d.Baseline, d.Candidate)
}

// NotComparableError is the refusal of a comparison: the differences no allowance covers.
type NotComparableError struct{ Differences []Difference }

func (e *NotComparableError) Error() string {
	var lines []string
	var fields []string
	for _, d := range e.Differences {
		lines = append(lines, "  "+d.String())
		fields = append(fields, d.Field)
	}
	return fmt.Sprintf("the runs are not comparable:\n%s\n(--allow %s compares them anyway)",
		strings.Join(lines, "\n"), strings.Join(fields, ","))
}

// differences lists the fields in which b and c differ, marked allowed when allow names
// them.
func differences(b, c *Summary, allow []string) []Difference {
	var out []Difference
	add := func(field, bv, cv string) {
		if bv != cv {
			out = append(out, Difference{Field: field, Baseline: bv, Candidate: cv, Allowed: slices.Contains(allow, field)})
		}
	}
	if b.Config == nil || c.Config == nil {
		// Without both blocks nothing below can be checked: that is a difference in itself.
		out = append(out, Difference{Field: "config", Baseline: presence(b.Config != nil, b), Candidate: presence(c.Config != nil, c),
			Allowed: slices.Contains(allow, "config")})
		add("scenario", b.Scenario, c.Scenario)
		add("protocol", b.Protocol, c.Protocol)
		return out
	}
	bc, cc := b.Config, c.Config
	scen := func(s *Summary) string { return s.Scenario + " (" + short(s.Config.ScenarioHash) + ")" }
	if b.Scenario != c.Scenario || bc.ScenarioHash != cc.ScenarioHash {
		add("scenario", scen(b), scen(c))
	}
	add("duration", strconv.FormatFloat(bc.DurationS, 'f', -1, 64)+"s", strconv.FormatFloat(cc.DurationS, 'f', -1, 64)+"s")
	add("tool", bc.Tool, cc.Tool)
	add("clients", strconv.Itoa(bc.Clients), strconv.Itoa(cc.Clients))
	era := func(s *Summary) string {
		asked := s.Config.Protocol
		if asked == "" {
			asked = "auto"
		}
		return s.Protocol + " (asked " + asked + ")"
	}
	if b.Protocol != c.Protocol || bc.Protocol != cc.Protocol {
		add("protocol", era(b), era(c))
	}
	add("shards", share(bc.Shards), share(cc.Shards))
	add("compare", compareText(bc.Compare), compareText(cc.Compare))
	return out
}

// compareText is a scenario's compare section in a difference: the candidate's section
// sets the budgets, and one that loosens them must be seen.
func compareText(c scenarios.Compare) string {
	if len(c.Budgets) == 0 && len(c.Allow) == 0 {
		return "none"
	}
	return fmt.Sprintf("budgets %q, allow %q", c.Budgets, c.Allow)
}

// presence says whether a summary has a config block.
func presence(has bool, s *Summary) string {
	if has {
		return "recorded"
	}
	return "not recorded (summary.json of tasksim " + s.TasksimVersion + ")"
}

// share is the part of the load a shard label "I/N" stands for: "1/N", or "whole".
func share(shards string) string {
	_, n, ok := strings.Cut(shards, "/")
	if !ok || n == "1" {
		return "whole"
	}
	return "1/" + n
}

// short is a hash shortened for a message.
func short(hash string) string {
	h := strings.TrimPrefix(hash, "sha256:")
	return h[:min(12, len(h))]
}

// CheckComparable checks, before a run starts, what Compare will check after it: that the
// run in dir is one (a summary.json), that a run of scenario name with config cfg will be
// comparable with it as far as the configuration says (the era the server speaks is known
// only after the probe), and that the budgets parse. So a run with --baseline is refused
// before it drives any load, not after.
func CheckComparable(dir, name string, cfg *RunConfig, opts CompareOptions) error {
	b, err := ReadSummary(dir)
	if err != nil {
		return err
	}
	for _, a := range opts.Allow {
		if err := checkAllow(a); err != nil {
			return fmt.Errorf("--allow: %w", err)
		}
	}
	if _, err := budgetsFor(opts.Budgets, cfg.Compare, 0); err != nil {
		return err
	}
	c := &Summary{Scenario: name, Protocol: b.Protocol, Config: cfg, TasksimVersion: b.TasksimVersion}
	var refused []Difference
	for _, d := range differences(b, c, slices.Concat(opts.Allow, cfg.Compare.Allow)) {
		if !d.Allowed {
			refused = append(refused, d)
		}
	}
	if len(refused) > 0 {
		return &NotComparableError{Differences: refused}
	}
	return nil
}
