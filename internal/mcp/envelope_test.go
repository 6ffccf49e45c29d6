package mcp_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/mcp/mcptest"
)

// supported are the versions a modern-only server of these tests serves.
var supported = []string{mcp.Version20260728}

// paramsWith returns tools/call params whose _meta is meta, spliced in as it is.
func paramsWith(meta string) json.RawMessage {
	return json.RawMessage(`{"name":"slow","arguments":{},"_meta":` + meta + `}`)
}

const (
	pv   = `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`
	caps = `"io.modelcontextprotocol/clientCapabilities"`
)

// TestRequestMetaValidates: the envelope tasksim's clients write is the schema's
// RequestMetaObject (E1, E2), and a request that carries it is a valid request of the era.
func TestRequestMetaValidates(t *testing.T) {
	token := json.RawMessage(`"pt-1"`)
	for _, m := range []mcp.RequestMeta{
		{ProtocolVersion: mcp.Version20260728}, // capabilities {}: none
		declaring(),
		{ProtocolVersion: mcp.Version20260728, LogLevel: "warning", ProgressToken: token,
			ClientCapabilities: mcp.ModernClientCapabilities{Sampling: &mcp.SamplingCapability{Tools: mcp.On()}, Roots: mcp.On()}},
	} {
		b := mustJSON(t, m)
		mcptest.Must(t, mcptest.Validate2026("RequestMetaObject", []byte(b)))
		req := mcp.AppendRequest(nil, mcp.StringID("c-1"), mcp.MethodToolsCall, paramsWith(b))
		mcptest.Must(t, mcptest.ValidateMessage2026(req))

		// What is written is what is read (E4: from the request alone).
		got, rerr := mcp.ReadRequestMeta(paramsWith(b), supported)
		if rerr != nil {
			t.Fatalf("ReadRequestMeta(%s): %v", b, rerr)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("round trip of %s:\n got %+v\nwant %+v", b, got, m)
		}
	}
	if b := mustJSON(t, mcp.RequestMeta{ProtocolVersion: mcp.Version20260728}); b != `{`+pv+`,`+caps+`:{}}` {
		t.Errorf("the minimal envelope is %s", b)
	}
	for _, bad := range []mcp.RequestMeta{{}, {ProtocolVersion: "2026-07-28", LogLevel: "loud"}, {ProtocolVersion: "2026-07-28", ProgressToken: json.RawMessage(`1.5`)}} {
		if b, err := json.Marshal(bad); err == nil {
			t.Errorf("Marshal(%+v) = %s, want an error", bad, b)
		}
	}
}

