package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/scenarios"
)

// TestShardedRunSummary runs one shard of smoke, told to start 10 s ago: it starts at once,
// says it started late, and writes the shard block with the resolved scenario's hash.
func TestShardedRunSummary(t *testing.T) {
	dir := t.TempDir()
	startAt := time.Now().Add(-10 * time.Second).UTC().Format(time.RFC3339Nano)
	stdout, stderr, code := tasksim(t, "run", "smoke", "--duration", "2s", "--set", "grace=3s", "--out", dir,
		"--no-progress", "--shard", "1/3", "--start-at", startAt)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "started late by") {
		t.Errorf("stderr does not say the run started late:\n%s", stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Seed  uint64 `json:"seed"`
		Shard *struct {
			Index        int     `json:"index"`
			Count        int     `json:"count"`
			ScenarioHash string  `json:"scenario_hash"`
			Seed         uint64  `json:"seed"`
			Protocol     string  `json:"protocol"`
			Target       string  `json:"target"`
			StartAt      string  `json:"start_at"`
			LateByS      float64 `json:"late_by_s"`
		} `json:"shard"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Load("smoke")
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][2]string{{"duration", "2s"}, {"grace", "3s"}} {
		if err := sc.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	sh := sum.Shard
	switch {
	case sh == nil:
		t.Fatalf("summary.json has no shard block:\n%s", b)
	case sh.Index != 1 || sh.Count != 3 || sh.Seed != sum.Seed || sh.Target != "embedded" || sh.Protocol != "2025-11-25":
		t.Errorf("shard block %+v", *sh)
	case sh.ScenarioHash != sc.Hash():
		t.Errorf("scenario_hash %s, want %s (the resolved scenario's)", sh.ScenarioHash, sc.Hash())
	case sh.LateByS < 10:
		t.Errorf("late_by_s %v, want >= 10", sh.LateByS)
	}
	if at, err := time.Parse(time.RFC3339Nano, sh.StartAt); err != nil || at.Format(time.RFC3339Nano) != startAt {
		t.Errorf("start_at %q, want %q", sh.StartAt, startAt)
	}
}

// TestDryRunSaysTheSlice: --dry-run names the slice it would run, and a bad shard exits 2.
func TestDryRunSaysTheSlice(t *testing.T) {
	var out, errb strings.Builder
	if code := run([]string{"run", "smoke", "--dry-run", "--shard", "2/3"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"shard 2/3: 6 of 20 closed-model clients", "shard        2/3: clients 2, 5, 8, ... of 0..19"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dry run lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if code := run([]string{"run", "smoke", "--dry-run"}, &out, &errb); code != exitOK || strings.Contains(out.String(), "shard") {
		t.Errorf("exit %d; a whole run's plan mentions a shard:\n%s", code, out.String())
	}
	// A shard that would own no client (30 shards of smoke's 20) is refused before it runs.
	for _, args := range [][]string{{"--shard", "3/3"}, {"--shard", "x"}, {"--start-at", "soon"}, {"--shard", "25/30"}} {
		if code := run(append([]string{"run", "smoke", "--dry-run"}, args...), &out, &errb); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}
