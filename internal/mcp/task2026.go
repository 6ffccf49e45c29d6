package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Tasks of the Tasks extension io.modelcontextprotocol/tasks (rules E39–E63, from
// docs/RULES.md#e39). The wire is flat: a created task and a polled one are Result & Task,
// the task's members beside resultType, never nested under "task"
// (docs/RULES.md#ext-gap-5). tasks/get inlines what the task's status calls for (E50);
// tasks/update and tasks/cancel are acknowledged with an empty result (E58, E60). Writers
// are strict; readers are lenient where the rules say so and report it (Quirks).

// DetailedTask is a task of the Tasks extension: the schema's Task (taskId, status,
// statusMessage, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs) with what a tasks/get reply
// or a notifications/tasks inlines by status, its DetailedTask union (E50):
//
//	status          inlines
//	working         nothing
//	input_required  InputRequests: every outstanding request, at least one
//	completed       Result: what the original request would have returned (E49)
//	failed          Error: the JSON-RPC error (E49)
//	cancelled       nothing
//
// Its members are those of 2025-11-25's Task under the extension's names (ttlMs,
// pollIntervalMs); DetailedTaskOf and Task convert. Write it with AppendCreateTaskResult,
// AppendGetTaskResult or AppendTaskNotification, which check it first (Check).
type DetailedTask struct {
	TaskID        string
	Status        Status
	StatusMessage string // "" when not sent
	CreatedAt     string // ISO 8601; FormatTime writes it
	LastUpdatedAt string
	// TTLMs is the retention from createdAt in ms; nil is null, unlimited
	// (docs/RULES.md#ext-gap-10). Always sent.
	TTLMs *Ms
	// PollIntervalMs is the suggested gap between polls in ms (E52); nil when not sent.
	PollIntervalMs *Ms
	// InputRequests are the outstanding requests of an input_required task, by key (E50,
	// E57).
	InputRequests InputRequests
	// Result is the result of a completed task: a JSON object (for tools/call a
	// CallToolResult, isError:true included, E49), written with resultType "complete".
	Result json.RawMessage
	// Error is the JSON-RPC error of a failed task (E49).
	Error *Error
}

// DetailedTaskOf returns the members t shares with a task of the extension, with no payload.
func DetailedTaskOf(t *Task) DetailedTask {
	return DetailedTask{TaskID: t.TaskID, Status: t.Status, StatusMessage: t.StatusMessage, CreatedAt: t.CreatedAt,
		LastUpdatedAt: t.LastUpdatedAt, TTLMs: t.TTL, PollIntervalMs: t.PollInterval}
}

// Task returns the members t shares with a task of 2025-11-25, without the payload.
func (t *DetailedTask) Task() Task {
	return Task{TaskID: t.TaskID, Status: t.Status, StatusMessage: t.StatusMessage, CreatedAt: t.CreatedAt,
		LastUpdatedAt: t.LastUpdatedAt, TTL: t.TTLMs, PollInterval: t.PollIntervalMs}
}

// InputRequest is one request the server needs the client to answer, carried in a result
// (MRTR, docs/RULES.md#e15) or a task (E50): a method and its params, without jsonrpc or id.
// The methods are elicitation/create, sampling/createMessage and roots/list.
type InputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// InputRequests maps server-chosen keys to input requests. Keys are unique over a task's
// whole life (E57); MRTR keys and task keys are separate namespaces (E47).
type InputRequests map[string]InputRequest

// InputResponses maps the keys of InputRequests to the client's results: an ElicitResult,
// CreateMessageResult or ListRootsResult each (E56).
type InputResponses map[string]json.RawMessage

// check reports an input request the schema's InputRequest would refuse for its method or
// for a required member of its params: the message and requestedSchema (or, in URL mode,
// url) of an elicitation, the messages and maxTokens of a sampling request. What those
// members hold (the fields of a requested schema, the sampling messages) is the caller's.
func (r InputRequest) check() error {
	var p map[string]json.RawMessage
	if len(r.Params) > 0 && (r.Params[0] != '{' || json.Unmarshal(r.Params, &p) != nil) {
		return fmt.Errorf("%s params must be an object", r.Method)
	}
	kind := func(name string, want byte) bool {
		v := p[name]
		return len(v) > 0 && (v[0] == want || (want == '0' && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9'))))
	}
	switch r.Method {
	case MethodElicit:
		url := string(p["mode"]) == `"url"`
		switch {
		case p == nil:
			return fmt.Errorf("%s needs params", r.Method)
		case !kind("message", '"'):
			return fmt.Errorf("%s params need a message", r.Method)
		case url && !kind("url", '"'):
			return fmt.Errorf("%s params in url mode need a url", r.Method)
		case !url && !validRequestedSchema(p["requestedSchema"]):
			return fmt.Errorf("%s params need a requestedSchema with type object and properties", r.Method)
		}
	case MethodSamplingCreateMessage:
		if !kind("messages", '[') || !kind("maxTokens", '0') {
			return fmt.Errorf("%s params need messages and maxTokens", r.Method)
		}
	case MethodRootsList:
	default:
		return fmt.Errorf("%q is not an input request method (elicitation/create, sampling/createMessage, roots/list)", r.Method)
	}
	return nil
}

// validRequestedSchema reports whether raw is the outline of a form elicitation's schema:
// an object of type "object" with an object of properties.
func validRequestedSchema(raw json.RawMessage) bool {
	var s struct {
		Type       *string         `json:"type"`
		Properties json.RawMessage `json:"properties"`
	}
	return len(raw) > 0 && raw[0] == '{' && json.Unmarshal(raw, &s) == nil && s.Type != nil && *s.Type == "object" &&
		len(s.Properties) > 0 && s.Properties[0] == '{'
}

// check reports an input request of rs that cannot be written.
func (rs InputRequests) check() error {
	keys := make([]string, 0, len(rs))
	for k := range rs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := rs[k].check(); err != nil {
			return fmt.Errorf("input request %q: %w", k, err)
		}
	}
	return nil
}

// Check reports what keeps t from being written as a task of the extension: a missing
// taskId, status, createdAt or lastUpdatedAt; a negative ttlMs or pollIntervalMs; or a
// payload that does not fit the status (E50): input_required without input requests (or
// with one of another method), completed without a JSON-object result (or with a
// resultType other than "complete"), failed without an error, or a payload on a status that
// inlines none.
func (t *DetailedTask) Check() error {
	if err := t.checkFields(); err != nil {
		return err
	}
	want := map[Status]string{StatusInputRequired: "inputRequests", StatusCompleted: "result", StatusFailed: "error"}[t.Status]
	for _, p := range t.payloads() {
		if p != want {
			return fmt.Errorf("mcp: a %s task carries no %s (docs/RULES.md#e50)", t.Status, p)
		}
	}
	switch t.Status {
	case StatusInputRequired:
		if len(t.InputRequests) == 0 {
			return errors.New("mcp: an input_required task carries its outstanding inputRequests, at least one (docs/RULES.md#e50)")
		}
		if err := t.InputRequests.check(); err != nil {
			return fmt.Errorf("mcp: %w", err)
		}
	case StatusCompleted:
		if t.Result == nil {
			return errors.New("mcp: a completed task carries its result (docs/RULES.md#e50)")
		}
		if _, err := WithResultType(t.Result, ResultComplete); err != nil {
			return fmt.Errorf("mcp: completed task: %w", err)
		}
	case StatusFailed:
		if t.Error == nil {
			return errors.New("mcp: a failed task carries its JSON-RPC error (docs/RULES.md#e49)")
		}
	}
	return nil
}

// checkFields checks the members every task has.
func (t *DetailedTask) checkFields() error {
	switch {
	case t.TaskID == "":
		return errors.New("mcp: task without taskId")
	case !t.Status.Valid():
		return fmt.Errorf("mcp: task %q: invalid status %d", t.TaskID, t.Status)
	case t.CreatedAt == "" || t.LastUpdatedAt == "":
		return fmt.Errorf("mcp: task %q: createdAt and lastUpdatedAt are required", t.TaskID)
	case t.TTLMs != nil && *t.TTLMs < 0, t.PollIntervalMs != nil && *t.PollIntervalMs < 0:
		return fmt.Errorf("mcp: task %q: ttlMs and pollIntervalMs are not negative", t.TaskID)
	}
	return nil
}

// payloads names the payload members t holds.
func (t *DetailedTask) payloads() []string {
	var p []string
	if t.InputRequests != nil {
		p = append(p, "inputRequests")
	}
	if t.Result != nil {
		p = append(p, "result")
	}
	if t.Error != nil {
		p = append(p, "error")
	}
	return p
}

// appendTask2026 writes t's members after those already in dst (no braces): with its
// payload when payload is set. t has been checked.
func appendTask2026(dst []byte, t *DetailedTask, payload bool) []byte {
	dst = appendTaskMembers(dst, t.TaskID, t.Status, t.StatusMessage, t.CreatedAt, t.LastUpdatedAt,
		`,"ttlMs":`, t.TTLMs, `,"pollIntervalMs":`, t.PollIntervalMs)
	if !payload {
		return dst
	}
	switch t.Status {
	case StatusInputRequired:
		b, _ := json.Marshal(t.InputRequests) // checked: methods and object params
		dst = append(append(dst, `,"inputRequests":`...), b...)
	case StatusCompleted:
		r, _ := WithResultType(t.Result, ResultComplete) // checked
		dst = append(append(dst, `,"result":`...), compact(r)...)
	case StatusFailed:
		b, _ := json.Marshal(t.Error)
		dst = append(append(dst, `,"error":`...), b...)
	}
	return dst
}

// AppendCreateTaskResult appends the reply to a tools/call that became a task (E45): the
// flat task with resultType "task", and meta (e.g. ServerInfoMeta, E6) as its _meta when not
// nil. The task may be in any status, but carries no payload: that comes from tasks/get
// only. Send it only once a tasks/get of the task would succeed (E46), and only to a request
// that declared the extension (E39).
func AppendCreateTaskResult(dst []byte, t *DetailedTask, meta json.RawMessage) ([]byte, error) {
	if err := t.checkFields(); err != nil {
		return nil, err
	}
	if p := t.payloads(); p != nil {
		return nil, fmt.Errorf("mcp: CreateTaskResult never inlines %v: tasks/get does (docs/RULES.md#e50)", p)
	}
	dst = appendTask2026(append(dst, `{"resultType":"task",`...), t, false)
	dst, err := appendMeta(dst, meta)
	if err != nil {
		return nil, err
	}
	return append(dst, '}'), nil
}

// AppendGetTaskResult appends the reply to tasks/get (E50, E51): the flat task with what its
// status inlines, resultType "complete", and meta as its _meta when not nil. t must pass
// Check.
func AppendGetTaskResult(dst []byte, t *DetailedTask, meta json.RawMessage) ([]byte, error) {
	if err := t.Check(); err != nil {
		return nil, err
	}
	dst = appendTask2026(append(dst, `{"resultType":"complete",`...), t, true)
	dst, err := appendMeta(dst, meta)
	if err != nil {
		return nil, err
	}
	return append(dst, '}'), nil
}

// AppendTaskNotification appends the whole notifications/tasks message for a
// subscriptions/listen stream: its params are t exactly as tasks/get would return it now,
// payload included (E62), and _meta names the subscription, the listen request's id, which
// must not be zero (E18). t must pass Check.
func AppendTaskNotification(dst []byte, t *DetailedTask, subscription ID) ([]byte, error) {
	if subscription.IsZero() {
		return nil, errors.New("mcp: a task notification names its subscription (docs/RULES.md#e18)")
	}
	if err := t.Check(); err != nil {
		return nil, err
	}
	dst = append(dst, `{"jsonrpc":"2.0","method":"`+MethodTaskNotification+`","params":{"_meta":`...)
	dst = append(dst, SubscriptionMeta(subscription)...)
	dst = appendTask2026(append(dst, ','), t, true)
	return append(dst, "}}"...), nil
}
