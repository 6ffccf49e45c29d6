package mcptest_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/internal/mcp/mcptest"
)

// meta26 is a valid request _meta of 2026-07-28 that declares the tasks extension.
const meta26 = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientInfo":{"name":"tasksim","version":"1"},` +
	`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// task26 is a flat task of the extension with status and extra members spliced in.
func task26(status, extra string) string {
	return `{"taskId":"tsk-1","status":"` + status + `","createdAt":"2026-08-03T14:00:00Z",` +
		`"lastUpdatedAt":"2026-08-03T14:00:05Z","ttlMs":900000,"pollIntervalMs":3000` + extra + `}`
}

// withResultType puts "resultType":rt first in the object obj.
func withResultType(rt, obj string) string { return `{"resultType":"` + rt + `",` + obj[1:] }

const (
	elicit26  = `{"method":"elicitation/create","params":{"mode":"form","message":"Approve?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}}`
	callRes26 = `{"resultType":"complete","content":[{"type":"text","text":"done"}]}`
)

// samples2026 and samplesExt hold, for the definitions the modern wire layer leans on, texts
// each schema must accept and texts it must reject, so that the validators are shown to fail.
var samples2026 = []struct {
	def    string
	valid  []string
	reject []string
}{
	{"RequestMetaObject",
		[]string{meta26, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`},
		[]string{`{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`, // E1: capabilities required
			`{"io.modelcontextprotocol/clientCapabilities":{}}`,
			`{"io.modelcontextprotocol/protocolVersion":20260728,"io.modelcontextprotocol/clientCapabilities":{}}`,
			`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"x"}}`}},
	{"DiscoverResult",
		[]string{`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}},"ttlMs":0,"cacheScope":"private"}`},
		[]string{`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{}}`, // ttlMs, cacheScope required
			`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":-1,"cacheScope":"public"}`,
			`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":1,"cacheScope":"shared"}`,
			`{"supportedVersions":["2026-07-28"],"capabilities":{},"ttlMs":1,"cacheScope":"public"}`}},
	{"InputRequiredResult",
		[]string{`{"resultType":"input_required","inputRequests":{"k":` + elicit26 + `},"requestState":"s1"}`,
			`{"resultType":"input_required","requestState":"opaque"}`},
		[]string{`{"resultType":"input_required","inputRequests":{"k":{"method":"tools/call","params":{}}}}`,
			`{"inputRequests":{}}`}},
	{"CallToolResult",
		[]string{callRes26},
		[]string{`{"content":[]}`}}, // resultType is required in 2026-07-28 (E11)
	{"UnsupportedProtocolVersionError",
		[]string{`{"jsonrpc":"2.0","id":7,"error":{"code":-32022,"message":"m","data":{"supported":["2026-07-28"],"requested":"2027-01-01"}}}`},
		[]string{`{"jsonrpc":"2.0","id":7,"error":{"code":-32022,"message":"m"}}`,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32004,"message":"m","data":{"supported":[],"requested":"x"}}}`}},
	{"MissingRequiredClientCapabilityError",
		[]string{`{"jsonrpc":"2.0","id":7,"error":{"code":-32021,"message":"m","data":{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`},
		[]string{`{"jsonrpc":"2.0","id":7,"error":{"code":-32021,"message":"m","data":{}}}`,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32003,"message":"m","data":{"requiredCapabilities":{}}}}`}},
	{"HeaderMismatchError",
		[]string{`{"jsonrpc":"2.0","id":7,"error":{"code":-32020,"message":"Mcp-Name does not match params.taskId"}}`},
		[]string{`{"jsonrpc":"2.0","id":7,"error":{"code":-32001,"message":"m"}}`}},
}

var samplesExt = []struct {
	def    string
	valid  []string
	reject []string
}{
	{"CreateTaskResult",
		[]string{withResultType("task", task26("working", "")), withResultType("task", task26("completed", `,"ttlMs":null`))},
		[]string{withResultType("complete", task26("working", "")), task26("working", ""),
			withResultType("task", `{"taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"b","ttl":1}`)}},
	{"GetTaskResult",
		[]string{withResultType("complete", task26("working", "")),
			withResultType("complete", task26("input_required", `,"inputRequests":{"k":`+elicit26+`}`)),
			withResultType("complete", task26("completed", `,"result":`+callRes26)),
			withResultType("complete", task26("failed", `,"error":{"code":-32603,"message":"boom"}`)),
			withResultType("complete", task26("cancelled", ""))},
		[]string{withResultType("task", task26("working", "")), // docs/RULES.md#ext-gap-1
			withResultType("complete", task26("completed", "")),
			withResultType("complete", task26("failed", "")),
			withResultType("complete", task26("input_required", "")),
			withResultType("complete", task26("working", `,"pollIntervalMs":1.5`))}},
	{"UpdateTaskResult", []string{`{"resultType":"complete"}`}, []string{`{}`, `{"resultType":"task"}`}},
	{"CancelTaskResult", []string{`{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}`}, []string{`{"resultType":"input_required"}`}},
	{"TasksExtensionCapability", []string{`{}`}, []string{`{"mode":"x"}`, `true`}},
	{"UpdateTaskRequest",
		[]string{`{"jsonrpc":"2.0","id":4,"method":"tasks/update","params":{"taskId":"t","inputResponses":{"k":{"action":"accept","content":{"ok":true}}}}}`},
		[]string{`{"jsonrpc":"2.0","id":4,"method":"tasks/update","params":{"taskId":"t"}}`}},
}

