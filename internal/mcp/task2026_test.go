package mcp_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/mcp/mcptest"
)

const (
	created26 = "2026-08-03T14:00:00.000Z"
	updated26 = "2026-08-03T14:06:40.250Z"
	elicitReq = `{"mode":"form","message":"Drop 3 stale indices on eu-3?","requestedSchema":{"type":"object","properties":{"approve":{"type":"boolean"}},"required":["approve"]}}`
)

// tasks26 returns one task of each status with the payload tasks/get inlines for it (E50),
// and the schema definition of the extension that status matches.
func tasks26() map[string]mcp.DetailedTask {
	base := func(id string, s mcp.Status) mcp.DetailedTask {
		return mcp.DetailedTask{TaskID: id, Status: s, CreatedAt: created26, LastUpdatedAt: updated26, TTLMs: ms(900000), PollIntervalMs: ms(3000)}
	}
	working := base("tsk-5b0e9c1a7f2d4e83a6c1", mcp.StatusWorking)
	working.StatusMessage = `rebuilding index 2 of 3 "eu-3"` + "\n"
	input := base("tsk-2", mcp.StatusInputRequired)
	input.InputRequests = mcp.InputRequests{
		"confirm-drop-1": {Method: mcp.MethodElicit, Params: json.RawMessage(elicitReq)},
		"roots-1":        {Method: mcp.MethodRootsList},
	}
	completed := base("tsk-3", mcp.StatusCompleted)
	completed.TTLMs = nil // unlimited (ext-gap-10)
	// E49: a tool error is completed.
	completed.Result = json.RawMessage(`{"content":[{"type":"text","text":"shard eu-3: 2 of 3 rebuilt; 1 locked"}],"isError":true}`)
	failed := base("tsk-4", mcp.StatusFailed)
	failed.StatusMessage = "backend unavailable"
	failed.PollIntervalMs = nil
	failed.Error = &mcp.Error{Code: mcp.CodeInternalError, Message: "index backend unreachable", Data: json.RawMessage(`{"retry":true}`)}
	cancelled := base("tsk-5 ünïcode", mcp.StatusCancelled)
	cancelled.TTLMs = ms(0)
	return map[string]mcp.DetailedTask{
		"WorkingTask": working, "InputRequiredTask": input, "CompletedTask": completed, "FailedTask": failed, "CancelledTask": cancelled,
	}
}

// withoutPayload returns t as a create reply has it: no payload.
func withoutPayload(t mcp.DetailedTask) mcp.DetailedTask {
	t.InputRequests, t.Result, t.Error = nil, nil, nil
	return t
}

// TestE45CreateTaskResult: the reply to a tools/call that became a task is flat, carries
// resultType "task" and no payload, in whatever status (E45, E48).
func TestE45CreateTaskResult(t *testing.T) {
	info := mcp.ServerInfoMeta(mcp.Implementation{Name: "tasksim", Version: "0.1.0"})
	for def, task := range tasks26() {
		task := withoutPayload(task)
		for _, meta := range []json.RawMessage{nil, info} {
			b, err := mcp.AppendCreateTaskResult([]byte("keep"), &task, meta)
			if err != nil {
				t.Fatalf("%s: %v", def, err)
			}
			if !strings.HasPrefix(string(b), "keep") {
				t.Fatalf("clobbered dst: %s", b)
			}
			b = b[len("keep"):]
			mcptest.Must(t, mcptest.ValidateExt("CreateTaskResult", b))
			mcptest.Must(t, mcptest.ValidateReply2026(mcp.MethodToolsCall, mcp.AppendResult(nil, mcp.IntID(41), b)))
			mcptest.MustFail(t, mcptest.ValidateExt("GetTaskResult", b)) // "task" only on a create (E45)
			r, q, err := mcp.ParseCallToolReply(b, true)
			if err != nil || q != 0 || r.Task == nil || r.ResultType != mcp.ResultTask {
				t.Fatalf("%s: ParseCallToolReply(%s) = %+v, %v, %v", def, b, r, q, err)
			}
			if !reflect.DeepEqual(r.Task.DetailedTask, task) || string(r.Task.Meta) != string(meta) {
				t.Errorf("%s: round trip:\n got %+v %s\nwant %+v %s", def, r.Task.DetailedTask, r.Task.Meta, task, meta)
			}
		}
	}
	full := tasks26()["CompletedTask"]
	if _, err := mcp.AppendCreateTaskResult(nil, &full, nil); err == nil || !strings.Contains(err.Error(), "never inlines") {
		t.Errorf("a create reply with a result: %v", err)
	}
	plain := withoutPayload(full)
	if _, err := mcp.AppendCreateTaskResult(nil, &plain, json.RawMessage(`[]`)); err == nil {
		t.Error("a _meta that is no object was written")
	}
}

