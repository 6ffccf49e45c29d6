package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// This file holds the names of the modern era (protocol 2026-07-28 and its Tasks extension,
// docs/RULES.md#eras): method names, _meta keys, error codes and their HTTP statuses, and
// resultType. The wire layer built on them: envelope.go (the per-request _meta), headers.go
// (Mcp-Method, Mcp-Name, E25), task2026.go (tasks and results), dialect2026.go (the Dialect).

// ExtTasks is the identifier of the Tasks extension: its key under
// capabilities.extensions, declared by the client on each request (docs/RULES.md#e39) and by
// the server in server/discover, always with the value {} (the extension defines no
// settings).
const ExtTasks = "io.modelcontextprotocol/tasks"

// Method names of protocol 2026-07-28 and its Tasks extension that 2025-11-25 does not have.
// tools/list, tools/call, tasks/get, tasks/cancel, elicitation/create and
// notifications/cancelled keep their 2025-11-25 names (MethodToolsList, ...); initialize,
// notifications/initialized, ping, tasks/result, tasks/list and notifications/tasks/status
// are gone (docs/RULES.md#e37).
const (
	MethodServerDiscover            = "server/discover"                          // E8
	MethodSubscriptionsListen       = "subscriptions/listen"                     // E17-E20
	MethodSubscriptionsAcknowledged = "notifications/subscriptions/acknowledged" // E17
	MethodTasksUpdate               = "tasks/update"                             // E55-E58
	MethodTaskNotification          = "notifications/tasks"                      // TaskStatusNotification, E62
	MethodPromptsGet                = "prompts/get"                              // Mcp-Name: params.name (E24)
	MethodResourcesRead             = "resources/read"                           // Mcp-Name: params.uri (E24)
	MethodSamplingCreateMessage     = "sampling/createMessage"                   // an input request (E15)
	MethodRootsList                 = "roots/list"                               // an input request (E15)
	MethodProgress                  = "notifications/progress"
)

// _meta keys of protocol 2026-07-28 (docs/RULES.md#e1).
const (
	// MetaProtocolVersion is the request's protocol version: required on every request (E1).
	MetaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	// MetaClientCapabilities are the client's capabilities for this request alone: required
	// on every request (E1, E4), {} for none.
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	// MetaClientInfo names the client software (E2): display only (E6).
	MetaClientInfo = "io.modelcontextprotocol/clientInfo"
	// MetaLogLevel asks for log notifications from this request (deprecated, optional).
	MetaLogLevel = "io.modelcontextprotocol/logLevel"
	// MetaServerInfo names the server software in a result's _meta (E6).
	MetaServerInfo = "io.modelcontextprotocol/serverInfo"
	// MetaSubscriptionID is the id of the subscriptions/listen request a notification was
	// sent for (E18), and in the listen result's _meta (E20).
	MetaSubscriptionID = "io.modelcontextprotocol/subscriptionId"
	// MetaProgressToken asks for progress notifications of this request.
	MetaProgressToken = "progressToken"
)

// ResultType is the resultType every result of 2026-07-28 carries (docs/RULES.md#e11).
type ResultType string

const (
	// ResultComplete is a final result; also what an absent resultType means (E12).
	ResultComplete ResultType = "complete"
	// ResultInputRequired is an InputRequiredResult: retry with inputResponses (MRTR, E15).
	ResultInputRequired ResultType = "input_required"
	// ResultTask is a CreateTaskResult of the Tasks extension, only ever on tools/call (E45).
	ResultTask ResultType = "task"
)

// Known reports whether a client knows rt on the reply to a request that did (tasks) or did
// not declare the Tasks extension: the core values, and "task" only when declared on that
// very request (E13). An unknown resultType makes the reply invalid.
func (rt ResultType) Known(tasks bool) bool {
	return rt == ResultComplete || rt == ResultInputRequired || (tasks && rt == ResultTask)
}

// CacheScope is cacheScope of a cacheable result such as DiscoverResult: who may reuse it.
type CacheScope string

const (
	CachePublic  CacheScope = "public"  // any client or intermediary, across authorization contexts
	CachePrivate CacheScope = "private" // only within the same authorization context
)

// Error codes 2026-07-28 defines (docs/RULES.md#e14: nobody emits another code of
// -32020…-32099, nor -32002 or -32042). Each goes with HTTP status 400 (HTTPStatus).
const (
	CodeHeaderMismatch                  = -32020 // headers missing, malformed or contradicting the body (E26)
	CodeMissingRequiredClientCapability = -32021 // data.requiredCapabilities (E5, E44, E61, E65)
	CodeUnsupportedProtocolVersion      = -32022 // data.supported, data.requested (E9)
)

// CanonicalCode maps the draft numbers of the three codes above, which linger in SEPs, SDKs
// and the conformance suite (docs/RULES.md#ext-gap-8), to the released ones: -32001 to
// -32020, -32003 to -32021, -32004 to -32022; draft reports that it did, so that the
// observation can be recorded. Any other code comes back as it is. It is for reading replies
// to modern requests only: in the legacy range -32000…-32019 a code has no shared meaning
// (the TypeScript SDK, for one, uses -32001 for its own request timeout).
func CanonicalCode(code int) (canonical int, draft bool) {
	switch code {
	case -32001:
		return CodeHeaderMismatch, true
	case -32003:
		return CodeMissingRequiredClientCapability, true
	case -32004:
		return CodeUnsupportedProtocolVersion, true
	}
	return code, false
}

