package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/mcp/mcptest"
)

// The names of the modern era are the spec's: each constant, put where the schemas expect
// it, makes a message they accept (mcptest's tables spell the names themselves).
func TestModernNamesAreTheSchemas(t *testing.T) {
	meta := mustJSON(t, declaring())
	for _, tc := range []struct{ method, params string }{
		{mcp.MethodServerDiscover, `{"_meta":` + meta + `}`},
		{mcp.MethodTasksUpdate, `{"taskId":"t","inputResponses":{"k":{"action":"accept","content":{"ok":true}}},"_meta":` + meta + `}`},
		{mcp.MethodSubscriptionsListen, `{"notifications":{"taskIds":["t"]},"_meta":` + meta + `}`},
	} {
		raw := mcp.AppendRequest(nil, mcp.IntID(1), tc.method, []byte(tc.params))
		mcptest.Must(t, mcptest.ValidateMessage2026(raw))
		// A wrong name fails the same check: the constant is what makes it pass.
		bad := mcp.AppendRequest(nil, mcp.IntID(1), tc.method, []byte(`{"_meta":{}}`))
		mcptest.MustFail(t, mcptest.ValidateMessage2026(bad))
	}
	ack := `{"notifications":{"taskIds":[]},"_meta":` + string(mcp.SubscriptionMeta(mcp.StringID("sub-1"))) + `}`
	mcptest.Must(t, mcptest.Validate2026("SubscriptionsAcknowledgedNotification", mcp.AppendRequest(nil, mcp.ID{}, mcp.MethodSubscriptionsAcknowledged, []byte(ack))))
	for code, def := range map[int]string{
		mcp.CodeHeaderMismatch:                  "HeaderMismatchError",
		mcp.CodeMissingRequiredClientCapability: "MissingRequiredClientCapabilityError",
		mcp.CodeUnsupportedProtocolVersion:      "UnsupportedProtocolVersionError",
	} {
		// The code alone, without its data, passes only HeaderMismatchError; the code is
		// what the definitions pin.
		e := &mcp.Error{Code: code, Message: "m", Data: json.RawMessage(`{"supported":[],"requested":"x","requiredCapabilities":{}}`)}
		mcptest.Must(t, mcptest.Validate2026(def, mcp.AppendError(nil, mcp.IntID(1), e)))
		e.Code--
		mcptest.MustFail(t, mcptest.Validate2026(def, mcp.AppendError(nil, mcp.IntID(1), e)))
	}
	if mcp.ExtTasks != "io.modelcontextprotocol/tasks" {
		t.Errorf("ExtTasks = %q", mcp.ExtTasks)
	}
}

// E13: a client knows the core result types, and "task" only when it declared the Tasks
// extension on that request.
func TestE13ResultTypeKnown(t *testing.T) {
	for _, tc := range []struct {
		rt           mcp.ResultType
		plain, tasks bool
	}{
		{mcp.ResultComplete, true, true},
		{mcp.ResultInputRequired, true, true},
		{mcp.ResultTask, false, true},
		{"", false, false},
		{"Complete", false, false},
		{"incomplete", false, false},
	} {
		if got := tc.rt.Known(false); got != tc.plain {
			t.Errorf("%q.Known(false) = %v", tc.rt, got)
		}
		if got := tc.rt.Known(true); got != tc.tasks {
			t.Errorf("%q.Known(true) = %v", tc.rt, got)
		}
	}
}

// E27: the HTTP status of each error of the modern era.
func TestE27HTTPStatus(t *testing.T) {
	for code, want := range map[int]int{
		mcp.CodeMethodNotFound:                  404,
		mcp.CodeHeaderMismatch:                  400,
		mcp.CodeMissingRequiredClientCapability: 400,
		mcp.CodeUnsupportedProtocolVersion:      400,
		mcp.CodeInvalidParams:                   400, // E3, and every -32602 alike
		mcp.CodeInvalidRequest:                  400,
		mcp.CodeParseError:                      400,
		mcp.CodeInternalError:                   200,
		-32000:                                  200,
		1234:                                    200,
	} {
		if got := mcp.HTTPStatus(code); got != want {
			t.Errorf("HTTPStatus(%d) = %d, want %d", code, got, want)
		}
	}
}

