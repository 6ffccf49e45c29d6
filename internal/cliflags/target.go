package cliflags

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/tasksim/tasksim/internal/redact"
	"github.com/tasksim/tasksim/runner"
)

// CheckTarget checks a command's --target: given, and an http(s) URL with a host.
func CheckTarget(target string) error {
	if target == "" {
		return usageErrorf("--target URL is required")
	}
	if u, err := url.Parse(target); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageErrorf("--target %q is not an http(s) URL", target)
	}
	return nil
}

// SplitHeader reads one header value of a flag such as --header, 'Key: Value', into its
// name and value, trimmed. A value that is not a header is a problem named after flag that
// does not show the value: it may be a token.
func SplitHeader(flag, h string) (key, value string, err error) {
	k, v, ok := strings.Cut(h, ":")
	switch {
	case !ok:
		return "", "", fmt.Errorf("%s: want 'Key: Value', got %d characters without a ':' between the name and the value (not shown)", flag, len(h))
	case strings.TrimSpace(k) == "":
		return "", "", fmt.Errorf("%s: want 'Key: Value', got %q: the name before ':' is empty", flag, strings.TrimSpace(k)+": ***")
	}
	return strings.TrimSpace(k), strings.TrimSpace(v), nil
}

// AddHeaders sets the header values of flag (each 'Key: Value', a later one replacing a
// same-named one) on h and notes each value in secrets, so that no output shows it. The
// first value that is not a header is a *runner.UsageError.
func AddHeaders(h http.Header, values []string, flag string, secrets *redact.Set) error {
	for _, s := range values {
		k, v, err := SplitHeader(flag, s)
		if err != nil {
			return &runner.UsageError{Err: err}
		}
		h.Set(k, v)
		secrets.Note(v)
	}
	return nil
}

// usageErrorf is a *runner.UsageError with a formatted message.
func usageErrorf(format string, args ...any) error {
	return &runner.UsageError{Err: fmt.Errorf(format, args...)}
}
