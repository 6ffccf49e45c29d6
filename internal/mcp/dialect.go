package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Op is a protocol operation, independent of how a dialect spells it on the wire. Ops index
// arrays (per-method latency histograms, request counters), so the hot path never keys
// anything by a method string.
type Op uint8

const (
	OpUnknown Op = iota
	OpInitialize
	OpInitialized
	OpPing
	OpToolsList
	OpToolsCall
	OpTasksGet
	OpTasksResult
	OpTasksList
	OpTasksCancel
	OpTaskStatus
	OpElicit
	OpCancelled
	// The ops below exist only in 2026-07-28 (dialect2026.go): V20251125 has no method for
	// them.
	OpServerDiscover
	OpTasksUpdate
	OpSubscriptionsListen
	OpSubscriptionsAcknowledged
	// OpDelete is the HTTP DELETE that ends a Streamable HTTP session (docs/RULES.md#h9):
	// no JSON-RPC method in either era, counted beside the requests.
	OpDelete
	NumOps
)

// metricNames are the stable names of docs/METRICS.md#latency_method (latency_<name>).
var metricNames = [NumOps]string{
	"unknown", "initialize", "initialized", "ping", "tools_list", "tools_call", "tasks_get",
	"tasks_result", "tasks_list", "tasks_cancel", "tasks_status", "elicitation_create", "cancelled",
	"server_discover", "tasks_update", "subscriptions_listen", "subscriptions_acknowledged", "delete",
}

// MetricName returns the op's stable metric name, e.g. "tasks_get".
func (o Op) MetricName() string {
	if o < NumOps {
		return metricNames[o]
	}
	return "unknown"
}

// Name returns the op's wire method name, for outputs keyed by it (summary.json's requests,
// the text summary): V20251125's spelling, else V20260728's (the eras spell every op both
// have alike but OpTaskStatus, which is "notifications/tasks/status" here); "DELETE" for
// OpDelete; "unknown" for OpUnknown and any op out of range. A request on the wire takes its
// method from the Dialect of its era instead.
func (o Op) Name() string {
	switch {
	case o == OpDelete:
		return "DELETE"
	case o >= NumOps:
		return "unknown"
	case methods20251125[o] != "":
		return methods20251125[o]
	case methods20260728[o] != "":
		return methods20260728[o]
	}
	return "unknown"
}

// String returns Name.
func (o Op) String() string { return o.Name() }

// Dialect is the seam between tasksim's engines and one protocol revision: method names,
// field names and result shapes. The engines speak in Ops and Tasks; a Dialect turns them into
// bytes and back.
type Dialect interface {
	// Version is the protocolVersion string of this revision.
	Version() string
	// Method returns the wire method of op, or "" when the revision has no such method.
	Method(op Op) string
	// Op maps a wire method to its Op; OpUnknown when the revision has no such method.
	Op(method string) Op
	// AppendTask appends the flattened task result of tasks/get and tasks/cancel.
	AppendTask(dst []byte, t *Task) []byte
	// AppendCreateResult appends the reply to an accepted task-augmented tools/call (R11).
	AppendCreateResult(dst []byte, t *Task) []byte
	// ParseCallReply reads a tools/call result: a created task, or a plain CallToolResult
	// when the receiver ran the call synchronously. Exactly one of the two is non-nil.
	ParseCallReply(raw []byte) (*Task, *CallToolResult, error)
}

// Method names of protocol 2025-11-25.
const (
	MethodInitialize  = "initialize"
	MethodInitialized = "notifications/initialized"
	MethodPing        = "ping"
	MethodToolsList   = "tools/list"
	MethodToolsCall   = "tools/call"
	MethodTasksGet    = "tasks/get"
	MethodTasksResult = "tasks/result"
	MethodTasksList   = "tasks/list"
	MethodTasksCancel = "tasks/cancel"
	MethodTaskStatus  = "notifications/tasks/status"
	MethodElicit      = "elicitation/create"
	MethodCancelled   = "notifications/cancelled"
)

