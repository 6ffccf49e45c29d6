package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/scenarios"
)

// TestRunRefusesBeforeAnything: a scenario Run cannot run is a *UsageError, every problem
// at once, and nothing is created: an invalid scenario, a shard that owns no client, an
// in-process run against a target or with network faults.
func TestRunRefusesBeforeAnything(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*scenarios.Scenario, *Options)
		want string
	}{
		{"invalid", func(sc *scenarios.Scenario, _ *Options) { sc.Workload.Clients, sc.Duration = -1, 0 }, "workload.clients"},
		{"shard owns no client", func(_ *scenarios.Scenario, o *Options) { o.Shard = scenarios.Shard{Index: 25, Count: 30} }, "owns no client"},
		{"in process with a target", func(sc *scenarios.Scenario, o *Options) {
			sc.Target, o.InProcess = "http://127.0.0.1:1/mcp", true
		}, "in-process run needs the embedded server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := scenarios.Load("smoke")
			if err != nil {
				t.Fatal(err)
			}
			o := Options{Dir: filepath.Join(t.TempDir(), "run")}
			tc.edit(sc, &o)
			sum, err := Run(context.Background(), sc, o)
			var ue *UsageError
			if sum != nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("summary %v, error %v: want no summary and a *UsageError saying %q", sum, err, tc.want)
			}
			if _, err := os.Stat(o.Dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the run directory was created (%v)", err)
			}
		})
	}
}