// TestReadRequestMeta checks the envelope a server reads, good and bad, each row naming the
// rule it checks.
func TestReadRequestMeta(t *testing.T) {
	tests := []struct {
		rule   string
		params string
		code   int    // 0: accepted
		msg    string // in the error's message
		tasks  bool   // accepted: declares the Tasks extension
	}{
		{"E1 minimal envelope", `{"_meta":{` + pv + `,` + caps + `:{}}}`, 0, "", false},
		{"E1 key order is free", `{"_meta":{` + caps + `:{},` + pv + `},"taskId":"t"}`, 0, "", false},
		{"E2 client info", `{"_meta":{` + pv + `,` + caps + `:{},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1","title":"C"}}}`, 0, "", false},
		{"E39 the extension declared", `{"_meta":{` + pv + `,` + caps + `:{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}`, 0, "", true},
		{"E39 declared with settings the schema does not define: kept, still declared", `{"_meta":{` + pv + `,` + caps + `:{"extensions":{"io.modelcontextprotocol/tasks":{"v":2}}}}}`, 0, "", true},
		{"E37 legacy capabilities.tasks declares nothing", `{"_meta":{` + pv + `,` + caps + `:{"tasks":{"requests":{"tools":{"call":{}}}}}}}`, 0, "", false},
		{"E1 other keys ignored", `{"_meta":{` + pv + `,` + caps + `:{},"traceparent":"00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01","com.example/x":[1]}}`, 0, "", false},
		{"E3 no params", ``, -32602, "no params", false},
		{"E3 params null", `null`, -32602, "no params", false},
		{"E3 params not an object", `[1]`, -32602, "params must be an object", false},
		{"E3 no _meta", `{"name":"x"}`, -32602, "_meta is missing", false},
		{"E3 _meta null", `{"_meta":null}`, -32602, "_meta is missing", false},
		{"E3 _meta not an object", `{"_meta":"2026-07-28"}`, -32602, "_meta must be an object", false},
		{"E3 no protocolVersion", `{"_meta":{` + caps + `:{}}}`, -32602, "lacks \"io.modelcontextprotocol/protocolVersion\"", false},
		{"E3 protocolVersion not a string", `{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728,` + caps + `:{}}}`, -32602, "must be a string", false},
		{"E3 protocolVersion null", `{"_meta":{"io.modelcontextprotocol/protocolVersion":null,` + caps + `:{}}}`, -32602, "must be a string", false},
		{"E3 no clientCapabilities", `{"_meta":{` + pv + `}}`, -32602, "lacks \"io.modelcontextprotocol/clientCapabilities\"", false},
		{"E3 clientCapabilities null", `{"_meta":{` + pv + `,` + caps + `:null}}`, -32602, "must be an object", false},
		{"E3 a capability leaf that is no object", `{"_meta":{` + pv + `,` + caps + `:{"elicitation":true}}}`, -32602, "clientCapabilities", false},
		{"E3 extension settings that are no object", `{"_meta":{` + pv + `,` + caps + `:{"extensions":{"io.modelcontextprotocol/tasks":true}}}}`, -32602, "must be an object", false},
		{"E3 extension settings null", `{"_meta":{` + pv + `,` + caps + `:{"extensions":{"io.modelcontextprotocol/tasks":null}}}}`, -32602, "must be an object", false},
		{"E3 clientInfo without version", `{"_meta":{` + pv + `,` + caps + `:{},"io.modelcontextprotocol/clientInfo":{"name":"c"}}}`, -32602, "clientInfo", false},
		{"E3 logLevel outside the schema", `{"_meta":{` + pv + `,` + caps + `:{},"io.modelcontextprotocol/logLevel":"verbose"}}`, -32602, "logLevel", false},
		{"E3 progressToken neither string nor integer", `{"_meta":{` + pv + `,` + caps + `:{},"progressToken":true}}`, -32602, "progressToken", false},
		{"E9 a version not served", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2027-01-01",` + caps + `:{}}}`, -32022, "Unsupported protocol version", false},
		{"E9 a legacy version in the envelope", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25",` + caps + `:{}}}`, -32022, "", false},
		{"E9 before E3: another version's envelope may have another shape", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2027-01-01"}}`, -32022, "", false},
	}
	for _, tc := range tests {
		m, err := mcp.ReadRequestMeta(json.RawMessage(tc.params), supported)
		if tc.code == 0 {
			if err != nil {
				t.Errorf("%s: rejected with %v", tc.rule, err)
				continue
			}
			if m.ProtocolVersion != mcp.Version20260728 || m.ClientCapabilities.DeclaresTasks() != tc.tasks {
				t.Errorf("%s: read %+v, want tasks declared %v", tc.rule, m, tc.tasks)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: accepted %s, want %d", tc.rule, tc.params, tc.code)
			continue
		}
		if err.Code != tc.code || !strings.Contains(err.Message, tc.msg) || mcp.HTTPStatus(err.Code) != 400 {
			t.Errorf("%s: got %d %q, want %d with %q, HTTP 400 (E27)", tc.rule, err.Code, err.Message, tc.code, tc.msg)
		}
		// Every error reply is one of the era: -32022 with its data, the others envelopes.
		mcptest.Must(t, mcptest.ValidateReply2026(mcp.MethodToolsCall, mcp.AppendError(nil, mcp.IntID(3), err)))
	}
}

// TestE9Data: the -32022 error names what the server supports and what was asked for.
func TestE9Data(t *testing.T) {
	both := []string{mcp.Version20260728, mcp.Version20251125}
	_, err := mcp.ReadRequestMeta(json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01",`+caps+`:{}}}`), both)
	if err == nil {
		t.Fatal("accepted 1900-01-01")
	}
	mcptest.Must(t, mcptest.Validate2026("UnsupportedProtocolVersionError", mcp.AppendError(nil, mcp.IntID(7), err)))
	var d mcp.UnsupportedProtocolVersionData
	if json.Unmarshal(err.Data, &d) != nil || d.Requested != "1900-01-01" || !reflect.DeepEqual(d.Supported, both) {
		t.Errorf("data %s", err.Data)
	}
	// A server that supports nothing still names an empty list, never null.
	mcptest.Must(t, mcptest.Validate2026("UnsupportedProtocolVersionError", mcp.AppendError(nil, mcp.IntID(7), mcp.UnsupportedProtocolVersion("x", nil))))
}

// TestE4NothingCarriesOver: capabilities are those of the request read, not of an earlier
// one on the same connection; ReadRequestMeta has nothing to carry them in.
func TestE4NothingCarriesOver(t *testing.T) {
	first, err := mcp.ReadRequestMeta(paramsWith(mustJSON(t, declaring())), supported)
	if err != nil || !first.ClientCapabilities.DeclaresTasks() {
		t.Fatalf("first request: %+v, %v", first, err)
	}
	second, err := mcp.ReadRequestMeta(paramsWith(`{`+pv+`,`+caps+`:{}}`), supported)
	if err != nil || second.ClientCapabilities.DeclaresTasks() || second.ClientInfo != nil {
		t.Errorf("second request inherited from the first: %+v, %v", second, err)
	}
}

// TestE5RequireTasks: a task request without the extension gets -32021 naming it (E5, E44,
// E61, E65); one with it gets nothing.
func TestE5RequireTasks(t *testing.T) {
	m := declaring()
	if err := m.RequireTasks(mcp.MethodTasksGet); err != nil {
		t.Errorf("declared: %v", err)
	}
	settings, ok := m.ClientCapabilities.TasksExtension()
	if !ok || string(settings) != `{}` {
		t.Errorf("TasksExtension() = %s, %v", settings, ok)
	}
	m.ClientCapabilities = mcp.ModernClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}
	err := m.RequireTasks(mcp.MethodTasksGet)
	if err == nil || err.Code != mcp.CodeMissingRequiredClientCapability || mcp.HTTPStatus(err.Code) != 400 || !strings.Contains(err.Message, "tasks/get") {
		t.Fatalf("not declared: %v", err)
	}
	reply := mcp.AppendError(nil, mcp.IntID(48), err)
	mcptest.Must(t, mcptest.Validate2026("MissingRequiredClientCapabilityError", reply))
	mcptest.Must(t, mcptest.ValidateReply2026(mcp.MethodTasksGet, reply))
	var d mcp.MissingRequiredClientCapabilityData
	if json.Unmarshal(err.Data, &d) != nil || !d.RequiredCapabilities.DeclaresTasks() {
		t.Errorf("data %s does not name the extension", err.Data)
	}
	if string(err.Data) != `{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}` {
		t.Errorf("data %s", err.Data)
	}
}

// TestResultAndNotificationMeta: the _meta a server writes on results (E6) and on listen
// notifications (E18) are the schema's.
func TestResultAndNotificationMeta(t *testing.T) {
	info := mcp.ServerInfoMeta(mcp.Implementation{Name: "tasksim \"mock\"", Version: "0.1.0"})
	mcptest.Must(t, mcptest.Validate2026("ResultMetaObject", info))
	mcptest.MustFail(t, mcptest.Validate2026("ResultMetaObject", []byte(`{"io.modelcontextprotocol/serverInfo":{"name":"x"}}`)))
	for _, id := range []mcp.ID{mcp.StringID("sub-9"), mcp.IntID(12)} {
		sub := mcp.SubscriptionMeta(id)
		mcptest.Must(t, mcptest.Validate2026("NotificationMetaObject", sub))
		mcptest.Must(t, mcptest.Validate2026("SubscriptionsListenResultMetaObject", sub))
		// E20: the listen result that ends a subscription.
		mcptest.Must(t, mcptest.ValidateReply2026(mcp.MethodSubscriptionsListen, mcp.AppendResult(nil, id, mcp.AppendEmptyResult(nil, sub))))
	}
	var s mcp.ModernServerCapabilities
	s.DeclareTasks()
	if !s.DeclaresTasks() || mustJSON(t, s) != `{"extensions":{"io.modelcontextprotocol/tasks":{}}}` {
		t.Errorf("server capabilities %s", mustJSON(t, s))
	}
	mcptest.Must(t, mcptest.Validate2026("ServerCapabilities", []byte(mustJSON(t, s))))
	mcptest.Must(t, mcptest.ValidateExt("TasksExtensionCapability", s.Extensions[mcp.ExtTasks]))
}

// FuzzReadRequestMeta checks ReadRequestMeta's contract on any params: it never panics; it
// fails only with -32602 (E3) or -32022 (E9), the latter with the data the schema requires;
// and an envelope it accepts is written back by RequestMeta.MarshalJSON as the schema's
// RequestMetaObject, which reads back the same.
func FuzzReadRequestMeta(f *testing.F) {
	for _, seed := range []string{
		`{"_meta":{` + pv + `,` + caps + `:{}}}`,
		`{"name":"x","_meta":` + `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"sampling":{"tools":{}},"roots":{},"experimental":{"x":{"a":1}},"extensions":{"io.modelcontextprotocol/tasks":{}}},"io.modelcontextprotocol/clientInfo":{"name":"n","version":"v","websiteUrl":"https://example.com"},"io.modelcontextprotocol/logLevel":"debug","progressToken":-3}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2027-01-01"}}`,
		`{"_meta":{` + pv + `,` + caps + `:{"extensions":{"io.modelcontextprotocol/tasks":[]}}}}`,
		`{"_meta":{` + pv + `,` + caps + `:{"Elicitation":{}},"_meta":1}}`,
		`{"_meta":{"io.modelcontextprotocol/protocol\u0056ersion":"2026-07-28",` + caps + `:{}}}`,
		`{"_meta":{` + pv + `,` + caps + `:{},"io.modelcontextprotocol/clientInfo":{"name":"\ud800","version":""}}}`,
		`{"_meta":[]}`, `null`, `{`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		m, err := mcp.ReadRequestMeta(params, supported)
		if err != nil {
			switch err.Code {
			case mcp.CodeInvalidParams:
			case mcp.CodeUnsupportedProtocolVersion:
				mcptest.Must(t, mcptest.Validate2026("UnsupportedProtocolVersionError", mcp.AppendError(nil, mcp.IntID(1), err)))
			default:
				t.Fatalf("ReadRequestMeta(%q): code %d", params, err.Code)
			}
			return
		}
		b, merr := json.Marshal(m)
		if merr != nil {
			t.Fatalf("ReadRequestMeta(%q) accepted %+v, which does not marshal: %v", params, m, merr)
		}
		mcptest.Must(t, mcptest.Validate2026("RequestMetaObject", b))
		back, err := mcp.ReadRequestMeta(paramsWith(string(b)), supported)
		if err != nil || !reflect.DeepEqual(back, m) {
			t.Fatalf("ReadRequestMeta(%q) = %+v, written %s, read back %+v, %v", params, m, b, back, err)
		}
	})
}
