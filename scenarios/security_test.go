package scenarios

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestSecurityParse(t *testing.T) {
	s := mustParse(t, minimal+`server:
  tokens: {acme: tok-a, globex: tok-b}
security:
  probe_share: 0.1
  canaries: true
  inject: true
  revoke: [{tenant: acme, at: 10s, scope: results}]
  insecure: [no_tenant_check, predictable_ids]
`)
	sec := s.Security
	if sec.ProbeShare != 0.1 || !sec.Canaries || !sec.Inject || !sec.On() ||
		len(sec.Revoke) != 1 || sec.Revoke[0] != (Revoke{Tenant: "acme", At: Duration(10 * time.Second), Scope: RevokeResults}) ||
		!sec.Has(InsecureNoTenantCheck) || !sec.Has(InsecurePredictableIDs) || sec.Has(InsecureEchoSecrets) {
		t.Errorf("security = %+v", sec)
	}
	if err := s.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if Default().Security.On() {
		t.Error("security is on by default")
	}
}

func TestSecurityValidate(t *testing.T) {
	s := mustParse(t, minimal+`security:
  probe_share: 1.5
  revoke: [{tenant: nobody, at: -1s, scope: some}]
  insecure: [session_bound, no_tenant_check, leaky]
`)
	err := s.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"t.yaml:5:3: security.probe_share: must be in [0, 1], got 1.5",
		"security.probe_share: probes need at least two tenants",
		`security.revoke[0].tenant: must be a tenant of server.tokens, got "nobody"`,
		"security.revoke[0].at: must be >= 0",
		"security.revoke[0].scope: must be one of all, results",
		`security.insecure[2]: must be one of session_bound, no_tenant_check, predictable_ids, echo_secrets, got "leaky"`,
		"session_bound and no_tenant_check exclude each other",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() lacks %q:\n%v", want, err)
		}
	}
}

// TestSecurityTargetTenants: tenants with a real target, embedded-only knobs refused there,
// and tokens never printed.
func TestSecurityTargetTenants(t *testing.T) {
	s := mustParse(t, minimal+`target: https://mcp.example.com/mcp
security:
  tenants: {a: tok-secret-1, b: tok-secret-1}
  probe_share: 0.2
  inject: true
  insecure: [echo_secrets]
`)
	err := s.Validate()
	for _, want := range []string{"security.tenants.b: token is the same as tenant a's", "security.inject: applies to the embedded server only",
		"security.insecure[0]: applies to the embedded server only"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want %q", err, want)
		}
	}
	if strings.Contains(fmt.Sprintf("%v %+v %#v", s.Security, s.Security, s.Security), "tok-secret") || strings.Contains(err.Error(), "tok-secret") {
		t.Error("a token was printed")
	}
	s.Security.Tenants["b"] = "tok-2"
	s.Security.Inject, s.Security.Insecure = false, nil
	if err := s.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}
