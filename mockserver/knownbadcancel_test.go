package mockserver_test

import (
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/mockserver"
)

// cancel_terminal: tasks/cancel of a completed task is refused with -32602 (R26), or turns
// it cancelled, and it reads cancelled after (R14 broken).
func TestKnownBadCancelTerminal(t *testing.T) {
	kbRun(t, func(t *testing.T, on bool) {
		_, c := ruleSetup(t, mockserver.Config{KnownBad: mockserver.KnownBad{CancelTerminal: on}})
		tk := ruleTaskIn(t, c, "completed")
		r := c.call("tasks/cancel", map[string]any{"taskId": tk.TaskID})
		if !on {
			ruleErr(t, r, mcp.CodeInvalidParams, "already completed")
			ruleWantStatus(t, c, tk.TaskID, mcp.StatusCompleted)
			return
		}
		if got := ruleTaskOf(t, r, "CancelTaskResult"); got.Status != mcp.StatusCancelled {
			t.Errorf("tasks/cancel: status %v, want cancelled", got.Status)
		}
		ruleWantStatus(t, c, tk.TaskID, mcp.StatusCancelled)
	})
}

// cancel_ignored: tasks/cancel of a working task makes it cancelled (R27), or is answered
// with the task still working, which then completes.
func TestKnownBadCancelIgnored(t *testing.T) {
	kbRun(t, func(t *testing.T, on bool) {
		_, c := ruleSetup(t, mockserver.Config{KnownBad: mockserver.KnownBad{CancelIgnored: on}})
		t0 := time.Now()
		tk := ruleCreate(t, c, mockserver.ToolWork, map[string]any{"duration_ms": 2000}, nil)
		ruleUntil(t0, time.Second)
		got := ruleTaskOf(t, c.call("tasks/cancel", map[string]any{"taskId": tk.TaskID}), "CancelTaskResult")
		ruleUntil(t0, 3*time.Second)
		if !on {
			if got.Status != mcp.StatusCancelled {
				t.Errorf("tasks/cancel: status %v, want cancelled", got.Status)
			}
			ruleWantStatus(t, c, tk.TaskID, mcp.StatusCancelled)
			return
		}
		if got.Status != mcp.StatusWorking {
			t.Errorf("tasks/cancel: status %v, want the task as it is (working)", got.Status)
		}
		ruleWantStatus(t, c, tk.TaskID, mcp.StatusCompleted)
	})
}