// Protocol versions tasksim knows. Only 2025-11-25 has Tasks in the core protocol; the older
// ones are negotiated so that a peer pinned to them gets a session without the tasks
// capability. 2026-07-28 is the first modern version (IsModern): it has no initialize to
// negotiate it, every request names it in its _meta envelope (ReadRequestMeta), and Tasks are
// the extension ExtTasks.
const (
	Version20260728 = "2026-07-28"
	Version20251125 = "2025-11-25"
	Version20250618 = "2025-06-18"
	Version20250326 = "2025-03-26"
	Version20241105 = "2024-11-05"
)

// knownVersions are the versions KnownVersion accepts, newest first.
var knownVersions = [...]string{Version20260728, Version20251125, Version20250618, Version20250326, Version20241105}

// KnownVersion reports whether v is a protocol version tasksim knows: one it negotiates
// through initialize (2025-11-25 and older), or the modern 2026-07-28, which is never
// negotiated that way (IsModern tells the two kinds apart).
func KnownVersion(v string) bool {
	for _, k := range knownVersions {
		if v == k {
			return true
		}
	}
	return false
}

// SessionVersion reports whether v is a version negotiated through initialize, with a
// session: 2025-11-25 and older (never the modern 2026-07-28, which has no initialize). The
// legacy engines, which speak only these, check answers and headers with it.
func SessionVersion(v string) bool { return KnownVersion(v) && !IsModern(v) }

// InternVersion returns v as the package's constant when it is a version KnownVersion
// accepts, so that thousands of sessions share one string instead of each keeping the copy
// decoded from its initialize exchange; any other v comes back as it is.
func InternVersion(v string) string {
	for _, k := range knownVersions {
		if v == k {
			return k
		}
	}
	return v
}

// HasTasks reports whether protocol version v includes Tasks in its core protocol (only
// 2025-11-25 does; from 2026-07-28 on, Tasks are the extension ExtTasks, declared per
// request).
func HasTasks(v string) bool { return v == Version20251125 }

// IsModern reports whether v names a modern protocol version (docs/RULES.md#eras): a date
// version no older than 2026-07-28, whose requests each carry their version and capabilities
// in _meta instead of relying on an initialize handshake. Versions are dates and compare as
// strings, so a future version is modern too, whether tasksim speaks it (KnownVersion) or
// not; a string that is no date (YYYY-MM-DD) is not.
func IsModern(v string) bool { return isDate(v) && v >= Version20260728 }

// isDate reports whether v has the shape of a protocol version: YYYY-MM-DD in digits.
func isDate(v string) bool {
	if len(v) != len("2006-01-02") {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; (i == 4 || i == 7) != (c == '-') || (c != '-' && (c < '0' || c > '9')) {
			return false
		}
	}
	return true
}

// V20251125 is the 2025-11-25 dialect (docs/RULES.md#eras).
type V20251125 struct{}

var _ Dialect = V20251125{}

var methods20251125 = [NumOps]string{
	OpInitialize:  MethodInitialize,
	OpInitialized: MethodInitialized,
	OpPing:        MethodPing,
	OpToolsList:   MethodToolsList,
	OpToolsCall:   MethodToolsCall,
	OpTasksGet:    MethodTasksGet,
	OpTasksResult: MethodTasksResult,
	OpTasksList:   MethodTasksList,
	OpTasksCancel: MethodTasksCancel,
	OpTaskStatus:  MethodTaskStatus,
	OpElicit:      MethodElicit,
	OpCancelled:   MethodCancelled,
}

// Version implements Dialect.
func (V20251125) Version() string { return Version20251125 }

// Method implements Dialect.
func (V20251125) Method(op Op) string {
	if op < NumOps {
		return methods20251125[op]
	}
	return ""
}

// Op implements Dialect.
func (V20251125) Op(method string) Op {
	if method == "" {
		return OpUnknown // the modern-only ops have no method here
	}
	for op := OpInitialize; op < NumOps; op++ {
		if methods20251125[op] == method {
			return op
		}
	}
	return OpUnknown
}

// AppendTask implements Dialect: GetTaskResult and CancelTaskResult are Result & Task, the
// task's fields at the top level. It allocates nothing beyond growing dst.
func (V20251125) AppendTask(dst []byte, t *Task) []byte {
	return appendTaskFields(append(dst, '{'), t)
}