// TestE50GetTaskResult: tasks/get answers by status, inlining the input requests, the
// result or the error (E50), with resultType "complete" (E51), and reads back the same.
func TestE50GetTaskResult(t *testing.T) {
	for def, task := range tasks26() {
		b, err := mcp.AppendGetTaskResult(nil, &task, mcp.ServerInfoMeta(mcp.Implementation{Name: "s", Version: "1"}))
		if err != nil {
			t.Fatalf("%s: %v", def, err)
		}
		mcptest.Must(t, mcptest.ValidateExt("GetTaskResult", b))
		mcptest.Must(t, mcptest.ValidateExt(def, b))
		mcptest.Must(t, mcptest.ValidateReply2026(mcp.MethodTasksGet, mcp.AppendResult(nil, mcp.StringID("c-43"), b)))
		var inline struct {
			InputRequests json.RawMessage `json:"inputRequests"`
			Result        json.RawMessage `json:"result"`
			Error         json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(b, &inline); err != nil {
			t.Fatal(err)
		}
		switch task.Status {
		case mcp.StatusInputRequired:
			mcptest.Must(t, mcptest.Validate2026("InputRequests", inline.InputRequests))
		case mcp.StatusCompleted:
			// What the original tools/call would have returned, resultType included (the
			// official requester refuses a result without it).
			mcptest.Must(t, mcptest.Validate2026("CallToolResult", inline.Result))
		case mcp.StatusFailed:
			mcptest.Must(t, mcptest.Validate2026("Error", inline.Error))
		}
		if n := len(inline.InputRequests) + len(inline.Result) + len(inline.Error); (n == 0) != (task.Status == mcp.StatusWorking || task.Status == mcp.StatusCancelled) {
			t.Errorf("%s: payload written: %s", def, b)
		}

		r, q, err := mcp.ParseGetTaskResult(b)
		if err != nil || q != 0 || r.ResultType != mcp.ResultComplete {
			t.Fatalf("%s: ParseGetTaskResult(%s) = %+v, %v, %v", def, b, r, q, err)
		}
		again, err := mcp.AppendGetTaskResult(nil, &r.DetailedTask, r.Meta)
		if err != nil || string(again) != string(b) {
			t.Errorf("%s: read and written again:\n got %s, %v\nwant %s", def, again, err, b)
		}
		if task.Result == nil && !reflect.DeepEqual(r.DetailedTask, task) {
			t.Errorf("%s: round trip:\n got %+v\nwant %+v", def, r.DetailedTask, task)
		}
	}
}

// TestE50CheckRefuses: strict writing refuses a task whose payload does not fit its status,
// or that lacks a member every task has; each row names its rule.
func TestE50CheckRefuses(t *testing.T) {
	all := tasks26()
	tests := []struct {
		rule string
		edit func(*mcp.DetailedTask)
		from string
		msg  string
	}{
		{"E50 input_required without input requests", func(t *mcp.DetailedTask) { t.InputRequests = nil }, "InputRequiredTask", "at least one"},
		{"E50 input_required with an empty set", func(t *mcp.DetailedTask) { t.InputRequests = mcp.InputRequests{} }, "InputRequiredTask", "at least one"},
		{"E15 an input request of no allowed method", func(t *mcp.DetailedTask) {
			t.InputRequests = mcp.InputRequests{"k": {Method: "tools/call", Params: json.RawMessage(`{}`)}}
		}, "InputRequiredTask", "not an input request method"},
		{"E15 elicitation without params", func(t *mcp.DetailedTask) { t.InputRequests = mcp.InputRequests{"k": {Method: mcp.MethodElicit}} }, "InputRequiredTask", "needs params"},
		{"E50 completed without a result", func(t *mcp.DetailedTask) { t.Result = nil }, "CompletedTask", "carries its result"},
		{"E50 completed with a result that is no object", func(t *mcp.DetailedTask) { t.Result = json.RawMessage(`[1]`) }, "CompletedTask", "object"},
		{"E50 completed with a result of another resultType", func(t *mcp.DetailedTask) { t.Result = json.RawMessage(`{"resultType":"task"}`) }, "CompletedTask", `"task"`},
		{"E49 failed without the error", func(t *mcp.DetailedTask) { t.Error = nil }, "FailedTask", "JSON-RPC error"},
		{"E50 a working task inlines nothing", func(t *mcp.DetailedTask) { t.Result = json.RawMessage(`{}`) }, "WorkingTask", "carries no result"},
		{"E49 a completed task carries no error", func(t *mcp.DetailedTask) { t.Error = &mcp.Error{Code: 1, Message: "m"} }, "CompletedTask", "carries no error"},
		{"E50 a cancelled task inlines nothing", func(t *mcp.DetailedTask) { t.InputRequests = mcp.InputRequests{} }, "CancelledTask", "carries no inputRequests"},
		{"a task has an id", func(t *mcp.DetailedTask) { t.TaskID = "" }, "WorkingTask", "taskId"},
		{"a task has a status", func(t *mcp.DetailedTask) { t.Status = 0 }, "WorkingTask", "invalid status"},
		{"a task has its times", func(t *mcp.DetailedTask) { t.LastUpdatedAt = "" }, "WorkingTask", "lastUpdatedAt"},
		{"no negative ttlMs", func(t *mcp.DetailedTask) { t.TTLMs = ms(-1) }, "WorkingTask", "negative"},
	}
	for _, tc := range tests {
		task := all[tc.from]
		task.InputRequests = cloneRequests(task.InputRequests)
		tc.edit(&task)
		err := task.Check()
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: Check() = %v, want an error with %q", tc.rule, err, tc.msg)
			continue
		}
		if b, err := mcp.AppendGetTaskResult(nil, &task, nil); err == nil {
			t.Errorf("%s: written anyway: %s", tc.rule, b)
		}
		if b, err := mcp.AppendTaskNotification(nil, &task, mcp.StringID("sub")); err == nil {
			t.Errorf("%s: notified anyway: %s", tc.rule, b)
		}
	}
}

