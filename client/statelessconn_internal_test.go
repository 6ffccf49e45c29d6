package client

import (
	"strings"
	"testing"

	"github.com/tasksim/tasksim/internal/mcp"
)

// TestParseCallOfTheEnvelope (readCreated, the create of statelessConn): in 2026-07-28 a CreateTaskResult is a valid answer only to a
// tools/call that declared the Tasks extension (E13, E39): a run with the sync fallback,
// whose envelope declares none, takes it as the invalid reply it is.
func TestParseCallOfTheEnvelope(t *testing.T) {
	created := []byte(`{"resultType":"task","taskId":"t1","status":"working","createdAt":"2026-08-03T14:00:00Z",` +
		`"lastUpdatedAt":"2026-08-03T14:00:00Z","ttlMs":60000,"pollIntervalMs":1000}`)
	plain := []byte(`{"resultType":"complete","content":[{"type":"text","text":"done"}]}`)
	for _, tc := range []struct {
		declared    bool
		raw         []byte
		task, call  bool
		errContains string
	}{
		{true, created, true, false, ""},
		{false, created, false, false, "#e13"},
		{false, plain, false, true, ""},
		{true, plain, false, true, ""},
	} {
		var caps mcp.ModernClientCapabilities
		if tc.declared {
			caps.DeclareTasks()
		}
		env, err := (&Target{}).NewEnvelope(ProtocolModern, caps)
		if err != nil {
			t.Fatal(err)
		}
		cr := readCreated(tc.raw, env.DeclaresTasks())
		task, call, err := cr.Task, cr.Call, cr.Malformed
		switch {
		case tc.errContains != "" && (err == nil || !strings.Contains(err.Error(), tc.errContains)):
			t.Errorf("declared %v, %s: error %v, want one citing %s", tc.declared, tc.raw, err, tc.errContains)
		case tc.errContains == "" && (err != nil || (task != nil) != tc.task || (call != nil) != tc.call):
			t.Errorf("declared %v, %s: task %v call %v err %v", tc.declared, tc.raw, task, call, err)
		}
	}
}
