package main

// `tasksim probe` in the modern era, and run, sweep and conform against a target that
// speaks only 2026-07-28 (docs/RULES.md#e32): the binary built by TestMain against
// `tasksim serve --protocols modern|both`.

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// eraProbed is the part of a manifest of the modern era the tests read, beside probed.
type eraProbed struct {
	Era               string   `json:"era"`
	Eras              []string `json:"eras"`
	EraDetection      string   `json:"era_detection"`
	SupportedVersions []string `json:"supported_versions"`
	Instructions      string   `json:"instructions"`
	Tasks             struct {
		Extension bool `json:"extension"`
	} `json:"tasks"`
	Session struct {
		Stateless bool   `json:"stateless"`
		Note      string `json:"note"`
	} `json:"session"`
}

// probeEra runs `tasksim probe` with args and decodes its manifest twice: as probed, and as
// eraProbed.
func probeEra(t *testing.T, args ...string) (probed, eraProbed) {
	t.Helper()
	m, _ := probe(t, args...)
	out, _, _ := tasksim(t, append([]string{"probe"}, args...)...)
	var e eraProbed
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatalf("probe stdout: %v\n%s", err, out)
	}
	return m, e
}

// TestProbeModernOnly: a server of 2026-07-28 only is described in it: era, the versions of
// server/discover, the Tasks extension, serverInfo, no session; with --create-task, one
// tools/call declaring the extension becomes a task whose pollIntervalMs and ttlMs are
// recorded, and which is cancelled.
func TestProbeModernOnly(t *testing.T) {
	url := startServe(t, "--protocols", "modern", "--poll-interval", "250ms", "--ttl", "90s")
	m, e := probeEra(t, "--target", url)
	if m.ProtocolVersion != "2026-07-28" || e.Era != "2026-07-28" || !slices.Equal(e.Eras, []string{"2026-07-28"}) ||
		!slices.Equal(e.SupportedVersions, []string{"2026-07-28"}) || e.EraDetection != "server/discover answered" {
		t.Errorf("protocol %q era %q eras %q supported %q detection %q: want 2026-07-28 told by server/discover",
			m.ProtocolVersion, e.Era, e.Eras, e.SupportedVersions, e.EraDetection)
	}
	if !e.Tasks.Extension || m.Tasks.Declared || m.Server.Name != "tasksim-mock" || e.Instructions == "" {
		t.Errorf("tasks %+v %+v server %+v instructions %q: want the extension, no legacy leaves, tasksim-mock", e.Tasks, m.Tasks, m.Server, e.Instructions)
	}
	if m.SessionID || m.Session.IDIssued || m.Session.DeleteStatus != 0 || m.Session.GetStatus != 0 || !e.Session.Stateless ||
		!strings.Contains(e.Session.Note, "no sessions") {
		t.Errorf("session %+v %+v: want none, the checks not applicable", m.Session, e.Session)
	}
	// tasksim's three tools, then the conformance suite's seven fixtures (fixtures.go), none
	// with a taskSupport (E40)
	if len(m.Tools) != 10 || m.Tools[0].Name != "work" || m.taskSupport("work") != "" || m.taskSupport("slow_compute") != "" {
		t.Errorf("tools %+v: want the three tools, then the seven fixtures, without taskSupport (E40)", m.Tools)
	}
	if out, _, _ := tasksim(t, "probe", "--target", url); strings.Contains(out, `"task_support"`) || strings.Contains(out, `"tool_task_support"`) {
		t.Errorf("probe printed a task_support key in 2026-07-28, where tools declare none:\n%s", out)
	}

	m, _ = probeEra(t, "--target", url, "--create-task")
	if m.PollIntervalMs == nil || *m.PollIntervalMs != 250 || m.TTLMs == nil || *m.TTLMs != 90_000 {
		t.Errorf("--create-task: poll_interval_ms %v ttl_ms %v, want 250 and 90000; notes %q", m.PollIntervalMs, m.TTLMs, m.Notes)
	}
	if n := m.notes(); !strings.Contains(n, `one task of "work" was created`) || !strings.Contains(n, "the task was cancelled") {
		t.Errorf("notes %q: want the task created and cancelled", n)
	}
	if _, errOut, code := tasksim(t, "probe", "--target", url, "--protocol", "2025-11-25"); code != 1 ||
		!strings.Contains(errOut, "initialize was refused with -32022") || !strings.Contains(errOut, "leave out --protocol 2025-11-25") {
		t.Errorf("--protocol 2025-11-25 against 2026-07-28 only: exit %d, stderr %q; want 1, the refused initialize and the way out", code, errOut)
	}
	m, _ = probeEra(t, "--target", url, "--create-task", "--tool", "work_sync")
	if n := m.notes(); m.PollIntervalMs != nil || !strings.Contains(n, "answered synchronously") {
		t.Errorf("--tool work_sync: poll_interval_ms %v notes %q, want the synchronous answer noted", m.PollIntervalMs, n)
	}
}

