package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/mcp/mcptest"
)

// TestE25EncodeHeaderValue: the encoding examples of the Streamable HTTP page, and the
// cases the rule names.
func TestE25EncodeHeaderValue(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"us-west1", "us-west1"},                                      // plain ASCII
		{"Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="},              // non-ASCII
		{" padded ", "=?base64?IHBhZGRlZCA=?="},                       // leading and trailing spaces
		{"line1\nline2", "=?base64?bGluZTEKbGluZTI=?="},               // a control character
		{"=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="}, // looks encoded
		{"two words", "two words"},                                    // inner space is plain
		{"tab\there", "=?base64?dGFiCWhlcmU=?="},                      // a tab is a control character
		{"trailing ", "=?base64?dHJhaWxpbmcg?="},                      // one end is enough
		{"", "=?base64??="},                                           // never confused with no header
		{"=?base64?=", "=?base64?PT9iYXNlNjQ/PQ==?="},                 // the markers overlap
		{"=?BASE64?x?=", "=?BASE64?x?="},                              // the markers are case-sensitive
		{"tsk-5b0e9c1a7f2d4e83a6c1", "tsk-5b0e9c1a7f2d4e83a6c1"},      // a task id (E64)
		{"file:///projects/app/config.json", "file:///projects/app/config.json"},
	} {
		got := mcp.EncodeHeaderValue(tc.in)
		if got != tc.want {
			t.Errorf("EncodeHeaderValue(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if back, err := mcp.DecodeHeaderValue(got); err != nil || back != tc.in {
			t.Errorf("DecodeHeaderValue(%q) = %q, %v, want %q", got, back, err, tc.in)
		}
	}
}

// TestE26DecodeHeaderValueRefuses: what no conforming client sends is an error, which a
// server answers with -32020.
func TestE26DecodeHeaderValueRefuses(t *testing.T) {
	for _, v := range []string{
		"h\u00e9llo",             // raw non-ASCII (obs-text): must have been encoded (E25)
		"a\x00b", "a\rb", "a\nb", // control characters
		"=?base64?%%%?=",            // not base64
		"=?base64?SGVsbG8?=",        // not padded: not canonical
		"=?base64?SGVsbG9=?=",       // non-zero padding bits: not canonical
		"=?base64?SGVs bG8=?=",      // a space inside
		"=?base64?" + "/w==" + "?=", // 0xFF: not UTF-8
		"=?base64?=",                // markers overlapping: no encoded value
	} {
		if got, err := mcp.DecodeHeaderValue(v); err == nil {
			t.Errorf("DecodeHeaderValue(%q) = %q, want an error", v, got)
		}
	}
	if got, err := mcp.DecodeHeaderValue("\tinner\ttabs\t"); err != nil || got != "\tinner\ttabs\t" {
		t.Errorf("tabs are valid header characters: %q, %v", got, err)
	}
}

// FuzzHeaderValue checks E25 on any string: the encoded value holds only header-safe
// characters with no space at either end, is the string itself exactly when that is plain,
// and decodes back to it (for valid UTF-8, what JSON strings hold); and tasksim and mcp-go,
// a second implementation of the rule, read each other's encodings.
func FuzzHeaderValue(f *testing.F) {
	for _, s := range []string{"us-west1", "Hello, 世界", " padded ", "line1\nline2", "=?base64?literal?=", "", "=?base64?=", "\xff", "a\tb", "?=", "=?base64?"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := mcp.EncodeHeaderValue(s)
		for i := 0; i < len(enc); i++ {
			if c := enc[i]; c < 0x20 || c > 0x7e {
				t.Fatalf("EncodeHeaderValue(%q) = %q: byte %#x is no header character", s, enc, c)
			}
		}
		if enc == "" || enc[0] == ' ' || enc[len(enc)-1] == ' ' {
			t.Fatalf("EncodeHeaderValue(%q) = %q: empty, or a space at an end", s, enc)
		}
		looksEncoded := strings.HasPrefix(enc, "=?base64?") && strings.HasSuffix(enc, "?=")
		if looksEncoded == (enc == s) {
			t.Fatalf("EncodeHeaderValue(%q) = %q: sent as it is, or encoded, but not exactly one of them", s, enc)
		}
		if !utf8.ValidString(s) {
			if _, err := mcp.DecodeHeaderValue(enc); err == nil {
				t.Fatalf("DecodeHeaderValue(%q) of invalid UTF-8 %q: no error", enc, s)
			}
			return
		}
		if back, err := mcp.DecodeHeaderValue(enc); err != nil || back != s {
			t.Fatalf("DecodeHeaderValue(EncodeHeaderValue(%q) = %q) = %q, %v", s, enc, back, err)
		}
		if s == "" {
			return // mcp-go sends the empty string as it is
		}
		theirs, ok := mcpgo.EncodeHeaderValue(s)
		if !ok || theirs != enc {
			t.Fatalf("EncodeHeaderValue(%q): tasksim %q, mcp-go %q", s, enc, theirs)
		}
		if back, ok := mcpgo.DecodeHeaderValue(enc); !ok || back != s {
			t.Fatalf("mcp-go decodes %q as %q, %v; want %q", enc, back, ok, s)
		}
	})
}