// ext-gap-8: the draft numbers are read as the released codes, and said to be drafts.
func TestExtGap8CanonicalCode(t *testing.T) {
	for _, tc := range []struct{ code, want int }{
		{-32001, mcp.CodeHeaderMismatch}, {-32003, mcp.CodeMissingRequiredClientCapability}, {-32004, mcp.CodeUnsupportedProtocolVersion},
	} {
		if got, draft := mcp.CanonicalCode(tc.code); got != tc.want || !draft {
			t.Errorf("CanonicalCode(%d) = %d, %v, want %d, true", tc.code, got, draft, tc.want)
		}
	}
	for _, code := range []int{mcp.CodeHeaderMismatch, mcp.CodeMissingRequiredClientCapability, mcp.CodeUnsupportedProtocolVersion, -32002, -32602, -32000, 0} {
		if got, draft := mcp.CanonicalCode(code); got != code || draft {
			t.Errorf("CanonicalCode(%d) = %d, %v, want it unchanged", code, got, draft)
		}
	}
}

// E12: a result without resultType is "complete", and the reader says it had none.
func TestE12ReadResultType(t *testing.T) {
	for _, tc := range []struct {
		raw   string
		want  mcp.ResultType
		quirk mcp.Quirks
		err   bool
	}{
		{`{"resultType":"complete","content":[]}`, mcp.ResultComplete, 0, false},
		{`{"content":[],"resultType":"task"}`, mcp.ResultTask, 0, false},
		{` {"content":[]}`, mcp.ResultComplete, mcp.QuirkNoResultType, false},
		{`{}`, mcp.ResultComplete, mcp.QuirkNoResultType, false},
		{`{"resultType":"x\u0041"}`, "xA", 0, false},
		{`{"resultType":null}`, "", 0, true},
		{`{"resultType":7}`, "", 0, true},
		{`[]`, "", 0, true},
		{`{"resultType":"complete"`, "", 0, true},
		{``, "", 0, true},
	} {
		got, q, err := mcp.ReadResultType([]byte(tc.raw))
		if (err != nil) != tc.err || got != tc.want || q != tc.quirk {
			t.Errorf("ReadResultType(%s) = %q, %v, %v; want %q, %v, error %v", tc.raw, got, q, err, tc.want, tc.quirk, tc.err)
		}
	}
}

func TestWithResultType(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{`{"content":[]}`, `{"resultType":"complete","content":[]}`, ""},
		{` { } `, `{"resultType":"complete" } `, ""},
		{`{"resultType":"complete","content":[]}`, `{"resultType":"complete","content":[]}`, ""},
		{`{"resultType":"task"}`, "", `"task"`},
		{`[1]`, "", "object"},
	} {
		got, err := mcp.WithResultType(json.RawMessage(tc.in), mcp.ResultComplete)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("WithResultType(%s) = %s, %v; want an error with %s", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || string(got) != tc.want || !json.Valid(got) {
			t.Errorf("WithResultType(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	// A 2025-11-25 CallToolResult becomes a 2026-07-28 one (E11).
	res, err := mcp.WithResultType(json.RawMessage(`{"content":[{"type":"text","text":"ok"}],"isError":true}`), mcp.ResultComplete)
	if err != nil {
		t.Fatal(err)
	}
	mcptest.MustFail(t, mcptest.Validate2026("CallToolResult", []byte(`{"content":[]}`)))
	mcptest.Must(t, mcptest.Validate2026("CallToolResult", res))
}

func TestQuirksString(t *testing.T) {
	if s := mcp.Quirks(0).String(); s != "" {
		t.Errorf("no quirks: %q", s)
	}
	q := mcp.QuirkNoResultType | mcp.QuirkNestedTask | mcp.QuirkLegacyNotification | mcp.QuirkTaskResultType
	if s := q.String(); s != "no_result_type|task_result_type|nested_task|legacy_notification" {
		t.Errorf("all quirks: %q", s)
	}
}

// declaring returns the envelope of a 2026-07-28 request that declares the Tasks extension
// and form elicitation, as tasksim's clients send it on every request (ext-gap-6).
func declaring() mcp.RequestMeta {
	m := mcp.RequestMeta{ProtocolVersion: mcp.Version20260728, ClientInfo: &mcp.Implementation{Name: "tasksim", Version: "0.1.0"}}
	m.ClientCapabilities.Elicitation = &mcp.ElicitationCapability{Form: mcp.On()}
	m.ClientCapabilities.DeclareTasks()
	return m
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
