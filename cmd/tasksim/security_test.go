package main

// Tenant isolation: the two shipped scenarios in virtual time, and the built binary
// never printing a token or a planted secret, in any file of a run or on stdout and stderr.

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/scenarios"
)

func TestScenarioTenantIsolation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sum, _, _ := runVirtual(t, "tenant-isolation", results.VerdictPass)
		ev := sum.Gates.Hard.Evidence
		if nc, _ := ev["not_checked"].([]string); len(nc) != 0 {
			t.Errorf("not_checked = %v: probes and canaries ran", nc)
		}
		sent, _ := ev["probes_sent"].(map[string]int64)
		for _, k := range []string{"get", "result", "cancel", "list", "guess", "meta", "session", "revoked"} {
			if sent[k] == 0 {
				t.Errorf("no %s probe sent: %v", k, sent)
			}
		}
		if ev["cross_tenant_leaks"] != int64(0) || ev["planted_secrets"] != int64(0) {
			t.Errorf("leaks %v, secrets %v", ev["cross_tenant_leaks"], ev["planted_secrets"])
		}
		if f, _ := ev["injection_findings"].(map[string]int64); f["result of tasks/result"] == 0 {
			t.Errorf("injection findings %v: the server planted canaries in results", f)
		}
		if list, _ := sum.Gates.Recovery.Evidence["reconciliation_list"].(map[string]int64); list[loadgen.ReasonRevoked] == 0 {
			t.Logf("no task ended token_revoked (%v): initech had none in flight at the revocation", list)
		}
	})
}

func TestScenarioTenantLeakDemo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sum, _, _ := runVirtual(t, "tenant-leak-demo", results.VerdictFail)
		if sum.ExitCode() != results.ExitGateFailed || sum.Gates.Hard.Pass {
			t.Fatalf("exit code %d, hard gate %+v", sum.ExitCode(), sum.Gates.Hard)
		}
		leaks, _ := sum.Gates.Hard.Evidence["leaks_by_kind"].(map[string]int64)
		for _, k := range []string{"get", "result", "cancel", "list", "guess"} {
			if leaks[k] == 0 {
				t.Errorf("no %s leak: %v", k, leaks)
			}
		}
		if touched, _ := sum.Gates.Hard.Evidence["touched_tasks"].([]string); len(touched) == 0 {
			t.Error("no touched task reported")
		}
	})
}

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
