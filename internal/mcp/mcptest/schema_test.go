package mcptest_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tasksim/tasksim/internal/mcp/mcptest"
)

// officialSHA256 holds the digests of the official schema.json files given in
// docs/RULES.md#sources, by file under internal/schema/official.
var officialSHA256 = map[string]string{
	"schema-2025-11-25.json": "268a5f82ba70fd7e4b6dc4aa1e64f116f74b4d0edcb69dc046829c79dd4e97e7",
	"schema-2026-07-28.json": "ef70b61f99b6d2e5e3b46863822eab08dff6a45bedc7a08914e0e5b133f40203",
	"ext-tasks-schema.json":  "10933a5003097bbccb03d964e6a5f7a2819cc4d7a1d07e27c6765cbf5da35c5c",
}

func TestEmbeddedSchemaIsTheOfficialCopy(t *testing.T) {
	for name, want := range officialSHA256 {
		b, err := os.ReadFile("../../schema/official/" + name)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != want {
			t.Errorf("internal/schema/official/%s has sha256 %s, want %s (the unmodified official copy)", name, got, want)
		}
	}
}

func TestNewCompilesEveryDefinition(t *testing.T) {
	for _, tc := range []struct {
		name  string
		new   func() (*mcptest.Schema, error)
		count int // definitions under $defs
		want  []string
	}{
		{mcptest.Version, mcptest.New, 145, []string{"Task", "GetTaskResult", "CreateTaskResult", "JSONRPCMessage", "ElicitRequest", "TaskStatusNotification"}},
		{mcptest.Version2026, mcptest.New2026, 155, []string{"DiscoverResult", "RequestMetaObject", "InputRequiredResult", "HeaderMismatchError",
			"MissingRequiredClientCapabilityError", "UnsupportedProtocolVersionError", "SubscriptionsListenRequest", "JSONRPCMessage"}},
		{mcptest.ExtTasks, mcptest.NewExt, 76, []string{"Task", "DetailedTask", "CreateTaskResult", "GetTaskResult", "UpdateTaskRequest",
			"UpdateTaskResult", "CancelTaskResult", "TaskStatusNotification", "TasksExtensionCapability"}},
	} {
		s, err := tc.new()
		if err != nil {
			t.Fatal(err)
		}
		if s.Name() != tc.name {
			t.Errorf("Name() = %q, want %q", s.Name(), tc.name)
		}
		defs := s.Defs()
		if len(defs) != tc.count {
			t.Errorf("schema %s: compiled %d definitions, want the whole schema (%d)", tc.name, len(defs), tc.count)
		}
		for _, want := range tc.want {
			if !slices.Contains(defs, want) {
				t.Errorf("schema %s: Defs() lacks %q", tc.name, want)
			}
		}
	}
}

// A valid task, flattened; ttl is spliced in.
func task(status, ttl string) string {
	return `{"taskId":"9f3b6d0e","status":"` + status + `","createdAt":"2026-01-05T09:00:00Z",` +
		`"lastUpdatedAt":"2026-01-05T09:00:31Z","ttl":` + ttl + `,"pollInterval":2000}`
}

