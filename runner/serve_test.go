package runner

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/internal/redact"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/scenarios"
)

// TestServeConfig: a standalone server answers both eras unless the scenario says
// otherwise, and takes its address and limits from the base it is given.
func TestServeConfig(t *testing.T) {
	sc := scenarios.Default()
	cfg, err := ServeConfig(sc, mockserver.Config{Addr: "127.0.0.1:0", MaxBodyBytes: 1 << 20, MaxSubscriptions: 8})
	if err != nil || cfg.Protocols != mockserver.ProtocolsBoth || cfg.Addr != "127.0.0.1:0" || cfg.MaxBodyBytes != 1<<20 {
		t.Fatalf("ServeConfig = %+v, %v; want both eras on 127.0.0.1:0", cfg, err)
	}
	notes := ServeNotes(cfg, "http://127.0.0.1:8080/mcp")
	if notes[0] != "metrics: http://127.0.0.1:8080/metrics" || !slices.ContainsFunc(notes, func(n string) bool { return strings.HasPrefix(n, "eras: 2026-07-28 (") }) {
		t.Errorf("ServeNotes = %q", notes)
	}
}

// TestAddServerTokens: tokens bind tenants and are noted as secrets; a malformed value, or
// one token for two tenants, is a usage error that never shows the token.
func TestAddServerTokens(t *testing.T) {
	sc := scenarios.Default()
	secrets := &redact.Set{}
	if err := AddServerTokens(sc, []string{"acme=tok-1", "initech=tok-2"}, secrets); err != nil || len(sc.Server.Tokens) != 2 {
		t.Fatalf("AddServerTokens = %v, tokens %d", err, len(sc.Server.Tokens))
	}
	if got := secrets.String("tok-1"); strings.Contains(got, "tok-1") {
		t.Errorf("the token is not a secret: %q", got)
	}
	for _, tc := range []struct{ tokens []string }{{[]string{"acme=secret-x", "initech=secret-x"}}, {[]string{"acme:secret-x"}}} {
		err := AddServerTokens(scenarios.Default(), tc.tokens, &redact.Set{})
		if !errors.As(err, new(*UsageError)) || strings.Contains(err.Error(), "secret-x") {
			t.Errorf("AddServerTokens(%q) = %v, want a usage error without the token", tc.tokens, err)
		}
	}
}
