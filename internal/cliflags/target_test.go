package cliflags

import (
	"fmt"
	"strings"
	"testing"
)

// TestSplitHeader: 'Key: Value' is trimmed into its name and value; anything else is a
// problem named after the flag.
func TestSplitHeader(t *testing.T) {
	if k, v, err := SplitHeader("--header", "  X-Key :  some value "); k != "X-Key" || v != "some value" || err != nil {
		t.Errorf("SplitHeader = %q, %q, %v", k, v, err)
	}
	if _, _, err := SplitHeader("--other-header", "novalue"); err == nil || !strings.HasPrefix(err.Error(), "--other-header: ") {
		t.Errorf("no ':': %v, want a problem naming --other-header", err)
	}
}

// FuzzSplitHeader: a header is split into a non-empty name and its value; anything else is
// refused in one of two fixed messages, which hold the value's length at most: it may be a
// token.
func FuzzSplitHeader(f *testing.F) {
	for _, s := range []string{"Bearer abcdef", ": abcdef", "K: abcdef", " :abcdef", "abcdef:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		k, v, err := SplitHeader("--header", h)
		noColon := fmt.Sprintf("--header: want 'Key: Value', got %d characters without a ':' between the name and the value (not shown)", len(h))
		noName := `--header: want 'Key: Value', got ": ***": the name before ':' is empty`
		switch {
		case err == nil && (k == "" || k != strings.TrimSpace(strings.Split(h, ":")[0])):
			t.Errorf("SplitHeader(%q) = %q, %q: want the name before the first ':'", h, k, v)
		case err != nil && err.Error() != noColon && err.Error() != noName:
			t.Errorf("SplitHeader(%q): %v, want one of the fixed messages", h, err)
		}
	})
}

// TestCheckTarget: --target is required and an http(s) URL with a host.
func TestCheckTarget(t *testing.T) {
	for target, ok := range map[string]bool{"http://127.0.0.1:9/mcp": true, "https://h/": true, "": false, "ftp://h": false, "http://": false} {
		if err := CheckTarget(target); (err == nil) != ok {
			t.Errorf("CheckTarget(%q) = %v", target, err)
		}
	}
}
