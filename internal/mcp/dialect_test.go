package mcp_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/mcp/mcptest"
)

// sampleTasks covers ttl null and integer, pollInterval present and absent, every status,
// and statusMessages that need escaping.
func sampleTasks() []mcp.Task {
	const created, updated = "2026-01-05T09:00:00.000Z", "2026-01-05T09:00:31.250Z"
	return []mcp.Task{
		{TaskID: "9f3b6d0e-2c71-4f0a-9a55-0d6f1e2b7c44", Status: mcp.StatusWorking, CreatedAt: created, LastUpdatedAt: created, TTL: nil},
		{TaskID: "t2", Status: mcp.StatusWorking, StatusMessage: "page 12/40", CreatedAt: created, LastUpdatedAt: updated, TTL: ms(60000), PollInterval: ms(2000)},
		{TaskID: "t3", Status: mcp.StatusInputRequired, StatusMessage: `need "region"` + "\nline two\ttab", CreatedAt: created, LastUpdatedAt: updated, TTL: ms(0), PollInterval: ms(1)},
		{TaskID: "t4", Status: mcp.StatusCompleted, StatusMessage: "naïve ✓ 😀 \u2028 <b>&amp;</b> back\\slash \x01", CreatedAt: created, LastUpdatedAt: updated, TTL: ms(1 << 40)},
		{TaskID: "t5", Status: mcp.StatusFailed, StatusMessage: "tool error: -32603 internal", CreatedAt: created, LastUpdatedAt: updated, TTL: nil, PollInterval: ms(500)},
		{TaskID: `id with "quotes"`, Status: mcp.StatusCancelled, StatusMessage: "cancelled by requestor", CreatedAt: created, LastUpdatedAt: updated, TTL: ms(60000)},
	}
}

func TestAppendTaskValidates(t *testing.T) {
	var d mcp.V20251125
	for _, task := range sampleTasks() {
		b := d.AppendTask([]byte("keep"), &task)
		if !bytes.HasPrefix(b, []byte("keep")) {
			t.Fatalf("AppendTask clobbered dst: %s", b)
		}
		b = b[len("keep"):]
		mcptest.Must(t, mcptest.Validate("Task", b))
		mcptest.Must(t, mcptest.Validate("GetTaskResult", b))
		mcptest.Must(t, mcptest.ValidateReply("tasks/get", mcp.AppendResult(nil, mcp.IntID(1), b)))
		mcptest.Must(t, mcptest.ValidateMessage(mcp.AppendRequest(nil, mcp.ID{}, mcp.MethodTaskStatus, b)))
		if task.Status == mcp.StatusCancelled {
			mcptest.Must(t, mcptest.ValidateReply("tasks/cancel", mcp.AppendResult(nil, mcp.StringID("c-21"), b)))
		}
		if task.TTL == nil && !bytes.Contains(b, []byte(`"ttl":null`)) {
			t.Errorf("nil TTL not written as null (R44): %s", b)
		}

		var back mcp.Task
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("Unmarshal(%s): %v", b, err)
		}
		if !reflect.DeepEqual(back, task) {
			t.Errorf("round trip:\n got %+v\nwant %+v", back, task)
		}
	}
}

func TestAppendCreateResultValidates(t *testing.T) {
	var d mcp.V20251125
	for _, task := range sampleTasks() {
		b := d.AppendCreateResult([]byte("keep"), &task)
		if !bytes.HasPrefix(b, []byte("keep")) {
			t.Fatalf("AppendCreateResult clobbered dst: %s", b)
		}
		b = b[len("keep"):]
		mcptest.Must(t, mcptest.Validate("CreateTaskResult", b))
		mcptest.Must(t, mcptest.ValidateReply("tools/call", mcp.AppendResult(nil, mcp.StringID("c-17"), b)))
		// The nested task is not a flattened GetTaskResult.
		mcptest.MustFail(t, mcptest.Validate("GetTaskResult", b))

		got, res, err := d.ParseCallReply(b)
		if err != nil || res != nil || got == nil {
			t.Fatalf("ParseCallReply(%s) = %v, %v, %v", b, got, res, err)
		}
		if !reflect.DeepEqual(*got, task) {
			t.Errorf("round trip:\n got %+v\nwant %+v", *got, task)
		}
	}
}

