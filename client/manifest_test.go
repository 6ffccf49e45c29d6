package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/mockserver"
)

// TestDecide: a task parameter is sent only when the session negotiated a protocol with
// Tasks, the server declares tasks.requests.tools.call (R6) and the tool does not forbid
// tasks (R7); otherwise the fallback decides, and a required tool is never called
// synchronously (R9).
func TestDecide(t *testing.T) {
	tools := []ToolManifest{{Name: "opt", TaskSupport: "optional"}, {Name: "req", TaskSupport: "required"}, {Name: "forb", TaskSupport: "forbidden"}}
	cases := []struct {
		name     string
		protocol string // "" = 2025-11-25
		toolCall bool
		tool     string
		fb       Fallback
		asTask   bool
		refused  bool
	}{
		{"optional tool, capability declared", "", true, "opt", FallbackRefuse, true, false},
		{"required tool, capability declared (R9)", "", true, "req", FallbackRefuse, true, false},
		{"forbidden tool refuses (R7)", "", true, "forb", FallbackRefuse, false, true},
		{"forbidden tool with sync fallback", "", true, "forb", FallbackSync, false, false},
		{"no capability refuses (R6)", "", false, "opt", FallbackRefuse, false, true},
		{"no capability with sync fallback", "", false, "opt", FallbackSync, false, false},
		{"no capability, required tool: never synchronous", "", false, "req", FallbackSync, false, true},
		{"unknown tool", "", true, "nope", FallbackSync, false, true},
		{"2025-06-18 peer refuses (no Tasks)", mcp.Version20250618, true, "opt", FallbackRefuse, false, true},
		{"2025-06-18 peer with sync fallback", mcp.Version20250618, true, "opt", FallbackSync, false, false},
		{"2025-06-18 peer, required tool: never synchronous", mcp.Version20250618, true, "req", FallbackSync, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			proto := tc.protocol
			if proto == "" {
				proto = mcp.Version20251125
			}
			m := &Manifest{ProtocolVersion: proto, Tool: tc.tool, Tools: tools, Tasks: TasksManifest{Declared: tc.toolCall, ToolsCall: tc.toolCall}}
			err := m.Decide(tc.fb)
			var ce *CapabilityError
			if refused := errors.As(err, &ce); refused != tc.refused {
				t.Fatalf("Decide error %v, want refused=%v", err, tc.refused)
			}
			if m.AsTask != tc.asTask {
				t.Errorf("AsTask %v, want %v", m.AsTask, tc.asTask)
			}
			if !tc.refused && !tc.asTask && m.Fallback == "" {
				t.Error("the sync fallback was taken silently: Manifest.Fallback is empty")
			}
			if supported, why := m.TasksSupported(); supported != tc.asTask || supported == (why != "") {
				t.Errorf("TasksSupported() = %v, %q; want %v with a reason only when false", supported, why, tc.asTask)
			}
			if tc.refused && tc.tool == "req" && !strings.Contains(err.Error(), "never turned into a synchronous call") {
				t.Errorf("refusal of a required tool %q does not say it is never synchronous", err)
			}
		})
	}
}

// probeServer starts the embedded mock server with cfg on 127.0.0.1 and returns a target
// for it.
func probeServer(t *testing.T, cfg mockserver.Config) (*Target, *mockserver.Server) {
	t.Helper()
	srv, err := mockserver.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	hc := NewHTTPClient(2)
	t.Cleanup(hc.CloseIdleConnections)
	return &Target{URL: srv.URL, Client: hc, ClientInfo: mcp.Implementation{Name: "t", Version: "1"}}, srv
}

