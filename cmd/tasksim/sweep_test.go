package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepRecommendsTheKnownBestCell: a 2x2 grid of pollInterval and clients on 500 ms
// tasks with the SLO task_e2e p99 < 900 ms. Polling every second makes every task last
// about a second (it is seen done at the first poll), so both 1 s cells miss the SLO; of
// the 100 ms cells, 5 clients send half the requests of 10. Known best: poll_interval=100ms
// clients=5; runner-up: clients=10.
func TestSweepRecommendsTheKnownBestCell(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, code := tasksim(t, "sweep", "smoke",
		"--vary", "poll_interval=100ms,1s", "--vary", "clients=5,10",
		"--cell-duration", "2s", "--set", "grace=3s", "--set", "args.duration_ms=500",
		"--slo", "task_e2e.p99 < 900ms", "--no-progress", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"recommended poll_interval=100ms clients=5:",
		"runner-up   poll_interval=100ms clients=10:",
		"lost        poll_interval=1s clients=5: misses task_e2e.p99 < 900ms (",
		"lost        poll_interval=1s clients=10: misses task_e2e.p99 < 900ms (",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	f, err := os.Open(filepath.Join(dir, sweepCSVFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != 5 {
		t.Fatalf("sweep.csv: %d rows, %v; want a header and 4 cells", len(rows), err)
	}
	if h := strings.Join(rows[0][:4], ","); h != "cell,poll_interval,clients,request_rate" {
		t.Errorf("sweep.csv header starts %q", h)
	}
	for _, r := range rows[1:] {
		if _, err := os.Stat(filepath.Join(r[len(r)-1], "summary.json")); err != nil {
			t.Errorf("cell %s: its run directory is not kept: %v", r[0], err)
		}
	}
	html, err := os.ReadFile(filepath.Join(dir, sweepHTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="recommendation"`, `id="hm-request_rate"`, `id="hm-detection_lag_p99"`, `class="best"`} {
		if !strings.Contains(string(html), want) {
			t.Errorf("sweep.html lacks %s", want)
		}
	}
	if strings.Contains(string(html), "http://") || strings.Contains(string(html), "https://") {
		t.Error("sweep.html refers to the network")
	}
}

// TestSweepUsage: bad grids are usage errors (exit 2) that say what is wrong.
func TestSweepUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "smoke"}, "at least one --vary"},
		{[]string{"sweep", "smoke", "--vary", "clients"}, "want NAME=V1,V2"},
		{[]string{"sweep", "smoke", "--vary", "clients=1", "--vary", "clients=2"}, "given twice"},
		{[]string{"sweep", "smoke", "--vary", "clients=1", "--slo", "nonsense <"}, "--slo"},
		{[]string{"sweep", "smoke", "--vary", "clients=0", "--no-progress"}, "workload.clients"},
	} {
		_, stderr, code := tasksim(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 mentioning %q", tc.args, code, stderr, tc.want)
		}
	}
}