// request decodes a request for checks of its headers.
func request(t testing.TB, method, params string) *mcp.Message {
	t.Helper()
	m, err := mcp.Decode(mcp.AppendRequest(nil, mcp.IntID(42), method, []byte(params)))
	if err != nil {
		t.Fatalf("%s %s: %v", method, params, err)
	}
	return &m
}

// TestE24HeadersFor: a client mirrors the version, the method and the name each request
// needs (E24), the task id for the task methods (E64), encoded by E25.
func TestE24HeadersFor(t *testing.T) {
	meta := mustJSON(t, declaring())
	for _, tc := range []struct {
		method, params string
		want           mcp.RequestHeaders
	}{
		{mcp.MethodToolsCall, `{"name":"bulk_reindex","arguments":{},"_meta":` + meta + `}`, mcp.RequestHeaders{"2026-07-28", "tools/call", "bulk_reindex"}},
		{mcp.MethodToolsCall, `{"name":"héllo","_meta":` + meta + `}`, mcp.RequestHeaders{"2026-07-28", "tools/call", "=?base64?aMOpbGxv?="}},
		{mcp.MethodTasksGet, `{"taskId":"tsk-1","_meta":` + meta + `}`, mcp.RequestHeaders{"2026-07-28", "tasks/get", "tsk-1"}},
		{mcp.MethodTasksUpdate, `{"taskId":"tsk 1 ","inputResponses":{},"_meta":` + meta + `}`, mcp.RequestHeaders{"2026-07-28", "tasks/update", "=?base64?dHNrIDEg?="}},
		{mcp.MethodTasksCancel, `{"taskId":"t","_meta":` + meta + `}`, mcp.RequestHeaders{"2026-07-28", "tasks/cancel", "t"}},
		{mcp.MethodResourcesRead, `{"uri":"file:///a b","_meta":` + meta + `}`, mcp.RequestHeaders{"2026-07-28", "resources/read", "file:///a b"}},
		{mcp.MethodPromptsGet, `{"name":"p","_meta":` + meta + `}`, mcp.RequestHeaders{"2026-07-28", "prompts/get", "p"}},
		{mcp.MethodServerDiscover, `{"_meta":` + meta + `}`, mcp.RequestHeaders{"2026-07-28", "server/discover", ""}},
		{mcp.MethodToolsList, `{"_meta":` + meta + `}`, mcp.RequestHeaders{"2026-07-28", "tools/list", ""}},
	} {
		h, err := mcp.HeadersFor(tc.method, json.RawMessage(tc.params))
		if err != nil || h != tc.want {
			t.Errorf("HeadersFor(%s) = %+v, %v, want %+v", tc.method, h, err, tc.want)
			continue
		}
		if err := mcp.CheckHeaders(h, request(t, tc.method, tc.params)); err != nil {
			t.Errorf("%s: the headers a client sends are refused: %v", tc.method, err)
		}
	}
	for _, tc := range []struct{ method, params string }{
		{mcp.MethodToolsCall, `{"name":"x"}`},                                            // no envelope to mirror (E1)
		{mcp.MethodToolsCall, `{"name":7,"_meta":` + meta + `}`},                         // no name to mirror
		{mcp.MethodTasksGet, `{"_meta":` + meta + `}`},                                   // no task id (E64)
		{mcp.MethodToolsList, `{"_meta":{"io.modelcontextprotocol/protocolVersion":5}}`}, // a version that is no string
	} {
		if h, err := mcp.HeadersFor(tc.method, json.RawMessage(tc.params)); err == nil {
			t.Errorf("HeadersFor(%s, %s) = %+v, want an error", tc.method, tc.params, h)
		}
	}
}

