package conform

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/results"
)

// TestCaseEras checks the one case list: every case declares an era of eraSuites, ids are
// unique across eras, and every era has cases, a final one among them.
func TestCaseEras(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range cases {
		if len(erasNamed(c.era)) != 1 {
			t.Errorf("case %s declares era %q, which eraSuites does not run", c.id, c.era)
		}
		if seen[c.id] {
			t.Errorf("case id %s appears twice", c.id)
		}
		seen[c.id] = true
	}
	for _, e := range eraSuites {
		in := casesIn(e.name)
		if len(in) == 0 || !slices.ContainsFunc(in, func(c caseDef) bool { return c.final }) {
			t.Errorf("era %s has %d cases, and no final one", e.name, len(in))
		}
	}
}

// TestRunErasThirdEra drives the one runner with a test double of a third era: an entry of
// eraSuites and the cases that declare it, nothing else. Its cases run between its open and
// its close, the final one after its cleanup; an era whose suite has not started when the
// suite is interrupted is noted, not run.
func TestRunErasThirdEra(t *testing.T) {
	const third = "2027-test"
	var log []string
	e := eraSuite{
		name:    third,
		open:    func(*suite, context.Context, *results.Contract) error { log = append(log, "open"); return nil },
		cleanup: func(*suite, context.Context) { log = append(log, "cleanup") },
		close:   func(*suite, context.Context) { log = append(log, "close") },
	}
	saved, savedCases := eraSuites, cases
	t.Cleanup(func() { eraSuites, cases = saved, savedCases })
	eraSuites = append(slices.Clone(saved), e)
	step := func(name string) func(*run) {
		return func(r *run) { log = append(log, name); r.pass("%s ran", name) }
	}
	cases = append(slices.Clone(savedCases),
		caseDef{era: third, id: "third.final", title: "judges what was seen", run: step("third.final"), final: true},
		caseDef{era: third, id: "third.create", title: "creates", run: step("third.create")})

	s := &suite{o: Options{Budget: DefaultBudget}, tasks: map[string]*known{}}
	res := &results.Contract{}
	if err := s.runEras(context.Background(), res, erasNamed(third), selection{}); err != nil {
		t.Fatal(err)
	}
	if want := "open third.create cleanup third.final close"; strings.Join(log, " ") != want {
		t.Errorf("the third era ran %q, want %q", strings.Join(log, " "), want)
	}
	if len(res.Cases) != 2 || res.Cases[0].ID != "third.create" || res.Cases[0].Verdict != results.CasePass {
		t.Errorf("verdicts %+v", res.Cases)
	}
	if got := allCaseIDs(); got[len(got)-2] != "third.create" || got[len(got)-1] != "third.final" {
		t.Errorf("the case ids end %v, want the third era's, final last", got[len(got)-2:])
	}

	// Interrupted before the third era's suite started: noted, not opened.
	log = nil
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	first := eraSuite{name: ProtocolModern, open: func(*suite, context.Context, *results.Contract) error { return nil },
		cleanup: func(*suite, context.Context) {}, close: func(*suite, context.Context) {}}
	s = &suite{o: Options{Budget: DefaultBudget}, tasks: map[string]*known{}}
	cases = slices.DeleteFunc(slices.Clone(cases), func(c caseDef) bool { return c.era == ProtocolModern })
	if err := s.runEras(ctx, &results.Contract{}, []eraSuite{first, e}, selection{}); err != nil {
		t.Fatal(err)
	}
	if len(log) != 0 || len(s.notes) != 1 || s.notes[0] != "the "+third+" suite did not start: the suite was interrupted" {
		t.Errorf("after an interruption: ran %v, notes %q", log, s.notes)
	}
}

// TestSelectionInEras checks the message for a selection whose cases all belong to an era the
// target is not tested in.
func TestSelectionInEras(t *testing.T) {
	sel := selection{only: []string{"modern."}}
	if err := sel.inEras(erasNamed(ProtocolModern)); err != nil {
		t.Errorf("modern cases, tested in 2026-07-28: %v", err)
	}
	err := sel.inEras(erasNamed(ProtocolLegacy))
	want := "--only and --skip leave no case of the " + ProtocolLegacy + " suite, the one the target is tested in: the cases selected are of the " +
		ProtocolModern + " suite (--protocol " + ProtocolModern + ", where the target serves it)"
	if err == nil || err.Error() != want {
		t.Errorf("modern cases, tested in 2025-11-25: %v\nwant %s", err, want)
	}
	if err := (selection{only: []string{"init."}}).inEras(erasNamed(ProtocolLegacy, ProtocolModern)); err != nil {
		t.Errorf("legacy cases, tested in both: %v", err)
	}
}
