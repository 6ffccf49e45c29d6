package main

// Tenant isolation: the built binary never printing a token or a planted secret, in any
// file of a run or on stdout and stderr (the two shipped scenarios in virtual time are
// runner's tests).

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/scenarios"
)

// TestNoTokenInAnyOutput runs both scenarios with the binary (shortened) and scans every
// file of the run directory, stdout and stderr for the tenants' tokens and for planted
// secret canaries: none may appear.
func TestNoTokenInAnyOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary for a few seconds")
	}
	for _, tc := range []struct {
		name string
		code int
	}{{"tenant-isolation", 0}, {"tenant-leak-demo", 99}} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := scenarios.Load(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			stdout, stderr, code := tasksim(t, "run", tc.name, "--out", out, "--no-progress", "--duration", "3s",
				"--set", "grace=3s", "--set", "workload.clients=30", "--set", "security.probe_share=0.2")
			if code != tc.code {
				t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			outputs := map[string][]byte{"stdout": []byte(stdout), "stderr": []byte(stderr)}
			entries, err := os.ReadDir(out)
			if err != nil || len(entries) < 4 {
				t.Fatalf("run directory: %v, %d files", err, len(entries))
			}
			for _, e := range entries {
				b, err := os.ReadFile(filepath.Join(out, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				outputs[e.Name()] = b
			}
			for name, b := range outputs {
				for tenant, tok := range sc.Server.Tokens {
					if bytes.Contains(b, []byte(tok.Reveal())) {
						t.Errorf("%s holds %s's token", name, tenant)
					}
				}
				if bytes.Contains(b, []byte(loadgen.SecretPrefix)) {
					t.Errorf("%s holds a planted secret", name)
				}
			}
			if !strings.Contains(string(outputs[results.SummaryJSONFile]), `"cross_tenant_leaks"`) {
				t.Errorf("summary.json has no cross_tenant_leaks evidence")
			}
		})
	}
}