func TestValidateSamples2026(t *testing.T) {
	for _, tc := range samples2026 {
		t.Run("core/"+tc.def, func(t *testing.T) {
			t.Parallel()
			checkSamples(t, mcptest.Version2026, tc.def, tc.valid, tc.reject, mcptest.Validate2026)
		})
	}
	for _, tc := range samplesExt {
		t.Run("ext/"+tc.def, func(t *testing.T) {
			t.Parallel()
			checkSamples(t, mcptest.ExtTasks, tc.def, tc.valid, tc.reject, mcptest.ValidateExt)
		})
	}
}

func checkSamples(t *testing.T, schema, def string, valid, reject []string, validate func(string, []byte) error) {
	t.Helper()
	for _, v := range valid {
		if err := validate(def, []byte(v)); err != nil {
			t.Errorf("rejected a valid %s:\n%v", def, err)
		}
	}
	for _, v := range reject {
		err := validate(def, []byte(v))
		var se *mcptest.SchemaError
		if !errors.As(err, &se) {
			t.Errorf("%s: validating %s = %v, want a *SchemaError", def, v, err)
			continue
		}
		if se.Def != def || se.Schema != schema || !strings.Contains(err.Error(), "#/$defs/"+def+" of schema "+schema) {
			t.Errorf("error names %s of %s, want %s of %s:\n%v", se.Def, se.Schema, def, schema, err)
		}
	}
}

