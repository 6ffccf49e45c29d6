package cliflags

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/runner"
	"github.com/tasksim/tasksim/scenarios"
)

// parseRun parses run's own flags alone.
func parseRun(t *testing.T, args ...string) *Run {
	t.Helper()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	r := BindRun(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRunPlace: the shard, from --shard or from --shards and the job's index, and the
// common start, each checked with the scenario; the options carry the directory, --force
// and the probe's bound.
func TestRunPlace(t *testing.T) {
	sc, err := scenarios.Load("smoke")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	env := func(k string) string { return map[string]string{runner.JobIndexEnv: "1"}[k] }
	r := parseRun(t, "--shards", "2", "--start-at", "2026-01-02T03:05:00Z", "--force", "--probe-timeout", "3s")
	if err := r.Check(); err != nil {
		t.Fatal(err)
	}
	shard, at, err := r.Place(sc, now, env)
	if err != nil || shard != (scenarios.Shard{Index: 1, Count: 2}) || !at.Equal(now.Add(55*time.Second)) {
		t.Fatalf("Place = %v, %v, %v", shard, at, err)
	}
	o := r.Options(sc, shard, at, now)
	if o.Dir != runner.DefaultDir(sc, now) || !o.Overwrite || o.ProbeTimeout != 3*time.Second || o.Shard != shard || !o.StartAt.Equal(at) {
		t.Errorf("Options = %+v", o)
	}
	if o := parseRun(t, "--out", "d").Options(sc, shard, at, now); o.Dir != "d" {
		t.Errorf("--out d: Dir %q", o.Dir)
	}
}

// TestRunProblems: each problem is a *runner.UsageError naming its flag.
func TestRunProblems(t *testing.T) {
	sc, err := scenarios.Load("smoke")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--probe-timeout", "0s"}, "--probe-timeout must be > 0"},
		{[]string{"--baseline", "a", "--baseline-target", "b"}, "give one"},
		{[]string{"--budget", "throughput -5%"}, "--budget and --allow judge a comparison"},
		{[]string{"--shard", "2/2"}, "--shard"},
		{[]string{"--shards", "2"}, runner.JobIndexEnv},
		{[]string{"--start-at", "soon"}, `--start-at "soon"`},
		{[]string{"--baseline", t.TempDir()}, "--baseline"},
	} {
		r := parseRun(t, tc.args...)
		err := r.Check()
		if err == nil {
			_, _, err = r.Place(sc, time.Now(), func(string) string { return "" })
		}
		var ue *runner.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want a usage error saying %q", tc.args, err, tc.want)
		}
	}
}
