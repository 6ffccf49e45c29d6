package mcp_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/mcp/mcptest"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name string
		in   string

		// On success (code == 0):
		kind   mcp.Kind
		id     string // the id's JSON text; "" for none
		method string
		params string // "" for none
		result string
		errMsg string // Error.Message of an error response

		// On failure:
		code int    // -32700 or -32600
		msg  string // the error message must contain this
	}{
		{name: "request with string id", in: `{"jsonrpc":"2.0","id":"c-18","method":"tasks/get","params":{"taskId":"t1"}}`,
			kind: mcp.KindRequest, id: `"c-18"`, method: "tasks/get", params: `{"taskId":"t1"}`},
		{name: "request with integer id", in: `{"jsonrpc":"2.0","id":7,"method":"ping"}`,
			kind: mcp.KindRequest, id: `7`, method: "ping"},
		{name: "request with negative id and escaped string", in: `{"method":"ping","id":-3,"jsonrpc":"2.0"}`,
			kind: mcp.KindRequest, id: `-3`, method: "ping"},
		{name: "request id keeps its exact text", in: `{"jsonrpc":"2.0","id":"c\u002d1","method":"ping"}`,
			kind: mcp.KindRequest, id: `"c\u002d1"`, method: "ping"},
		{name: "notification", in: `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			kind: mcp.KindNotification, method: "notifications/initialized"},
		{name: "notification with null params", in: ` {"jsonrpc":"2.0","method":"notifications/cancelled","params":null}` + "\n",
			kind: mcp.KindNotification, method: "notifications/cancelled"},
		{name: "result response", in: `{"jsonrpc":"2.0","id":"c-1","result":{"content":[{"type":"text","text":"ok"}]}}`,
			kind: mcp.KindResult, id: `"c-1"`, result: `{"content":[{"type":"text","text":"ok"}]}`},
		{name: "error response", in: `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"unknown task"}}`,
			kind: mcp.KindError, id: `3`, errMsg: "unknown task"},
		{name: "error response with null id", in: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`,
			kind: mcp.KindError, errMsg: "parse error"},
		{name: "error response without id", in: `{"jsonrpc":"2.0","error":{"code":-32700,"message":"parse error"}}`,
			kind: mcp.KindError, errMsg: "parse error"},

		{name: "malformed JSON", in: `{"jsonrpc":"2.0","id":1,`, code: mcp.CodeParseError, msg: "not valid JSON"},
		{name: "trailing garbage", in: `{"jsonrpc":"2.0","method":"ping","id":1} x`, code: mcp.CodeParseError, msg: "not valid JSON"},
		{name: "two messages", in: `{"jsonrpc":"2.0","method":"a"}{"jsonrpc":"2.0","method":"b"}`, code: mcp.CodeParseError, msg: "not valid JSON"},
		{name: "empty body", in: ``, code: mcp.CodeParseError, msg: "empty body"},
		{name: "blank body", in: " \r\n\t", code: mcp.CodeParseError, msg: "empty body"},

		{name: "batch", in: `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, code: mcp.CodeInvalidRequest, msg: "batches"},
		{name: "empty batch", in: `[]`, code: mcp.CodeInvalidRequest, msg: "batches"},
		{name: "string", in: `"ping"`, code: mcp.CodeInvalidRequest, msg: "must be a JSON object"},
		{name: "number", in: `42`, code: mcp.CodeInvalidRequest, msg: "must be a JSON object"},
		{name: "null", in: `null`, code: mcp.CodeInvalidRequest, msg: "must be a JSON object"},
		{name: "jsonrpc missing", in: `{"id":1,"method":"ping"}`, code: mcp.CodeInvalidRequest, msg: `"jsonrpc" must be "2.0"`, id: `1`},
		{name: "jsonrpc 1.0", in: `{"jsonrpc":"1.0","id":"a","method":"ping"}`, code: mcp.CodeInvalidRequest, msg: `"jsonrpc" must be "2.0"`, id: `"a"`},
		{name: "jsonrpc null", in: `{"jsonrpc":null,"id":1,"method":"ping"}`, code: mcp.CodeInvalidRequest, msg: `"jsonrpc" must be "2.0"`, id: `1`},
		{name: "jsonrpc a number", in: `{"jsonrpc":2.0,"id":1,"method":"ping"}`, code: mcp.CodeInvalidRequest, msg: "jsonrpc"},
		{name: "null id on a request (H11)", in: `{"jsonrpc":"2.0","id":null,"method":"ping"}`, code: mcp.CodeInvalidRequest, msg: "must not be null (H11)"},
		{name: "float id", in: `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, code: mcp.CodeInvalidRequest, msg: "id must be a string or an integer, got 1.5"},
		{name: "integral float id", in: `{"jsonrpc":"2.0","id":1.0,"method":"ping"}`, code: mcp.CodeInvalidRequest, msg: "id must be a string or an integer"},
		{name: "exponent id", in: `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, code: mcp.CodeInvalidRequest, msg: "id must be a string or an integer"},
		{name: "id out of int64 range", in: `{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}`, code: mcp.CodeInvalidRequest, msg: "id must be a string or an integer"},
		{name: "boolean id", in: `{"jsonrpc":"2.0","id":true,"method":"ping"}`, code: mcp.CodeInvalidRequest, msg: "id must be a string or an integer, got true"},
		{name: "object id", in: `{"jsonrpc":"2.0","id":{},"method":"ping"}`, code: mcp.CodeInvalidRequest, msg: "id must be a string or an integer"},
		{name: "result without id", in: `{"jsonrpc":"2.0","result":{}}`, code: mcp.CodeInvalidRequest, msg: `a result response needs an "id"`},
		{name: "result with null id", in: `{"jsonrpc":"2.0","id":null,"result":{}}`, code: mcp.CodeInvalidRequest, msg: `a result response needs an "id"`},
		{name: "result and error", in: `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`, code: mcp.CodeInvalidRequest, msg: "not both", id: `1`},
		{name: "params an array", in: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1,2]}`, code: mcp.CodeInvalidRequest, msg: `"params" must be an object`, id: `1`},
		{name: "params a string", in: `{"jsonrpc":"2.0","method":"x","params":"a"}`, code: mcp.CodeInvalidRequest, msg: `"params" must be an object`},
		{name: "empty method", in: `{"jsonrpc":"2.0","id":1,"method":""}`, code: mcp.CodeInvalidRequest, msg: `"method" is empty`, id: `1`},
		{name: "method not a string", in: `{"jsonrpc":"2.0","id":1,"method":5}`, code: mcp.CodeInvalidRequest, msg: "method"},
		{name: "request with result", in: `{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}`, code: mcp.CodeInvalidRequest, msg: `carries neither "result" nor "error"`, id: `1`},
		{name: "no method, result or error", in: `{"jsonrpc":"2.0","id":1}`, code: mcp.CodeInvalidRequest, msg: `needs "method", "result" or "error"`, id: `1`},
		{name: "error not an object", in: `{"jsonrpc":"2.0","id":1,"error":"boom"}`, code: mcp.CodeInvalidRequest, msg: "error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := mcp.Decode([]byte(tc.in))
			if tc.code != 0 {
				if err == nil {
					t.Fatalf("Decode(%s) = %+v, want error %d", tc.in, m, tc.code)
				}
				if err.Code != tc.code || !strings.Contains(err.Message, tc.msg) {
					t.Errorf("Decode(%s) error = %d %q, want %d containing %q", tc.in, err.Code, err.Message, tc.code, tc.msg)
				}
				if got := m.ID.String(); got != tc.id {
					t.Errorf("id echoed for the error reply = %s, want %s", got, tc.id)
				}
				if m.Kind != 0 {
					t.Errorf("Kind = %d on error, want 0", m.Kind)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode(%s): %v", tc.in, err)
			}
			if m.Kind != tc.kind || m.ID.String() != tc.id || m.Method != tc.method ||
				string(m.Params) != tc.params || string(m.Result) != tc.result {
				t.Errorf("Decode(%s) = kind %d id %s method %q params %s result %s;\nwant kind %d id %s method %q params %s result %s",
					tc.in, m.Kind, m.ID, m.Method, m.Params, m.Result, tc.kind, tc.id, tc.method, tc.params, tc.result)
			}
			if (m.Error != nil) != (tc.kind == mcp.KindError) {
				t.Errorf("Error = %v for kind %d", m.Error, m.Kind)
			}
			if m.Error != nil && m.Error.Message != tc.errMsg {
				t.Errorf("Error.Message = %q, want %q", m.Error.Message, tc.errMsg)
			}
		})
	}
}

