package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/mcp/mcptest"
)

func ms(n int64) *mcp.Ms {
	v := mcp.Ms(n)
	return &v
}

var allStatuses = []mcp.Status{mcp.StatusWorking, mcp.StatusInputRequired, mcp.StatusCompleted, mcp.StatusFailed, mcp.StatusCancelled}

// TestR14 checks CanTransition against the state table of docs/RULES.md#state-machine, copied
// here cell by cell. R13: a new task starts in working. R14: only the transitions of the
// table happen, and a terminal status (completed, failed, cancelled) never changes.
//
// "self" (a non-terminal status observed again, e.g. with a new statusMessage) and "final"
// (a terminal status observed again) are not changes, and CanTransition allows both: a poller
// that sees "completed" twice has seen no transition.
func TestR14(t *testing.T) {
	table := [5][5]string{
		//           working  input_required  completed  failed   cancelled
		/* working */ {"self", "allowed", "allowed", "allowed", "allowed"},
		/* input_r */ {"allowed", "self", "allowed", "allowed", "allowed"},
		/* complet */ {"NO", "NO", "final", "NO", "NO"},
		/* failed  */ {"NO", "NO", "NO", "final", "NO"},
		/* cancel  */ {"NO", "NO", "NO", "NO", "final"},
	}
	for i, from := range allStatuses {
		for j, to := range allStatuses {
			want := table[i][j] != "NO"
			if got := mcp.CanTransition(from, to); got != want {
				t.Errorf("CanTransition(%s, %s) = %v, want %v (table cell %q)", from, to, got, want, table[i][j])
			}
		}
	}

	// R13: the required initial status.
	if mcp.InitialStatus != mcp.StatusWorking {
		t.Errorf("InitialStatus = %s, want working (R13)", mcp.InitialStatus)
	}

	// R14, R28: terminal statuses never change, to anything.
	for _, from := range allStatuses {
		if !from.Terminal() {
			continue
		}
		for to := mcp.Status(0); to < 255; to++ {
			if to != from && mcp.CanTransition(from, to) {
				t.Errorf("terminal %s may change to %s", from, to)
			}
		}
	}

	// Invalid statuses are rejected on either side, even "to itself".
	for _, bad := range []mcp.Status{0, 6, 7, 255} {
		if bad.Valid() {
			t.Errorf("Status(%d).Valid() = true", bad)
		}
		if mcp.CanTransition(bad, bad) {
			t.Errorf("CanTransition(%d, %d) = true", bad, bad)
		}
		for _, s := range allStatuses {
			if mcp.CanTransition(bad, s) || mcp.CanTransition(s, bad) {
				t.Errorf("CanTransition between invalid %d and %s allowed", bad, s)
			}
		}
	}
}

func TestStatusTerminalAndValid(t *testing.T) {
	terminal := map[mcp.Status]bool{mcp.StatusCompleted: true, mcp.StatusFailed: true, mcp.StatusCancelled: true}
	for _, s := range allStatuses {
		if !s.Valid() || s.Terminal() != terminal[s] {
			t.Errorf("%s: Valid %v, Terminal %v", s, s.Valid(), s.Terminal())
		}
	}
	if mcp.Status(0).Terminal() {
		t.Error("the zero Status is terminal")
	}
}

func TestStatusJSON(t *testing.T) {
	names := []string{"working", "input_required", "completed", "failed", "cancelled"}
	for i, s := range allStatuses {
		if s.String() != names[i] {
			t.Errorf("String() = %q, want %q", s, names[i])
		}
		b, err := json.Marshal(s)
		if err != nil || string(b) != `"`+names[i]+`"` {
			t.Errorf("json.Marshal(%s) = %s, %v", s, b, err)
		}
		var back mcp.Status
		if err := json.Unmarshal(b, &back); err != nil || back != s {
			t.Errorf("json.Unmarshal(%s) = %s, %v", b, back, err)
		}
		if p, ok := mcp.ParseStatus(names[i]); !ok || p != s {
			t.Errorf("ParseStatus(%q) = %s, %v", names[i], p, ok)
		}
		mcptest.Must(t, mcptest.Validate("TaskStatus", b))
	}
	for _, bad := range []string{`"done"`, `"Working"`, `""`, `"input-required"`, `null`, `3`, `["working"]`} {
		var s mcp.Status
		if err := json.Unmarshal([]byte(bad), &s); err == nil {
			t.Errorf("json.Unmarshal(%s) accepted it as %s", bad, s)
		}
		if strings.HasPrefix(bad, `"`) {
			name := strings.Trim(bad, `"`)
			if _, ok := mcp.ParseStatus(name); ok {
				t.Errorf("ParseStatus(%q) accepted it", name)
			}
		}
	}
	for _, bad := range []mcp.Status{0, 6, 200} {
		if b, err := json.Marshal(bad); err == nil {
			t.Errorf("json.Marshal(Status(%d)) = %s, want an error", bad, b)
		}
	}
	if got := mcp.Status(9).String(); got != "Status(9)" {
		t.Errorf("Status(9).String() = %q", got)
	}
}