// AppendCreateResult implements Dialect: CreateTaskResult nests the task under "task".
func (V20251125) AppendCreateResult(dst []byte, t *Task) []byte {
	dst = appendTaskFields(append(dst, `{"task":{`...), t)
	return append(dst, '}')
}

// appendTaskFields writes the task's members and the closing brace of its object.
func appendTaskFields(dst []byte, t *Task) []byte {
	dst = appendTaskMembers(dst, t.TaskID, t.Status, t.StatusMessage, t.CreatedAt, t.LastUpdatedAt,
		`,"ttl":`, t.TTL, `,"pollInterval":`, t.PollInterval)
	return append(dst, '}')
}

// appendTaskMembers writes the members every task object has, in both eras, after those
// already in dst (no braces): the eras differ only in the names of the ttl and poll
// interval members (ttlKey and pollKey, each with its leading comma and colon). A nil ttl
// is null; a nil poll interval is left out.
func appendTaskMembers(dst []byte, id string, status Status, msg, created, updated string,
	ttlKey string, ttl *Ms, pollKey string, poll *Ms) []byte {
	dst = append(dst, `"taskId":`...)
	dst = AppendString(dst, id)
	dst = append(dst, `,"status":"`...)
	dst = append(dst, status.String()...)
	dst = append(dst, '"')
	if msg != "" {
		dst = append(dst, `,"statusMessage":`...)
		dst = AppendString(dst, msg)
	}
	dst = append(dst, `,"createdAt":`...)
	dst = AppendString(dst, created)
	dst = append(dst, `,"lastUpdatedAt":`...)
	dst = AppendString(dst, updated)
	dst = append(dst, ttlKey...)
	if ttl == nil {
		dst = append(dst, "null"...)
	} else {
		dst = strconv.AppendInt(dst, int64(*ttl), 10)
	}
	if poll != nil {
		dst = append(dst, pollKey...)
		dst = strconv.AppendInt(dst, int64(*poll), 10)
	}
	return dst
}

// ParseCallReply implements Dialect. A result with a "task" object is a CreateTaskResult;
// anything else is read as a CallToolResult.
func (V20251125) ParseCallReply(raw []byte) (*Task, *CallToolResult, error) {
	task, plain := taskMember(raw)
	if !plain {
		return parseCallReplyStd(raw)
	}
	if task != nil {
		t, err := ParseTask(task)
		if err != nil {
			return parseCallReplyStd(raw) // encoding/json's words for it
		}
		if t.TaskID == "" {
			return nil, nil, fmt.Errorf("CreateTaskResult: task.taskId is missing")
		}
		return &t, nil, nil
	}
	var r CallToolResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, nil, fmt.Errorf("CallToolResult: %w", err)
	}
	return nil, &r, nil
}

// taskMember returns the raw "task" member of a result object (nil when absent or null).
// plain is false when encoding/json must read raw: not one valid object, or a "task"
// repeated or named in another case.
func taskMember(raw []byte) (task []byte, plain bool) {
	if v := bytes.TrimLeft(raw, " \t\r\n"); len(v) == 0 || v[0] != '{' {
		return nil, false
	}
	odd := false
	ok := EachMember(raw, func(name, v []byte) bool {
		switch {
		case string(name) == "task":
			odd = odd || task != nil
			task = v
		case FoldsTo(name, "task"):
			odd = true
		}
		return true
	})
	if !ok || odd {
		return nil, false
	}
	if string(task) == "null" {
		return nil, true
	}
	return task, true
}

// parseCallReplyStd is ParseCallReply by encoding/json alone.
func parseCallReplyStd(raw []byte) (*Task, *CallToolResult, error) {
	var probe struct {
		Task *Task `json:"task"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, nil, fmt.Errorf("tools/call result: %w", err)
	}
	if probe.Task != nil {
		if probe.Task.TaskID == "" {
			return nil, nil, fmt.Errorf("CreateTaskResult: task.taskId is missing")
		}
		return probe.Task, nil, nil
	}
	var r CallToolResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, nil, fmt.Errorf("CallToolResult: %w", err)
	}
	return nil, &r, nil
}
