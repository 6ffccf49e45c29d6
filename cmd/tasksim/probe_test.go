package main

// `tasksim probe` end to end: the binary built by TestMain against the embedded server
// (`tasksim serve`, in its normal and compatibility modes) and against an independent
// mcp-go server; and the run's fallbacks against a peer without Tasks.

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"

	"github.com/tasksim/tasksim/results"
)

// probed is the part of the manifest the tests read.
type probed struct {
	Target          string `json:"target"`
	TakenAt         string `json:"taken_at"`
	ProtocolVersion string `json:"protocol_version"`
	Server          struct {
		Name, Version string
	} `json:"server"`
	SessionID bool `json:"session_id"`
	Tasks     struct {
		Declared, List, Cancel bool
		ToolsCall              bool `json:"tools_call"`
	} `json:"tasks"`
	Tools []struct {
		Name        string   `json:"name"`
		TaskSupport string   `json:"task_support"`
		Args        []string `json:"args"`
	} `json:"tools"`
	PollIntervalMs *int64 `json:"poll_interval_ms"`
	TTLMs          *int64 `json:"ttl_ms"`
	Session        struct {
		IDIssued         bool `json:"id_issued"`
		DeleteStatus     int  `json:"delete_status"`
		DeleteAccepted   bool `json:"delete_accepted"`
		GetStatus        int  `json:"get_status"`
		GetStreamOffered bool `json:"get_stream_offered"`
	} `json:"session"`
	Notes []string `json:"notes"`
}

// probe runs `tasksim probe` and decodes its manifest; it fails unless the exit code is 0.
func probe(t *testing.T, args ...string) (probed, string) {
	t.Helper()
	out, errOut, code := tasksim(t, append([]string{"probe"}, args...)...)
	if code != 0 {
		t.Fatalf("probe exit %d, want 0; stderr: %s", code, errOut)
	}
	var m probed
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("probe stdout is not the manifest JSON: %v\n%s", err, out)
	}
	if m.TakenAt == "" {
		t.Error("taken_at is empty")
	}
	return m, out + errOut
}

func (m probed) taskSupport(tool string) string {
	for _, tl := range m.Tools {
		if tl.Name == tool {
			return tl.TaskSupport
		}
	}
	return "(no such tool)"
}

func (m probed) notes() string { return strings.Join(m.Notes, "\n") }

// TestProbeEmbedded: the manifest of the embedded server in 2025-11-25 (pinned: the server
// serves both eras, and is described in 2026-07-28 by default), tasks with cancel
// (and list, since tokens bind tasks to tenants, R54), one tool per taskSupport with its
// declared args, a session id, DELETE accepted (H9), a GET stream offered (H6). pollInterval
// and ttl are observed only with --create-task. The bearer token never appears.
func TestProbeEmbedded(t *testing.T) {
	const secret = "tok-probe-secret"
	url := startServe(t, "--poll-interval", "250ms", "--ttl", "90s", "--token", "acme="+secret)
	hdr := "Authorization: Bearer " + secret

	m, all := probe(t, "--target", url, "--header", hdr, "--protocol", "2025-11-25")
	if strings.Contains(all, secret) {
		t.Fatal("the bearer token appears in the probe's output")
	}
	if m.Target != url || m.ProtocolVersion != "2025-11-25" || m.Server.Name != "tasksim-mock" || m.Server.Version != version {
		t.Errorf("target %q protocol %q server %+v", m.Target, m.ProtocolVersion, m.Server)
	}
	if !m.Tasks.Declared || !m.Tasks.List || !m.Tasks.Cancel || !m.Tasks.ToolsCall {
		t.Errorf("tasks leaves %+v, want all declared", m.Tasks)
	}
	for tool, want := range map[string]string{"work": "optional", "work_task": "required", "work_sync": "forbidden"} {
		if got := m.taskSupport(tool); got != want {
			t.Errorf("%s taskSupport %q, want %q", tool, got, want)
		}
	}
	if len(m.Tools) == 0 || !strings.Contains(strings.Join(m.Tools[0].Args, ","), "duration_ms") {
		t.Errorf("tools %+v: want the declared args", m.Tools)
	}
	s := m.Session
	if !m.SessionID || !s.IDIssued || s.DeleteStatus != 200 || !s.DeleteAccepted || s.GetStatus != 200 || !s.GetStreamOffered {
		t.Errorf("session evidence %+v", s)
	}
	if m.PollIntervalMs != nil || m.TTLMs != nil || !strings.Contains(m.notes(), "--create-task") {
		t.Errorf("without --create-task: poll_interval_ms %v ttl_ms %v notes %q; want null with a note", m.PollIntervalMs, m.TTLMs, m.Notes)
	}

	m, all = probe(t, "--target", url, "--header", hdr, "--create-task", "--protocol", "2025-11-25")
	if strings.Contains(all, secret) {
		t.Fatal("the bearer token appears in the probe's output")
	}
	if m.PollIntervalMs == nil || *m.PollIntervalMs != 250 || m.TTLMs == nil || *m.TTLMs != 90_000 {
		t.Errorf("with --create-task: poll_interval_ms %v ttl_ms %v, want 250 and 90000", m.PollIntervalMs, m.TTLMs)
	}
	if n := m.notes(); !strings.Contains(n, `task of "work" was created`) || !strings.Contains(n, "cancelled") {
		t.Errorf("notes %q: want the task created and cancelled", n)
	}
}

