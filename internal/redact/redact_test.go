package redact

import (
	"errors"
	"fmt"
	"testing"
)

// TestSetRedacts: a noted header value goes whole, its credential alone too, short values
// stay, and an error keeps its identity behind the redacted message.
func TestSetRedacts(t *testing.T) {
	var s Set
	s.Note("Bearer tok-secret-1")
	s.Note("abc") // too short to redact
	if got, want := s.String("sent Bearer tok-secret-1, echoed tok-secret-1, abc"), "sent ***, echoed ***, abc"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	base := errors.New("refused tok-secret-1")
	err := s.Error(fmt.Errorf("probe: %w", base))
	if err.Error() != "probe: refused ***" || !errors.Is(err, base) {
		t.Errorf("Error = %q (is base: %v)", err, errors.Is(err, base))
	}
	if s.Error(nil) != nil {
		t.Error("Error(nil) is not nil")
	}
}

// TestSetsAreIndependent: what one set learned, another does not redact.
func TestSetsAreIndependent(t *testing.T) {
	var a, b Set
	a.Note("token-of-a")
	if got := b.String("token-of-a"); got != "token-of-a" {
		t.Errorf("set b redacted a's token: %q", got)
	}
}