func TestValidateReply2026(t *testing.T) {
	tests := []struct {
		method, raw string
		fail        []string // texts the error must contain; nil means the reply is valid
	}{
		{"server/discover", reply(`{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{}},"ttlMs":60000,"cacheScope":"public"}`), nil},
		{"server/discover", reply(`{"resultType":"complete","supportedVersions":[],"capabilities":{}}`), []string{"#/$defs/DiscoverResult of schema 2026-07-28"}},
		{"tools/call", reply(callRes26), nil},
		{"tools/call", reply(`{"resultType":"input_required","requestState":"s"}`), nil},
		{"tools/call", reply(withResultType("task", task26("working", ""))), nil},
		{"tools/call", reply(withResultType("task", `{"task":`+task26("working", "")+`}`)), []string{"#/$defs/CreateTaskResult of schema ext-tasks"}}, // nested: docs/RULES.md#ext-gap-5
		{"tools/call", reply(withResultType("later", task26("working", ""))), []string{"rule E13", `"later"`}},
		{"tools/call", reply(`{"content":[]}`), []string{"#/$defs/JSONRPCResultResponse"}}, // E11
		{"tasks/get", reply(withResultType("complete", task26("failed", `,"error":{"code":-32603,"message":"x"}`))), nil},
		{"tasks/get", reply(withResultType("task", task26("working", ""))), []string{"rule E45"}},
		{"tasks/update", reply(`{"resultType":"complete"}`), nil},
		{"tasks/cancel", reply(`{"resultType":"complete"}`), nil},
		{"tasks/cancel", reply(withResultType("complete", task26("cancelled", ""))), nil}, // Result is open
		{"subscriptions/listen", reply(`{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":"c-1"}}`), nil},
		{"subscriptions/listen", reply(`{"resultType":"complete"}`), []string{"SubscriptionsListenResult"}},
		{"vendor/x", reply(`{"resultType":"whatever"}`), nil},
		{"tasks/get", `{"jsonrpc":"2.0","id":"c-1","error":{"code":-32602,"message":"unknown task"}}`, nil},
		{"tasks/get", `{"jsonrpc":"2.0","id":"c-1","error":{"code":-32021,"message":"m","data":{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`, nil},
		{"tasks/get", `{"jsonrpc":"2.0","id":"c-1","error":{"code":-32021,"message":"m"}}`, []string{"MissingRequiredClientCapabilityError"}},
		{"tools/call", `{"jsonrpc":"2.0","id":"c-1","error":{"code":-32022,"message":"m","data":{"supported":"2026-07-28","requested":"x"}}}`, []string{"UnsupportedProtocolVersionError"}},
		{"tools/call", `{"jsonrpc":"2.0","error":{"code":-32020,"message":"Mcp-Method is missing"}}`, nil},
		{"tools/call", `{"jsonrpc":"2.0","id":1,"error":{"code":-32042,"message":"m"}}`, []string{"rule E14", "-32042"}},
		{"tools/call", `{"jsonrpc":"2.0","id":1,"error":{"code":-32023,"message":"m"}}`, []string{"rule E14", "does not define"}},
		{"tools/call", `{"jsonrpc":"2.0","id":1,"error":{"code":-32003,"message":"m"}}`, nil}, // a legacy-range code: no shared meaning, not forbidden
		{"tools/call", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[]},"error":{"code":1,"message":"m"}}`, []string{"not both"}},
	}
	for _, tc := range tests {
		err := mcptest.ValidateReply2026(tc.method, []byte(tc.raw))
		if tc.fail == nil {
			if err != nil {
				t.Errorf("ValidateReply2026(%s) rejected a valid reply:\n%v", tc.method, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("ValidateReply2026(%s, %s) accepted it, want a failure with %q", tc.method, tc.raw, tc.fail)
			continue
		}
		mcptest.MustFail(t, err)
		for _, want := range tc.fail {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("ValidateReply2026(%s, %s): error lacks %q:\n%v", tc.method, tc.raw, want, err)
			}
		}
	}
}

func TestValidateMessage2026(t *testing.T) {
	req := func(method, params string) string {
		return `{"jsonrpc":"2.0","id":"c-1","method":"` + method + `","params":` + params + `}`
	}
	tests := []struct {
		name, raw string
		fail      string // text the error must contain; "" means valid
	}{
		{"discover", req("server/discover", `{"_meta":`+meta26+`}`), ""},
		{"tools/call", req("tools/call", `{"name":"slow","arguments":{"n":1},"_meta":`+meta26+`}`), ""},
		{"tasks/get", req("tasks/get", `{"taskId":"t","_meta":`+meta26+`}`), ""},
		{"tasks/update", req("tasks/update", `{"taskId":"t","inputResponses":{"k":{"action":"decline"}},"_meta":`+meta26+`}`), ""},
		{"tasks/cancel", req("tasks/cancel", `{"taskId":"t","_meta":`+meta26+`}`), ""},
		{"listen", req("subscriptions/listen", `{"notifications":{"taskIds":["t"]},"_meta":`+meta26+`}`), ""},
		{"ack", `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"taskIds":[]},"_meta":{"io.modelcontextprotocol/subscriptionId":"c-1"}}}`, ""},
		{"task notification", `{"jsonrpc":"2.0","method":"notifications/tasks","params":` +
			strings.Replace(task26("completed", `,"result":`+callRes26), "{", `{"_meta":{"io.modelcontextprotocol/subscriptionId":7},`, 1) + `}`, ""},
		{"tasks/get without _meta (ext-gap-2)", req("tasks/get", `{"taskId":"t"}`), "#/$defs/RequestParams"},
		{"no params at all", `{"jsonrpc":"2.0","id":1,"method":"server/discover"}`, "#/$defs/RequestParams"},
		{"no capabilities (E1)", req("tools/call", `{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`), "#/$defs/RequestParams"},
		{"tasks/update without inputResponses", req("tasks/update", `{"taskId":"t","_meta":`+meta26+`}`), "#/$defs/UpdateTaskRequest of schema ext-tasks"},
		{"notification without ttlMs", `{"jsonrpc":"2.0","method":"notifications/tasks","params":{"taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"b"}}`, "TaskStatusNotification"},
		{"subscriptionId null", `{"jsonrpc":"2.0","method":"notifications/tasks","params":` +
			strings.Replace(task26("working", ""), "{", `{"_meta":{"io.modelcontextprotocol/subscriptionId":null},`, 1) + `}`, "NotificationMetaObject"},
		{"notification with id", `{"jsonrpc":"2.0","id":3,"method":"notifications/tasks","params":` + task26("working", "") + `}`, `must not carry an "id"`},
		{"result", reply(callRes26), ""},
		{"batch", `[` + reply(callRes26) + `]`, "JSONRPCMessage"},
	}
	for _, tc := range tests {
		err := mcptest.ValidateMessage2026([]byte(tc.raw))
		if tc.fail == "" {
			if err != nil {
				t.Errorf("%s: rejected a valid message:\n%v", tc.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: accepted %s, want a failure naming %s", tc.name, tc.raw, tc.fail)
			continue
		}
		mcptest.MustFail(t, err)
		if !strings.Contains(err.Error(), tc.fail) {
			t.Errorf("%s: error lacks %q:\n%v", tc.name, tc.fail, err)
		}
	}
}
