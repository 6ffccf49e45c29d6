package main

// run and sweep in both protocol eras, from the command line: the era found or pinned, the
// same scenario in both eras side by side, and the compatibility gate over a modern server
// without the Tasks extension and a legacy-only server met by the modern-first client.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/sweep"
)

// runManifest is what a test reads of summary.json's manifest.
type runManifest struct {
	Era          string `json:"era"`
	EraDetection string `json:"era_detection"`
	EraFallback  string `json:"era_fallback"`
	AsTask       bool   `json:"as_task"`
	Fallback     string `json:"fallback"`
}

func readRun(t *testing.T, dir string) (*results.Summary, runManifest) {
	t.Helper()
	sum, err := results.ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	var m runManifest
	b, _ := json.Marshal(sum.Manifest)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return sum, m
}

// TestSweepErasSideBySide: `sweep --vary protocol=2025-11-25,2026-07-28` runs the same
// scenario in both eras on the embedded server; both pass, the modern one without
// initialize, DELETE or tasks/result, and so with fewer requests per task. With stderr no
// terminal, the sweep says as each cell starts and ends, with the cell's status lines.
func TestSweepErasSideBySide(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, code := tasksim(t, "sweep", "smoke", "--vary", "protocol=2025-11-25,2026-07-28",
		"--cell-duration", "2s", "--set", "grace=3s", "--progress-interval", "1s", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, w := range []string{"tasksim sweep: cell 1/2 protocol=2025-11-25 started\n", "tasksim sweep: cell 1/2 protocol=2025-11-25: load 0:01/0:02",
		"tasksim sweep: cell 2/2 protocol=2026-07-28: load 0:01/0:02", "tasksim sweep: cell 2/2 protocol=2026-07-28 done\n"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
	r, err := sweep.ReadJSON(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Cells) != 2 {
		t.Fatalf("%d cells, want 2", len(r.Cells))
	}
	perTask := map[string]float64{}
	for _, c := range r.Cells {
		want := c.Values["protocol"]
		sum, m := readRun(t, filepath.Join(dir, c.Cell))
		if m.Era != want || sum.Protocol != want || c.Verdict != "pass" || c.Figures == nil {
			t.Errorf("cell %s (protocol=%s): era %q, protocol %q, verdict %q", c.Cell, want, m.Era, sum.Protocol, c.Verdict)
			continue
		}
		var reqs int64 // all but the polls, whose count per task moves with the machine's load
		for method, s := range sum.Requests {
			if method != "tasks/get" {
				reqs += s.Count
			}
		}
		perTask[want] = float64(reqs) / float64(sum.Tasks.Created)
		if c.Figures.PollsPerTaskMean < 2 {
			t.Errorf("cell %s: %.2f polls per task", c.Cell, c.Figures.PollsPerTaskMean)
		}
		if want == "2026-07-28" {
			for _, m := range []string{"initialize", "DELETE", "tasks/result"} {
				if n := sum.Requests[m].Count; n != 0 {
					t.Errorf("2026-07-28: %d %s requests", n, m)
				}
			}
		}
	}
	// Per task, 2025-11-25 adds a tasks/result; its sessions add initialize and DELETE. The
	// polls (tasks/get) are left out: how many a task takes depends on when it ends.
	if l, m := perTask["2025-11-25"], perTask["2026-07-28"]; !(m > 0 && l-m >= 0.99) {
		t.Errorf("requests per task but polls: %.2f in 2025-11-25, %.2f in 2026-07-28: want one fewer at least in 2026-07-28", l, m)
	}
	csv, err := os.ReadFile(filepath.Join(dir, sweep.CSVFile))
	if err != nil || !strings.Contains(string(csv), "protocol") {
		t.Errorf("sweep.csv has no protocol column: %v\n%s", err, csv)
	}
}

// TestRunEraFallback: a legacy-only target met by the modern-first client: the fallback to
// initialize is taken and said, and the compatibility gate, evaluated, passes on it.
func TestRunEraFallback(t *testing.T) {
	url := startServe(t, "--protocols", "legacy")
	dir := t.TempDir()
	if _, stderr, code := tasksim(t, "run", "smoke", "--target", url, "--duration", "1s", "--set", "grace=3s", "--no-progress", "--out", dir); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	sum, m := readRun(t, dir)
	g := sum.Gates.Compatibility
	if m.Era != "2025-11-25" || m.EraFallback == "" || !g.Evaluated || !g.Pass || g.Evidence.EraFallback != m.EraFallback {
		t.Errorf("era %q, era_fallback %q; compatibility gate evaluated %v pass %v evidence %v", m.Era, m.EraFallback, g.Evaluated, g.Pass, g.Evidence)
	}
}

// TestRunModernWithoutExtension: a modern server without the Tasks extension (the embedded
// server with server.tasks false, pinned to 2026-07-28) takes plain tools/call with fallback
// sync, and the compatibility gate passes on it; without the fallback the run is refused
// before it starts.
func TestRunModernWithoutExtension(t *testing.T) {
	dir := t.TempDir()
	if _, stderr, code := tasksim(t, "run", "no-tasks-peer", "--protocol", "2026-07-28", "--duration", "1s", "--no-progress", "--out", dir); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	sum, m := readRun(t, dir)
	g := sum.Gates.Compatibility
	if m.Era != "2026-07-28" || m.AsTask || !strings.Contains(m.Fallback, "io.modelcontextprotocol/tasks") || !g.Evaluated || !g.Pass ||
		sum.Tasks.Created != 0 || sum.Tasks.Completed == 0 {
		t.Errorf("era %q as_task %v fallback %q created %d completed %d; gate evaluated %v pass %v evidence %v",
			m.Era, m.AsTask, m.Fallback, sum.Tasks.Created, sum.Tasks.Completed, g.Evaluated, g.Pass, g.Evidence)
	}
	_, stderr, code := tasksim(t, "run", "no-tasks-peer", "--protocol", "2026-07-28", "--set", "fallback=refuse", "--duration", "1s", "--no-progress", "--out", t.TempDir())
	if code != 2 || !strings.Contains(stderr, "does not advertise the Tasks extension") {
		t.Errorf("fallback refuse: exit %d, stderr %q; want 2 naming the extension", code, stderr)
	}
	if _, stderr, code := tasksim(t, "run", "smoke", "--protocol", "2025-06-18", "--dry-run"); code != 2 || !strings.Contains(stderr, "protocol") {
		t.Errorf("--protocol 2025-06-18: exit %d, stderr %q; want 2", code, stderr)
	}
}

// TestRunContractInTheRunsEra: a run's contract gate holds the target to the contract of the
// era the run speaks: pinned to 2026-07-28, the modern suite runs against the embedded
// server, passes on the good one and fails on one breaking E58 and E60.
func TestRunContractInTheRunsEra(t *testing.T) {
	dir := t.TempDir()
	args := []string{"run", "smoke", "--contract", "--protocol", "2026-07-28", "--duration", "1s", "--no-progress"}
	if _, stderr, code := tasksim(t, append(args, "--out", dir)...); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	sum, m := readRun(t, dir)
	c, err := results.ReadContract(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Era != "2026-07-28" || !sum.Gates.Contract.Evaluated || !sum.Gates.Contract.Pass || c.Protocol != "2026-07-28" ||
		!strings.HasPrefix(c.Cases[0].ID, "modern.") {
		t.Errorf("era %q, contract gate %+v, suite protocol %q, first case %q", m.Era, sum.Gates.Contract, c.Protocol, c.Cases[0].ID)
	}
	_, stderr, code := tasksim(t, append(args, "--out", t.TempDir(), "--set", "server.known_bad=[ack_with_task]")...)
	if code != 99 || !strings.Contains(stderr, "contract: fail") {
		t.Errorf("known-bad ack_with_task: exit %d, stderr %q; want 99 with a failed case", code, stderr)
	}
}

// TestConformSelectionOfTheOtherEra: --only naming a case of the era the target is not
// tested in is a usage error that says so, not a suite that ran nothing.
func TestConformSelectionOfTheOtherEra(t *testing.T) {
	url := startServe(t, "--protocols", "modern")
	_, stderr, code := tasksim(t, "conform", "--target", url, "--only", "init.version", "--out", t.TempDir(), "--no-progress")
	if code != 2 || !strings.Contains(stderr, "of the 2025-11-25 suite") {
		t.Errorf("exit %d, stderr %q; want 2 naming the other era's suite", code, stderr)
	}
}
