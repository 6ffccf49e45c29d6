package runner

import (
	"os"
	"regexp"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/scenarios"
)

// expectedVerdicts is the verdict each shipped scenario must give on the embedded server;
// the scenario table of docs/SCENARIOS.md says the same (TestReadmeListsEveryScenario).
var expectedVerdicts = map[string]string{
	"baseline":                 results.VerdictPass,
	"smoke":                    results.VerdictPass,
	"open-ramp":                results.VerdictPass,
	"backpressure":             results.VerdictPass,
	"poll-storm":               results.VerdictPass,
	"ttl-expiry":               results.VerdictPass,
	"slow-downstream":          results.VerdictPass,
	"reconnect-storm":          results.VerdictPass,
	"cancel-storm":             results.VerdictPass,
	"input-required":           results.VerdictPass,
	"server-restart":           results.VerdictPass,
	"flaky-network":            results.VerdictPass,
	"duplicate-effects-demo":   results.VerdictFail,
	"no-tasks-peer":            results.VerdictPass,
	"tenant-isolation":         results.VerdictPass,
	"tenant-leak-demo":         results.VerdictFail,
	"canary-gate":              results.VerdictPass,
	"rollback-drill":           results.VerdictPass,
	"rollback-lost-tasks-demo": results.VerdictFail,
}

// shortMode caps a scenario's load phase and drain for the library test: long enough for
// every scenario to do what it is about, short enough for CI.
const shortMode = 12 * time.Second

// TestScenarioLibrary runs every shipped scenario in a short mode (load phase and drain at
// most 12 s each, in virtual time; a longer ramp runs whole) and asserts its expected verdict. Scenarios that need
// real sockets (the chaos proxy) run from the binary in TestChaosScenariosFromTheCommandLine.
func TestScenarioLibrary(t *testing.T) {
	for _, info := range scenarios.Builtins() {
		t.Run(info.Name, func(t *testing.T) {
			want, ok := expectedVerdicts[info.Name]
			if !ok {
				t.Fatalf("no expected verdict for %s: add it to expectedVerdicts and the table of docs/SCENARIOS.md", info.Name)
			}
			sc, err := scenarios.Load(info.Name)
			if err != nil {
				t.Fatal(err)
			}
			if sc.Faults.Network.On() {
				t.Skip("needs real sockets: run from the binary in TestChaosScenariosFromTheCommandLine")
			}
			sets := []string{"grace=" + min(time.Duration(sc.Grace), shortMode).String()}
			if sc.Workload.StagesDuration() <= shortMode { // a ramp runs whole
				sets = append(sets, "duration="+min(time.Duration(sc.Duration), shortMode).String())
			}
			synctest.Test(t, func(t *testing.T) {
				sum, _ := runVirtual(t, info.Name, want, sets...)
				if want == results.VerdictFail && sum != nil {
					// A demo fails for its own reason, a gate, whatever else fails with it.
					g := sum.Gates
					if g.Hard.Pass && g.Rollback.Pass && g.Recovery.Pass && g.Cancellation.Pass {
						t.Errorf("%s fails, but on no gate: thresholds %+v", info.Name, sum.Thresholds)
					}
				}
			})
		})
	}
}

// TestReadmeListsEveryScenario: the scenario table of docs/SCENARIOS.md, the reference the
// README points to, has a row for every shipped scenario, with the expected verdict.
func TestReadmeListsEveryScenario(t *testing.T) {
	readme, err := os.ReadFile("../docs/SCENARIOS.md")
	if err != nil {
		t.Skip("docs/SCENARIOS.md not found in the module")
	}
	for _, info := range scenarios.Builtins() {
		row := regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(info.Name) + "` \\|.*\\| \\**([a-z]+)[^|]*\\| [^|]+\\|$")
		m := row.FindSubmatch(readme)
		if m == nil {
			t.Errorf("docs/SCENARIOS.md scenario table has no row for %s", info.Name)
			continue
		}
		if got, want := string(m[1]), expectedVerdicts[info.Name]; got != want {
			t.Errorf("docs/SCENARIOS.md says %s for %s, the library test expects %s", got, info.Name, want)
		}
	}
}
