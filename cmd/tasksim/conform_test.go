package main

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/tasksim/tasksim/results"
)

// conformRun runs `tasksim conform` with args, writing into a fresh directory, and returns
// the parsed conform.json, stdout, stderr and the exit code.
func conformRun(t *testing.T, dir string, args ...string) (*results.Contract, string, string, int) {
	t.Helper()
	out, errOut, code := tasksim(t, append([]string{"conform", "--out", dir}, args...)...)
	b, err := os.ReadFile(filepath.Join(dir, "conform.json"))
	if err != nil {
		return nil, out, errOut, code
	}
	var c results.Contract
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("conform.json: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
		t.Errorf("report.html: %v", err)
	}
	return &c, out, errOut, code
}

// TestConformServe: `tasksim conform` against `tasksim serve`, with nothing given, passes
// every case that runs; with two tenants' tokens (--header, --other-header) the list and
// isolation cases run and pass too; tokens never appear in any output; JUnit XML has one
// testcase per case.
func TestConformServe(t *testing.T) {
	url := startServe(t)
	c, out, errOut, code := conformRun(t, t.TempDir(), "--target", url, "--skip", "ttl.expiry")
	if code != 0 || c == nil || c.Verdict != results.VerdictPass {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "PASS") || !strings.Contains(out, "cancel.terminal") {
		t.Errorf("the table lacks verdicts or ids:\n%s", out)
	}
	if !strings.Contains(errOut, "conform: pass cancel.terminal\n") {
		t.Errorf("stderr does not say each case as it ends:\n%s", errOut)
	}

	tenants := startServe(t, "--token", "alpha=tok-alpha-conform", "--token", "beta=tok-beta-conform")
	junit := filepath.Join(t.TempDir(), "junit.xml")
	dir := t.TempDir()
	c, out, errOut, code = conformRun(t, dir, "--target", tenants, "--header", "Authorization: Bearer tok-alpha-conform",
		"--other-header", "Authorization: Bearer tok-beta-conform", "--skip", "ttl.expiry", "--junit", junit)
	if code != 0 || c == nil {
		t.Fatalf("tenants: exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, k := range c.Cases {
		if strings.HasPrefix(k.ID, "isolation.") || strings.HasPrefix(k.ID, "list.p") {
			if k.Verdict != results.CasePass {
				t.Errorf("%s: %s %s, want pass", k.ID, k.Verdict, k.Message)
			}
		}
	}
	raw, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	files := []string{out, errOut, string(raw)}
	for _, name := range []string{"conform.json", "report.html"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, string(b))
	}
	for _, s := range files {
		if strings.Contains(s, "tok-alpha-conform") || strings.Contains(s, "tok-beta-conform") {
			t.Error("a token appears in the output")
		}
	}
	var suites struct {
		Suites []struct {
			Cases []struct {
				Name string `xml:"name,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(raw, &suites); err != nil {
		t.Fatalf("junit: %v", err)
	}
	if n := len(suites.Suites); n != 1 || len(suites.Suites[0].Cases) != len(c.Cases) {
		t.Errorf("junit: %d suites; want one with %d testcases", n, len(c.Cases))
	}
}

// TestConformExitCodes: 99 when a case fails (a known-bad server), 1 unreachable, 2 usage.
func TestConformExitCodes(t *testing.T) {
	bad := startServe(t, "--set", "server.known_bad=[cancel_terminal_ok]")
	c, out, errOut, code := conformRun(t, t.TempDir(), "--target", bad, "--only", "cancel.")
	if code != 99 || c == nil || c.Counts.Fail != 1 {
		t.Errorf("known-bad: exit %d, want 99 with one failure; stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "FAIL") || !strings.Contains(out, "R26") {
		t.Errorf("the table does not show the failure and its rule:\n%s", out)
	}
	_, errOut, code = tasksim(t, "conform", "--target", "http://127.0.0.1:1/mcp", "--out", t.TempDir())
	if code != 1 || !strings.Contains(errOut, "cannot reach target") {
		t.Errorf("unreachable: exit %d, stderr %q", code, errOut)
	}
	for _, args := range [][]string{
		{"conform"},
		{"conform", "--target", "ftp://x/mcp"},
		{"conform", "--target", "http://127.0.0.1:1/mcp", "--only", "no.such.case"},
		{"conform", "--target", "http://127.0.0.1:1/mcp", "--args", "[1]", "--tool", "x"},
		{"conform", "--target", "http://127.0.0.1:1/mcp", "--args", "{}"},
		{"conform", "--target", "http://127.0.0.1:1/mcp", "--tool-args", "x"},
		{"conform", "--target", "http://127.0.0.1:1/mcp", "--other-header", "nocolon"},
		{"conform", "--target", "http://127.0.0.1:1/mcp", "--budget", "0s"},
		{"conform", "--target", "http://127.0.0.1:1/mcp", "--only", "cancel"},
		{"conform", "--target", "http://127.0.0.1:1/mcp", "--only", "cancel.", "--skip", "cancel."},
		{"conform", "--target", "http://127.0.0.1:1/mcp", "--header", "Authorization: Bearer tok-same-1", "--other-header", "Authorization: Bearer tok-same-1"},
		{"conform", "--target", bad, "--tool", "no-such-tool"},
		{"conform", "--target", bad, "--tool", "work_sync"},
	} {
		if _, errOut, code := tasksim(t, args...); code != 2 {
			t.Errorf("%q: exit %d, want 2; stderr %q", args, code, errOut)
		}
	}
	// A suite in which nothing ran shows nothing: it does not pass.
	url := startServe(t)
	c, _, _, code = conformRun(t, t.TempDir(), "--target", url, "--only", "isolation.")
	if code != 99 || c == nil || c.Counts.Pass != 0 {
		t.Errorf("all skipped: exit %d, want 99", code)
	}
}

// TestRunContractGate: run --contract runs the suite before the load; its result is the
// contract gate (summary.json, conform.json beside it), and a server that breaks a rule of
// the suite fails the run by that gate, exit 99.
func TestRunContractGate(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		pass bool
	}{
		{"good server", nil, 0, true},
		{"cancel of a terminal task answered", []string{"--set", "server.known_bad=[cancel_terminal_ok]"}, 99, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"run", "smoke", "--contract", "--duration", "2s", "--no-progress", "--out", dir}, tc.args...)
			out, errOut, code := tasksim(t, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
			var sum struct {
				Gates struct {
					Contract results.Gate[results.ContractEvidence] `json:"contract"`
				} `json:"gates"`
				Contract *results.Contract `json:"contract"`
			}
			b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &sum); err != nil {
				t.Fatal(err)
			}
			g := sum.Gates.Contract
			if !g.Evaluated || g.Pass != tc.pass || sum.Contract == nil {
				t.Errorf("contract gate %+v, contract present %v; want evaluated, pass %v", g, sum.Contract != nil, tc.pass)
			}
			if _, err := os.Stat(filepath.Join(dir, "conform.json")); err != nil {
				t.Errorf("conform.json: %v", err)
			}
			word := "FAIL"
			if tc.pass {
				word = "pass"
			}
			if !regexp.MustCompile(`(?m)^\s+contract\s+` + word + ` cases_failed=`).MatchString(out) {
				t.Errorf("the text summary does not show the contract gate's verdict (%s):\n%s", word, out)
			}
		})
	}
}

// TestConformInterrupted: SIGINT during the suite stops it; what ran is written, the rest
// is skipped as interrupted (never failed), the tasks it left running are cancelled, and
// the exit code is 130.
func TestConformInterrupted(t *testing.T) {
	url := startServe(t)
	dir := t.TempDir()
	cmd := exec.Command(bin(t), "conform", "--target", url, "--out", dir)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() { // interrupt once the suite is under way, in the lifecycle cases
		if strings.Contains(sc.Text(), "create.ids") {
			_ = cmd.Process.Signal(syscall.SIGINT)
			break
		}
	}
	go io.Copy(io.Discard, stderr)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v, want 130", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "conform.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c results.Contract
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if c.Counts.Fail != 0 || c.Counts.Skip == 0 || c.Counts.Pass == 0 {
		t.Errorf("counts %+v: want passes before the signal, skips after, no failure", c.Counts)
	}
	if len(c.LeftBehind) != 0 {
		t.Errorf("left behind %v: the suite cancels what it created", c.LeftBehind)
	}
}

// TestRunContractInterrupted: SIGINT while run --contract runs the suite stops the suite;
// the load never starts (exit 130), conform.json holds what ran and no case failed.
func TestRunContractInterrupted(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(bin(t), "run", "smoke", "--contract", "--no-progress", "--out", dir)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if strings.Contains(sc.Text(), "create.ids") {
			_ = cmd.Process.Signal(syscall.SIGINT)
			break
		}
	}
	rest, _ := io.ReadAll(stderr)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v, want 130\n%s\n%s", err, strings.Join(lines, "\n"), rest)
	}
	if strings.Contains(string(rest), "closed-model clients") {
		t.Errorf("the load started after the signal:\n%s", rest)
	}
	b, err := os.ReadFile(filepath.Join(dir, "conform.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c results.Contract
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if !c.Interrupted || c.Counts.Fail != 0 {
		t.Errorf("conform.json: interrupted %v, counts %+v; want interrupted, no failure", c.Interrupted, c.Counts)
	}
}

// TestConformModern: against `tasksim serve --protocols modern` the era is detected and the
// modern suite passes (exit 0, the output naming 2026-07-28); with a modern known-bad mode a
// case fails naming its rule (exit 99); against a legacy-only server --protocol 2026-07-28 is
// refused with a message that says why (exit 1), and an unknown --protocol is usage (2).
func TestConformModern(t *testing.T) {
	modern := startServe(t, "--protocols", "modern")
	c, out, errOut, code := conformRun(t, t.TempDir(), "--target", modern)
	if code != 0 || c == nil || c.Verdict != results.VerdictPass || c.Protocol != "2026-07-28" {
		t.Fatalf("modern: exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "protocol 2026-07-28") || !strings.Contains(out, "modern.input") {
		t.Errorf("the table does not say the era, or lacks the modern cases:\n%s", out)
	}

	bad := startServe(t, "--protocols", "modern", "--set", "server.known_bad=[ack_with_task]")
	c, out, errOut, code = conformRun(t, t.TempDir(), "--target", bad, "--no-progress")
	if code != 99 || c == nil || c.Counts.Fail != 2 || !strings.Contains(out, "E60") || !strings.Contains(out, "E58") {
		t.Errorf("known-bad: exit %d, want 99 with modern.input (E58) and modern.cancel (E60) failed; stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	both := startServe(t)
	c, out, errOut, code = conformRun(t, t.TempDir(), "--target", both, "--protocol", "2026-07-28", "--only", "modern.discover,modern.cancel")
	if code != 0 || c == nil || len(c.Cases) != 2 || c.Protocol != "2026-07-28" {
		t.Errorf("both, --protocol 2026-07-28: exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	legacy := startServe(t, "--protocols", "legacy")
	_, out, errOut, code = conformRun(t, t.TempDir(), "--target", legacy, "--protocol", "2026-07-28")
	if code != 1 || !strings.Contains(errOut, "does not speak 2026-07-28") {
		t.Errorf("legacy-only, --protocol 2026-07-28: exit %d, want 1 saying the target does not speak it; stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	_, _, errOut, code = conformRun(t, t.TempDir(), "--target", legacy, "--protocol", "2024")
	if code != 2 || !strings.Contains(errOut, "--protocol") {
		t.Errorf("--protocol 2024: exit %d, want 2; stderr:\n%s", code, errOut)
	}
}

// TestConformFailArgs: --fail-args and --error-args give the calls that end in a tool error
// and in a protocol error, so that E49 is checked with the operator's tool (work, not the
// suite's default work_task): a server that ends a tool error failed (is_error_failed)
// fails modern.result.completed (exit 99), the good server passes (exit 0), and arguments
// that are not a JSON object are usage (exit 2). A server that flips a completed task to
// cancelled on a late cancel (cancel_terminal_flip) fails modern.cancel.terminal.
func TestConformFailArgs(t *testing.T) {
	args := []string{"--no-progress", "--tool", "work", "--args", `{"duration_ms":50}`,
		"--fail-args", `{"duration_ms":50,"outcome":"failed"}`, "--error-args", `{"duration_ms":50,"outcome":"error"}`,
		"--only", "modern.result.completed,modern.result.failed,modern.cancel.terminal"}
	good := startServe(t, "--protocols", "modern")
	c, out, errOut, code := conformRun(t, t.TempDir(), append([]string{"--target", good}, args...)...)
	if code != 0 || c == nil || c.Counts.Pass != 3 {
		t.Errorf("good server: exit %d, want 0 with 3 cases passed; stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, tc := range []struct{ mode, id, rule string }{
		{"is_error_failed", "modern.result.completed", "E49"},
		{"cancel_terminal_flip", "modern.cancel.terminal", "E48"},
	} {
		bad := startServe(t, "--protocols", "modern", "--set", "server.known_bad=["+tc.mode+"]")
		c, out, errOut, code = conformRun(t, t.TempDir(), append([]string{"--target", bad}, args...)...)
		failed := false
		if c != nil {
			for _, k := range c.Cases {
				failed = failed || (k.ID == tc.id && k.Verdict == results.CaseFail && len(k.Broken) > 0 && k.Broken[0] == tc.rule)
			}
		}
		if code != 99 || !failed {
			t.Errorf("%s: exit %d, want 99 with %s failed on %s; stdout:\n%s\nstderr:\n%s", tc.mode, code, tc.id, tc.rule, out, errOut)
		}
	}
	for _, flag := range []string{"--fail-args", "--error-args"} {
		_, _, errOut, code = conformRun(t, t.TempDir(), "--target", good, flag, "[1]")
		if code != 2 || !strings.Contains(errOut, flag+": not a JSON object") {
			t.Errorf("%s [1]: exit %d, want 2 naming the flag; stderr:\n%s", flag, code, errOut)
		}
	}
}
