package mcp_test

import (
	"encoding/json"
	"testing"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/mcp/mcptest"
)

// TestClassifyRequest: how a server that answers both eras tells them apart, each row naming
// the step of docs/RULES.md#era-detection (and the rule) it checks.
func TestClassifyRequest(t *testing.T) {
	meta := mustJSON(t, declaring())
	modern := `{"taskId":"t","_meta":` + meta + `}`
	tests := []struct {
		rule           string
		method, params string
		header         string
		era            mcp.Era
		code           int
	}{
		{"step 1: a modern _meta version", "tasks/get", modern, "2026-07-28", mcp.EraModern, 0},
		{"step 1: a modern _meta version without the header (stdio; E26 is CheckHeaders')", "tasks/get", modern, "", mcp.EraModern, 0},
		{"step 1: a future version is modern too (E9 answers it)", "tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2027-01-01"}}`, "2027-01-01", mcp.EraModern, 0},
		{"step 1: a version that is no string is a broken envelope (E3)", "tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728}}`, "", mcp.EraModern, 0},
		{"step 1: the envelope wins over the session header (E30)", "tools/call", `{"name":"x","_meta":` + meta + `}`, "2025-11-25", mcp.EraModern, 0},
		{"step 2: initialize with a modern header (E26)", "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`, "2026-07-28", 0, mcp.CodeHeaderMismatch},
		{"step 2: a legacy _meta version with a modern header (E26)", "tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}`, "2026-07-28", 0, mcp.CodeHeaderMismatch},
		{"step 2: a modern header without the envelope (E3)", "tasks/get", `{"taskId":"t"}`, "2026-07-28", 0, mcp.CodeInvalidParams},
		{"step 2: a modern header and no params at all (E3)", "server/discover", ``, "2026-07-28", 0, mcp.CodeInvalidParams},
		{"step 3: initialize", "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`, "", mcp.EraLegacy, 0},
		{"step 3: a request of a session", "tasks/get", `{"taskId":"t"}`, "2025-11-25", mcp.EraLegacy, 0},
		{"step 3: a request without header or envelope", "tools/list", ``, "", mcp.EraLegacy, 0},
		{"step 3: a legacy _meta version", "tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}`, "", mcp.EraLegacy, 0},
		{"step 3: a header that is no version", "tools/list", ``, "banana", mcp.EraLegacy, 0},
		{"step 3: other _meta keys only", "tasks/get", `{"taskId":"t","_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"}}}`, "", mcp.EraLegacy, 0},
	}
	for _, tc := range tests {
		era, err := mcp.ClassifyRequest(tc.method, json.RawMessage(tc.params), tc.header)
		switch {
		case tc.code != 0 && (err == nil || err.Code != tc.code || era != 0):
			t.Errorf("%s: got %v, %v; want error %d", tc.rule, era, err, tc.code)
		case tc.code == 0 && (err != nil || era != tc.era):
			t.Errorf("%s: got %v, %v; want %v", tc.rule, era, err, tc.era)
		case err != nil:
			if mcp.HTTPStatus(err.Code) != 400 {
				t.Errorf("%s: HTTP %d, want 400 (E27)", tc.rule, mcp.HTTPStatus(err.Code))
			}
			mcptest.Must(t, mcptest.ValidateReply2026(tc.method, mcp.AppendError(nil, mcp.IntID(1), err)))
		}
	}
	if mcp.EraLegacy.String() != "legacy" || mcp.EraModern.String() != "modern" || mcp.Era(9).String() != "Era(9)" {
		t.Errorf("Era names: %v %v %v", mcp.EraLegacy, mcp.EraModern, mcp.Era(9))
	}
}