// TestProbeWith: the manifest of the embedded server, with the session evidence (H2, H6,
// H9) and, with CreateTask, the pollInterval and ttl of one task, which is then cancelled.
func TestProbeWith(t *testing.T) {
	target, srv := probeServer(t, mockserver.Config{PollInterval: 300 * time.Millisecond, DefaultTTL: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	m, err := ProbeWith(ctx, target, ProbeOptions{Tool: "work"})
	if err != nil {
		t.Fatal(err)
	}
	want := SessionManifest{IDIssued: true, DeleteStatus: 200, DeleteAccepted: true, GetStatus: 200, GetStreamOffered: true}
	if m.Session != want {
		t.Errorf("session evidence %+v, want %+v", m.Session, want)
	}
	if !m.Tasks.ToolsCall || !m.Tasks.Cancel || m.PollIntervalMs != nil || m.TTLMs != nil || len(m.Notes) != 0 {
		t.Errorf("manifest %+v: want tasks declared, nothing observed and no note without CreateTask", m)
	}

	m, err = ProbeWith(ctx, target, ProbeOptions{CreateTask: true})
	if err != nil {
		t.Fatal(err)
	}
	if m.PollIntervalMs == nil || *m.PollIntervalMs != 300 || m.TTLMs == nil || *m.TTLMs != 60_000 || !m.PollIntervalFound {
		t.Errorf("observed pollInterval %v ttl %v, want 300 and 60000", m.PollIntervalMs, m.TTLMs)
	}
	if n := strings.Join(m.Notes, "; "); !strings.Contains(n, "was cancelled") {
		t.Errorf("notes %q: want the probe's task cancelled", n)
	}
	if st := srv.Stats(); st.TasksCreated != 1 {
		t.Errorf("%d tasks created, want exactly the probe's one", st.TasksCreated)
	}
}

// TestProbeWithoutTasks: against a server without the capability, or pinned to
// 2025-06-18 (which the client accepts, mcp.KnownVersion), the manifest shows no tasks
// leaves and no taskSupport; CreateTask sends nothing (R6), so the server counts no task
// parameter; Decide takes the sync fallback or refuses.
func TestProbeWithoutTasks(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      mockserver.Config
		protocol string
	}{
		{"no tasks capability", mockserver.Config{NoTasks: true}, mcp.Version20251125},
		{"2025-06-18 server", mockserver.Config{Protocol: mcp.Version20250618}, mcp.Version20250618},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target, srv := probeServer(t, tc.cfg)
			m, err := ProbeWith(context.Background(), target, ProbeOptions{Tool: "work", CreateTask: true})
			if err != nil {
				t.Fatal(err)
			}
			if m.ProtocolVersion != tc.protocol || m.Tasks != (TasksManifest{}) {
				t.Errorf("protocol %q tasks %+v, want %q and none", m.ProtocolVersion, m.Tasks, tc.protocol)
			}
			if !strings.Contains(strings.Join(m.Notes, "; "), "no task created") || srv.TaskParamsIgnored() != 0 || srv.Stats().TasksCreated != 0 {
				t.Errorf("notes %q, %d task params ignored: want nothing sent (R6)", m.Notes, srv.TaskParamsIgnored())
			}
			var ce *CapabilityError
			if err := m.Decide(FallbackRefuse); !errors.As(err, &ce) {
				t.Errorf("Decide(refuse) = %v, want a CapabilityError", err)
			}
			if err := m.Decide(FallbackSync); err != nil || m.AsTask || !strings.HasPrefix(m.Fallback, "sync: ") {
				t.Errorf("Decide(sync) = %v, AsTask %v, Fallback %q", err, m.AsTask, m.Fallback)
			}
		})
	}
}

// TestSnapshotKeepsEveryField: a Manifest with every field set has a Snapshot that writes
// the same JSON and shares no slice or pointer with it. A field added to Manifest must be
// added to the fixture below (the reflection check says so) and to Snapshot (the JSON
// comparison says so).
func TestSnapshotKeepsEveryField(t *testing.T) {
	ms := int64(250)
	m := &Manifest{
		Target: "http://127.0.0.1:1/mcp", TakenAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), ProtocolVersion: "2025-11-25",
		Server: mcp.Implementation{Name: "s", Title: "S", Version: "1"}, SessionID: true,
		Tasks: TasksManifest{Declared: true, List: true, Cancel: true, ToolsCall: true, Extension: true},
		Tools: []ToolManifest{{Name: "work", TaskSupport: "optional", Args: []string{"duration_ms"}}},
		Tool:  "work", TaskSupport: "optional", AsTask: true, Fallback: "sync: no tasks",
		Era: "2025-11-25", Eras: []string{"2026-07-28", "2025-11-25"}, EraDetection: "server/discover",
		EraFallback: "legacy server", SupportedVersions: []string{"2026-07-28"}, Instructions: "hello",
		PollIntervalMs: &ms, TTLMs: &ms, PollIntervalFound: true, FallbackInterval: 100,
		Session: SessionManifest{Stateless: true, IDIssued: true, DeleteStatus: 204, DeleteAccepted: true,
			GetStatus: 405, GetStreamOffered: true, Note: "n"},
		Notes: []string{"a note"},
	}
	v := reflect.ValueOf(m).Elem()
	for i := range v.NumField() {
		if f := v.Type().Field(i); f.IsExported() && v.Field(i).IsZero() {
			t.Errorf("fixture leaves Manifest.%s zero: set it, and copy it in Snapshot", f.Name)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	snap := m.Snapshot()
	again, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, again) {
		t.Errorf("manifest\n%s\nbecame\n%s", b, again)
	}
	if &snap.Tools[0] == &m.Tools[0] || &snap.Tools[0].Args[0] == &m.Tools[0].Args[0] || &snap.Eras[0] == &m.Eras[0] ||
		&snap.SupportedVersions[0] == &m.SupportedVersions[0] || &snap.Notes[0] == &m.Notes[0] ||
		snap.PollIntervalMs == m.PollIntervalMs || snap.TTLMs == m.TTLMs {
		t.Error("the snapshot shares a slice or a pointer with the manifest")
	}
	if (*Manifest)(nil).Snapshot() != nil {
		t.Error("the snapshot of nil is not nil")
	}
}