// TestProbeCompatModes: `server.tasks: false` declares no capabilities.tasks and no
// taskSupport (absent = forbidden, R7), so --create-task creates nothing (R6);
// `server.protocol: 2025-06-18` negotiates 2025-06-18, which the client accepts. Pinned to
// 2025-11-25: found by detection, a server of both eras with tasks in neither is described
// in 2026-07-28 (client.ProbeWith).
func TestProbeCompatModes(t *testing.T) {
	for _, tc := range []struct{ set, protocol string }{
		{"server.tasks=false", "2025-11-25"},
		{"server.protocol=2025-06-18", "2025-06-18"},
	} {
		t.Run(tc.set, func(t *testing.T) {
			url := startServe(t, "--set", tc.set)
			m, _ := probe(t, "--target", url, "--create-task", "--protocol", "2025-11-25")
			if m.ProtocolVersion != tc.protocol {
				t.Errorf("protocol %q, want %q", m.ProtocolVersion, tc.protocol)
			}
			if m.Tasks.Declared || m.Tasks.ToolsCall {
				t.Errorf("tasks leaves %+v, want none declared", m.Tasks)
			}
			if got := m.taskSupport("work"); got != "forbidden" {
				t.Errorf("work taskSupport %q, want forbidden (no execution declared)", got)
			}
			if m.PollIntervalMs != nil || !strings.Contains(m.notes(), "no task created") {
				t.Errorf("poll_interval_ms %v notes %q: want no task created (R6)", m.PollIntervalMs, m.Notes)
			}
		})
	}
}

