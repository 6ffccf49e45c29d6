package main

// The official MCP conformance suite (@modelcontextprotocol/conformance, pinned by
// internal/peers/testdata/conformance/package-lock.json) against `tasksim serve`: its ten
// tasks-* server scenarios, which need the fixture tools serve lists by default
// (mockserver/fixtures.go). It skips, saying how to install the suite and Node.js 22, unless
// TASKSIM_REQUIRE_CONFORMANCE=1 (.ci/run) makes a missing suite a failure.

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/peers"
)

// conformanceChecks is how many checks the ten tasks-* scenarios of the pinned suite score
// (SUCCESS or FAILURE) against a server that has every fixture; tasks-status-notifications
// reports one SKIPPED check, which the suite does not score. Without the fixtures two checks
// are never reached, and the suite scores 42.
const conformanceChecks = 44

// TestOfficialConformanceTasks: every check of the ten tasks-* scenarios passes against
// `tasksim serve`, in its default --protocols both and in --protocols modern (the suite
// speaks 2026-07-28 with the Tasks extension). A failure names each failing check.
func TestOfficialConformanceTasks(t *testing.T) {
	suite := peers.NewConformance(t)
	slots := make(chan struct{}, 3) // node processes at once, over both servers
	for _, protocols := range []string{"both", "modern"} {
		t.Run(protocols, func(t *testing.T) {
			t.Parallel()
			url := startServe(t, "--protocols", protocols)
			checks := runConformance(t, suite, url, slots)
			passed, scored, failed := scoreChecks(checks)
			if len(failed) > 0 || scored != conformanceChecks {
				t.Errorf("tasksim serve --protocols %s: %d of %d checks pass (want %d of %d); failing:\n%s",
					protocols, passed, scored, conformanceChecks, conformanceChecks, strings.Join(failed, "\n"))
			}
		})
	}
}

// TestOfficialConformanceWithoutFixtures: without the fixture tools (serve --fixtures=false)
// the suite fails, naming the tools it misses: the fixtures are what makes it pass.
func TestOfficialConformanceWithoutFixtures(t *testing.T) {
	suite := peers.NewConformance(t)
	url := startServe(t, "--fixtures=false")
	checks := suite.Run(t, url, "tasks-lifecycle", 60*time.Second)
	passed, scored, failed := scoreChecks(checks)
	if !strings.Contains(strings.Join(failed, "\n"), `unknown tool "greet"`) {
		t.Errorf("tasks-lifecycle without fixtures: %d of %d pass, failing %q; want failures naming the unknown tool greet", passed, scored, failed)
	}
}

// runConformance runs peers.TasksScenarios against url, as many at a time as slots has room
// for (each scenario waits on its tasks more than it computes), and returns every check.
func runConformance(t *testing.T, suite *peers.Conformance, url string, slots chan struct{}) []peers.Check {
	t.Helper()
	var (
		mu  sync.Mutex
		all []peers.Check
		wg  sync.WaitGroup
	)
	for _, sc := range peers.TasksScenarios {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			checks := suite.Run(t, url, sc, 90*time.Second) // a bound on a hang: a scenario takes seconds
			mu.Lock()
			all = append(all, checks...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return all
}

// scoreChecks scores checks as the suite does: passed SUCCESS out of scored SUCCESS and
// FAILURE; failed names every FAILURE and WARNING with its message.
func scoreChecks(checks []peers.Check) (passed, scored int, failed []string) {
	for _, c := range checks {
		switch c.Status {
		case "SUCCESS":
			passed++
			scored++
		case "FAILURE", "WARNING":
			if c.Status == "FAILURE" {
				scored++
			}
			failed = append(failed, fmt.Sprintf("  %s %s/%s: %s", c.Status, c.Scenario, c.ID, c.ErrorMessage))
		}
	}
	return passed, scored, failed
}
