package mcptest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/internal/mcp/mcptest"
)

func reply(result string) string { return `{"jsonrpc":"2.0","id":"c-1","result":` + result + `}` }

const (
	callResult    = `{"content":[{"type":"text","text":"ok"}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"}}}`
	errorReply    = `{"jsonrpc":"2.0","id":"c-1","error":{"code":-32602,"message":"unknown task t"}}`
	initResult    = `{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"s","version":"1"}}`
	toolsResult   = `{"tools":[{"name":"slow","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}]}`
	pageOfTasks   = `{"tasks":[{"taskId":"t","status":"completed","createdAt":"a","lastUpdatedAt":"b","ttl":60000}],"nextCursor":"c"}`
	createdResult = `{"task":{"taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"a","ttl":null,"pollInterval":500}}`
	flatTask      = `{"taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"a","ttl":60000}`
)

func TestValidateReply(t *testing.T) {
	tests := []struct {
		method, raw string
		failDefs    []string // definitions the error must name; nil means the reply is valid
	}{
		{"initialize", reply(initResult), nil},
		{"initialize", reply(`{"protocolVersion":"2025-11-25"}`), []string{"InitializeResult"}},
		{"tools/list", reply(toolsResult), nil},
		{"tools/list", reply(`{"tools":{}}`), []string{"ListToolsResult"}},
		// tools/call: either shape passes (docs/RULES.md#gap-5).
		{"tools/call", reply(callResult), nil},
		{"tools/call", reply(createdResult), nil},
		{"tools/call", reply(flatTask), []string{"CallToolResult", "CreateTaskResult"}},
		{"tasks/get", reply(flatTask), nil},
		{"tasks/get", reply(createdResult), []string{"GetTaskResult"}},
		// tasks/result: the open GetTaskPayloadResult and the CallToolResult it stands for.
		{"tasks/result", reply(callResult), nil},
		{"tasks/result", reply(`{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"}}}`), []string{"CallToolResult"}},
		// GetTaskPayloadResult and EmptyResult are no stricter than the envelope's Result,
		// so the envelope is what fails here.
		{"tasks/result", reply(`{"_meta":1}`), []string{"JSONRPCResultResponse"}},
		{"tasks/list", reply(pageOfTasks), nil},
		{"tasks/list", reply(`{"tasks":[` + flatTask + `],"nextCursor":null}`), []string{"ListTasksResult"}},
		{"tasks/cancel", reply(strings.Replace(flatTask, "working", "cancelled", 1)), nil},
		{"tasks/cancel", reply(`{"taskId":"t","status":"cancelled"}`), []string{"CancelTaskResult"}},
		{"ping", reply(`{}`), nil},
		{"ping", reply(`{"_meta":"x"}`), []string{"JSONRPCResultResponse"}},
		// An error reply is an envelope whatever the method.
		{"tasks/get", errorReply, nil},
		{"tasks/result", errorReply, nil},
		{"tasks/get", `{"jsonrpc":"2.0","id":"c-1","error":{"code":-32602}}`, []string{"JSONRPCErrorResponse"}},
		{"ping", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`, []string{"JSONRPCErrorResponse"}},
		// Unknown methods: envelope only.
		{"resources/list", reply(`{"anything":[1,2]}`), nil},
		{"resources/list", reply(`5`), []string{"JSONRPCResultResponse"}},
		{"ping", `{"jsonrpc":"2.0","result":{}}`, []string{"JSONRPCResultResponse"}},
		{"ping", `{"jsonrpc":"2.0","id":1.5,"result":{}}`, []string{"JSONRPCResultResponse"}},
		{"ping", `[` + reply(`{}`) + `]`, []string{"JSONRPCResponse"}},
		{"ping", `{"jsonrpc":"2.0","id":1,`, []string{"JSONRPCResponse"}},
	}
	for _, tc := range tests {
		err := mcptest.ValidateReply(tc.method, []byte(tc.raw))
		if tc.failDefs == nil {
			if err != nil {
				t.Errorf("ValidateReply(%s) rejected a valid reply:\n%v", tc.method, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("ValidateReply(%s, %s) accepted it, want a failure of %v", tc.method, tc.raw, tc.failDefs)
			continue
		}
		mcptest.MustFail(t, err)
		for _, def := range tc.failDefs {
			if !strings.Contains(err.Error(), "#/$defs/"+def) {
				t.Errorf("ValidateReply(%s, %s): error does not name %s:\n%v", tc.method, tc.raw, def, err)
			}
		}
	}
}

func TestValidateReplyResultAndError(t *testing.T) {
	// The schema's JSONRPCResultResponse is open, so only the JSON-RPC rule catches this.
	raw := `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`
	err := mcptest.ValidateReply("ping", []byte(raw))
	mcptest.MustFail(t, err)
	if !strings.Contains(err.Error(), "JSON-RPC 2.0 rule") || !strings.Contains(err.Error(), "not both") {
		t.Errorf("error does not say what rule was broken: %v", err)
	}
	mcptest.MustFail(t, mcptest.ValidateMessage([]byte(raw)))
}

func TestValidateMessage(t *testing.T) {
	tests := []struct {
		name, raw string
		failDef   string // the definition (or rule text) the error must name; "" means valid
	}{
		{"request", `{"jsonrpc":"2.0","id":"c-18","method":"tasks/get","params":{"taskId":"t"}}`, ""},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, ""},
		{"result", reply(callResult), ""},
		{"error", errorReply, ""},
		{"error without id", `{"jsonrpc":"2.0","error":{"code":-32700,"message":"parse error"}}`, ""},
		{"unknown method", `{"jsonrpc":"2.0","id":9,"method":"vendor/x","params":{"a":1}}`, ""},
		{"elicitation", `{"jsonrpc":"2.0","id":"s-3","method":"elicitation/create","params":{"mode":"form","message":"Region?",` +
			`"requestedSchema":{"type":"object","properties":{"region":{"type":"string"}}},` +
			`"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"}}}}`, ""},
		{"status", `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":` + flatTask + `}`, ""},
		{"batch", `[{"jsonrpc":"2.0","method":"notifications/initialized"}]`, "JSONRPCMessage"},
		{"no jsonrpc", `{"id":1,"method":"ping"}`, "JSONRPCMessage"},
		{"null id request (H11)", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, "JSONRPCRequest"},
		{"null id on unknown method", `{"jsonrpc":"2.0","id":null,"method":"vendor/x"}`, "JSONRPCRequest"},
		{"ping without id", `{"jsonrpc":"2.0","method":"ping"}`, "PingRequest"},
		{"elicitation without schema", `{"jsonrpc":"2.0","id":"s-3","method":"elicitation/create","params":{"message":"m"}}`, "ElicitRequest"},
		{"status done", `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":` + strings.Replace(flatTask, "working", "done", 1) + `}`, "TaskStatusNotification"},
		{"status without ttl", `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"a"}}`, "TaskStatusNotification"},
		{"notification with id", `{"jsonrpc":"2.0","id":4,"method":"notifications/initialized"}`, "must not carry an \"id\""},
		{"method with result", `{"jsonrpc":"2.0","id":4,"method":"ping","result":{}}`, "neither \"result\" nor \"error\""},
		{"tools/call task ttl null", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","task":{"ttl":null}}}`, "CallToolRequest"},
	}
	for _, tc := range tests {
		err := mcptest.ValidateMessage([]byte(tc.raw))
		if tc.failDef == "" {
			if err != nil {
				t.Errorf("%s: rejected a valid message:\n%v", tc.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: accepted %s, want a failure naming %s", tc.name, tc.raw, tc.failDef)
			continue
		}
		mcptest.MustFail(t, err)
		if !strings.Contains(err.Error(), tc.failDef) {
			t.Errorf("%s: error does not name %s:\n%v", tc.name, tc.failDef, err)
		}
	}
}

// fakeTB records what a Must helper reports instead of failing the real test.
type fakeTB struct {
	testing.TB
	failed bool
	msg    string
}

func (f *fakeTB) Helper()                           {}
func (f *fakeTB) Fatal(args ...any)                 { f.failed, f.msg = true, fmt.Sprint(args...) }
func (f *fakeTB) Fatalf(format string, args ...any) { f.Fatal(fmt.Sprintf(format, args...)) }

func TestMustHelpers(t *testing.T) {
	valid := mcptest.Validate("EmptyResult", []byte(`{}`))
	invalid := mcptest.Validate("EmptyResult", []byte(`[]`))
	unknown := mcptest.Validate("Nope", []byte(`{}`))
	tests := []struct {
		name     string
		check    func(testing.TB, error)
		err      error
		wantFail bool
	}{
		{"Must valid", mcptest.Must, valid, false},
		{"Must invalid", mcptest.Must, invalid, true},
		{"MustFail invalid", mcptest.MustFail, invalid, false},
		{"MustFail valid", mcptest.MustFail, valid, true},
		{"MustFail unknown def", mcptest.MustFail, unknown, true},
	}
	for _, tc := range tests {
		f := &fakeTB{TB: t}
		tc.check(f, tc.err)
		if f.failed != tc.wantFail {
			t.Errorf("%s: failed = %v (%s), want %v", tc.name, f.failed, f.msg, tc.wantFail)
		}
	}
}
