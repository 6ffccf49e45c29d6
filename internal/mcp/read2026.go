package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Readers of tasks of the Tasks extension: what a client gets from tools/call (a created
// task), tasks/get and notifications/tasks. They accept what the rules say to accept and
// report it as Quirks (docs/RULES.md#ext-gaps); they refuse what would leave a client
// guessing: a task without its required members or without the payload its status calls
// for (E50).

// TaskResult is a result that is a task: a CreateTaskResult (resultType "task") or a
// GetTaskResult (resultType "complete"), Result & DetailedTask on the wire.
type TaskResult struct {
	ResultType ResultType
	DetailedTask
	Meta json.RawMessage // the result's _meta; nil when absent
}

// taskWire is the wire form of a task, for reading: pointers and raw values tell absent
// members from empty ones.
type taskWire struct {
	ResultType     *string         `json:"resultType"`
	TaskID         *string         `json:"taskId"`
	Status         json.RawMessage `json:"status"`
	StatusMessage  string          `json:"statusMessage"`
	CreatedAt      *string         `json:"createdAt"`
	LastUpdatedAt  *string         `json:"lastUpdatedAt"`
	TTLMs          json.RawMessage `json:"ttlMs"` // nil: absent; "null": unlimited
	PollIntervalMs *Ms             `json:"pollIntervalMs"`
	InputRequests  InputRequests   `json:"inputRequests"`
	Result         json.RawMessage `json:"result"`
	Error          *Error          `json:"error"`
	Task           json.RawMessage `json:"task"` // docs/RULES.md#ext-gap-5
	Meta           json.RawMessage `json:"_meta"`
}

// ParseTaskResult reads a result that is a task, created or polled, flat as the extension
// has it. Leniently, and reported in Quirks: no resultType is "complete" (E12), and a task
// nested under "task" (docs/RULES.md#ext-gap-5) is read from there. ResultType is the value
// read; the caller judges it (ParseGetTaskResult, ParseCallToolReply). An error says a
// required member is missing or of the wrong type. The payload of the status is read when
// present, not required: a created task has none (E45); ParseGetTaskResult requires it. A
// payload on another status is dropped.
func ParseTaskResult(raw []byte) (TaskResult, Quirks, error) {
	if v := bytes.TrimLeft(raw, " \t\r\n"); len(v) == 0 || v[0] != '{' {
		return TaskResult{}, 0, fmt.Errorf("task result: want a JSON object, got %s", clip(raw))
	}
	var w taskWire
	err := readTaskWire(raw, &w)
	return taskResultOf(&w, err)
}

// taskResultOf is ParseTaskResult's end, from the wire form readTaskWire read (err, its
// error). Status and ttlMs in w may still be spans of the input: it must not have been
// reused yet.
func taskResultOf(w *taskWire, err error) (TaskResult, Quirks, error) {
	var r TaskResult
	if err != nil {
		return r, 0, fmt.Errorf("task result: %w", err)
	}
	var q Quirks
	r.ResultType, r.Meta = ResultComplete, w.Meta
	if w.ResultType == nil {
		q |= QuirkNoResultType
	} else {
		r.ResultType = ResultType(*w.ResultType)
	}
	if w.TaskID == nil && len(w.Task) > 0 && w.Task[0] == '{' {
		var inner taskWire
		if err := readTaskWire(w.Task, &inner); err != nil {
			return r, q, fmt.Errorf("task result: task: %w", err)
		}
		inner.Meta = w.Meta
		*w, q = inner, q|QuirkNestedTask
	}
	t, err := w.detailed()
	if err != nil {
		return r, q, fmt.Errorf("task result: %w", err)
	}
	r.DetailedTask = t
	return r, q, nil
}

// ParseGetTaskResult reads a tasks/get reply: ParseTaskResult, the payload the status calls
// for (E50), then resultType, which must be "complete" (E51). A "task" there, as the spec's own examples have it, is read as "complete"
// and reported (QuirkTaskResultType, docs/RULES.md#ext-gap-1); another value is an error.
func ParseGetTaskResult(raw []byte) (TaskResult, Quirks, error) {
	return getTaskResultOf(ParseTaskResult(raw))
}

// getTaskResultOf is ParseGetTaskResult's end, from ParseTaskResult's answer.
func getTaskResultOf(r TaskResult, q Quirks, err error) (TaskResult, Quirks, error) {
	if err != nil {
		return r, q, err
	}
	if err := requirePayload(&r.DetailedTask); err != nil {
		return r, q, fmt.Errorf("tasks/get: %w", err)
	}
	switch r.ResultType {
	case ResultComplete:
	case ResultTask:
		r.ResultType, q = ResultComplete, q|QuirkTaskResultType
	default:
		return r, q, fmt.Errorf("tasks/get: resultType %q, want \"complete\" (docs/RULES.md#e51)", r.ResultType)
	}
	return r, q, nil
}

// ParseTaskNotification reads a task notification of a subscriptions/listen stream: its
// method and params. The method is notifications/tasks, or the 2025-11-25 name
// notifications/tasks/status, accepted and reported (QuirkLegacyNotification,
// docs/RULES.md#ext-gap-8). It returns the task, as complete as a tasks/get reply (E62), and
// the subscription the notification names, zero when its _meta names none (E18 requires it;
// the spec's example omits it, docs/RULES.md#ext-gap-3).
func ParseTaskNotification(method string, params []byte) (DetailedTask, ID, Quirks, error) {
	var q Quirks
	switch method {
	case MethodTaskNotification:
	case MethodTaskStatus:
		q |= QuirkLegacyNotification
	default:
		return DetailedTask{}, ID{}, 0, fmt.Errorf("%q is no task notification", method)
	}
	if v := bytes.TrimLeft(params, " \t\r\n"); len(v) == 0 || v[0] != '{' {
		return DetailedTask{}, ID{}, q, fmt.Errorf("%s: params must be an object, got %s", method, clip(params))
	}
	var w taskWire
	if err := readTaskWire(params, &w); err != nil {
		return DetailedTask{}, ID{}, q, fmt.Errorf("%s: %w", method, err)
	}
	t, err := w.detailed()
	if err == nil {
		err = requirePayload(&t)
	}
	if err != nil {
		return DetailedTask{}, ID{}, q, fmt.Errorf("%s: %w", method, err)
	}
	var meta struct {
		Subscription json.RawMessage `json:"io.modelcontextprotocol/subscriptionId"`
	}
	var sub ID
	if json.Unmarshal(w.Meta, &meta) == nil && meta.Subscription != nil && string(meta.Subscription) != "null" {
		if err := sub.UnmarshalJSON(meta.Subscription); err != nil {
			return DetailedTask{}, ID{}, q, fmt.Errorf("%s: %s: %w", method, MetaSubscriptionID, err)
		}
	}
	return t, sub, q, nil
}

// detailed checks w's members and returns the task they make, with the payload of its
// status when there is one (a payload on another status is dropped).
func (w *taskWire) detailed() (DetailedTask, error) {
	var t DetailedTask
	switch {
	case w.TaskID == nil:
		return t, errors.New("taskId is missing")
	case w.Status == nil:
		return t, errors.New("status is missing")
	case w.CreatedAt == nil || w.LastUpdatedAt == nil:
		return t, errors.New("createdAt and lastUpdatedAt are required")
	case w.TTLMs == nil:
		return t, errors.New("ttlMs is missing (null means unlimited)")
	}
	if err := t.Status.read(w.Status); err != nil { // UnmarshalJSON, without encoding/json for a plain name
		return t, err
	}
	ttl, err := readMs(w.TTLMs)
	if err != nil {
		return t, fmt.Errorf("ttlMs: %w", err)
	}
	t.TaskID, t.StatusMessage, t.CreatedAt, t.LastUpdatedAt = *w.TaskID, w.StatusMessage, *w.CreatedAt, *w.LastUpdatedAt
	t.TTLMs, t.PollIntervalMs = ttl, w.PollIntervalMs
	switch t.Status {
	case StatusInputRequired:
		t.InputRequests = w.InputRequests
	case StatusCompleted:
		if len(w.Result) > 0 && w.Result[0] == '{' {
			t.Result = w.Result
		}
	case StatusFailed:
		t.Error = w.Error
	}
	return t, nil
}

// requirePayload reports a task without the payload its status calls for in a tasks/get
// reply or a notification (E50, E62); a created task has none (E45).
func requirePayload(t *DetailedTask) error {
	switch {
	case t.Status == StatusInputRequired && t.InputRequests == nil:
		return errors.New("an input_required task carries inputRequests (docs/RULES.md#e50)")
	case t.Status == StatusCompleted && t.Result == nil:
		return errors.New("a completed task carries its result, an object (docs/RULES.md#e50)")
	case t.Status == StatusFailed && t.Error == nil:
		return errors.New("a failed task carries its error (docs/RULES.md#e50)")
	}
	return nil
}