// TestProbeBothEras: a server of both eras with the Tasks extension is described in
// 2026-07-28 by default, as run and sweep speak to it, its eras listing both; --protocol
// 2025-11-25 describes the other, without detection.
func TestProbeBothEras(t *testing.T) {
	url := startServe(t) // both eras by default
	m, e := probeEra(t, "--target", url)
	if m.ProtocolVersion != "2026-07-28" || e.Era != "2026-07-28" || !slices.Equal(e.Eras, []string{"2026-07-28", "2025-11-25"}) ||
		!e.Tasks.Extension || !strings.Contains(e.EraDetection, "server/discover") {
		t.Errorf("auto: protocol %q era %q eras %q extension %v detection %q: want 2026-07-28 of both eras", m.ProtocolVersion, e.Era, e.Eras, e.Tasks.Extension, e.EraDetection)
	}
	m, e = probeEra(t, "--target", url, "--protocol", "2025-11-25")
	if m.ProtocolVersion != "2025-11-25" || !slices.Equal(e.Eras, []string{"2025-11-25"}) || !strings.Contains(e.EraDetection, "pinned") || !m.SessionID {
		t.Errorf("--protocol 2025-11-25: protocol %q eras %q detection %q session %v", m.ProtocolVersion, e.Eras, e.EraDetection, m.SessionID)
	}
	if _, errOut, code := tasksim(t, "probe", "--target", url, "--protocol", "2025-06-18"); code != 2 || !strings.Contains(errOut, "--protocol") {
		t.Errorf("--protocol 2025-06-18: exit %d, stderr %q; want 2", code, errOut)
	}
}

// TestModernOnlyTargetRefused: run and sweep find a target of 2026-07-28 only and speak it;
// pinned to 2025-11-25 they exit 1 saying the target speaks only 2026-07-28, not with a
// refused initialize.
func TestModernOnlyTargetRefused(t *testing.T) {
	url := startServe(t, "--protocols", "modern")
	want := "target " + url + " speaks only 2026-07-28 (initialize was refused with -32022"
	for _, args := range [][]string{
		{"run", "smoke", "--target", url, "--duration", "1s", "--no-progress", "--out", t.TempDir(), "--force"}, // the second run replaces the first
		{"sweep", "smoke", "--target", url, "--vary", "clients=1,2", "--cell-duration", "1s", "--out", t.TempDir(), "--no-progress"},
	} {
		if _, errOut, code := tasksim(t, args...); code != 0 {
			t.Errorf("%s: exit %d, stderr %q; want 0, spoken in 2026-07-28", args[0], code, errOut)
		}
		_, errOut, code := tasksim(t, append(args, "--protocol", "2025-11-25")...)
		if code != 1 || !strings.Contains(errOut, want) {
			t.Errorf("%s --protocol 2025-11-25: exit %d, stderr %q; want 1 with %q", args[0], code, errOut, want)
		}
	}
}
