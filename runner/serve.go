package runner

import (
	"cmp"
	"strings"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/redact"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/scenarios"
)

// `tasksim serve` as a library: the mock server a scenario's server section describes,
// configured as a run configures its embedded server (ServerConfig), and what an operator
// should be told about it. Here rather than in the command line so that a test harness or
// another program starts the same server from the same scenario.

// ServeConfig is the configuration of a standalone mock server for sc's server section
// (validated: Scenario.ValidateServer): ServerConfig, answering both eras unless the section
// says otherwise, with what only a standalone server is given in base (address, default
// duration, origins, body and subscription limits, fixtures). An invalid result is a
// *UsageError.
func ServeConfig(sc *scenarios.Scenario, base mockserver.Config) (mockserver.Config, error) {
	cfg := ServerConfig(sc)
	if cfg.Protocols == "" {
		cfg.Protocols = mockserver.ProtocolsBoth // serve answers both eras unless told otherwise
	}
	cfg.Addr, cfg.DefaultDuration = base.Addr, base.DefaultDuration
	cfg.AllowedOrigins, cfg.MaxBodyBytes = base.AllowedOrigins, base.MaxBodyBytes
	cfg.MaxSubscriptions, cfg.Fixtures = base.MaxSubscriptions, base.Fixtures
	if err := cfg.Validate(); err != nil {
		return cfg, &UsageError{err}
	}
	return cfg, nil
}

// AddServerTokens adds bearer tokens given as TENANT=TOKEN (serve's --token) to sc's
// server tokens and notes each in secrets, so that no error shows it. A malformed value, or
// one token given to two tenants, is a *UsageError: the server could not tell the tenants
// apart.
func AddServerTokens(sc *scenarios.Scenario, tokens []string, secrets *redact.Set) error {
	owner := map[string]string{}
	for _, t := range tokens {
		tenant, tok, ok := strings.Cut(t, "=")
		if !ok || tenant == "" || tok == "" {
			return usageErrorf("--token %q: want TENANT=TOKEN", hideToken(t))
		}
		if prev, dup := owner[tok]; dup && prev != tenant {
			return usageErrorf("--token: one token is given to two tenants, %q and %q", prev, tenant)
		}
		owner[tok] = tenant
		if sc.Server.Tokens == nil {
			sc.Server.Tokens = map[string]scenarios.Secret{}
		}
		sc.Server.Tokens[tenant] = scenarios.Secret(tok)
		secrets.Note(tok)
	}
	return nil
}

// hideToken hides a token's secret part in messages: tokens never appear in any output.
func hideToken(flag string) string {
	if tenant, _, ok := strings.Cut(flag, "="); ok {
		return tenant + "=***"
	}
	return "***"
}

// ServeNotes are what an operator of a standalone server configured by cfg, listening at
// url, should know, one line each: its metrics URL, how tasks are bound to tenants, the
// eras it answers, and every mode that breaks it on purpose.
func ServeNotes(cfg mockserver.Config, url string) []string {
	notes := []string{"metrics: " + strings.TrimSuffix(url, "/mcp") + "/metrics"}
	switch {
	case len(cfg.Tokens) > 0:
	case cfg.KnownBad.ListWithoutAuth:
		notes = append(notes, "no --token given: tasks are not bound to a tenant, yet tasks/list is on (known-bad list_without_auth: R54 broken)")
	default:
		notes = append(notes, "no --token given: tasks are not bound to a tenant and tasks/list is off (R54)")
	}
	modern := "stateless, the Tasks extension"
	if cfg.NoTasks || !mcp.HasTasks(cmp.Or(cfg.Protocol, mcp.Version20251125)) {
		modern = "stateless, without the Tasks extension (server.tasks false, or a server.protocol without Tasks)"
	}
	switch cfg.Protocols {
	case mockserver.ProtocolsModern:
		notes = append(notes, "eras: 2026-07-28 only ("+modern+"); initialize gets -32022")
	case mockserver.ProtocolsBoth:
		notes = append(notes, "eras: 2026-07-28 ("+modern+") and 2025-11-25 (sessions), each request in its own")
	default:
		notes = append(notes, "eras: 2025-11-25 and older only (sessions)")
	}
	if cfg.Faults.On() {
		notes = append(notes, "server faults on (the scenario's faults.server): the server fails requests and tasks on purpose")
	}
	if cfg.KnownBad.On() {
		notes = append(notes, "known-bad modes on (server.known_bad): the server breaks rules of docs/RULES.md on purpose")
	}
	if cfg.Insecure.On() {
		notes = append(notes, "insecure modes on (security.insecure): the server breaks its isolation on purpose")
	}
	return notes
}