// HTTPStatus is the HTTP status of a JSON-RPC error reply over Streamable HTTP 2026-07-28
// (docs/RULES.md#e27): 404 for -32601; 400 for -32020, -32021, -32022 and for -32602, which
// the spec requires for a missing _meta key (E3); 200 for anything else. The spec fixes no
// status for other errors; tasksim follows the one observed in mcp-go, which also answers
// -32600 and -32700 with 400, so that a -32602 has one status whatever its cause. (The
// statuses are written as numbers: the package does no HTTP.)
func HTTPStatus(code int) int {
	switch code {
	case CodeMethodNotFound:
		return 404 // Not Found
	case CodeHeaderMismatch, CodeMissingRequiredClientCapability, CodeUnsupportedProtocolVersion,
		CodeInvalidParams, CodeInvalidRequest, CodeParseError:
		return 400 // Bad Request
	}
	return 200
}

// Quirks is a set of deviations a lenient reader of the modern era accepted: things tasksim
// never writes, which the rules say to accept so that a run goes on, and to report so that
// they are seen (docs/RULES.md#ext-gaps). The zero value is none.
type Quirks uint8

const (
	// QuirkNoResultType: a result without resultType, read as "complete" (E12); a modern
	// server must send it (E11).
	QuirkNoResultType Quirks = 1 << iota
	// QuirkTaskResultType: resultType "task" on a tasks/get reply, as the spec's own
	// examples show (docs/RULES.md#ext-gap-1), read as "complete".
	QuirkTaskResultType
	// QuirkNestedTask: the task nested under "task", as 2025-11-25's CreateTaskResult and
	// stale spec text have it, rather than flat (docs/RULES.md#ext-gap-5).
	QuirkNestedTask
	// QuirkLegacyNotification: a task notification named notifications/tasks/status, the
	// 2025-11-25 name, rather than notifications/tasks (docs/RULES.md#ext-gap-8).
	QuirkLegacyNotification
	numQuirks = iota
)

var quirkNames = [numQuirks]string{"no_result_type", "task_result_type", "nested_task", "legacy_notification"}

// String names the quirks in q, joined by "|"; "" for none.
func (q Quirks) String() string {
	var names []string
	for i, name := range quirkNames {
		if q&(1<<i) != 0 {
			names = append(names, name)
		}
	}
	return strings.Join(names, "|")
}

// ReadResultType returns the resultType of raw, a result object: "complete" with
// QuirkNoResultType when it has none (E12). An error says raw is no JSON object or its
// resultType no string. It does not judge the value: see ResultType.Known (E13).
func ReadResultType(raw []byte) (ResultType, Quirks, error) {
	if v := bytes.TrimLeft(raw, " \t\r\n"); len(v) == 0 || v[0] != '{' {
		return "", 0, fmt.Errorf("result: want a JSON object, got %s", clip(raw))
	}
	var rt []byte
	if !EachMember(raw, func(name, v []byte) bool {
		if string(name) == "resultType" {
			rt = v
		}
		return true
	}) {
		return "", 0, fmt.Errorf("result: not one JSON object: %s", clip(raw))
	}
	if rt == nil {
		return ResultComplete, QuirkNoResultType, nil
	}
	var s string
	if rt[0] != '"' || readString(rt, &s) != nil {
		return "", 0, fmt.Errorf("result: resultType must be a string, got %s", clip(rt))
	}
	return ResultType(s), 0, nil
}

// WithResultType returns obj, a JSON object, with "resultType": rt as its first member when
// it has none; an object that has one is returned as it is when that one is rt, and is an
// error otherwise. It turns a result written for 2025-11-25 (a CallToolResult, say) into one
// of 2026-07-28 (E11), e.g. the inline result of a completed task, which carries "complete"
// (docs/RULES.md#e50).
func WithResultType(obj json.RawMessage, rt ResultType) (json.RawMessage, error) {
	got, q, err := ReadResultType(obj)
	switch {
	case err != nil:
		return nil, err
	case q&QuirkNoResultType == 0 && got != rt:
		return nil, fmt.Errorf("result: resultType is %q, want %q", got, rt)
	case q&QuirkNoResultType == 0:
		return obj, nil
	}
	v := bytes.TrimLeft(obj, " \t\r\n")[1:] // after '{'
	out := make([]byte, 0, len(obj)+len(rt)+16)
	out = append(out, `{"resultType":`...)
	out = AppendString(out, string(rt))
	if t := bytes.TrimLeft(v, " \t\r\n"); len(t) > 0 && t[0] != '}' {
		out = append(out, ',')
	}
	return append(out, v...), nil
}

// AppendEmptyResult appends {"resultType":"complete"}, with meta as its _meta when not nil:
// the schema's EmptyResult, and the acknowledgement of tasks/update (E58) and tasks/cancel
// (E60), which carry no task. A meta that is no JSON object is left out.
func AppendEmptyResult(dst []byte, meta json.RawMessage) []byte {
	dst = append(dst, `{"resultType":"complete"`...)
	if d, err := appendMeta(dst, meta); err == nil {
		dst = d
	}
	return append(dst, '}')
}

// compact returns raw without insignificant space, or as it is if it is no valid JSON.
func compact(raw []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// appendMeta writes a result's _meta member when meta is set; it must be a JSON object.
func appendMeta(dst []byte, meta json.RawMessage) ([]byte, error) {
	if meta == nil {
		return dst, nil
	}
	if m := bytes.TrimSpace(meta); len(m) == 0 || m[0] != '{' || !Valid(m) {
		return nil, fmt.Errorf("mcp: _meta must be a JSON object, got %s", clip(meta))
	}
	return append(append(dst, `,"_meta":`...), compact(meta)...), nil
}
