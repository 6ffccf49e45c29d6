package loadgen

import (
	"errors"
	"testing"
)

// TestDecide: a task parameter is sent only when the server declares
// tasks.requests.tools.call (R6) and the tool does not forbid tasks (R7); otherwise the
// fallback decides, and a required tool is never called synchronously.
func TestDecide(t *testing.T) {
	tools := []ToolManifest{{Name: "opt", TaskSupport: "optional"}, {Name: "req", TaskSupport: "required"}, {Name: "forb", TaskSupport: "forbidden"}}
	cases := []struct {
		name     string
		toolCall bool
		tool     string
		fb       Fallback
		asTask   bool
		refused  bool
	}{
		{"optional tool, capability declared", true, "opt", FallbackRefuse, true, false},
		{"required tool, capability declared (R9)", true, "req", FallbackRefuse, true, false},
		{"forbidden tool refuses (R7)", true, "forb", FallbackRefuse, false, true},
		{"forbidden tool with sync fallback", true, "forb", FallbackSync, false, false},
		{"no capability refuses (R6)", false, "opt", FallbackRefuse, false, true},
		{"no capability with sync fallback", false, "opt", FallbackSync, false, false},
		{"no capability, required tool: never synchronous", false, "req", FallbackSync, false, true},
		{"unknown tool", true, "nope", FallbackSync, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := &Manifest{Tool: tc.tool, Tools: tools, Tasks: TasksManifest{Declared: tc.toolCall, ToolsCall: tc.toolCall}}
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
		})
	}
}
