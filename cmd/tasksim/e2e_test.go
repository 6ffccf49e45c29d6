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
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tasksim/tasksim/internal/gcpolicy"
	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/sweep"
)

// binDir holds the binary the end-to-end tests run, built by the first test that needs it
// (bin): a fuzz worker, which runs none of them, builds nothing.
var (
	binDir   string
	binOnce  sync.Once
	binPath  string
	binError error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tasksim-e2e")
	if err != nil {
		panic(err)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// bin returns the path of the tasksim binary, building it on first use.
func bin(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		path := filepath.Join(binDir, "tasksim")
		if out, err := exec.Command("go", "build", "-o", path, ".").CombinedOutput(); err != nil {
			binError = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		binPath = path
	})
	if binError != nil {
		t.Fatal(binError)
	}
	return binPath
}

// tasksim runs the binary and returns stdout, stderr and the exit code.
func tasksim(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin(t), args...)
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
	for _, k := range []string{"tasksim_version", "scenario", "seed", "protocol", "target", "started_at", "duration_s", "trustworthy", "manifest", "runtime", "tasks", "requests", "metrics", "gates", "thresholds", "verdict"} {
		if _, ok := sum[k]; !ok {
			t.Errorf("summary.json lacks %q", k)
		}
	}
	// The binary sets the collector up for load (internal/gcpolicy) unless the environment
	// has: the summary says which.
	rt, _ := sum["runtime"].(map[string]any)
	_, gogcSet := os.LookupEnv("GOGC")
	_, limitSet := os.LookupEnv("GOMEMLIMIT")
	switch {
	case gogcSet || limitSet:
	case rt["gc_set_by"] == "go defaults": // the machine's memory could not be read
	case rt["gc_set_by"] != "tasksim" || rt["gogc"] != float64(gcpolicy.DefaultPercent):
		t.Errorf("runtime = %v; want gogc %d set by tasksim", rt, gcpolicy.DefaultPercent)
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

	// A second run onto the same --out is refused before anything runs, the first run's files
	// untouched; --force replaces them.
	_, errOut, code := tasksim(t, "run", "smoke", "--duration", "1s", "--out", dir, "--no-progress")
	if after, _ := os.ReadFile(filepath.Join(dir, "summary.json")); code != 2 || !strings.Contains(errOut, "already holds a run") ||
		!strings.Contains(errOut, "--force") || !bytes.Equal(after, b) {
		t.Errorf("run onto an existing run: exit %d, stderr %q, summary.json kept %v; want 2, the refusal naming --force, the file unchanged",
			code, errOut, bytes.Equal(after, b))
	}
	if stdout, stderr, code := tasksim(t, "run", "smoke", "--duration", "1s", "--set", "grace=3s", "--out", dir, "--no-progress", "--force"); code != 0 {
		t.Errorf("--force onto an existing run: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
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
		{"invalid override", []string{"run", "smoke", "--set", "workload.clients=0"}, 2, "--set: workload.clients"},
		{"invalid flag value", []string{"run", "smoke", "--clients", "-5"}, 2, "--clients: workload.clients: must be > 0"},
		{"invalid duration", []string{"run", "smoke", "--duration", "0s"}, 2, "--duration: duration: must be > 0"},
		{"unknown field", []string{"run", "smoke", "--set", "workload.clientz=3"}, 2, "clientz"},
		{"unreachable target", []string{"run", "smoke", "--target", "http://127.0.0.1:1/mcp", "--no-progress"}, 1, "127.0.0.1:1"},
		{"bad serve token", []string{"serve", "--token", "nosecret"}, 2, "TENANT=TOKEN"},
		{"tool forbids tasks (R7)", []string{"run", "smoke", "--tool", "work_sync", "--no-progress"}, 2, "taskSupport forbidden"},
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

// TestRuntimeErrorWritesSummary: a run that cannot be made still leaves a summary.json,
// "verdict": "error" with the reason, so that a pipeline reading the file gets an answer;
// the exit code stays what the error calls for (1, or 2 for a refused capability).
func TestRuntimeErrorWritesSummary(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // in the summary's error
	}{
		{"unreachable target", []string{"run", "--target", "http://127.0.0.1:9/mcp"}, 1, "127.0.0.1:9"},
		{"tool forbids tasks (R7)", []string{"run", "smoke", "--tool", "work_sync"}, 2, "taskSupport forbidden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			_, stderr, code := tasksim(t, append(tc.args, "--no-progress", "--out", dir)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
			if err != nil {
				t.Fatalf("no summary.json after a runtime error: %v; stderr:\n%s", err, stderr)
			}
			var sum struct {
				Verdict    string `json:"verdict"`
				Error      string `json:"error"`
				Thresholds []struct {
					Pass   bool   `json:"pass"`
					Source string `json:"source"`
				} `json:"thresholds"`
			}
			if err := json.Unmarshal(b, &sum); err != nil {
				t.Fatal(err)
			}
			if sum.Verdict != "error" || !strings.Contains(sum.Error, tc.want) {
				t.Errorf("verdict %q error %q, want error naming %q", sum.Verdict, sum.Error, tc.want)
			}
			if len(sum.Thresholds) != 2 || sum.Thresholds[0].Pass || sum.Thresholds[0].Source != "error_budget" ||
				sum.Thresholds[1].Pass || sum.Thresholds[1].Source != "evidence" {
				t.Errorf("thresholds %+v: want the error budget and the evidence, not passed", sum.Thresholds)
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
	stderr := serveAndStop(t, "--token", "acme=secret-token")
	if strings.Contains(stderr, "secret-token") {
		t.Error("a token appeared in the output")
	}
}

// serveAndStop runs `tasksim serve --listen 127.0.0.1:0 ARGS...`, checks that the first
// stdout line is the endpoint URL, stops the server with SIGINT, checks that it exits 0, and
// returns its stderr.
func serveAndStop(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin(t), append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
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
		cmd.Process.Kill()
		cmd.Wait()
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
	return stderr.String()
}

// startServe runs `tasksim serve` and returns its URL; the server is stopped when the test
// ends.
func startServe(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin(t), append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("serve: %v", err)
	}
	return strings.TrimSpace(line)
}

// TestRunAgainstTarget drives a separately started server through --target, with a bearer
// token given by --header that must never appear in any output.
func TestRunAgainstTarget(t *testing.T) {
	url := startServe(t, "--poll-interval", "100ms", "--token", "acme=tok-e2e-secret")
	dir := t.TempDir()
	stdout, stderr, code := tasksim(t, "run", "smoke", "--target", url, "--header", "Authorization: Bearer tok-e2e-secret",
		"--duration", "2s", "--set", "grace=3s", "--out", dir, "--no-progress")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Target string
		Tasks  struct{ Created, Completed int }
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Target != url || sum.Tasks.Completed == 0 {
		t.Errorf("target %q, completed %d: want %q and > 0", sum.Target, sum.Tasks.Completed, url)
	}
	for _, out := range []string{stdout, stderr, string(b)} {
		if strings.Contains(out, "tok-e2e-secret") {
			t.Errorf("the bearer token appeared in the output")
		}
	}
	// Without the token the target refuses: a clear error, exit 1.
	_, stderr, code = tasksim(t, "run", "smoke", "--target", url, "--no-progress")
	if code != 1 || !strings.Contains(stderr, "401") {
		t.Errorf("without a token: exit %d, stderr %q; want 1 and a 401", code, stderr)
	}
}

// TestInterruptWritesResults: the first SIGINT stops the load, drains, and still writes
// every file, with "interrupted": true; the exit code is 130, not a pass.
func TestInterruptWritesResults(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(bin(t), "run", "smoke", "--duration", "10m", "--set", "grace=2s", "--out", dir, "--no-progress")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Nothing failed in what was measured, but the run is not whole: exit code 130, never 0.
	interruptAfterFirstSecond(t, cmd, filepath.Join(dir, "timeseries.csv"), syscall.SIGINT, &stderr)
	if !strings.Contains(stdout.String(), "interrupted (exit code 130)") {
		t.Errorf("the verdict line does not say the run was interrupted:\n%s", stdout.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatalf("no summary after SIGINT: %v", err)
	}
	var sum struct {
		Interrupted bool
		Tasks       struct{ Created, Unknown int }
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if !sum.Interrupted || sum.Tasks.Created == 0 {
		t.Errorf("interrupted %v, created %d: want true and > 0", sum.Interrupted, sum.Tasks.Created)
	}
}

// interruptAfterFirstSecond waits for the run's first finished second to reach timeseries
// (a condition, not a timing), sends sig to cmd, and wants it to exit with 130.
func interruptAfterFirstSecond(t *testing.T, cmd *exec.Cmd, timeseries string, sig os.Signal, stderr *bytes.Buffer) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; {
		if b, _ := os.ReadFile(timeseries); bytes.Count(b, []byte("\n")) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no timeseries row after 60s; stderr: %s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) || ee.ExitCode() != results.ExitInterrupted {
		t.Fatalf("after %v: %v, want exit code %d\nstderr: %s", sig, err, results.ExitInterrupted, stderr.String())
	}
}

// TestSweepInterrupted: SIGTERM during a sweep stops the cell it interrupts and the sweep
// with it: the next cell is not run, sweep.csv, sweep.json and the interrupted cell's files
// are written, nothing is recommended and no capacity reported (saying why), and the exit
// code is 130, never a pass.
func TestSweepInterrupted(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(bin(t), "sweep", "smoke", "--vary", "clients=2,4", "--cell-duration", "10m",
		"--set", "grace=2s", "--out", dir, "--no-progress")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	interruptAfterFirstSecond(t, cmd, filepath.Join(dir, "cell-00", "timeseries.csv"), syscall.SIGTERM, &stderr)
	if _, err := os.Stat(filepath.Join(dir, "cell-01")); !os.IsNotExist(err) {
		t.Errorf("the second cell ran after the sweep was interrupted (stat: %v)", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "sweep.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if rows := strings.Count(string(b), "\n"); rows != 3 {
		t.Errorf("sweep.csv has %d lines, want a header and both cells:\n%s", rows, b)
	}
	if !strings.Contains(stdout.String(), "clients=2: interrupted before its end") {
		t.Errorf("the recommendation does not say the cell was interrupted:\n%s", stdout.String())
	}
	if !strings.Contains(stdout.String(), "recommended none: the sweep was interrupted in cell-00 (clients=2)") {
		t.Errorf("the printout does not say why nothing is recommended:\n%s", stdout.String())
	}
	r, err := sweep.ReadJSON(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Interrupted || len(r.Recommended) != 0 || r.Capacity != nil || r.NoRecommendation == "" || r.NoCapacity == "" {
		t.Errorf("sweep.json: interrupted %v, recommended %v, capacity %v, why %q / %q; want true, none, none, and why",
			r.Interrupted, r.Recommended, r.Capacity, r.NoRecommendation, r.NoCapacity)
	}
}

// TestChaosScenariosFromTheCommandLine: the network faults need real sockets (the chaos
// proxy), so flaky-network runs here, shortened, against the embedded server and against
// a --target; the known-bad demo must exit 99.
func TestChaosScenariosFromTheCommandLine(t *testing.T) {
	url := startServe(t, "--poll-interval", "200ms")
	short := []string{"--duration", "4s", "--set", "grace=8s", "--clients", "20", "--no-progress"}
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"flaky-network embedded", []string{"run", "flaky-network"}, 0},
		{"flaky-network target", []string{"run", "flaky-network", "--target", url}, 0},
		{"duplicate-effects-demo", []string{"run", "duplicate-effects-demo"}, 99},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			stdout, stderr, code := tasksim(t, append(append(tc.args, short...), "--out", dir)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tc.code, stdout, stderr)
			}
			sum, err := results.ReadSummary(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !sum.Gates.Recovery.Evaluated {
				t.Errorf("recovery gate not evaluated: %v", sum.Gates.Recovery.Evidence)
			}
			if _, err := os.Stat(filepath.Join(dir, results.EventsFile)); err != nil {
				t.Errorf("no %s: %v", results.EventsFile, err)
			}
			if tc.code == 0 && sum.Tasks.Completed == 0 {
				t.Errorf("no task completed through the proxy: %+v", sum.Tasks)
			}
		})
	}
}

// TestAbortOnFail: a threshold with abort_on_fail stops the load at the first window that
// fails it: the run ends early, says why, keeps its files, and exits 99.
func TestAbortOnFail(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "abort.yaml")
	src := "name: abort-demo\nduration: 60s\ngrace: 5s\ntool: work_task\nargs: {duration_ms: 300}\n" +
		"workload: {clients: 5}\nserver: {poll_interval: 100ms}\nthresholds:\n" +
		"  - {expr: \"tasks.created < 1\", abort_on_fail: false}\n" +
		"  - {expr: \"latency_tasks_get.p99 < 0.001ms\", abort_on_fail: true}\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	_, stderr, code := tasksim(t, "run", file, "--no-progress", "--out", out)
	if code != 99 || !strings.Contains(stderr, `aborted: threshold "latency_tasks_get.p99 < 0.001ms" failed in window`) {
		t.Fatalf("exit %d, want 99 with the abort named; stderr:\n%s", code, stderr)
	}
	sum, err := results.ReadSummary(out)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Aborted == "" || sum.DurationS > 30 {
		t.Errorf("aborted %q after %vs: want an early stop", sum.Aborted, sum.DurationS)
	}
	if r := sum.Thresholds[1]; r.Pass || !r.AbortOnFail || r.WindowsFailed == 0 {
		t.Errorf("abort threshold result %+v", r)
	}
}

// TestNoTokenInErrors: a target that echoes the bearer token back in an error body never
// gets it printed: run, probe and sweep redact every known secret from what they print.
func TestNoTokenInErrors(t *testing.T) {
	const token = "SEKRET-e2e-42"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "invalid token "+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), http.StatusUnauthorized)
	}))
	defer srv.Close()
	hdr := "Authorization: Bearer " + token
	dir := t.TempDir()
	for _, args := range [][]string{
		{"run", "smoke", "--target", srv.URL, "--header", hdr, "--no-progress", "--out", dir},
		{"probe", "--target", srv.URL, "--header", hdr},
		{"sweep", "smoke", "--target", srv.URL, "--header", hdr, "--vary", "clients=1", "--no-progress", "--out", dir},
	} {
		stdout, stderr, code := tasksim(t, args...)
		if code != 1 || !strings.Contains(stderr+stdout, "401") {
			t.Errorf("%s: exit %d, want 1 with the 401 named:\n%s%s", args[0], code, stdout, stderr)
		}
		if strings.Contains(stdout+stderr, token) {
			t.Errorf("%s printed the token:\n%s%s", args[0], stdout, stderr)
		}
	}
	// The run left its error in summary.json, with the target's echo redacted (the walk
	// below checks that no file holds the token).
	if sum, err := results.ReadSummary(dir); err != nil || sum.Verdict != results.VerdictError || !strings.Contains(sum.Error, "401") {
		t.Errorf("summary.json of the failed run: %+v, %v; want verdict error naming the 401", sum, err)
	}
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(path); strings.Contains(string(b), token) {
				t.Errorf("%s holds the token", path)
			}
		}
		return nil
	})
}

