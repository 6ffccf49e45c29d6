// Package tasksim_test holds repository-wide checks.
package tasksim_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/tasksim/tasksim"

// allowedImports is the dependency direction of docs/ARCHITECTURE.md#imports: for each package, the
// tasksim packages it may import (directly or not). Third-party modules and the standard
// library are always allowed; cmd/tasksim may import everything, and nothing imports it (Go
// refuses an import of a main package).
var allowedImports = map[string][]string{
	"internal/mcp":   {},
	"internal/clock": {},
	// sim drives the load generator's own client state machine (loadgen.Lifecycle) in
	// virtual time, and so reaches what loadgen does.
	"sim":               {"internal/clock", "internal/mcp", "internal/telemetry", "client", "metrics", "scenarios", "loadgen"},
	"internal/gcpolicy": {},
	"internal/peers":    {},
	"internal/redact":   {},
	"internal/schema":   {},
	// telemetry owns the OpenTelemetry providers, the sampler and the trace context in
	// _meta; it imports nothing of tasksim, so the client and the server can use it.
	"internal/telemetry": {},
	"metrics":            {"internal/mcp"},
	"scenarios":          {"internal/mcp"},
	"client":             {"internal/mcp", "internal/telemetry"},
	"results":            {"internal/mcp", "internal/telemetry", "client", "metrics", "scenarios"},
	"loadgen":            {"internal/mcp", "internal/telemetry", "client", "metrics", "scenarios"},
	"loadgen/chaos":      {"internal/mcp", "metrics", "scenarios"},
	"mockserver":         {"internal/mcp", "internal/clock", "internal/telemetry", "metrics", "scenarios"},
	"conform":            {"internal/mcp", "internal/telemetry", "internal/schema", "client", "metrics", "scenarios", "results"},
	"runner": {"internal/mcp", "internal/gcpolicy", "internal/redact", "internal/telemetry", "metrics", "scenarios", "results",
		"client", "loadgen", "loadgen/chaos", "mockserver", "internal/clock", "conform", "internal/schema"},
	// cliflags binds the command line's flags to runner's inputs (and to those of conform,
	// client and mockserver), and so reaches what runner does.
	"internal/cliflags": {"internal/mcp", "internal/gcpolicy", "internal/redact", "internal/telemetry", "metrics", "scenarios", "results",
		"client", "loadgen", "loadgen/chaos", "mockserver", "internal/clock", "conform", "internal/schema", "runner"},
	// sweep runs its cells through runner, each made from run's flags (internal/cliflags),
	// and so reaches what runner does.
	"sweep": {"internal/mcp", "internal/gcpolicy", "internal/redact", "internal/telemetry", "metrics", "scenarios", "results",
		"client", "loadgen", "loadgen/chaos", "mockserver", "internal/clock", "conform", "internal/schema", "runner", "internal/cliflags"},
	// progress shows a run (a runner.Observer), a sweep (a sweep.Observer) and the contract
	// suite's cases, and so reaches what sweep does.
	"internal/progress": {"internal/mcp", "internal/gcpolicy", "internal/redact", "internal/telemetry", "metrics", "scenarios", "results",
		"client", "loadgen", "loadgen/chaos", "mockserver", "internal/clock", "conform", "internal/schema", "runner", "internal/cliflags", "sweep"},
}

// TestImportRules runs `go list -deps` for every library package and fails on any tasksim
// dependency that docs/ARCHITECTURE.md#imports does not allow (loadgen and mockserver, above all,
// must never reach each other).
func TestImportRules(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not available")
	}
	for pkg, allowed := range allowedImports {
		out, err := exec.Command("go", "list", "-deps", "./"+pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps ./%s: %v", pkg, err)
		}
		ok := map[string]bool{pkg: true}
		for _, a := range allowed {
			ok[a] = true
		}
		for _, dep := range strings.Fields(string(out)) {
			rel, inModule := strings.CutPrefix(dep, module+"/")
			if !inModule {
				continue
			}
			if !ok[rel] {
				t.Errorf("%s depends on %s, which docs/ARCHITECTURE.md#imports does not allow", pkg, rel)
			}
		}
	}
}
