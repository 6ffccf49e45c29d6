package peers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The peers Start knows.
const (
	Everything = "everything" // @modelcontextprotocol/server-everything, streamableHttp
	SDKTasks   = "sdk-tasks"  // testdata/sdk-tasks-server.mjs
)

// RequireEnv is the environment variable that, set to 1, makes a peer that cannot be started
// for want of Node.js or of its npm packages a test failure instead of a skip.
const RequireEnv = "TASKSIM_REQUIRE_NODE"

// MinNodeMajor is the oldest Node.js major version the locked packages run on
// (@hono/node-server 2, under the SDK's HTTP transport, declares node >= 20).
const MinNodeMajor = 20

// startTimeout bounds the wait for a peer to listen: a bound on a hang, not a timing
// assertion (node starts in well under a second when the machine is idle).
const startTimeout = 60 * time.Second

// announce starts the stderr line testdata/loopback.mjs writes once the peer listens.
const announce = "tasksim-peers: listening on "

// Dir is the directory that holds package.json, package-lock.json, node_modules and the
// scripts: this package's testdata.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata")
}

// script is the node program of a peer, relative to Dir, and the arguments it always gets.
func script(name string) ([]string, bool) {
	switch name {
	case Everything:
		return []string{"node_modules/@modelcontextprotocol/server-everything/dist/index.js", "streamableHttp"}, true
	case SDKTasks:
		return []string{"sdk-tasks-server.mjs"}, true
	}
	return nil, false
}

// Start runs the peer name with args appended to its command line, waits until it listens
// (on 127.0.0.1, a port of the kernel's choosing), and returns its MCP endpoint,
// http://127.0.0.1:PORT/mcp. The peer's output goes to t.Log line by line; it is killed
// when the test ends. Start skips the test, or fails it under TASKSIM_REQUIRE_NODE=1, when
// Node.js or the npm packages are missing.
func Start(t testing.TB, name string, args ...string) string {
	t.Helper()
	return start(t, name, args...).url
}

// process is a started peer.
type process struct {
	url string
	pid int
}

func start(t testing.TB, name string, args ...string) *process {
	t.Helper()
	argv, ok := script(name)
	if !ok {
		t.Fatalf("peers: no peer named %q (known: %q, %q)", name, Everything, SDKTasks)
	}
	dir := Dir()
	if why := Missing(dir); why != "" {
		unavailable(t, why)
	}
	cmd := exec.Command("node", append(append([]string{"--import", "./loopback.mjs"}, argv...), args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PORT=0") // server-everything's port; 0 = the kernel picks
	ready := make(chan string, 1)
	stdout := &lineLog{t: t, prefix: name + " (stdout): "}
	stderr := &lineLog{t: t, prefix: name + ": ", ready: ready}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = 5 * time.Second // bounds Wait should the pipes outlive the process
	if err := cmd.Start(); err != nil {
		t.Fatalf("peers: starting %s: %v", name, err)
	}
	done := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // an error only says it has exited already
		<-done
		stdout.flush()
		stderr.flush()
	})
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case addr := <-ready:
		if !strings.HasPrefix(addr, "127.0.0.1:") {
			t.Fatalf("peers: %s listens on %s, not on 127.0.0.1", name, addr)
		}
		return &process{url: "http://" + addr + "/mcp", pid: cmd.Process.Pid}
	case <-done:
		t.Fatalf("peers: %s exited before it listened: %v", name, waitErr)
	case <-timer.C:
		t.Fatalf("peers: %s did not listen within %v", name, startTimeout)
	}
	return nil
}

// unavailable skips t, or fails it when RequireEnv is set, saying what is missing and how
// to install it.
func unavailable(t testing.TB, why string) {
	t.Helper()
	msg := fmt.Sprintf("real MCP peers unavailable: %s. To run these tests install Node.js >= %d with npm "+
		"(Debian: apt-get install nodejs npm), then: npm ci --prefix %s (bash .ci/run does both)",
		why, MinNodeMajor, Dir())
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("%s [%s=1: a missing peer is a failure]", msg, RequireEnv)
	}
	t.Skip("SKIPPED: " + msg)
}

// Missing says what keeps the peers in dir from starting ("" when nothing does): node
// absent or older than MinNodeMajor, or an npm package of package.json not installed at the
// version it pins (run npm ci).
func Missing(dir string) string {
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		return fmt.Sprintf("cannot run node (%v)", err)
	}
	v := strings.TrimSpace(string(out))
	major, _, _ := strings.Cut(strings.TrimPrefix(v, "v"), ".")
	if n, err := strconv.Atoi(major); err != nil || n < MinNodeMajor {
		return fmt.Sprintf("node %s is older than %d", v, MinNodeMajor)
	}
	return missingPackages(dir) // conformance.go
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// lineLog writes what a peer prints to t.Log, a line at a time, and hands the address of the
// announce line, if it sees one, to ready.
type lineLog struct {
	t      testing.TB
	prefix string
	ready  chan<- string // nil: no announce line expected here

	mu      sync.Mutex
	partial []byte
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.line(string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}
	return len(p), nil
}

func (l *lineLog) line(s string) {
	l.t.Log(l.prefix + s)
	if addr, ok := strings.CutPrefix(s, announce); ok && l.ready != nil {
		select {
		case l.ready <- addr:
		default:
		}
	}
}

// flush logs a last line that had no newline.
func (l *lineLog) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.partial) > 0 {
		l.line(string(l.partial))
		l.partial = nil
	}
}

// Run runs the Node.js program script (a file of Dir) with args, for at most timeout, and
// returns what it wrote on stdout and how it ended; its stderr goes to t.Log line by line.
// It is for peers that are clients (such as ext-tasks-requester.mjs), which run once
// against a URL the test gives them. Like Start, it skips the test, or fails it under
// TASKSIM_REQUIRE_NODE=1, when Node.js or the npm packages are missing.
func Run(t testing.TB, timeout time.Duration, script string, args ...string) ([]byte, error) {
	t.Helper()
	dir := Dir()
	if why := Missing(dir); why != "" {
		unavailable(t, why)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{script}, args...)...)
	cmd.Dir = dir
	stderr := &lineLog{t: t, prefix: script + ": "}
	cmd.Stderr = stderr
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.Output()
	stderr.flush()
	return out, err
}