// validParams are params of each input request method that the schema accepts.
var validParams = map[string]json.RawMessage{
	mcp.MethodElicit:                json.RawMessage(elicitReq),
	mcp.MethodSamplingCreateMessage: json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":64}`),
	mcp.MethodRootsList:             nil,
}

func cloneRequests(r mcp.InputRequests) mcp.InputRequests {
	if r == nil {
		return nil
	}
	c := mcp.InputRequests{}
	for k, v := range r {
		c[k] = v
	}
	return c
}

// TestE62TaskNotification: a notification on a listen stream is the task as tasks/get
// would return it, payload included, with the subscription's id (E18, E62).
func TestE62TaskNotification(t *testing.T) {
	for def, task := range tasks26() {
		for _, sub := range []mcp.ID{mcp.StringID("sub-9"), mcp.IntID(9)} {
			b, err := mcp.AppendTaskNotification(nil, &task, sub)
			if err != nil {
				t.Fatalf("%s: %v", def, err)
			}
			mcptest.Must(t, mcptest.ValidateMessage2026(b))
			mcptest.Must(t, mcptest.ValidateExt("TaskStatusNotification", b))
			m, derr := mcp.Decode(b)
			if derr != nil || m.Kind != mcp.KindNotification || m.Method != mcp.MethodTaskNotification {
				t.Fatalf("%s: %s decodes to %+v, %v", def, b, m, derr)
			}
			got, gotSub, q, err := mcp.ParseTaskNotification(m.Method, m.Params)
			if err != nil || q != 0 || gotSub != sub {
				t.Fatalf("%s: ParseTaskNotification = %+v, %v, %v, %v", def, got, gotSub, q, err)
			}
			get, _ := mcp.AppendGetTaskResult(nil, &task, nil)
			fromGet, _, _ := mcp.ParseGetTaskResult(get)
			if !reflect.DeepEqual(got, fromGet.DetailedTask) {
				t.Errorf("%s: the notification's task is not tasks/get's:\n got %+v\nwant %+v", def, got, fromGet.DetailedTask)
			}
		}
	}
	task := tasks26()["WorkingTask"]
	if _, err := mcp.AppendTaskNotification(nil, &task, mcp.ID{}); err == nil {
		t.Error("a notification without its subscription (E18) was written")
	}
	// ext-gap-8: the 2025-11-25 name is read, and reported; ext-gap-3: no subscriptionId.
	params := `{"taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"b","ttlMs":null}`
	got, sub, q, err := mcp.ParseTaskNotification(mcp.MethodTaskStatus, []byte(params))
	if err != nil || q != mcp.QuirkLegacyNotification || !sub.IsZero() || got.TaskID != "t" || got.TTLMs != nil {
		t.Errorf("legacy name: %+v, %v, %v, %v", got, sub, q, err)
	}
	for _, tc := range []struct{ method, params string }{
		{"notifications/progress", params},
		{mcp.MethodTaskNotification, `[]`},
		{mcp.MethodTaskNotification, `{"taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"b"}`}, // no ttlMs
		{mcp.MethodTaskNotification, strings.Replace(params, "{", `{"_meta":{"io.modelcontextprotocol/subscriptionId":1.5},`, 1)},
	} {
		if _, _, _, err := mcp.ParseTaskNotification(tc.method, []byte(tc.params)); err == nil {
			t.Errorf("ParseTaskNotification(%s, %s): no error", tc.method, tc.params)
		}
	}
}