func TestAppendTaskAllocatesNothing(t *testing.T) {
	var d mcp.V20251125
	var dialect mcp.Dialect = d
	task := sampleTasks()[1] // ASCII text: escaping non-ASCII goes through encoding/json
	dst := make([]byte, 0, 512)
	if n := testing.AllocsPerRun(100, func() { dst = d.AppendTask(dst[:0], &task) }); n != 0 {
		t.Errorf("AppendTask: %v allocations per call, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { dst = dialect.AppendTask(dst[:0], &task) }); n != 0 {
		t.Errorf("AppendTask through Dialect: %v allocations per call, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { dst = d.AppendCreateResult(dst[:0], &task) }); n != 0 {
		t.Errorf("AppendCreateResult: %v allocations per call, want 0", n)
	}
}

func BenchmarkAppendTask(b *testing.B) {
	var d mcp.V20251125
	task := sampleTasks()[1]
	dst := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		dst = d.AppendTask(dst[:0], &task)
	}
	b.SetBytes(int64(len(dst)))
}

func TestParseCallReply(t *testing.T) {
	var d mcp.V20251125
	tests := []struct {
		name    string
		raw     string
		taskID  string // non-empty: a CreateTaskResult
		text    string // otherwise a CallToolResult with this first text
		isError bool
		err     string // non-empty: an error containing this
	}{
		{name: "created task", taskID: "t1",
			raw: `{"task":{"taskId":"t1","status":"working","createdAt":"a","lastUpdatedAt":"a","ttl":60000,"pollInterval":2000},"_meta":{"io.modelcontextprotocol/model-immediate-response":"started"}}`},
		{name: "created task, ttl 12000.0", taskID: "t2",
			raw: `{"task":{"taskId":"t2","status":"working","createdAt":"a","lastUpdatedAt":"a","ttl":12000.0}}`},
		{name: "plain result", text: "Q3 report ready",
			raw: `{"content":[{"type":"text","text":"Q3 report ready"}],"isError":false}`},
		{name: "tool error", text: "boom", isError: true,
			raw: `{"content":[{"type":"text","text":"boom"}],"isError":true,"structuredContent":{"code":7}}`},
		{name: "null task is a plain result", text: "x",
			raw: `{"task":null,"content":[{"type":"text","text":"x"}]}`},
		{name: "task without id", raw: `{"task":{"status":"working"}}`, err: "taskId is missing"},
		{name: "task with unknown status", raw: `{"task":{"taskId":"t","status":"done"}}`, err: "unknown task status"},
		{name: "not an object", raw: `[1]`, err: "tools/call result"},
		{name: "not JSON", raw: `{`, err: "tools/call result"},
		{name: "content not an array", raw: `{"content":"x"}`, err: "CallToolResult"},
	}
	for _, tc := range tests {
		task, res, err := d.ParseCallReply([]byte(tc.raw))
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) || task != nil || res != nil {
				t.Errorf("%s: got %v, %v, %v; want an error containing %q", tc.name, task, res, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.taskID != "":
			if task == nil || res != nil || task.TaskID != tc.taskID || task.Status != mcp.StatusWorking {
				t.Errorf("%s: got %+v, %+v; want task %s", tc.name, task, res, tc.taskID)
			}
		default:
			if task != nil || res == nil || len(res.Content) == 0 || res.Content[0].Text != tc.text || res.IsError != tc.isError {
				t.Errorf("%s: got %+v, %+v; want a CallToolResult %q", tc.name, task, res, tc.text)
			}
		}
	}
	// The ttl 12000.0 case is read leniently.
	task, _, _ := d.ParseCallReply([]byte(tests[1].raw))
	if task == nil || task.TTL == nil || *task.TTL != 12000 {
		t.Errorf("ttl 12000.0 read as %+v", task)
	}
}

func TestMethodOpRoundTrip(t *testing.T) {
	var d mcp.V20251125
	// The spec's spelling of every method (docs/RULES.md#methods), written
	// out here rather than taken from the constants under test.
	want := map[mcp.Op]string{
		mcp.OpInitialize:  "initialize",
		mcp.OpInitialized: "notifications/initialized",
		mcp.OpPing:        "ping",
		mcp.OpToolsList:   "tools/list",
		mcp.OpToolsCall:   "tools/call",
		mcp.OpTasksGet:    "tasks/get",
		mcp.OpTasksResult: "tasks/result",
		mcp.OpTasksList:   "tasks/list",
		mcp.OpTasksCancel: "tasks/cancel",
		mcp.OpTaskStatus:  "notifications/tasks/status",
		mcp.OpElicit:      "elicitation/create",
		mcp.OpCancelled:   "notifications/cancelled",

		mcp.OpServerDiscover:            "", // 2026-07-28 only
		mcp.OpTasksUpdate:               "",
		mcp.OpSubscriptionsListen:       "",
		mcp.OpSubscriptionsAcknowledged: "",
		mcp.OpDelete:                    "", // HTTP DELETE, no method
	}
	if len(want) != int(mcp.NumOps)-1 {
		t.Fatalf("the test knows %d ops, the package has %d: add the new one here", len(want), mcp.NumOps-1)
	}
	metrics := map[string]mcp.Op{}
	for op := mcp.OpInitialize; op < mcp.NumOps; op++ {
		m := d.Method(op)
		if m != want[op] {
			t.Errorf("Method(%d) = %q, want %q", op, m, want[op])
		}
		if back := d.Op(m); m != "" && back != op {
			t.Errorf("Op(Method(%d) = %q) = %d", op, m, back)
		}
		name := op.MetricName()
		if name == "" || name == "unknown" || strings.ContainsAny(name, "/ ") {
			t.Errorf("MetricName(%d) = %q", op, name)
		}
		if prev, dup := metrics[name]; dup {
			t.Errorf("ops %d and %d share the metric name %q", prev, op, name)
		}
		metrics[name] = op
	}
	for _, op := range []mcp.Op{mcp.OpUnknown, mcp.NumOps, 255} {
		if m := d.Method(op); m != "" {
			t.Errorf("Method(%d) = %q, want \"\"", op, m)
		}
	}
	if got := mcp.Op(255).MetricName(); got != "unknown" {
		t.Errorf("Op(255).MetricName() = %q", got)
	}
	for _, m := range []string{"", "resources/list", "tasks/delete", "server/discover", "tasks/update", "subscriptions/listen", "notifications/tasks/created", "Tasks/Get", "tasks/get ", "DELETE"} {
		if op := d.Op(m); op != mcp.OpUnknown {
			t.Errorf("Op(%q) = %d, want OpUnknown", m, op)
		}
	}
}

func TestVersions(t *testing.T) {
	var d mcp.V20251125
	if d.Version() != "2025-11-25" || !mcp.HasTasks(d.Version()) || !mcp.KnownVersion(d.Version()) {
		t.Errorf("V20251125: Version %q", d.Version())
	}
	for _, v := range []string{"2025-06-18", "2025-03-26", "2024-11-05"} {
		if !mcp.KnownVersion(v) || mcp.HasTasks(v) {
			t.Errorf("%s: KnownVersion %v, HasTasks %v", v, mcp.KnownVersion(v), mcp.HasTasks(v))
		}
	}
	// 2026-07-28 is known and modern, and has Tasks only as the extension, never in its core.
	if v := mcp.Version20260728; !mcp.KnownVersion(v) || !mcp.IsModern(v) || mcp.HasTasks(v) || mcp.InternVersion(v) != v {
		t.Errorf("%s: KnownVersion %v, IsModern %v, HasTasks %v", v, mcp.KnownVersion(v), mcp.IsModern(v), mcp.HasTasks(v))
	}
	for _, v := range []string{"", "2025-11-25 ", "2026-07-27", "2027-01-01", "banana"} {
		if mcp.KnownVersion(v) || mcp.HasTasks(v) {
			t.Errorf("%q is known", v)
		}
	}
	// Modern is a date no older than 2026-07-28, spoken by tasksim or not (docs/RULES.md#eras).
	for v, want := range map[string]bool{
		"2026-07-28": true, "2027-01-01": true, "2099-12-31": true,
		"2026-07-27": false, "2025-11-25": false, "2024-11-05": false,
		"": false, "banana": false, "2026-7-28": false, "2026-07-28 ": false, "20260728xx": false, "2026_07_28": false, "3000-01-0x": false,
	} {
		if got := mcp.IsModern(v); got != want {
			t.Errorf("IsModern(%q) = %v, want %v", v, got, want)
		}
	}
	if got := mcp.InternVersion(string([]byte("2026-07-28"))); got != mcp.Version20260728 {
		t.Errorf("InternVersion(2026-07-28) = %q", got)
	}
}

func TestRelatedTaskMeta(t *testing.T) {
	for _, id := range []string{"9f3b6d0e-2c71-4f0a-9a55-0d6f1e2b7c44", `q"uote`, "ünïcode\n", ""} {
		meta := mcp.RelatedTaskMeta(id)
		if !json.Valid(meta) {
			t.Fatalf("RelatedTaskMeta(%q) = %s, not JSON", id, meta)
		}
		if got := mcp.RelatedTaskID(meta); got != id {
			t.Errorf("RelatedTaskID(RelatedTaskMeta(%q)) = %q", id, got)
		}
		// R19: a tasks/result success reply carries it in _meta.
		result := `{"content":[{"type":"text","text":"ok"}],"_meta":` + string(meta) + `}`
		mcptest.Must(t, mcptest.ValidateReply("tasks/result", mcp.AppendResult(nil, mcp.IntID(19), []byte(result))))
	}
	if got := string(mcp.RelatedTaskMeta("t1")); got != `{"io.modelcontextprotocol/related-task":{"taskId":"t1"}}` {
		t.Errorf("RelatedTaskMeta(t1) = %s", got)
	}
	other := `{"progressToken":"pt","io.modelcontextprotocol/related-task":{"taskId":"t9"},"x":[1]}`
	if got := mcp.RelatedTaskID(json.RawMessage(other)); got != "t9" {
		t.Errorf("RelatedTaskID among other keys = %q", got)
	}
	for _, meta := range []string{``, `null`, `{}`, `not json`, `[]`, `{"io.modelcontextprotocol/related-task":5}`, `{"io.modelcontextprotocol/related-task":{"taskId":7}}`, `{"modelcontextprotocol.io/task":{"taskId":"t"}}`} {
		if got := mcp.RelatedTaskID(json.RawMessage(meta)); got != "" {
			t.Errorf("RelatedTaskID(%s) = %q, want \"\"", meta, got)
		}
	}
}

// TestSessionVersion: the legacy engines accept only versions negotiated through
// initialize; 2026-07-28 is known, but never a session's.
func TestSessionVersion(t *testing.T) {
	for v, want := range map[string]bool{
		mcp.Version20251125: true, mcp.Version20250618: true, mcp.Version20241105: true,
		mcp.Version20260728: false, "2099-01-01": false, "": false,
	} {
		if got := mcp.SessionVersion(v); got != want {
			t.Errorf("SessionVersion(%q) = %v, want %v", v, got, want)
		}
	}
}

// Op.Name keys outputs that are a contract (summary.json's requests, the text summary): the
// names are written out here, not taken from the tables under test.
func TestOpName(t *testing.T) {
	want := map[mcp.Op]string{
		mcp.OpUnknown:     "unknown",
		mcp.OpInitialize:  "initialize",
		mcp.OpInitialized: "notifications/initialized",
		mcp.OpPing:        "ping",
		mcp.OpToolsList:   "tools/list",
		mcp.OpToolsCall:   "tools/call",
		mcp.OpTasksGet:    "tasks/get",
		mcp.OpTasksResult: "tasks/result",
		mcp.OpTasksList:   "tasks/list",
		mcp.OpTasksCancel: "tasks/cancel",
		mcp.OpTaskStatus:  "notifications/tasks/status", // 2025-11-25's where the eras differ
		mcp.OpElicit:      "elicitation/create",
		mcp.OpCancelled:   "notifications/cancelled",

		mcp.OpServerDiscover:            "server/discover",
		mcp.OpTasksUpdate:               "tasks/update",
		mcp.OpSubscriptionsListen:       "subscriptions/listen",
		mcp.OpSubscriptionsAcknowledged: "notifications/subscriptions/acknowledged",
		mcp.OpDelete:                    "DELETE",
	}
	if len(want) != int(mcp.NumOps) {
		t.Fatalf("the test knows %d ops, the package has %d: add the new one here", len(want), mcp.NumOps)
	}
	for op := range mcp.NumOps {
		if got := op.Name(); got != want[op] {
			t.Errorf("Op(%d).Name() = %q, want %q", op, got, want[op])
		}
		if got := op.String(); got != want[op] {
			t.Errorf("Op(%d).String() = %q, want %q", op, got, want[op])
		}
		// Where both eras have the op, one of them spells it as Name does.
		if m, n := (mcp.V20251125{}).Method(op), (mcp.V20260728{}).Method(op); m != "" && n != "" && m != n && op != mcp.OpTaskStatus {
			t.Errorf("%s: the eras spell it %q and %q", op, m, n)
		}
	}
	for _, op := range []mcp.Op{mcp.NumOps, 255} {
		if got := op.Name(); got != "unknown" {
			t.Errorf("Op(%d).Name() = %q, want unknown", op, got)
		}
	}
}
