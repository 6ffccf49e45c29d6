package mcp_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/mcp/mcptest"
)

var _ mcp.Dialect = mcp.V20260728{}

// TestV20260728Methods: the ops that map onto 2026-07-28, spelled as the spec spells them
// (written out here, not taken from the constants under test), and those that do not.
func TestV20260728Methods(t *testing.T) {
	var d mcp.V20260728
	if d.Version() != "2026-07-28" || !mcp.IsModern(d.Version()) || mcp.HasTasks(d.Version()) {
		t.Errorf("Version() = %q", d.Version())
	}
	want := map[mcp.Op]string{
		mcp.OpInitialize:  "", // no handshake
		mcp.OpInitialized: "",
		mcp.OpPing:        "",
		mcp.OpToolsList:   "tools/list",
		mcp.OpToolsCall:   "tools/call",
		mcp.OpTasksGet:    "tasks/get",
		mcp.OpTasksResult: "", // E37
		mcp.OpTasksList:   "", // E37
		mcp.OpTasksCancel: "tasks/cancel",
		mcp.OpTaskStatus:  "notifications/tasks",
		mcp.OpElicit:      "elicitation/create",
		mcp.OpCancelled:   "notifications/cancelled",

		mcp.OpServerDiscover:      "server/discover",
		mcp.OpTasksUpdate:         "tasks/update",
		mcp.OpSubscriptionsListen: "subscriptions/listen",

		mcp.OpSubscriptionsAcknowledged: "notifications/subscriptions/acknowledged",
		mcp.OpDelete:                    "", // HTTP DELETE, no method
	}
	if len(want) != int(mcp.NumOps)-1 {
		t.Fatalf("the test knows %d ops, the package has %d: say here what the new one is in 2026-07-28", len(want), mcp.NumOps-1)
	}
	for op := mcp.OpInitialize; op < mcp.NumOps; op++ {
		m := d.Method(op)
		if m != want[op] {
			t.Errorf("Method(%s) = %q, want %q", op.MetricName(), m, want[op])
		}
		if m != "" && d.Op(m) != op {
			t.Errorf("Op(%q) = %d, want %d", m, d.Op(m), op)
		}
	}
	for _, op := range []mcp.Op{mcp.OpUnknown, mcp.NumOps, 255} {
		if m := d.Method(op); m != "" {
			t.Errorf("Method(%d) = %q", op, m)
		}
	}
	// ext-gap-8: the 2025-11-25 notification name is still read as the task notification.
	if op := d.Op("notifications/tasks/status"); op != mcp.OpTaskStatus {
		t.Errorf("Op(notifications/tasks/status) = %d", op)
	}
	// The removed methods have no Op any more (E37).
	for _, m := range []string{"tasks/result", "tasks/list", "initialize", "ping", "", "Tasks/Get"} {
		if op := d.Op(m); op != mcp.OpUnknown {
			t.Errorf("Op(%q) = %d, want OpUnknown", m, op)
		}
	}
	// E37, E27: a removed method is answered -32601 with HTTP 404.
	e := mcp.Errorf(mcp.CodeMethodNotFound, "tasks/result does not exist in 2026-07-28")
	mcptest.Must(t, mcptest.Validate2026("MethodNotFoundError", mustJSONBytes(t, e)))
	mcptest.Must(t, mcptest.ValidateReply2026("tasks/result", mcp.AppendError(nil, mcp.IntID(1), e)))
	if mcp.HTTPStatus(e.Code) != 404 {
		t.Errorf("-32601: HTTP %d", mcp.HTTPStatus(e.Code))
	}
}

// TestV20260728Tasks: through the seam, the modern wire of a Task: the create reply for
// any status (E45), and the tasks/get reply for the statuses that inline nothing (E50).
func TestV20260728Tasks(t *testing.T) {
	var d mcp.Dialect = mcp.V20260728{}
	for _, task := range sampleTasks() {
		b := d.AppendCreateResult([]byte("keep"), &task)[len("keep"):]
		mcptest.Must(t, mcptest.ValidateExt("CreateTaskResult", b))
		mcptest.Must(t, mcptest.ValidateReply2026("tools/call", mcp.AppendResult(nil, mcp.IntID(41), b)))
		dt := mcp.DetailedTaskOf(&task)
		if want, err := mcp.AppendCreateTaskResult(nil, &dt, nil); err != nil || string(want) != string(b) {
			t.Errorf("AppendCreateResult = %s, AppendCreateTaskResult = %s, %v", b, want, err)
		}
		got, res, err := d.ParseCallReply(b)
		if err != nil || res != nil || got == nil || !reflect.DeepEqual(*got, task) {
			t.Errorf("ParseCallReply(%s) = %+v, %v, %v; want %+v", b, got, res, err, task)
		}

		g := d.AppendTask(nil, &task)
		switch task.Status {
		case mcp.StatusWorking, mcp.StatusCancelled:
			mcptest.Must(t, mcptest.ValidateExt("GetTaskResult", g))
			mcptest.Must(t, mcptest.ValidateReply2026("tasks/get", mcp.AppendResult(nil, mcp.IntID(43), g)))
			if want, err := mcp.AppendGetTaskResult(nil, &dt, nil); err != nil || string(want) != string(g) {
				t.Errorf("AppendTask = %s, AppendGetTaskResult = %s, %v", g, want, err)
			}
		default:
			// A Task holds no payload: E50 needs one here, which only AppendGetTaskResult
			// writes (the documented limit of the seam).
			mcptest.MustFail(t, mcptest.ValidateExt("GetTaskResult", g))
		}
	}
}

// TestV20260728ParseCallReply: what the seam hands an engine for each tools/call reply.
func TestV20260728ParseCallReply(t *testing.T) {
	var d mcp.V20260728
	task, res, err := d.ParseCallReply([]byte(`{"resultType":"complete","content":[{"type":"text","text":"ok"}]}`))
	if err != nil || task != nil || res == nil || res.Content[0].Text != "ok" {
		t.Errorf("complete: %v, %v, %v", task, res, err)
	}
	task, res, err = d.ParseCallReply([]byte(`{"resultType":"input_required","requestState":"s"}`))
	if !errors.Is(err, mcp.ErrInputRequired) || task != nil || res != nil {
		t.Errorf("input_required: %v, %v, %v; want ErrInputRequired", task, res, err)
	}
	for _, raw := range []string{`{"resultType":"later"}`, `{"resultType":"task","taskId":"t"}`, `[]`} {
		if task, res, err := d.ParseCallReply([]byte(raw)); err == nil || task != nil || res != nil {
			t.Errorf("ParseCallReply(%s) = %v, %v, %v; want an error", raw, task, res, err)
		}
	}
	// A 2025-11-25 CreateTaskResult has no resultType: by E12 it is "complete", a
	// CallToolResult (without content), not a task.
	legacy := `{"task":{"taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"a","ttl":1}}`
	if task, res, err := d.ParseCallReply([]byte(legacy)); err != nil || task != nil || res == nil {
		t.Errorf("legacy create reply: %v, %v, %v", task, res, err)
	}
}

func mustJSONBytes(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