func TestMs(t *testing.T) {
	tests := []struct {
		in   string
		want mcp.Ms
	}{
		{`12000`, 12000},
		{`12000.0`, 12000}, // the TS source says number: read leniently (docs/RULES.md#task-object)
		{`12000.9`, 12000}, // a fraction is dropped
		{`1.2e4`, 12000},
		{`0`, 0},
	}
	for _, tc := range tests {
		var m mcp.Ms
		if err := json.Unmarshal([]byte(tc.in), &m); err != nil || m != tc.want {
			t.Errorf("Unmarshal(%s) = %d, %v; want %d", tc.in, m, err, tc.want)
		}
	}
	for _, bad := range []string{`"12000"`, `true`, `{}`, `1e300`, `-1e300`} {
		var m mcp.Ms
		if err := json.Unmarshal([]byte(bad), &m); err == nil {
			t.Errorf("Unmarshal(%s) = %d, want an error", bad, m)
		}
	}
	if got := mcp.Ms(1500).Duration(); got != 1500*time.Millisecond {
		t.Errorf("Duration() = %v", got)
	}
	if got := mcp.Millis(2*time.Second + 999*time.Microsecond); got == nil || *got != 2000 {
		t.Errorf("Millis = %v", got)
	}

	// In a Task, ttl and pollInterval written by a TS peer as 12000.0 still read; null ttl
	// reads as nil (unlimited).
	var task mcp.Task
	raw := `{"taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"b","ttl":12000.0,"pollInterval":500.0}`
	if err := json.Unmarshal([]byte(raw), &task); err != nil || task.TTL == nil || *task.TTL != 12000 || *task.PollInterval != 500 {
		t.Errorf("Unmarshal(%s) = %+v, %v", raw, task, err)
	}
	raw = `{"taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"b","ttl":null}`
	task = mcp.Task{TTL: ms(1)}
	if err := json.Unmarshal([]byte(raw), &task); err != nil || task.TTL != nil || task.PollInterval != nil {
		t.Errorf("Unmarshal(%s) = %+v, %v", raw, task, err)
	}
}

func TestTaskMarshalMatchesSchema(t *testing.T) {
	// encoding/json on Task (the path of ListTasksResult and the like) must write what the
	// schema wants: ttl always present, null when unlimited.
	tasks := []mcp.Task{
		{TaskID: "t1", Status: mcp.StatusCompleted, CreatedAt: "2026-01-05T09:00:00Z", LastUpdatedAt: "2026-01-05T09:01:10Z", TTL: ms(60000)},
		{TaskID: "t2", Status: mcp.StatusWorking, StatusMessage: "page 12/40", CreatedAt: "2026-01-05T09:00:00Z", LastUpdatedAt: "2026-01-05T09:00:31Z", PollInterval: ms(2000)},
	}
	for i := range tasks {
		b, err := json.Marshal(&tasks[i])
		if err != nil {
			t.Fatal(err)
		}
		mcptest.Must(t, mcptest.Validate("Task", b))
	}
	b, err := json.Marshal(mcp.ListTasksResult{Tasks: tasks, NextCursor: "b2Zm"})
	if err != nil {
		t.Fatal(err)
	}
	mcptest.Must(t, mcptest.Validate("ListTasksResult", b))
	b, err = json.Marshal(mcp.CreateTaskResult{Task: tasks[1]})
	if err != nil {
		t.Fatal(err)
	}
	mcptest.Must(t, mcptest.Validate("CreateTaskResult", b))
}

func TestTime(t *testing.T) {
	at := time.Date(2026, 1, 5, 10, 0, 0, 123456789, time.FixedZone("CET", 3600))
	s := mcp.FormatTime(at)
	if s != "2026-01-05T09:00:00.123Z" {
		t.Errorf("FormatTime = %q", s)
	}
	back, err := mcp.ParseTime(s)
	if err != nil || !back.Equal(at.Truncate(time.Millisecond)) {
		t.Errorf("ParseTime(%q) = %v, %v", s, back, err)
	}
	for _, in := range []string{"2026-01-05T09:00:00Z", "2026-01-05T10:00:00+01:00", "2026-01-05T09:00:00.5Z"} {
		if _, err := mcp.ParseTime(in); err != nil {
			t.Errorf("ParseTime(%q): %v", in, err)
		}
	}
	if _, err := mcp.ParseTime("2026-01-05 09:00"); err == nil {
		t.Error("ParseTime accepted a non-RFC 3339 time")
	}
}
