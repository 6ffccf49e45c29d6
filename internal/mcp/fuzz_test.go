package mcp_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/tasksim/tasksim/internal/mcp"
)

// FuzzDecode checks Decode's contract on any input: it never panics; it fails only with
// -32700 (not JSON) or -32600 (JSON, but not one valid message) and then sets no Kind; and a
// message it accepts has a Kind whose fields are consistent and re-encodes, through the
// Append functions, to a message that decodes to the same thing.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":"c-17","method":"tools/call","params":{"name":"r","task":{"ttl":120000}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"a","ttl":null}}`,
		`{"jsonrpc":"2.0","id":"c-19","result":{"content":[{"type":"text","text":"ok"}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"}}}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error","data":{"at":3}}}`,
		`{"jsonrpc":"2.0","id":"\u0063-1","result":null}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`[{"jsonrpc":"2.0","method":"ping"}]`,
		`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","method":"x","params":[1]}`,
		`{"jsonrpc":"2.0",`,
		"\x00",
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := mcp.Decode(in)
		if err != nil {
			if err.Code != mcp.CodeParseError && err.Code != mcp.CodeInvalidRequest {
				t.Fatalf("Decode(%q): code %d, want -32700 or -32600", in, err.Code)
			}
			if err.Message == "" {
				t.Fatalf("Decode(%q): error without a message", in)
			}
			if err.Code == mcp.CodeParseError && json.Valid(bytes.TrimSpace(in)) && len(bytes.TrimSpace(in)) > 0 {
				t.Fatalf("Decode(%q): -32700 for valid JSON", in)
			}
			if m.Kind != 0 {
				t.Fatalf("Decode(%q): Kind %d set on error", in, m.Kind)
			}
			return
		}
		var out []byte
		switch m.Kind {
		case mcp.KindRequest, mcp.KindNotification:
			if m.Method == "" || m.Result != nil || m.Error != nil || m.ID.IsZero() != (m.Kind == mcp.KindNotification) {
				t.Fatalf("Decode(%q) = inconsistent %+v", in, m)
			}
			if m.Params != nil && m.Params[0] != '{' {
				t.Fatalf("Decode(%q): params %s are not an object", in, m.Params)
			}
			out = mcp.AppendRequest(nil, m.ID, m.Method, m.Params)
		case mcp.KindResult:
			if m.ID.IsZero() || m.Result == nil || m.Method != "" || m.Error != nil {
				t.Fatalf("Decode(%q) = inconsistent %+v", in, m)
			}
			out = mcp.AppendResult(nil, m.ID, m.Result)
		case mcp.KindError:
			if m.Error == nil || m.Result != nil || m.Method != "" {
				t.Fatalf("Decode(%q) = inconsistent %+v", in, m)
			}
			out = mcp.AppendError(nil, m.ID, m.Error)
		default:
			t.Fatalf("Decode(%q): no error and Kind %d", in, m.Kind)
		}
		again, err := mcp.Decode(out)
		if err != nil {
			t.Fatalf("Decode(%q) re-encoded as %s, which does not decode: %v", in, out, err)
		}
		if again.Kind != m.Kind || again.ID != m.ID || again.Method != m.Method ||
			!bytes.Equal(again.Params, m.Params) || !bytes.Equal(again.Result, m.Result) {
			t.Fatalf("Decode(%q) = %+v;\nre-encoded %s decodes to %+v", in, m, out, again)
		}
		if m.Error != nil && (again.Error.Code != m.Error.Code || again.Error.Message != m.Error.Message) {
			t.Fatalf("error %+v re-encoded as %s decodes to %+v", m.Error, out, again.Error)
		}
	})
}