func TestErrorValue(t *testing.T) {
	e := mcp.Errorf(mcp.CodeInvalidParams, "unknown task %q", "t1")
	if e.Code != -32602 || e.Message != `unknown task "t1"` {
		t.Fatalf("Errorf = %+v", e)
	}
	if got := e.Error(); got != `json-rpc error -32602: unknown task "t1"` {
		t.Errorf("Error() = %q", got)
	}
}

func TestID(t *testing.T) {
	tests := []struct {
		id   mcp.ID
		text string
	}{
		{mcp.StringID("c-1"), `"c-1"`},
		{mcp.StringID(`q"uote`), `"q\"uote"`},
		{mcp.StringID("7"), `"7"`},
		{mcp.IntID(7), `7`},
		{mcp.IntID(-1 << 63), `-9223372036854775808`},
		{mcp.ID{}, ``},
	}
	for _, tc := range tests {
		if got := tc.id.String(); got != tc.text {
			t.Errorf("String() = %s, want %s", got, tc.text)
		}
		if tc.id.IsZero() != (tc.text == "") {
			t.Errorf("%s: IsZero() = %v", tc.text, tc.id.IsZero())
		}
		b, err := json.Marshal(tc.id)
		want := tc.text
		if want == "" {
			want = "null"
		}
		if err != nil || string(b) != want {
			t.Errorf("json.Marshal(%s) = %s, %v; want %s", tc.text, b, err, want)
		}
		if tc.text == "" {
			continue
		}
		var back mcp.ID
		if err := json.Unmarshal(b, &back); err != nil || back != tc.id {
			t.Errorf("round trip of %s = %s, %v", tc.text, back, err)
		}
	}
	if mcp.StringID("7") == mcp.IntID(7) {
		t.Error(`StringID("7") == IntID(7); the string and the integer are different ids`)
	}
	for _, bad := range []string{`null`, `1.5`, `1e3`, `true`, `[]`, `{}`, `18446744073709551616`, `"unterminated`} {
		var id mcp.ID
		if err := id.UnmarshalJSON([]byte(bad)); err == nil {
			t.Errorf("UnmarshalJSON(%s) accepted it", bad)
		}
	}
}