// defSamples holds, for every definition tasksim's tests lean on, texts the schema must
// accept and texts it must reject. The rejections prove that the validator can fail.
var defSamples = []struct {
	def    string
	valid  []string
	reject []string
}{
	{"Task",
		[]string{task("working", "60000"), task("input_required", "null"), task("cancelled", "0"),
			`{"taskId":"t","status":"completed","createdAt":"a","lastUpdatedAt":"b","ttl":null,"statusMessage":"done \"ok\"\n"}`},
		[]string{task("done", "60000"), task("working", `"60000"`), task("working", "1.5"), task("Working", "1"),
			`{"taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"b"}`, // ttl is required
			`{"taskId":"t","status":"working","createdAt":"a","ttl":1}`,             // lastUpdatedAt too
			`{"taskId":7,"status":"working","createdAt":"a","lastUpdatedAt":"b","ttl":1}`}},
	{"GetTaskResult",
		[]string{task("working", "null"), strings.Replace(task("failed", "5"), "{", `{"_meta":{"k":1},`, 1)},
		[]string{`{"task":` + task("working", "1") + `}`, task("done", "1"), strings.Replace(task("failed", "5"), "{", `{"_meta":7,`, 1)}},
	{"CancelTaskResult",
		[]string{task("cancelled", "60000")},
		[]string{`{"taskId":"t","status":"cancelled"}`, `[]`}},
	{"CreateTaskResult",
		[]string{`{"task":` + task("working", "60000") + `}`, `{"task":` + task("working", "null") + `}`,
			`{"task":` + task("working", "1") + `,"_meta":{"io.modelcontextprotocol/model-immediate-response":"started"}}`},
		[]string{task("working", "60000"), `{"task":` + task("done", "1") + `}`, `{"task":{}}`, `{}`}},
	{"CallToolResult",
		[]string{`{"content":[{"type":"text","text":"ok"}]}`, `{"content":[],"isError":true,"structuredContent":{"a":1}}`},
		[]string{`{}`, `{"content":[{"type":"text"}]}`, `{"content":[],"isError":"yes"}`, `{"content":{}}`}},
	{"GetTaskPayloadResult",
		[]string{`{"content":[{"type":"text","text":"ok"}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"}}}`, `{}`},
		[]string{`{"_meta":[]}`, `"text"`, `null`}},
	{"ListTasksResult",
		[]string{`{"tasks":[]}`, `{"tasks":[` + task("completed", "null") + `],"nextCursor":"b2Zm"}`},
		[]string{`{}`, `{"tasks":[` + task("done", "1") + `]}`, `{"tasks":[],"nextCursor":5}`}},
	{"InitializeResult",
		[]string{`{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"s","version":"1"}}`},
		[]string{`{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"list":true}},"serverInfo":{"name":"s","version":"1"}}`, // leaves are objects (docs/RULES.md#capabilities)
			`{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s"}}`}},
	{"ListToolsResult",
		[]string{`{"tools":[{"name":"slow","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}]}`},
		[]string{`{"tools":[{"name":"slow","inputSchema":{"type":"object"},"execution":{"taskSupport":"sometimes"}}]}`,
			`{"tools":[{"name":"slow"}]}`}},
	{"EmptyResult",
		[]string{`{}`, `{"_meta":{}}`},
		[]string{`[]`, `{"_meta":"x"}`}},
	{"JSONRPCErrorResponse",
		[]string{`{"jsonrpc":"2.0","id":"c-1","error":{"code":-32602,"message":"unknown task"}}`,
			`{"jsonrpc":"2.0","error":{"code":-32700,"message":"parse error"}}`, // the id is optional
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"x","data":{"why":[1]}}}`},
		[]string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`, // but never null
			`{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32600.5,"message":"m"}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"message":"m"}}`,
			`{"jsonrpc":"1.0","id":1,"error":{"code":1,"message":"m"}}`}},
	{"JSONRPCResultResponse",
		[]string{`{"jsonrpc":"2.0","id":1,"result":{}}`},
		[]string{`{"jsonrpc":"2.0","result":{}}`, `{"jsonrpc":"2.0","id":1.5,"result":{}}`, `{"jsonrpc":"2.0","id":1,"result":5}`}},
	{"JSONRPCMessage",
		[]string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		[]string{`[]`, `{"jsonrpc":"2.0"}`, `{"id":1,"method":"ping"}`}},
	{"ElicitRequest",
		[]string{`{"jsonrpc":"2.0","id":"s-3","method":"elicitation/create","params":{"mode":"form","message":"Which region?",` +
			`"requestedSchema":{"type":"object","properties":{"region":{"type":"string","enum":["EMEA","APAC"]}},"required":["region"]},` +
			`"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t"}}}}`,
			`{"jsonrpc":"2.0","id":4,"method":"elicitation/create","params":{"mode":"url","elicitationId":"e1","url":"https://example.com/x","message":"m"}}`},
		[]string{`{"jsonrpc":"2.0","id":"s-3","method":"elicitation/create","params":{"mode":"form","message":"m"}}`,
			`{"jsonrpc":"2.0","method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{}}}}`,
			`{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"message":"m","requestedSchema":{"type":"object","properties":{}}}}`}},
	{"TaskStatusNotification",
		[]string{`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":` + task("input_required", "60000") + `}`},
		[]string{`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":` + task("done", "60000") + `}`,
			`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t","status":"working"}}`,
			`{"jsonrpc":"2.0","method":"notifications/tasks/status"}`}},
	{"CallToolRequest",
		[]string{`{"jsonrpc":"2.0","id":"c-17","method":"tools/call","params":{"name":"r","arguments":{"q":"Q3"},"task":{"ttl":120000},"_meta":{"progressToken":"pt"}}}`},
		[]string{`{"jsonrpc":"2.0","id":"c-17","method":"tools/call","params":{"name":"r","task":{"ttl":null}}}`, // TaskMetadata.ttl is not nullable (docs/RULES.md#gap-6)
			`{"jsonrpc":"2.0","id":"c-17","method":"tools/call","params":{"arguments":{}}}`}},
	{"GetTaskRequest",
		[]string{`{"jsonrpc":"2.0","id":"c-18","method":"tasks/get","params":{"taskId":"t"}}`},
		[]string{`{"jsonrpc":"2.0","id":"c-18","method":"tasks/get","params":{}}`, `{"jsonrpc":"2.0","id":"c-18","method":"tasks/get"}`}},
}