// TestE58E60Acknowledgements: tasks/update and tasks/cancel are acknowledged with an empty
// result, resultType "complete" (E51, E58, E60), no task in it.
func TestE58E60Acknowledgements(t *testing.T) {
	for _, meta := range []json.RawMessage{nil, mcp.ServerInfoMeta(mcp.Implementation{Name: "s", Version: "1"}), json.RawMessage(`"not an object"`)} {
		b := mcp.AppendEmptyResult(nil, meta)
		mcptest.Must(t, mcptest.ValidateExt("UpdateTaskResult", b))
		mcptest.Must(t, mcptest.ValidateExt("CancelTaskResult", b))
		mcptest.Must(t, mcptest.Validate2026("EmptyResult", b))
		for _, method := range []string{mcp.MethodTasksUpdate, mcp.MethodTasksCancel} {
			mcptest.Must(t, mcptest.ValidateReply2026(method, mcp.AppendResult(nil, mcp.IntID(47), b)))
		}
	}
	if b := mcp.AppendEmptyResult(nil, nil); string(b) != `{"resultType":"complete"}` {
		t.Errorf("AppendEmptyResult = %s", b)
	}
}

// TestParseGetTaskResultLenient: what tasks/get readers accept, and report, and what they
// refuse; each row names its rule.
func TestParseGetTaskResultLenient(t *testing.T) {
	flat := `"taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"b","ttlMs":60000`
	tests := []struct {
		rule  string
		raw   string
		quirk mcp.Quirks
		err   string // "" means accepted
	}{
		{"E51", `{"resultType":"complete",` + flat + `}`, 0, ""},
		{"ext-gap-1 resultType task on tasks/get", `{"resultType":"task",` + flat + `}`, mcp.QuirkTaskResultType, ""},
		{"E12 no resultType", `{` + flat + `}`, mcp.QuirkNoResultType, ""},
		{"ext-gap-5 the task nested", `{"resultType":"complete","task":{` + flat + `}}`, mcp.QuirkNestedTask, ""},
		{"ext-gap-5 and E12 at once", `{"task":{` + flat + `}}`, mcp.QuirkNestedTask | mcp.QuirkNoResultType, ""},
		{"ext-gap-10 ttlMs null is unlimited", `{"resultType":"complete","taskId":"t","status":"cancelled","createdAt":"a","lastUpdatedAt":"b","ttlMs":null}`, 0, ""},
		{"ttlMs 12000.0 read leniently", `{"resultType":"complete","taskId":"t","status":"cancelled","createdAt":"a","lastUpdatedAt":"b","ttlMs":12000.0}`, 0, ""},
		{"E50 a payload on another status is dropped", `{"resultType":"complete",` + flat + `,"result":{"x":1},"error":{"code":1,"message":"m"}}`, 0, ""},
		{"E51 another resultType", `{"resultType":"input_required",` + flat + `}`, 0, "want \"complete\""},
		{"E50 completed without result", `{"resultType":"complete","taskId":"t","status":"completed","createdAt":"a","lastUpdatedAt":"b","ttlMs":1}`, 0, "carries its result"},
		{"E50 failed without error", `{"resultType":"complete","taskId":"t","status":"failed","createdAt":"a","lastUpdatedAt":"b","ttlMs":1}`, 0, "carries its error"},
		{"E50 input_required without inputRequests", `{"resultType":"complete","taskId":"t","status":"input_required","createdAt":"a","lastUpdatedAt":"b","ttlMs":1}`, 0, "carries inputRequests"},
		{"2025-11-25 ttl is not ttlMs", `{"resultType":"complete","taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"b","ttl":1}`, 0, "ttlMs is missing"},
		{"an unknown status", `{"resultType":"complete","taskId":"t","status":"done","createdAt":"a","lastUpdatedAt":"b","ttlMs":1}`, 0, "unknown task status"},
		{"no taskId", `{"resultType":"complete","status":"working","createdAt":"a","lastUpdatedAt":"b","ttlMs":1}`, 0, "taskId is missing"},
		{"no object", `[]`, 0, "object"},
	}
	for _, tc := range tests {
		r, q, err := mcp.ParseGetTaskResult([]byte(tc.raw))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: got %+v, %v; want an error with %q", tc.rule, r, err, tc.err)
			}
			continue
		}
		if err != nil || q != tc.quirk || r.ResultType != mcp.ResultComplete || r.TaskID != "t" {
			t.Errorf("%s: got %+v, %v, %v; want quirks %v", tc.rule, r, q, err, tc.quirk)
			continue
		}
		if r.Result != nil || r.Error != nil || r.InputRequests != nil {
			if r.Status != mcp.StatusCompleted && r.Status != mcp.StatusFailed && r.Status != mcp.StatusInputRequired {
				t.Errorf("%s: a payload kept on a %s task", tc.rule, r.Status)
			}
		}
	}
}