// TestProbeMCPGo: the manifest of an independent server, mark3labs/mcp-go with tasks
// (list, cancel, tools/call) and one optional tool, served on 127.0.0.1 in this process.
func TestProbeMCPGo(t *testing.T) {
	s := mcpgoserver.NewMCPServer("mcp-go-probe", "1.2.1",
		mcpgoserver.WithToolCapabilities(false),
		mcpgoserver.WithTaskCapabilities(true, true, true),
	)
	s.AddTool(mcpgo.NewTool("lookup", mcpgo.WithDescription("looks something up"),
		mcpgo.WithString("key", mcpgo.Description("what to look up")),
		mcpgo.WithTaskSupport(mcpgo.TaskSupportOptional)),
		func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return mcpgo.NewToolResultText("found"), nil
		})
	h := mcpgoserver.NewStreamableHTTPServer(s, mcpgoserver.WithStreamableHTTPLogger(slog.New(slog.DiscardHandler)))
	srv := httptest.NewServer(h) // 127.0.0.1:0
	t.Cleanup(func() {
		_ = h.Shutdown(context.Background())
		srv.Close()
	})
	url := srv.URL + "/mcp"

	m, _ := probe(t, "--target", url, "--create-task")
	if m.ProtocolVersion != "2025-11-25" || m.Server.Name != "mcp-go-probe" || m.Server.Version != "1.2.1" {
		t.Errorf("protocol %q server %+v", m.ProtocolVersion, m.Server)
	}
	if !m.Tasks.Declared || !m.Tasks.List || !m.Tasks.Cancel || !m.Tasks.ToolsCall {
		t.Errorf("tasks leaves %+v, want all declared", m.Tasks)
	}
	if got := m.taskSupport("lookup"); got != "optional" {
		t.Errorf("lookup taskSupport %q, want optional", got)
	}
	if len(m.Tools) != 1 || strings.Join(m.Tools[0].Args, ",") != "key" {
		t.Errorf("tools %+v, want lookup with arg key", m.Tools)
	}
	if !m.Session.IDIssued || m.Session.DeleteStatus == 0 {
		t.Errorf("session evidence %+v: want a session id and a DELETE answered", m.Session)
	}
	// mcp-go advertises no pollInterval (loadgen/interop_mcpgo_test.go); the task itself
	// was created.
	if m.PollIntervalMs != nil || !strings.Contains(m.notes(), `task of "lookup" was created`) {
		t.Errorf("poll_interval_ms %v notes %q", m.PollIntervalMs, m.Notes)
	}
	t.Logf("mcp-go session evidence: %+v; notes %q", m.Session, m.Notes)
}

// TestProbeExitCodes: an unreachable target is exit 1 with the reason; bad flags are exit 2.
func TestProbeExitCodes(t *testing.T) {
	_, errOut, code := tasksim(t, "probe", "--target", "http://127.0.0.1:1/mcp", "--header", "Authorization: Bearer tok-unreachable")
	if code != 1 || !strings.Contains(errOut, "cannot reach target http://127.0.0.1:1/mcp") {
		t.Errorf("unreachable: exit %d, stderr %q; want 1 with the reason", code, errOut)
	}
	if strings.Contains(errOut, "tok-unreachable") {
		t.Error("the token appears in the error")
	}
	for _, args := range [][]string{
		{"probe"},
		{"probe", "--target", "ftp://x/mcp"},
		{"probe", "--target", "http://127.0.0.1:1/mcp", "--header", "no-colon"},
		{"probe", "--target", "http://127.0.0.1:1/mcp", "--timeout", "0s"},
		{"probe", "--nope"},
		{"probe", "--target", "http://127.0.0.1:1/mcp", "extra"},
	} {
		if _, errOut, code := tasksim(t, args...); code != 2 {
			t.Errorf("%q: exit %d, want 2; stderr %q", args, code, errOut)
		}
	}
}