// TestProbeTimeoutSaysItsLimit: a target on loopback that accepts connections and never
// answers ends run and probe at their limit, and the error names the limit and the flag that
// sets it.
func TestProbeTimeoutSaysItsLimit(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn // the black hole keeps every connection open, unanswered
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				break
			}
			held = append(held, c)
		}
		for _, c := range held {
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	url := "http://" + ln.Addr().String() + "/mcp"

	_, errOut, code := tasksim(t, "run", "--target", url, "--probe-timeout", "1s", "--out", t.TempDir(), "--no-progress")
	if code != 1 || !strings.Contains(errOut, "no reply within 1s") || !strings.Contains(errOut, "--probe-timeout sets it") {
		t.Errorf("run against a black hole: exit %d, stderr %q; want 1, the limit and --probe-timeout named", code, errOut)
	}
	_, errOut, code = tasksim(t, "probe", "--target", url, "--timeout", "1s")
	if code != 1 || !strings.Contains(errOut, "no reply within 1s") || !strings.Contains(errOut, "--timeout sets it") {
		t.Errorf("probe against a black hole: exit %d, stderr %q; want 1, the limit and --timeout named", code, errOut)
	}
	if _, errOut, code = tasksim(t, "run", "--probe-timeout", "0s", "--dry-run"); code != 2 || !strings.Contains(errOut, "--probe-timeout") {
		t.Errorf("--probe-timeout 0s: exit %d, stderr %q; want a usage error", code, errOut)
	}
}
