package main

// End-to-end tests of the built binary: a short run writes files that parse, bad input gets
// exit code 2 with a message saying what and where, an unreachable target gets exit code 1,
// and serve prints its URL first and stops on SIGINT.

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tasksim-e2e")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "tasksim")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// tasksim runs the binary and returns stdout, stderr and the exit code.
func tasksim(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = t.TempDir()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running tasksim: %v", err)
	}
	return out.String(), errb.String(), code
}

func TestRunWritesParsableFiles(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, code := tasksim(t, "run", "smoke", "--duration", "2s", "--set", "grace=3s", "--out", dir, "--no-progress")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "verdict") || !strings.Contains(stdout, dir) {
		t.Errorf("text summary lacks the verdict or the output directory:\n%s", stdout)
	}
	var sum map[string]any
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatalf("summary.json: %v", err)
	}
	for _, k := range []string{"tasksim_version", "scenario", "seed", "protocol", "target", "started_at", "duration_s", "trustworthy", "manifest", "tasks", "requests", "metrics", "gates", "thresholds", "verdict"} {
		if _, ok := sum[k]; !ok {
			t.Errorf("summary.json lacks %q", k)
		}
	}
	tasks := sum["tasks"].(map[string]any)
	if tasks["created"].(float64) == 0 || tasks["completed"].(float64) == 0 {
		t.Errorf("no tasks created or completed: %v", tasks)
	}
	if sum["verdict"] != "pass" {
		t.Errorf("verdict %v, want pass", sum["verdict"])
	}
	for _, name := range []string{"summary.csv", "timeseries.csv"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil || len(rows) < 2 {
			t.Errorf("%s: %d rows, err %v", name, len(rows), err)
		}
	}
	f, err := os.Open(filepath.Join(dir, "histograms.hlog"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := hdrhistogram.NewHistogramLogReader(f)
	n := 0
	for {
		h, err := rd.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("histograms.hlog: %v", err)
		}
		if h == nil {
			break
		}
		n++
	}
	if n == 0 {
		t.Error("histograms.hlog holds no interval histogram")
	}
}

func TestExitCodes(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		want string // in stderr
	}{
		{"unknown command", []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{"bad flag", []string{"run", "--clients", "many"}, 2, "--clients"},
		{"unknown scenario", []string{"run", "no-such-scenario"}, 2, "no-such-scenario"},
		{"invalid override", []string{"run", "smoke", "--set", "workload.clients=0"}, 2, "workload.clients"},
		{"unknown field", []string{"run", "smoke", "--set", "workload.clientz=3"}, 2, "clientz"},
		{"unreachable target", []string{"run", "smoke", "--target", "http://127.0.0.1:1/mcp", "--no-progress"}, 1, "127.0.0.1:1"},
		{"bad serve token", []string{"serve", "--token", "nosecret"}, 2, "TENANT=TOKEN"},
		{"version", []string{"version"}, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := tasksim(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr does not mention %q:\n%s", tc.want, stderr)
			}
		})
	}
}

func TestDryRun(t *testing.T) {
	stdout, stderr, code := tasksim(t, "run", "--dry-run")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"baseline", "200 closed-model clients", "work_task"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("plan lacks %q:\n%s", want, stdout)
		}
	}
}

// TestServe starts the server, reads its URL from the first stdout line, and stops it with
// SIGINT: exit code 0.
func TestServe(t *testing.T) {
	cmd := exec.Command(binary, "serve", "--listen", "127.0.0.1:0", "--token", "acme=secret-token")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the URL: %v; stderr: %s", err, stderr.String())
	}
	if !strings.HasPrefix(line, "http://127.0.0.1:") || !strings.HasSuffix(strings.TrimSpace(line), "/mcp") {
		t.Errorf("first line %q, want http://127.0.0.1:PORT/mcp", line)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve exited with %v; stderr: %s", err, stderr.String())
		}
	case <-time.After(30 * time.Second): // a bound on a hang, not a timing assertion
		cmd.Process.Kill()
		t.Fatal("serve did not stop on SIGINT")
	}
	if strings.Contains(stderr.String(), "secret-token") {
		t.Error("a token appeared in the output")
	}
}
