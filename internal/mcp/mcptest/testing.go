package mcptest

import (
	"errors"
	"testing"
)

// Must stops the test at once when err, the result of one of this package's checks, is
// not nil:
//
//	mcptest.Must(t, mcptest.Validate("GetTaskResult", b))
func Must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// MustFail stops the test at once unless err, the result of one of this package's checks,
// reports a mismatch (a *SchemaError). A nil error fails, and so does any other error, such
// as an unknown definition name, which is a bug in the test rather than a rejection.
func MustFail(t testing.TB, err error) {
	t.Helper()
	var se *SchemaError
	switch {
	case err == nil:
		t.Fatal("mcptest: the text was accepted, want a schema mismatch")
	case !errors.As(err, &se):
		t.Fatalf("mcptest: want a schema mismatch, got another error: %v", err)
	}
}
