package sweep

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/runner"
)

// TestParseVary: --vary's values are trimmed, empty ones dropped, and every malformed
// grid is a usage error naming --vary.
func TestParseVary(t *testing.T) {
	got, err := ParseVary([]string{"poll_interval= 250ms, 1s,", "clients=10"})
	want := []Vary{{Name: "poll_interval", Values: []string{"250ms", "1s"}}, {Name: "clients", Values: []string{"10"}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseVary = %+v, %v; want %+v", got, err, want)
	}
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"clients"}, "want NAME=V1,V2,..."},
		{[]string{"=1,2"}, "want NAME=V1,V2,..."},
		{[]string{"clients=,"}, "want NAME=V1,V2,..."},
		{[]string{"clients=1", "clients=2"}, "--vary clients given twice"},
		{[]string{"clients=1", "workload.clients=2"}, "set the same field"},
		{[]string{"rate=5/s,5/s"}, "value 5/s given twice"},
	} {
		_, err := ParseVary(tc.flags)
		if ue := new(runner.UsageError); !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseVary(%q) = %v, want a usage error saying %q", tc.flags, err, tc.want)
		}
	}
}

// TestDefaultDir: a sweep's default directory is named after the scenario, without the
// directory or extension of its file, and the UTC start.
func TestDefaultDir(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 5, 0, time.FixedZone("x", 3600))
	if got, want := DefaultDir("dir/my-scenario.yaml", at), "runs/sweep-my-scenario-20260301T110005Z"; got != want {
		t.Errorf("DefaultDir = %q, want %q", got, want)
	}
}

// TestParseVaryNone: a grid needs a dimension.
func TestParseVaryNone(t *testing.T) {
	if _, err := ParseVary(nil); err == nil || !strings.Contains(err.Error(), "at least one --vary") {
		t.Errorf("ParseVary(nil) = %v", err)
	}
}
