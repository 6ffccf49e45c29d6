package runner

// Tenant isolation: the two shipped scenarios in virtual time.

import (
	"testing"
	"testing/synctest"

	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/results"
)

func TestScenarioTenantIsolation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sum, _ := runVirtual(t, "tenant-isolation", results.VerdictPass)
		ev := sum.Gates.Hard.Evidence
		if nc := ev.NotChecked; len(nc) != 0 {
			t.Errorf("not_checked = %v: probes and canaries ran", nc)
		}
		sent := ev.ProbesSent
		for _, k := range []string{"get", "result", "cancel", "list", "guess", "meta", "session", "revoked"} {
			if sent[k] == 0 {
				t.Errorf("no %s probe sent: %v", k, sent)
			}
		}
		if ev.CrossTenantLeaks == nil || *ev.CrossTenantLeaks != 0 || ev.PlantedSecrets == nil || *ev.PlantedSecrets != 0 {
			t.Errorf("leaks %v, secrets %v", ev.CrossTenantLeaks, ev.PlantedSecrets)
		}
		if f := ev.InjectionFindings; f["result of tasks/result"] == 0 {
			t.Errorf("injection findings %v: the server planted canaries in results", f)
		}
		if list := sum.Gates.Recovery.Evidence.ReconciliationList; list[loadgen.ReasonRevoked] == 0 {
			t.Logf("no task ended token_revoked (%v): initech had none in flight at the revocation", list)
		}
	})
}

func TestScenarioTenantLeakDemo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sum, _ := runVirtual(t, "tenant-leak-demo", results.VerdictFail)
		if sum.ExitCode() != results.ExitGateFailed || sum.Gates.Hard.Pass {
			t.Fatalf("exit code %d, hard gate %+v", sum.ExitCode(), sum.Gates.Hard)
		}
		leaks := sum.Gates.Hard.Evidence.LeaksByKind
		for _, k := range []string{"get", "result", "cancel", "list", "guess"} {
			if leaks[k] == 0 {
				t.Errorf("no %s leak: %v", k, leaks)
			}
		}
		if touched := sum.Gates.Hard.Evidence.TouchedTasks; len(touched) == 0 {
			t.Error("no touched task reported")
		}
	})
}