// TestE26CheckHeaders: a server compares each header with the body, each row naming the rule
// it checks; every refusal is -32020 with HTTP 400, the schema's HeaderMismatchError.
func TestE26CheckHeaders(t *testing.T) {
	meta := mustJSON(t, declaring())
	call := `{"name":"bulk_reindex","_meta":` + meta + `}`
	get := `{"taskId":"tsk-1","_meta":` + meta + `}`
	tests := []struct {
		rule           string
		h              mcp.RequestHeaders
		method, params string
		msg            string // "" means accepted
	}{
		{"E24 all three for tools/call", mcp.RequestHeaders{"2026-07-28", "tools/call", "bulk_reindex"}, "tools/call", call, ""},
		{"E64 Mcp-Name is the task id", mcp.RequestHeaders{"2026-07-28", "tasks/get", "tsk-1"}, "tasks/get", get, ""},
		{"E25 an encoded name is decoded first", mcp.RequestHeaders{"2026-07-28", "tasks/get", "=?base64?dHNrLTE=?="}, "tasks/get", get, ""},
		{"E24 no Mcp-Name for tools/list", mcp.RequestHeaders{"2026-07-28", "tools/list", ""}, "tools/list", `{"_meta":` + meta + `}`, ""},
		{"E24 an Mcp-Name where none is needed is not compared", mcp.RequestHeaders{"2026-07-28", "tools/list", "x"}, "tools/list", `{"_meta":` + meta + `}`, ""},
		{"E3 no envelope: not compared, -32602 comes from ReadRequestMeta", mcp.RequestHeaders{"2026-07-28", "tools/call", "x"}, "tools/call", `{"name":"x"}`, ""},
		{"E26 MCP-Protocol-Version missing", mcp.RequestHeaders{"", "tools/call", "bulk_reindex"}, "tools/call", call, "MCP-Protocol-Version header is missing"},
		{"E26 MCP-Protocol-Version differs from _meta", mcp.RequestHeaders{"2025-11-25", "tools/call", "bulk_reindex"}, "tools/call", call, "does not match io.modelcontextprotocol/protocolVersion"},
		{"E26 Mcp-Method missing", mcp.RequestHeaders{"2026-07-28", "", "bulk_reindex"}, "tools/call", call, "Mcp-Method header is missing"},
		{"E26 Mcp-Method differs (values are case-sensitive)", mcp.RequestHeaders{"2026-07-28", "Tools/Call", "bulk_reindex"}, "tools/call", call, "does not match the body's method"},
		{"E26 Mcp-Name missing on tools/call", mcp.RequestHeaders{"2026-07-28", "tools/call", ""}, "tools/call", call, "Mcp-Name header is missing"},
		{"E64 Mcp-Name missing on tasks/cancel", mcp.RequestHeaders{"2026-07-28", "tasks/cancel", ""}, "tasks/cancel", get, "Mcp-Name header is missing"},
		{"E26 Mcp-Name differs from params.taskId", mcp.RequestHeaders{"2026-07-28", "tasks/get", "tsk-0000"}, "tasks/get", get, `"tsk-0000" does not match params.taskId "tsk-1"`},
		{"E26 Mcp-Name differs from params.name", mcp.RequestHeaders{"2026-07-28", "tools/call", "other"}, "tools/call", call, "does not match params.name"},
		{"E25 upper-case markers are a plain value", mcp.RequestHeaders{"2026-07-28", "tasks/get", "=?BASE64?dHNrLTE=?="}, "tasks/get", get, "does not match params.taskId"},
		{"E26 malformed base64", mcp.RequestHeaders{"2026-07-28", "tasks/get", "=?base64?dHNrLTE?="}, "tasks/get", get, "not valid base64"},
		{"E26 invalid characters in Mcp-Name", mcp.RequestHeaders{"2026-07-28", "tools/call", "bulk_r\u00e9index"}, "tools/call", call, "Mcp-Name has invalid characters"},
		{"E26 invalid characters in MCP-Protocol-Version", mcp.RequestHeaders{"2026-07-28\x01", "tools/call", "bulk_reindex"}, "tools/call", call, "MCP-Protocol-Version has invalid characters"},
	}
	for _, tc := range tests {
		err := mcp.CheckHeaders(tc.h, request(t, tc.method, tc.params))
		if tc.msg == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", tc.rule, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: accepted %+v", tc.rule, tc.h)
			continue
		}
		if err.Code != mcp.CodeHeaderMismatch || mcp.HTTPStatus(err.Code) != 400 || !strings.Contains(err.Message, tc.msg) {
			t.Errorf("%s: got %d %q (HTTP %d), want -32020 with %q, HTTP 400", tc.rule, err.Code, err.Message, mcp.HTTPStatus(err.Code), tc.msg)
		}
		reply := mcp.AppendError(nil, mcp.IntID(42), err)
		mcptest.Must(t, mcptest.Validate2026("HeaderMismatchError", reply))
		mcptest.Must(t, mcptest.ValidateReply2026(tc.method, reply))
	}
}