func TestDetailedTaskAndTask(t *testing.T) {
	for _, old := range sampleTasks() {
		d := mcp.DetailedTaskOf(&old)
		if back := d.Task(); !reflect.DeepEqual(back, old) {
			t.Errorf("Task(DetailedTaskOf(%+v)) = %+v", old, back)
		}
	}
}

// FuzzParseTaskResult: reading never panics, and what is read and passes Check is written
// as the extension's GetTaskResult, which reads back to be written the same: strict writing
// never emits what the schema refuses. (Check looks at an input request's method and
// required members, not at what a requested schema or sampling messages hold, which are the
// caller's: for the schema check, their params are replaced by valid ones.)
func FuzzParseTaskResult(f *testing.F) {
	for _, task := range tasks26() {
		b, err := mcp.AppendGetTaskResult(nil, &task, nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		`{"resultType":"task","task":{"taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"b","ttlMs":-0.5}}`,
		`{"taskId":"t","status":"completed","createdAt":"a","lastUpdatedAt":"b","ttlMs":null,"result":{"resultType":"complete"  }}`,
		`{"taskId":"t","status":"input_required","createdAt":"a","lastUpdatedAt":"b","ttlMs":1,"inputRequests":{"k":{"method":"roots/list"}}}`,
		`{"taskId":"t","status":"failed","createdAt":"a","lastUpdatedAt":"b","ttlMs":1,"error":{"code":-1,"message":"\u2028"},"_meta":{}}`,
		`{`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		r, _, err := mcp.ParseTaskResult(raw)
		if err != nil || r.Check() != nil {
			return
		}
		b, err := mcp.AppendGetTaskResult(nil, &r.DetailedTask, nil)
		if err != nil {
			t.Fatalf("read %s as %+v, which passes Check but is not written: %v", raw, r.DetailedTask, err)
		}
		outline := r.DetailedTask
		outline.InputRequests = cloneRequests(outline.InputRequests)
		for k, req := range outline.InputRequests {
			req.Params = validParams[req.Method]
			outline.InputRequests[k] = req
		}
		ob, err := mcp.AppendGetTaskResult(nil, &outline, nil)
		if err != nil {
			t.Fatal(err)
		}
		mcptest.Must(t, mcptest.ValidateExt("GetTaskResult", ob))
		back, q, err := mcp.ParseGetTaskResult(b)
		if err != nil || q != 0 {
			t.Fatalf("wrote %s, read back %v, %v", b, q, err)
		}
		again, err := mcp.AppendGetTaskResult(nil, &back.DetailedTask, nil)
		if err != nil || string(again) != string(b) {
			t.Fatalf("wrote %s, then %s, %v", b, again, err)
		}
	})
}
