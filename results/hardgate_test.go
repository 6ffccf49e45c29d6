package results

import (
	"slices"
	"testing"
)

// TestHardGateSecurity: cross-tenant leaks and planted secrets fail the hard gate once
// checked; unchecked, they are listed in "not_checked".
func TestHardGateSecurity(t *testing.T) {
	tests := []struct {
		name       string
		sec        *Security
		pass       bool
		notChecked []string
	}{
		{"neither ran", nil, true, []string{"cross_tenant_leaks", "planted_secrets"}},
		{"clean probes and canaries", &Security{Probes: true, Canaries: true, ProbesSent: map[string]int64{"get": 3}}, true, []string{}},
		{"a leak", &Security{Probes: true, Canaries: true, Leaks: map[string]int64{"cancel": 1},
			Touched: []string{"0123ab...cdef"}}, false, []string{}},
		{"a planted secret", &Security{Probes: true, Canaries: true, Secrets: map[string]int64{"statusMessage of tasks/get": 2}}, false, []string{}},
		{"a token in an output file without canaries", &Security{Secrets: map[string]int64{"summary.json": 1}}, false,
			[]string{"cross_tenant_leaks", "planted_secrets"}},
		{"injection findings only", &Security{Probes: true, Canaries: true, Injections: map[string]int64{"result of tasks/result": 5}}, true, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info, total, windows := fixture()
			info.Security = tc.sec
			s := Build(info, total, windows)
			g := s.Gates.Hard
			if g.Pass != tc.pass {
				t.Errorf("pass = %v, want %v (evidence %v)", g.Pass, tc.pass, g.Evidence)
			}
			if nc := g.Evidence.NotChecked; !slices.Equal(nc, tc.notChecked) {
				t.Errorf("not_checked = %v, want %v", nc, tc.notChecked)
			}
			if !tc.pass && s.ExitCode() != ExitGateFailed {
				t.Errorf("exit code %d", s.ExitCode())
			}
			if tc.sec != nil && len(tc.sec.Injections) > 0 && g.Evidence.InjectionFindings == nil {
				t.Error("injection findings missing from the evidence")
			}
		})
	}
}