func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "tasks/get", `q"uote`, `back\slash`, "new\nline", "tab\t", "\x00\x1f", "naïve ✓", "\u2028\u2029", "<b>&</b>", "😀"} {
		b := mcp.AppendString([]byte("prefix:"), s)
		rest, ok := bytes.CutPrefix(b, []byte("prefix:"))
		if !ok {
			t.Fatalf("AppendString clobbered dst: %s", b)
		}
		var back string
		if err := json.Unmarshal(rest, &back); err != nil || back != s {
			t.Errorf("AppendString(%q) = %s, decodes to %q, %v", s, rest, back, err)
		}
	}
}

func TestAppendResultRoundTrip(t *testing.T) {
	result := `{"content":[{"type":"text","text":"ok"}],"isError":false}`
	for _, id := range []mcp.ID{mcp.StringID("c-1"), mcp.IntID(0), mcp.IntID(42), mcp.StringID("with \"quotes\" and ünïcode")} {
		b := mcp.AppendResult([]byte("keep"), id, []byte(result))
		if !bytes.HasPrefix(b, []byte("keep")) {
			t.Fatalf("AppendResult clobbered dst: %s", b)
		}
		b = b[len("keep"):]
		mcptest.Must(t, mcptest.ValidateReply("tools/call", b))
		mcptest.Must(t, mcptest.ValidateMessage(b))
		m, err := mcp.Decode(b)
		if err != nil {
			t.Fatalf("Decode(%s): %v", b, err)
		}
		if m.Kind != mcp.KindResult || m.ID != id || string(m.Result) != result {
			t.Errorf("Decode(%s) = %+v", b, m)
		}
	}
}

