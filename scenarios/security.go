package scenarios

// Security is the tenant isolation and secrets section (the `security:` key).
// Every zero value is "off". Clients are spread round-robin over the tenants: those of
// server.tokens on the embedded server, those of Tenants on a real target.
type Security struct {
	// Tenants maps a tenant name to its bearer token (a Secret, never printed), for a real
	// Target; the embedded server's tenants are server.tokens. Default none.
	Tenants map[string]Secret `yaml:"tenants,omitempty"`
	// ProbeShare is the share of clients that act as isolation probes, in [0, 1]; probes
	// need at least two tenants. Default 0.
	ProbeShare float64 `yaml:"probe_share"`
	// Canaries plants unique secret markers in the tool's note argument (when the tool
	// declares one) and in elicitation answers, and fails the hard gate when one shows
	// where it must not. Default false.
	Canaries bool `yaml:"canaries"`
	// Inject makes the embedded server plant prompt-injection canaries in statusMessage and
	// results; clients report those that reach them as findings. Default false.
	Inject bool `yaml:"inject"`
	// Revoke withdraws tenants' tokens on the embedded server during the run. Default none.
	Revoke []Revoke `yaml:"revoke,omitempty"`
	// Insecure turns on deliberately insecure modes of the embedded server, to prove that
	// the probes and the detector work: the hard gate must then fail. Default none.
	Insecure []InsecureMode `yaml:"insecure,omitempty"`
}

// Revoke withdraws a tenant's token, or its right to fetch results, At into the run.
type Revoke struct {
	// Tenant is a tenant of server.tokens; required.
	Tenant string `yaml:"tenant"`
	// At is when, from the start of the run; >= 0. Default 0s.
	At Duration `yaml:"at"`
	// Scope is all (every request gets 401) or results (tasks/result gets 403). Default all.
	Scope RevokeScope `yaml:"scope"`
}

// RevokeScope is what a revocation withdraws.
type RevokeScope string

// Revocation scopes.
const (
	RevokeAll     RevokeScope = "all"
	RevokeResults RevokeScope = "results"
)

// InsecureMode is a deliberately insecure mode of the embedded server (mockserver/insecure.go).
type InsecureMode string

// Insecure modes.
const (
	InsecureSessionBound   InsecureMode = "session_bound"   // tasks bound to the session, not the tenant
	InsecureNoTenantCheck  InsecureMode = "no_tenant_check" // any token reads any task
	InsecurePredictableIDs InsecureMode = "predictable_ids" // sequential task ids
	InsecureEchoSecrets    InsecureMode = "echo_secrets"    // arguments and answers copied into statusMessage
)

// On reports whether the section asks for anything.
func (s Security) On() bool {
	return len(s.Tenants) > 0 || s.ProbeShare > 0 || s.Canaries || s.Inject || len(s.Revoke) > 0 || len(s.Insecure) > 0
}

// Has reports whether insecure mode m is on.
func (s Security) Has(m InsecureMode) bool {
	for _, x := range s.Insecure {
		if x == m {
			return true
		}
	}
	return false
}

// security checks the security section.
func (v *validator) security() {
	s := v.s
	sec := s.Security
	v.ratio("security.probe_share", sec.ProbeShare)
	tenants := len(s.Server.Tokens)
	if s.Target != "" {
		tenants = len(sec.Tenants)
	}
	if len(sec.Tenants) > 0 && s.Target == "" {
		v.add("security.tenants", "apply to a real target only: the embedded server's tenants are server.tokens")
	}
	v.tokens("security.tenants", sec.Tenants)
	if sec.ProbeShare > 0 && tenants < 2 {
		v.add("security.probe_share", "probes need at least two tenants (server.tokens, or security.tenants with a target), got %d", tenants)
	}
	embeddedOnly := func(path string) {
		if s.Target != "" {
			v.add(path, "applies to the embedded server only (target is set)")
		}
	}
	if sec.Inject {
		embeddedOnly("security.inject")
	}
	for i, r := range sec.Revoke {
		p := indexPath("security.revoke", i)
		embeddedOnly(p)
		if _, ok := s.Server.Tokens[r.Tenant]; !ok {
			v.add(p+".tenant", "must be a tenant of server.tokens, got %q", r.Tenant)
		}
		v.nonNegative(p+".at", r.At)
		if r.Scope != "" {
			oneOf(v, p+".scope", r.Scope, RevokeAll, RevokeResults)
		}
	}
	for i, m := range sec.Insecure {
		p := indexPath("security.insecure", i)
		embeddedOnly(p)
		oneOf(v, p, m, InsecureSessionBound, InsecureNoTenantCheck, InsecurePredictableIDs, InsecureEchoSecrets)
	}
	if sec.Has(InsecureSessionBound) && sec.Has(InsecureNoTenantCheck) {
		v.add("security.insecure", "session_bound and no_tenant_check exclude each other")
	}
}