// TestRunFallbacks: against a peer without Tasks a run takes the declared fallback, never
// a silent one: refuse exits 2 naming the missing capability; sync against a 2025-06-18
// peer runs plain tools/call and the compatibility gate passes. (A required tool under
// sync is refused too, R9: loadgen's TestDecide; a server without the capability lists no
// taskSupport, so no tool of the embedded one is required then.)
func TestRunFallbacks(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"refuse: no capability (R6)", []string{"--set", "server.tasks=false", "--tool", "work"},
			[]string{"capabilities.tasks.requests.tools.call", "R6", "fallback: sync"}},
		{"refuse: 2025-06-18 peer", []string{"--set", "server.protocol=2025-06-18", "--tool", "work"},
			[]string{"protocol 2025-06-18", "no Tasks"}},
		{"refuse: the tool forbids tasks (R7)", []string{"--tool", "work_sync"},
			[]string{"taskSupport forbidden", "R7"}},
		{"server.protocol must be a known version", []string{"--set", "server.protocol=2030-01-01"},
			[]string{"server.protocol", "2025-06-18"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"run", "smoke", "--no-progress", "--out", t.TempDir()}, tc.args...)
			_, errOut, code := tasksim(t, args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr %s", code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q does not mention %q", errOut, w)
				}
			}
		})
	}

	t.Run("sync against a 2025-06-18 peer", func(t *testing.T) {
		dir := t.TempDir()
		_, errOut, code := tasksim(t, "run", "smoke", "--no-progress", "--out", dir, "--duration", "2s",
			"--tool", "work", "--set", "fallback=sync", "--set", "server.protocol=2025-06-18", "--set", "args.duration_ms=100")
		if code != 0 {
			t.Fatalf("exit %d, want 0; stderr %s", code, errOut)
		}
		b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		var sum results.Summary
		if err := json.Unmarshal(b, &sum); err != nil {
			t.Fatal(err)
		}
		g := sum.Gates.Compatibility
		zero := func(n *int64) bool { return n != nil && *n == 0 }
		if ev := g.Evidence; !g.Evaluated || !g.Pass || ev.ProtocolVersion != "2025-06-18" || !zero(ev.TaskParamsSent) ||
			!zero(ev.TaskParamsIgnored) {
			t.Errorf("compatibility gate %+v: want evaluated and passing against 2025-06-18", g)
		}
		if sum.Tasks.Created != 0 || sum.Requests["tools/call"].Count == 0 || sum.Requests["tasks/get"].Count != 0 {
			t.Errorf("tasks %+v, requests %v: want only synchronous tools/call", sum.Tasks, sum.Requests)
		}
		if man := sum.Manifest; man == nil || man.ProtocolVersion != "2025-06-18" || man.AsTask || !strings.HasPrefix(man.Fallback, "sync: ") {
			t.Errorf("manifest %+v", man)
		}
	})
}

// TestProbeToolAndArgs: --tool and --args choose the task of --create-task; without it, or
// with --args not a JSON object, they are a usage error (exit 2). With them the probe's task
// is created with what was given.
func TestProbeToolAndArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tool", "work"}, "give --create-task too"},
		{[]string{"--create-task", "--args", "[1]"}, "--args: not a JSON object"},
	} {
		_, errOut, code := tasksim(t, append([]string{"probe", "--target", "http://127.0.0.1:1/mcp"}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("probe %v: exit %d, stderr %q; want 2 saying %q", tc.args, code, errOut, tc.want)
		}
	}
	url := startServe(t)
	m, _ := probe(t, "--target", url, "--create-task", "--tool", "work_task", "--args", `{"duration_ms":100}`)
	if !strings.Contains(m.notes(), `one task of "work_task" was created`) {
		t.Errorf("notes %q, want a task of work_task", m.Notes)
	}
}

// TestProbeToolIsTheOneAskedFor: with --tool, the probe's task is that tool's or none: a tool
// that forbids tasks, or is not listed, creates nothing, and the note says why (no other
// tool runs real work in its place). In 2025-11-25: in 2026-07-28 the server decides
// (TestProbeModernOnly).
func TestProbeToolIsTheOneAskedFor(t *testing.T) {
	url := startServe(t, "--protocols", "legacy")
	for tool, want := range map[string]string{
		"work_sync": `no task created: tool "work_sync" does not support tasks`,
		"wrok_task": `no task created: the target lists no tool "wrok_task"`,
	} {
		m, _ := probe(t, "--target", url, "--create-task", "--tool", tool)
		if !strings.Contains(m.notes(), want) || strings.Contains(m.notes(), "was created") || m.PollIntervalMs != nil {
			t.Errorf("--tool %s: notes %q, want %q and no task", tool, m.Notes, want)
		}
	}
}