func TestAppendErrorRoundTrip(t *testing.T) {
	withData := mcp.Errorf(mcp.CodeInvalidParams, "unsupported protocol version %q", "1999-01-01")
	withData.Data = json.RawMessage(`{"supported":["2025-11-25"],"requested":"1999-01-01"}`)
	tests := []struct {
		id mcp.ID
		e  *mcp.Error
	}{
		{mcp.StringID("c-21"), mcp.Errorf(mcp.CodeInvalidParams, "cannot cancel: task already completed")},
		{mcp.IntID(9), mcp.Errorf(mcp.CodeInternalError, "store \"down\"\nretry")},
		{mcp.IntID(1), withData},
		{mcp.ID{}, mcp.Errorf(mcp.CodeParseError, "parse error: body is not valid JSON")},
	}
	for _, tc := range tests {
		b := mcp.AppendError(nil, tc.id, tc.e)
		mcptest.Must(t, mcptest.ValidateReply("tasks/cancel", b))
		mcptest.Must(t, mcptest.ValidateMessage(b))
		mcptest.Must(t, mcptest.Validate("JSONRPCErrorResponse", b))
		m, err := mcp.Decode(b)
		if err != nil {
			t.Fatalf("Decode(%s): %v", b, err)
		}
		if m.Kind != mcp.KindError || m.ID != tc.id || m.Error.Code != tc.e.Code || m.Error.Message != tc.e.Message ||
			string(m.Error.Data) != string(tc.e.Data) {
			t.Errorf("Decode(%s) = %+v, error %+v", b, m, m.Error)
		}
		if tc.id.IsZero() && bytes.Contains(b, []byte(`"id"`)) {
			t.Errorf("AppendError with an absent id wrote %s, want no id member", b)
		}
	}
	// Why an absent id is left out: JSONRPCErrorResponse.id is optional, but when present
	// it must be a RequestId (string or integer), so JSON-RPC 2.0's "id":null fails the
	// 2025-11-25 schema.
	mcptest.MustFail(t, mcptest.ValidateReply("ping", []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`)))
}

func TestAppendRequestRoundTrip(t *testing.T) {
	var d mcp.V20251125
	status := d.AppendTask(nil, &mcp.Task{TaskID: "t1", Status: mcp.StatusInputRequired, StatusMessage: "need region",
		CreatedAt: "2026-01-05T09:00:00Z", LastUpdatedAt: "2026-01-05T09:00:40Z", TTL: ms(60000), PollInterval: ms(2000)})
	tests := []struct {
		id     mcp.ID
		method string
		params string
		kind   mcp.Kind
	}{
		{mcp.StringID("c-17"), mcp.MethodToolsCall, `{"name":"render_report","arguments":{"quarter":"Q3"},"task":{"ttl":120000},"_meta":{"progressToken":"pt-17"}}`, mcp.KindRequest},
		{mcp.IntID(18), mcp.MethodTasksGet, `{"taskId":"9f3b6d0e"}`, mcp.KindRequest},
		{mcp.IntID(19), mcp.MethodTasksResult, `{"taskId":"9f3b6d0e"}`, mcp.KindRequest},
		{mcp.IntID(20), mcp.MethodTasksList, ``, mcp.KindRequest},
		{mcp.IntID(21), mcp.MethodTasksCancel, `{"taskId":"9f3b6d0e"}`, mcp.KindRequest},
		{mcp.IntID(22), mcp.MethodPing, ``, mcp.KindRequest},
		{mcp.StringID("s-3"), mcp.MethodElicit, `{"mode":"form","message":"Which region?","requestedSchema":{"type":"object","properties":{"region":{"type":"string"}}},"_meta":` + string(mcp.RelatedTaskMeta("t1")) + `}`, mcp.KindRequest},
		{mcp.ID{}, mcp.MethodInitialized, ``, mcp.KindNotification},
		{mcp.ID{}, mcp.MethodTaskStatus, string(status), mcp.KindNotification},
		{mcp.ID{}, mcp.MethodCancelled, `{"requestId":19,"reason":"client gave up"}`, mcp.KindNotification},
	}
	for _, tc := range tests {
		var params []byte
		if tc.params != "" {
			params = []byte(tc.params)
		}
		b := mcp.AppendRequest(nil, tc.id, tc.method, params)
		mcptest.Must(t, mcptest.ValidateMessage(b))
		m, err := mcp.Decode(b)
		if err != nil {
			t.Fatalf("Decode(%s): %v", b, err)
		}
		if m.Kind != tc.kind || m.ID != tc.id || m.Method != tc.method || string(m.Params) != tc.params {
			t.Errorf("Decode(%s) = %+v", b, m)
		}
	}
}
