package main

import (
	"slices"
	"strings"
	"sync"

	"github.com/tasksim/tasksim/scenarios"
)

// Tokens never appear in any output, not even when a target echoes
// one back in an error body. Every secret the process learns (header values of flags and
// scenarios, tenant tokens) is noted here, and every error main prints, and every message a
// sweep keeps, goes through redactKnown.

var (
	secretsMu sync.Mutex
	secrets   []string // longest first, so that a token inside a header value goes whole
)

// noteSecret records a secret value: the whole value and, for "Scheme credential" values
// (Authorization: Bearer ...), the credential alone. Values shorter than 4 bytes are not
// redacted (they would mangle ordinary text), nor is an empty one.
func noteSecret(v string) {
	v = strings.TrimSpace(v)
	add := func(s string) {
		if len(s) >= 4 && !slices.Contains(secrets, s) {
			secrets = append(secrets, s)
		}
	}
	secretsMu.Lock()
	defer secretsMu.Unlock()
	add(v)
	if _, cred, ok := strings.Cut(v, " "); ok {
		add(strings.TrimSpace(cred))
	}
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
}

// noteScenarioSecrets records every secret a scenario holds.
func noteScenarioSecrets(sc *scenarios.Scenario) {
	for _, v := range sc.Headers {
		noteSecret(v.Reveal())
	}
	for _, v := range sc.Server.Tokens {
		noteSecret(v.Reveal())
	}
	for _, v := range sc.Security.Tenants {
		noteSecret(v.Reveal())
	}
}

// redactKnown replaces every known secret in s with ***.
func redactKnown(s string) string {
	secretsMu.Lock()
	defer secretsMu.Unlock()
	for _, v := range secrets {
		s = strings.ReplaceAll(s, v, "***")
	}
	return s
}
