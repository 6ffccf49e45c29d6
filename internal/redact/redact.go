// Package redact holds the secret values one run or one command learned (header values,
// tenant tokens) and replaces them with *** in any text about to leave the process: tokens
// never appear in any output, not even when a target echoes one back in an error body.
//
// A Set belongs to one run (runner.Run) or one command invocation: nothing is shared
// between runs in one process. It imports nothing of tasksim.
package redact

import (
	"slices"
	"strings"
	"sync"
)

// Set is a set of secret values. The zero Set is empty and ready to use; a Set is safe for
// concurrent use.
type Set struct {
	mu      sync.Mutex
	secrets []string // longest first, so that a token inside a header value goes whole
}

// Note records a secret value: the whole value and, for "Scheme credential" values
// (Authorization: Bearer ...), the credential alone. Values shorter than 4 bytes are not
// redacted (they would mangle ordinary text), nor is an empty one.
func (s *Set) Note(v string) {
	v = strings.TrimSpace(v)
	s.mu.Lock()
	defer s.mu.Unlock()
	add := func(x string) {
		if len(x) >= 4 && !slices.Contains(s.secrets, x) {
			s.secrets = append(s.secrets, x)
		}
	}
	add(v)
	if _, cred, ok := strings.Cut(v, " "); ok {
		add(strings.TrimSpace(cred))
	}
	slices.SortFunc(s.secrets, func(a, b string) int { return len(b) - len(a) })
}

// String replaces every secret of the set in text with ***.
func (s *Set) String(text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range s.secrets {
		text = strings.ReplaceAll(text, v, "***")
	}
	return text
}

// Error returns err with its message redacted, still wrapping err (errors.Is and errors.As
// see through it); nil stays nil.
func (s *Set) Error(err error) error {
	if err == nil {
		return nil
	}
	return &redacted{err: err, msg: s.String(err.Error())}
}

type redacted struct {
	err error
	msg string
}

func (e *redacted) Error() string { return e.msg }
func (e *redacted) Unwrap() error { return e.err }