// TestE26NotificationHeaders: no header is required of a notification POST, but one that is
// sent must be well formed and, for Mcp-Method, right.
func TestE26NotificationHeaders(t *testing.T) {
	m, err := mcp.Decode([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}`))
	if err != nil {
		t.Fatal(err)
	}
	for h, ok := range map[mcp.RequestHeaders]bool{
		{}: true,
		{ProtocolVersion: "2026-07-28", Method: "notifications/cancelled"}: true,
		{Method: "notifications/progress"}:                                 false,
		{Name: "\x7f"}:                                                     false,
	} {
		if got := mcp.CheckHeaders(h, &m); (got == nil) != ok {
			t.Errorf("CheckHeaders(%+v) = %v, want accepted %v", h, got, ok)
		}
	}
}

// FuzzHeadersFor: whatever the tool name or task id, the headers a client computes pass the
// server's check (E24, E25, E26, E64).
func FuzzHeadersFor(f *testing.F) {
	for _, s := range []string{"bulk_reindex", "héllo", " x ", "=?base64?x?=", "a\"b\\c", "", "\u2028"} {
		f.Add(s)
	}
	meta := mustJSON(f, declaring())
	f.Fuzz(func(t *testing.T, name string) {
		quoted := string(mcp.AppendString(nil, name))
		for _, tc := range []struct{ method, params string }{
			{mcp.MethodToolsCall, `{"name":` + quoted + `,"_meta":` + meta + `}`},
			{mcp.MethodTasksGet, `{"taskId":` + quoted + `,"_meta":` + meta + `}`},
		} {
			h, err := mcp.HeadersFor(tc.method, json.RawMessage(tc.params))
			if err != nil {
				t.Fatalf("HeadersFor(%s, %s): %v", tc.method, tc.params, err)
			}
			if err := mcp.CheckHeaders(h, request(t, tc.method, tc.params)); err != nil && utf8.ValidString(name) {
				t.Fatalf("%s with name %q: headers %+v refused: %v", tc.method, name, h, err)
			}
		}
	})
}

// TestE26ParamHeaders: marked tool arguments travel as Mcp-Param-{Name} (E24), encoded
// (E25), and an integer is compared as a number (E26).
func TestE26ParamHeaders(t *testing.T) {
	for _, tc := range []struct {
		arg, want string
		ok        bool
	}{
		{`"us-west1"`, "us-west1", true}, {`"Hello, 世界"`, "=?base64?SGVsbG8sIOS4lueVjA==?=", true},
		{`42`, "42", true}, {`-7`, "-7", true}, {`42.0`, "42", true}, {`true`, "true", true}, {`false`, "false", true},
		{`null`, "", false}, {`4.5`, "", false}, {`9007199254740992`, "", false}, {`{}`, "", false}, {`[]`, "", false}, {``, "", false},
	} {
		got, ok := mcp.ParamHeaderValue(json.RawMessage(tc.arg))
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParamHeaderValue(%s) = %q, %v, want %q, %v", tc.arg, got, ok, tc.want, tc.ok)
		}
		if ok && !mcp.MatchParamHeader(got, json.RawMessage(tc.arg)) {
			t.Errorf("MatchParamHeader(%q, %s) = false for the value a client sends", got, tc.arg)
		}
	}
	for _, tc := range []struct {
		header, arg string
		want        bool
	}{
		{"42.0", `42`, true}, {"42", `42.0`, true}, {"0042", `42`, true}, {"43", `42`, false},
		{"42", `"42"`, true}, {"42.0", `"42"`, false}, // a string is compared as text
		{"TRUE", `true`, false}, {"us-west1", `"us-west2"`, false},
		{"=?base64?dXMtd2VzdDE=?=", `"us-west1"`, true}, {"=?base64?broken?=", `"x"`, false}, {"x", `null`, false},
	} {
		if got := mcp.MatchParamHeader(tc.header, json.RawMessage(tc.arg)); got != tc.want {
			t.Errorf("MatchParamHeader(%q, %s) = %v, want %v", tc.header, tc.arg, got, tc.want)
		}
	}
}

// BenchmarkNameHeader builds the Mcp-Name of a 2026-07-28 tasks/get, as a client does for
// each poll after a wait.
func BenchmarkNameHeader(b *testing.B) {
	params := json.RawMessage(`{"taskId":"3f1c9a7e-5b2d-4e8f-9a61-0c7d2e4b8f13","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := mcp.NameHeader(mcp.MethodTasksGet, params); err != nil {
			b.Fatal(err)
		}
	}
}
