package mcp

import (
	"errors"
	"fmt"
	"strconv"
)

// V20260728 is the 2026-07-28 dialect with the Tasks extension io.modelcontextprotocol/tasks
// ("modern", docs/RULES.md#eras), for what of the Dialect seam maps onto it. Ops and Tasks
// mean the same in both eras, so an engine that speaks Ops and Tasks speaks either; what
// has no counterpart:
//
//   - OpInitialize, OpInitialized and OpPing: the era has no handshake and no ping; each
//     request carries its version and capabilities in _meta (ReadRequestMeta). Method
//     returns "" for them.
//   - OpTasksResult and OpTasksList: tasks/result and tasks/list are gone (E37: a modern
//     server answers them -32601, HTTP 404). tasks/get inlines the result, the error or the
//     input requests instead (AppendGetTaskResult, E50).
//   - server/discover (OpServerDiscover), tasks/update (OpTasksUpdate),
//     subscriptions/listen (OpSubscriptionsListen) and its first notification,
//     notifications/subscriptions/acknowledged (OpSubscriptionsAcknowledged), are new: only
//     this dialect has a method for them.
//   - OpElicit is elicitation/create, which in this era is never a JSON-RPC request of its
//     own (E28): it appears only as the method of an input request (InputRequest).
//   - OpCancelled is notifications/cancelled, sent by a client over stdio only; over HTTP,
//     closing the response stream cancels (E21). No task is ever cancelled by it (E59).
//   - OpTaskStatus is notifications/tasks, sent only on a subscriptions/listen stream (E62).
//     Op also maps 2025-11-25's notifications/tasks/status to it, which peers still send
//     (docs/RULES.md#ext-gap-8): compare the method with MethodTaskNotification to record
//     which name appeared.
//
// A Task holds no payload, so AppendTask writes a complete tasks/get reply only for a
// working or cancelled task; use AppendGetTaskResult with a DetailedTask for the others. A
// tasks/cancel reply carries no task (AppendEmptyResult, E60).
type V20260728 struct{}

var _ Dialect = V20260728{}

var methods20260728 = [NumOps]string{
	OpToolsList:   MethodToolsList,
	OpToolsCall:   MethodToolsCall,
	OpTasksGet:    MethodTasksGet,
	OpTasksCancel: MethodTasksCancel,
	OpTaskStatus:  MethodTaskNotification,
	OpElicit:      MethodElicit,
	OpCancelled:   MethodCancelled,

	OpServerDiscover:      MethodServerDiscover,
	OpTasksUpdate:         MethodTasksUpdate,
	OpSubscriptionsListen: MethodSubscriptionsListen,

	OpSubscriptionsAcknowledged: MethodSubscriptionsAcknowledged,
}

// Version implements Dialect.
func (V20260728) Version() string { return Version20260728 }

// Method implements Dialect: "" for the ops the era does not have (see the type).
func (V20260728) Method(op Op) string {
	if op < NumOps {
		return methods20260728[op]
	}
	return ""
}

// Op implements Dialect: OpUnknown for a method of the era that has no Op, and for one the
// era does not have.
func (V20260728) Op(method string) Op {
	if method == "" {
		return OpUnknown
	}
	if method == MethodTaskStatus { // docs/RULES.md#ext-gap-8
		return OpTaskStatus
	}
	for op := OpInitialize; op < NumOps; op++ {
		if methods20260728[op] == method {
			return op
		}
	}
	return OpUnknown
}

// AppendTask implements Dialect: the tasks/get reply of a task without payload, flat, with
// resultType "complete" (E51) and the extension's field names. The reply is complete for a
// working or cancelled task; for the others E50 requires a payload a Task does not hold
// (AppendGetTaskResult).
func (V20260728) AppendTask(dst []byte, t *Task) []byte {
	d := DetailedTaskOf(t)
	return append(appendTask2026(append(dst, `{"resultType":"complete",`...), &d, false), '}')
}

// AppendCreateResult implements Dialect: the CreateTaskResult of a tools/call that became a
// task, flat, with resultType "task" (E45). AppendCreateTaskResult also takes a _meta and
// checks the task.
func (V20260728) AppendCreateResult(dst []byte, t *Task) []byte {
	d := DetailedTaskOf(t)
	return append(appendTask2026(append(dst, `{"resultType":"task",`...), &d, false), '}')
}

// ErrInputRequired is the error V20260728.ParseCallReply returns for an InputRequiredResult,
// which a Dialect has no way to return: read the reply with ParseCallToolReply, answer the
// input requests, and retry the call (MRTR, docs/RULES.md#e16).
var ErrInputRequired = errors.New("mcp: the tools/call reply is an InputRequiredResult: retry the call with inputResponses")

// ParseCallReply implements Dialect for a tools/call that declared the Tasks extension (as
// tasksim's requests always do, docs/RULES.md#ext-gap-6): resultType "task" is a created
// task, "complete" (or none, E12) a CallToolResult, "input_required" the error
// ErrInputRequired, any other an error (E13). Quirks are not reported here:
// ParseCallToolReply reports them.
func (V20260728) ParseCallReply(raw []byte) (*Task, *CallToolResult, error) {
	r, _, err := ParseCallToolReply(raw, true)
	switch {
	case err != nil:
		return nil, nil, err
	case r.Input != nil:
		return nil, nil, ErrInputRequired
	case r.Task != nil:
		t := r.Task.Task()
		return &t, nil, nil
	case r.Call != nil:
		return nil, r.Call, nil
	}
	return nil, nil, fmt.Errorf("tools/call: no result read for resultType %s", strconv.Quote(string(r.ResultType)))
}
