package main

// `tasksim probe` and `tasksim run` against the official Go SDK,
// github.com/modelcontextprotocol/go-sdk v1.8.0, served on 127.0.0.1 in this process: a
// server of 2026-07-28 (and 2025-11-25) without Tasks in either era (see
// loadgen/interop_gosdk_test.go for what it does and why).

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// startGoSDKServer serves a stateless go-sdk v1.8.0 server with the tool "work"
// (duration_ms, as the scenarios send it) and returns its endpoint.
func startGoSDKServer(t *testing.T) string {
	t.Helper()
	s := gosdk.NewServer(&gosdk.Implementation{Name: "go-sdk-cli", Version: "1.8.0"},
		&gosdk.ServerOptions{Instructions: "a go-sdk server without tasks"})
	type args struct {
		DurationMs int `json:"duration_ms,omitempty"`
	}
	gosdk.AddTool(s, &gosdk.Tool{Name: "work", Description: "works duration_ms"},
		func(ctx context.Context, _ *gosdk.CallToolRequest, a args) (*gosdk.CallToolResult, any, error) {
			select {
			case <-ctx.Done():
				return nil, nil, errors.New("cancelled")
			case <-time.After(time.Duration(a.DurationMs) * time.Millisecond):
			}
			return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: "done"}}}, nil, nil
		})
	srv := httptest.NewServer(gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s },
		&gosdk.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// TestProbeGoSDK: `tasksim probe` describes the go-sdk in 2026-07-28, the era it serves
// beside 2025-11-25, without the Tasks extension; --create-task creates nothing and says
// why (E39).
func TestProbeGoSDK(t *testing.T) {
	url := startGoSDKServer(t)
	m, e := probeEra(t, "--target", url, "--create-task")
	if m.ProtocolVersion != "2026-07-28" || e.Era != "2026-07-28" || !slices.Equal(e.Eras, []string{"2026-07-28", "2025-11-25"}) ||
		e.EraDetection != "server/discover answered" || !slices.Contains(e.SupportedVersions, "2026-07-28") {
		t.Errorf("protocol %q era %q eras %q detection %q supported %q: want 2026-07-28 of both eras, told by server/discover",
			m.ProtocolVersion, e.Era, e.Eras, e.EraDetection, e.SupportedVersions)
	}
	if e.Tasks.Extension || m.Tasks.Declared || m.Server.Name != "go-sdk-cli" || e.Instructions != "a go-sdk server without tasks" {
		t.Errorf("tasks %+v %+v server %+v instructions %q: want no tasks, the go-sdk's serverInfo and instructions", e.Tasks, m.Tasks, m.Server, e.Instructions)
	}
	if m.SessionID || !e.Session.Stateless {
		t.Errorf("session id %v, stateless %v: want a stateless description", m.SessionID, e.Session.Stateless)
	}
	if len(m.Tools) != 1 || m.Tools[0].Name != "work" || !slices.Contains(m.Tools[0].Args, "duration_ms") {
		t.Errorf("tools %+v: want work(duration_ms)", m.Tools)
	}
	if n := m.notes(); m.PollIntervalMs != nil || !strings.Contains(n, "does not advertise the Tasks extension") || !strings.Contains(n, "has tasks in neither") {
		t.Errorf("poll_interval_ms %v notes %q: want no task created, and the era choice explained", m.PollIntervalMs, n)
	}
}

// TestRunGoSDK: `tasksim run no-tasks-peer` against the go-sdk speaks 2026-07-28 with
// plain tools/call (fallback sync), passes the compatibility gate, and sends no
// initialize, DELETE or task method; with fallback refuse it stops before its first call,
// naming the extension.
func TestRunGoSDK(t *testing.T) {
	url := startGoSDKServer(t)
	dir := t.TempDir()
	base := []string{"run", "no-tasks-peer", "--target", url, "--duration", "1s", "--set", "workload.clients=3",
		"--set", "args.duration_ms=100", "--set", "grace=3s", "--no-progress"}
	if _, stderr, code := tasksim(t, append(base, "--out", dir)...); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	sum, m := readRun(t, dir)
	g := sum.Gates.Compatibility
	if m.Era != "2026-07-28" || m.EraFallback != "" || m.AsTask || !strings.Contains(m.Fallback, "io.modelcontextprotocol/tasks") {
		t.Errorf("era %q era_fallback %q as_task %v fallback %q: want 2026-07-28, sync naming the extension", m.Era, m.EraFallback, m.AsTask, m.Fallback)
	}
	if !g.Evaluated || !g.Pass {
		t.Errorf("compatibility gate evaluated %v pass %v evidence %v: want evaluated and passed", g.Evaluated, g.Pass, g.Evidence)
	}
	calls := sum.Requests["tools/call"].Count
	if calls == 0 || sum.Tasks.Created != 0 || sum.Tasks.Completed != calls {
		t.Errorf("%d tools/call, %d tasks created, %d completed: want plain calls, all completed", calls, sum.Tasks.Created, sum.Tasks.Completed)
	}
	for method, s := range sum.Requests {
		if method != "tools/call" && s.Count != 0 {
			t.Errorf("%d %s requests: a run of plain calls in 2026-07-28 sends only tools/call", s.Count, method)
		}
	}
	_, stderr, code := tasksim(t, append(base, "--set", "fallback=refuse", "--out", t.TempDir())...)
	if code != 2 || !strings.Contains(stderr, "does not advertise the Tasks extension") {
		t.Errorf("fallback refuse: exit %d, stderr %q; want 2 naming the extension", code, stderr)
	}
}
