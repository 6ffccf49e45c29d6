package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/sweep"
)

// TestSweepRecommendsTheKnownBestCell: a 2x2 grid of pollInterval and clients on 500 ms
// tasks with the SLO polls_per_task.mean >= 2. Polling every second, a task is seen done at
// its first poll, so both 1 s cells miss the SLO, however fast the machine; every 100 ms, a
// task is polled about five times, and still twice with replies as slow as 150 ms (the SLO
// stands for a freshness target that, unlike a latency, hardly moves with the machine). Known answer: at
// 5 clients and at 10, poll_interval=100ms; capacity at least 10 clients (both counts pass).
// sweep.json says so too, and `tasksim report DIR` re-renders sweep.html byte for byte.
func TestSweepRecommendsTheKnownBestCell(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, code := tasksim(t, "sweep", "smoke",
		"--vary", "poll_interval=100ms,1s", "--vary", "clients=5,10",
		"--cell-duration", "2s", "--set", "grace=3s", "--set", "args.duration_ms=500",
		"--slo", "polls_per_task.mean >= 2", "--no-progress", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"recommended poll_interval=100ms clients=5:",
		"lost        poll_interval=1s clients=5: misses polls_per_task.mean >= 2 (",
		"recommended poll_interval=100ms clients=10:",
		"lost        poll_interval=1s clients=10: misses polls_per_task.mean >= 2 (",
		"capacity    clients=10 (poll_interval=100ms clients=10, cell-01): every count tried passed",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	r, err := sweep.ReadJSON(dir)
	if err != nil {
		t.Fatal(err)
	}
	var picks []string
	for _, p := range r.Recommended {
		picks = append(picks, fmt.Sprintf("%d %s %s", p.Clients, p.PollInterval, p.Cell))
	}
	if got := strings.Join(picks, ", "); got != "5 100ms cell-00, 10 100ms cell-01" {
		t.Errorf("sweep.json recommended %s; want 5 100ms cell-00, 10 100ms cell-01", got)
	}
	if c := r.Capacity; c == nil || c.Clients != 10 || c.Cell != "cell-01" || c.LimitFound || r.ExitCode != 0 || r.Interrupted {
		t.Errorf("sweep.json capacity %+v, exit %d, interrupted %v; want 10 clients in cell-01, no limit found, 0, false",
			c, r.ExitCode, r.Interrupted)
	}
	f, err := os.Open(filepath.Join(dir, sweep.CSVFile))
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
	page := filepath.Join(dir, sweep.HTMLFile)
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="recommendation"`, `id="capacity"`, `<a href="cell-01/report.html">`,
		`id="hm-request_rate"`, `id="hm-detection_lag_p99"`, `class="best"`} {
		if !strings.Contains(string(html), want) {
			t.Errorf("sweep.html lacks %s", want)
		}
	}
	if strings.Contains(string(html), "http://") || strings.Contains(string(html), "https://") {
		t.Error("sweep.html refers to the network")
	}

	if err := os.Remove(page); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code = tasksim(t, "report", dir)
	if code != 0 || strings.TrimSpace(stdout) != page {
		t.Fatalf("report: exit %d, stdout %q; want 0 and %s\n%s", code, stdout, page, stderr)
	}
	if again, err := os.ReadFile(page); err != nil || !bytes.Equal(again, html) {
		t.Errorf("tasksim report rendered different bytes from the sweep.html the sweep wrote (%v)", err)
	}
}

// TestSweepCapacityFound: on 500 ms tasks over a 1 s load phase each client creates one or
// two tasks, whatever the machine's speed, so under the SLO tasks.created < 10, 1 and 2
// clients pass and 10 fail: capacity 2, the limit found at 10, exit 0.
func TestSweepCapacityFound(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, code := tasksim(t, "sweep", "smoke", "--vary", "clients=1,2,10",
		"--cell-duration", "1s", "--set", "grace=3s", "--set", "args.duration_ms=500",
		"--slo", "tasks.created < 10", "--no-progress", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if want := "capacity    clients=2 (clients=2, cell-01): the largest count below the first failing one; clients=10 failed: misses tasks.created < 10 ("; !strings.Contains(stdout, want) {
		t.Errorf("stdout lacks %q:\n%s", want, stdout)
	}
	r, err := sweep.ReadJSON(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Capacity; c == nil || c.Clients != 2 || !c.LimitFound || c.FirstFailure.Clients != 10 || !c.Contiguous || len(r.Recommended) != 2 {
		t.Errorf("capacity %+v, %d recommended; want 2 clients, the limit at 10, contiguous, 2 recommended", c, len(r.Recommended))
	}
}

// TestSweepUsage: bad grids are usage errors (exit 2) that say what is wrong, every
// problem at once, and leave no output directory behind: the whole grid is checked first.
func TestSweepUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"smoke"}, []string{"at least one --vary"}},
		{[]string{"smoke", "--vary", "clients"}, []string{"want NAME=V1,V2"}},
		{[]string{"smoke", "--vary", "clients=,"}, []string{"want NAME=V1,V2"}},
		{[]string{"smoke", "--vary", "clients=1", "--vary", "clients=2"}, []string{"given twice"}},
		{[]string{"smoke", "--vary", "clients=1,2,1"}, []string{"value 1 given twice"}},
		{[]string{"smoke", "--vary", "clients=1", "--vary", "workload.clients=2"}, []string{"set the same field"}},
		{[]string{"smoke", "--vary", "clients=1", "--slo", "nonsense <"}, []string{"--slo"}},
		{[]string{"smoke", "--vary", "bogus=1,2"}, []string{`--vary: bogus: unknown field "bogus"`}},
		{[]string{"smoke", "--vary", "poll_interval=1x,1s"}, []string{`--vary poll_interval=1x: invalid argument "1x"`}},
		{[]string{"smoke", "--vary", "clients=0,5", "--set", "workload.think_time=-1s"},
			[]string{"--vary clients=0: --clients: workload.clients: must be", "--set: workload.think_time: must be >= 0"}},
		{[]string{"nonexistent-scenario", "--vary", "clients=1"}, []string{"nonexistent-scenario"}},
	} {
		out := filepath.Join(t.TempDir(), "out")
		args := append(append([]string{"sweep"}, tc.args...), "--no-progress", "--out", out)
		_, stderr, code := tasksim(t, args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want 2\n%s", tc.args, code, stderr)
		}
		for _, want := range tc.want {
			if !strings.Contains(stderr, want) {
				t.Errorf("%v: stderr %q does not mention %q", tc.args, stderr, want)
			}
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v: the output directory was created (stat: %v)", tc.args, err)
		}
	}
}

// TestReportSweepErrors: `tasksim report` on a sweep directory whose sweep.json it cannot
// render is a runtime error (exit 1) naming the file and what is wrong.
func TestReportSweepErrors(t *testing.T) {
	for _, tc := range []struct{ json, want string }{
		{"{", "unexpected end of JSON input"},
		{`{"vary": []}`, "vary: no dimension"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, sweep.JSONFile), []byte(tc.json), 0o644); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := tasksim(t, "report", dir)
		if code != exitRuntime || !strings.Contains(stderr, filepath.Join(dir, sweep.JSONFile)) || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want 1 naming %s and %q", tc.json, code, stderr, sweep.JSONFile, tc.want)
		}
		if _, err := os.Stat(filepath.Join(dir, sweep.HTMLFile)); !os.IsNotExist(err) {
			t.Errorf("%s: sweep.html was written (stat: %v)", tc.json, err)
		}
	}
}