func TestValidateSamples(t *testing.T) {
	for _, tc := range defSamples {
		t.Run(tc.def, func(t *testing.T) {
			t.Parallel() // the shared Schema is used concurrently; -race checks that it may be
			for _, v := range tc.valid {
				if err := mcptest.Validate(tc.def, []byte(v)); err != nil {
					t.Errorf("rejected a valid %s:\n%v", tc.def, err)
				}
			}
			for _, v := range tc.reject {
				err := mcptest.Validate(tc.def, []byte(v))
				var se *mcptest.SchemaError
				if !errors.As(err, &se) {
					t.Errorf("Validate(%s, %s) = %v, want a *SchemaError", tc.def, v, err)
					continue
				}
				if se.Def != tc.def || !strings.Contains(err.Error(), "#/$defs/"+tc.def) {
					t.Errorf("error names def %q, want %q:\n%v", se.Def, tc.def, err)
				}
			}
		})
	}
}

func TestTaskTTLNullAndStatusDone(t *testing.T) {
	// The erratum 357adac4 made Task.ttl nullable (docs/RULES.md#gap-6).
	mcptest.Must(t, mcptest.Validate("Task", []byte(task("working", "null"))))
	err := mcptest.Validate("Task", []byte(task("done", "null")))
	mcptest.MustFail(t, err)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error does not wrap the validator's *jsonschema.ValidationError: %v", err)
	}
	for _, want := range []string{"#/$defs/Task", `'/status'`, "value must be one of", `"status":"done"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

func TestValidateRejectsNonJSONAndUnknownDefs(t *testing.T) {
	for _, raw := range []string{``, `{`, `{"taskId":"t"} {}`, `nul`} {
		err := mcptest.Validate("Task", []byte(raw))
		mcptest.MustFail(t, err)
		if !strings.Contains(err.Error(), "not a single JSON value") {
			t.Errorf("Validate(Task, %q): error does not say the text is not JSON: %v", raw, err)
		}
	}
	err := mcptest.Validate("NoSuchResult", []byte(`{}`))
	var se *mcptest.SchemaError
	if err == nil || errors.As(err, &se) || !strings.Contains(err.Error(), `"NoSuchResult"`) {
		t.Errorf("unknown def: got %v, want a plain error naming it", err)
	}
	mcptest.Must(t, mcptest.Validate("#/$defs/EmptyResult", []byte(`{}`)))
}

func TestErrorIsTruncated(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"tasks":[`)
	for i := range 300 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(task("done", "1"))
	}
	b.WriteString(`]}`)
	err := mcptest.Validate("ListTasksResult", []byte(b.String()))
	mcptest.MustFail(t, err)
	msg := err.Error()
	if len(msg) > 3000 {
		t.Errorf("error is %d bytes, want it cut to about 2.3 KB", len(msg))
	}
	for _, want := range []string{"#/$defs/ListTasksResult", "more lines", "bytes more", "value must be one of"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
}

func ExampleValidate() {
	err := mcptest.Validate("GetTaskResult", []byte(`{"taskId":"t1","status":"done","createdAt":"2026-01-05T09:00:00Z","lastUpdatedAt":"2026-01-05T09:00:00Z","ttl":null}`))
	fmt.Println(err)
	// Output:
	// schema: JSON text does not match #/$defs/GetTaskResult of schema 2025-11-25: jsonschema validation failed with 'urn:mcp:schema-2025-11-25#/$defs/GetTaskResult'
	// - at '': 'allOf' failed
	//   - at '/status': value must be one of 'cancelled', 'completed', 'failed', 'input_required', 'working'
	//   in: {"taskId":"t1","status":"done","createdAt":"2026-01-05T09:00:00Z","lastUpdatedAt":"2026-01-05T09:00:00Z","ttl":null}
}
