package mockserver_test

// Tests of the conformance suite's fixture tools (fixtures.go), in virtual time: what each
// does in the 2026-07-28 era, where the official suite calls them, and in 2025-11-25.

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/mockserver"
)

func fixtureServer(t *testing.T) *harness {
	return modernServer(t, mockserver.Config{Fixtures: true})
}

// resultText returns the first text of a CallToolResult and its isError.
func resultText(t *testing.T, raw json.RawMessage) (string, bool) {
	t.Helper()
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Content) == 0 {
		t.Fatalf("not a CallToolResult with content: %s (%v)", raw, err)
	}
	return res.Content[0].Text, res.IsError
}

// TestFixturesListed: the fixtures are listed only with Config.Fixtures, after the default
// tools (which keep their order, so "the first tool that supports tasks" is still work), with
// their taskSupport.
func TestFixturesListed(t *testing.T) {
	want := map[string]mcp.TaskSupport{
		"work": mcp.TaskOptional, "work_task": mcp.TaskRequired, "work_sync": mcp.TaskForbidden,
		"greet": mcp.TaskForbidden, "slow_compute": mcp.TaskOptional, "failing_job": mcp.TaskRequired,
		"protocol_error_job": mcp.TaskRequired, "confirm_delete": mcp.TaskRequired, "multi_input": mcp.TaskRequired,
		"test_tool_with_task": mcp.TaskRequired,
	}
	order := []string{"work", "work_task", "work_sync", "greet", "slow_compute", "failing_job",
		"protocol_error_job", "confirm_delete", "multi_input", "test_tool_with_task"}
	for _, on := range []bool{false, true} {
		h := newHarness(t, mockserver.Config{Fixtures: on})
		r := h.connect().call("tools/list", nil)
		var list mcp.ListToolsResult
		if err := json.Unmarshal(r.Result, &list); err != nil {
			t.Fatal(err)
		}
		names := []string{}
		for _, tl := range list.Tools {
			names = append(names, tl.Name)
			if tl.TaskSupport() != want[tl.Name] {
				t.Errorf("fixtures %v: %s taskSupport %q, want %q", on, tl.Name, tl.TaskSupport(), want[tl.Name])
			}
		}
		wantNames := order[:3]
		if on {
			wantNames = order
		}
		if strings.Join(names, ",") != strings.Join(wantNames, ",") {
			t.Errorf("fixtures %v: tools %v, want %v", on, names, wantNames)
		}
	}
	h := newHarness(t, mockserver.Config{})
	r := h.connect().call("tools/call", map[string]any{"name": "greet", "arguments": map[string]any{"name": "x"}})
	if r.Err == nil || r.Err.Code != mcp.CodeInvalidParams {
		t.Errorf("greet without Config.Fixtures: %s, want -32602 unknown tool", r.Raw)
	}
}

// TestFixtureGreetAndSlowCompute: greet answers at once and never makes a task; slow_compute
// is a task of seconds that completes with its label, is cancelled by a cancel while it runs,
// and runs synchronously for a request that does not declare the extension.
func TestFixtureGreetAndSlowCompute(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := fixtureServer(t)
		mc := h.modern()
		r := mc.ok("tools/call", map[string]any{"name": "greet", "arguments": map[string]any{"name": "World"},
			"task": map[string]any{"ttl": 60000}}) // the legacy hint is ignored (E37)
		if text, isErr := resultText(t, r.Result); text != "Hello, World!" || isErr || strings.Contains(string(r.Result), "taskId") {
			t.Fatalf("greet: %s", r.Raw)
		}
		mc.wantError("tools/call", map[string]any{"name": "greet", "arguments": map[string]any{}}, mcp.CodeInvalidParams)

		tk := mc.create("slow_compute", map[string]any{"seconds": 2, "label": "L"})
		time.Sleep(1999 * time.Millisecond)
		synctest.Wait()
		if got := mc.get(tk.TaskID); got.Status != mcp.StatusWorking {
			t.Fatalf("slow_compute at 1.999s: %+v", got)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		got := mc.get(tk.TaskID)
		if text, isErr := resultText(t, got.Result); got.Status != mcp.StatusCompleted || isErr || text != "slow_compute finished after 2s (L)" {
			t.Fatalf("slow_compute at 2s: %+v %s", got, got.Result)
		}

		long := mc.create("slow_compute", map[string]any{"seconds": 60})
		mc.ok("tasks/cancel", map[string]any{"taskId": long.TaskID})
		if got := mc.get(long.TaskID); got.Status != mcp.StatusCancelled {
			t.Fatalf("slow_compute after a cancel: %+v, want cancelled", got)
		}

		plain := h.modern(undeclared)
		r = plain.ok("tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 0}})
		if text, _ := resultText(t, r.Result); !strings.HasPrefix(text, "slow_compute finished") || strings.Contains(string(r.Result), "taskId") {
			t.Fatalf("slow_compute undeclared: %s, want a synchronous result", r.Raw)
		}
	})
}

// TestFixtureErrors: failing_job ends after 1s completed with an isError result (E49),
// protocol_error_job failed with the JSON-RPC error inlined and no result; failing_job is
// required, so an undeclared request gets -32021 naming the extension (E44).
func TestFixtureErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := fixtureServer(t)
		mc := h.modern()
		failing := mc.create("failing_job", map[string]any{})
		proto := mc.create("protocol_error_job", map[string]any{})
		time.Sleep(time.Second)
		synctest.Wait()
		got := mc.get(failing.TaskID)
		if text, isErr := resultText(t, got.Result); got.Status != mcp.StatusCompleted || !isErr || !strings.Contains(text, "failing_job failed") {
			t.Fatalf("failing_job: %+v %s, want completed with isError", got, got.Result)
		}
		got = mc.get(proto.TaskID)
		if got.Status != mcp.StatusFailed || got.Error == nil || got.Error.Code != mcp.CodeInternalError || got.Result != nil {
			t.Fatalf("protocol_error_job: %+v, want failed with error -32603 and no result", got)
		}
		r := h.modern(undeclared).wantError("tools/call", map[string]any{"name": "failing_job"}, mcp.CodeMissingRequiredClientCapability)
		if !strings.Contains(string(r.Err.Data), mcp.ExtTasks) {
			t.Fatalf("failing_job undeclared: %s, want data.requiredCapabilities naming %s", r.Raw, mcp.ExtTasks)
		}
	})
}

// TestFixtureInput: confirm_delete asks once and deletes on a confirmed answer; multi_input
// asks twice at once, stays input_required with only the unanswered key after a partial
// update, and completes with both answers once the second arrives.
func TestFixtureInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := fixtureServer(t)
		mc := h.modern()
		cd := mc.create("confirm_delete", map[string]any{"filename": "a.txt"})
		synctest.Wait()
		got := mc.get(cd.TaskID)
		if got.Status != mcp.StatusInputRequired || len(got.InputRequests) != 1 {
			t.Fatalf("confirm_delete: %+v, want input_required with one request", got)
		}
		for k, req := range got.InputRequests {
			if !strings.Contains(string(req.Params), `"confirm"`) {
				t.Errorf("confirm_delete asks %s, want the confirm form", req.Params)
			}
			mc.ok("tasks/update", map[string]any{"taskId": cd.TaskID, "inputResponses": map[string]any{
				k: map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}})
		}
		synctest.Wait()
		got = mc.get(cd.TaskID)
		if text, _ := resultText(t, got.Result); got.Status != mcp.StatusCompleted || text != "Deleted a.txt" {
			t.Fatalf("confirm_delete after the answer: %+v %s", got, got.Result)
		}

		mi := mc.create("multi_input", map[string]any{})
		synctest.Wait()
		got = mc.get(mi.TaskID)
		if got.Status != mcp.StatusInputRequired || len(got.InputRequests) != 2 {
			t.Fatalf("multi_input: %+v, want input_required with two requests at once", got)
		}
		var keys []string
		for k := range got.InputRequests {
			keys = append(keys, k)
		}
		answer := func(key, name string) {
			mc.ok("tasks/update", map[string]any{"taskId": mi.TaskID, "inputResponses": map[string]any{
				key: map[string]any{"action": "accept", "content": map[string]any{"name": name}}}})
		}
		answer(keys[0], "one")
		after := mc.get(mi.TaskID)
		if _, still := after.InputRequests[keys[1]]; after.Status != mcp.StatusInputRequired || len(after.InputRequests) != 1 || !still {
			t.Fatalf("multi_input after one answer: %+v, want input_required with only %s", after, keys[1])
		}
		answer(keys[1], "two")
		synctest.Wait()
		got = mc.get(mi.TaskID)
		if text, _ := resultText(t, got.Result); got.Status != mcp.StatusCompleted || text != "multi_input got one and two" {
			t.Fatalf("multi_input after both answers: %+v %s", got, got.Result)
		}
	})
}

// TestFixtureToolWithTaskMRTR: test_tool_with_task asks for user_name by MRTR first (an
// InputRequiredResult, no task), then, retried with the answer, creates a task whose result
// greets the name (E47); without form elicitation it cannot ask and says so (-32021, E15).
func TestFixtureToolWithTaskMRTR(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := fixtureServer(t)
		mc := h.modern()
		r := mc.ok("tools/call", map[string]any{"name": "test_tool_with_task", "arguments": map[string]any{}})
		var r1 struct {
			ResultType    string                      `json:"resultType"`
			InputRequests map[string]mcp.InputRequest `json:"inputRequests"`
			TaskID        string                      `json:"taskId"`
		}
		if err := json.Unmarshal(r.Result, &r1); err != nil || r1.ResultType != "input_required" || r1.TaskID != "" ||
			r1.InputRequests["user_name"].Method != mcp.MethodElicit {
			t.Fatalf("round 1: %s, want an InputRequiredResult asking user_name", r.Raw)
		}
		r = mc.ok("tools/call", map[string]any{"name": "test_tool_with_task", "arguments": map[string]any{},
			"inputResponses": map[string]any{"user_name": map[string]any{"action": "accept", "content": map[string]any{"name": "Alice"}}}})
		cr, _, err := mcp.ParseCallToolReply(r.Result, true)
		if err != nil || cr.Task == nil || strings.Contains(string(r.Result), "requestState") {
			t.Fatalf("round 2: %s, want a CreateTaskResult without requestState (%v)", r.Raw, err)
		}
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		got := mc.get(cr.Task.TaskID)
		if text, _ := resultText(t, got.Result); got.Status != mcp.StatusCompleted || text != "Hello, Alice!" {
			t.Fatalf("the task: %+v %s, want completed greeting Alice", got, got.Result)
		}
		noForm := h.modern(func(mc *modernClient) { mc.form = false })
		noForm.wantError("tools/call", map[string]any{"name": "test_tool_with_task"}, mcp.CodeMissingRequiredClientCapability)
	})
}

// TestFixturesLegacy: in 2025-11-25 the fixtures keep their taskSupport (greet refuses a
// task, failing_job refuses a plain call) and failing_job fails with its isError result
// (R51); test_tool_with_task asks for the name inside its task, through elicitation/create.
func TestFixturesLegacy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{Fixtures: true})
		c := h.connect()
		if r := c.call("tools/call", map[string]any{"name": "greet", "arguments": map[string]any{"name": "x"}, "task": map[string]any{}}); r.Err == nil || r.Err.Code != mcp.CodeMethodNotFound {
			t.Fatalf("greet as a task: %s, want -32601 (R8)", r.Raw)
		}
		if r := c.call("tools/call", map[string]any{"name": "failing_job"}); r.Err == nil || r.Err.Code != mcp.CodeMethodNotFound {
			t.Fatalf("failing_job plain: %s, want -32601 (R10)", r.Raw)
		}
		tk := c.createTask("failing_job", nil)
		time.Sleep(time.Second)
		synctest.Wait()
		if got, _ := c.get(tk.TaskID); got.Status != mcp.StatusFailed {
			t.Fatalf("failing_job: %+v, want failed (R51)", got)
		}
		r := c.call("tasks/result", map[string]any{"taskId": tk.TaskID})
		if text, isErr := resultText(t, r.Result); !isErr || !strings.Contains(text, "failing_job failed") {
			t.Fatalf("failing_job result: %s", r.Raw)
		}

		named := c.createTask("test_tool_with_task", nil)
		time.Sleep(50 * time.Millisecond) // its first half of work, then it asks
		synctest.Wait()
		if got, _ := c.get(named.TaskID); got.Status != mcp.StatusInputRequired {
			t.Fatalf("test_tool_with_task: %+v, want input_required", got)
		}
		resp := c.start("tasks/result", map[string]any{"taskId": named.TaskID})
		data, ok := resp.nextEvent()
		for ok && !strings.Contains(string(data), "elicitation/create") {
			data, ok = resp.nextEvent()
		}
		msg, err := mcp.Decode(data)
		if !ok || err != nil || !strings.Contains(string(msg.Params), `"name"`) {
			t.Fatalf("test_tool_with_task: no elicitation/create asking a name on the tasks/result stream: %s", data)
		}
		c.send(string(mcp.AppendResult(nil, msg.ID, []byte(`{"action":"accept","content":{"name":"Bob"}}`))))
		time.Sleep(50 * time.Millisecond)
		synctest.Wait()
		for ok {
			if data, ok = resp.nextEvent(); ok && strings.Contains(string(data), `"result"`) {
				break
			}
		}
		if !strings.Contains(string(data), "Hello, Bob!") {
			t.Fatalf("test_tool_with_task: final reply %s, want it to greet Bob", data)
		}
	})
}

// TestFixtureMultiInputLegacy: in 2025-11-25 multi_input's two elicitation/create requests
// go out at once on the tasks/result stream, and the task ends only when both are answered.
func TestFixtureMultiInputLegacy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{Fixtures: true})
		c := h.connect()
		tk := c.createTask("multi_input", nil)
		synctest.Wait()
		resp := c.start("tasks/result", map[string]any{"taskId": tk.TaskID})
		var asks []mcp.Message
		for len(asks) < 2 {
			data, ok := resp.nextEvent()
			if !ok {
				t.Fatalf("tasks/result stream ended after %d elicitations, want 2 at once", len(asks))
			}
			if msg, err := mcp.Decode(data); err == nil && msg.Method == mcp.MethodElicit {
				asks = append(asks, msg)
			}
		}
		c.send(string(mcp.AppendResult(nil, asks[0].ID, []byte(`{"action":"accept","content":{"name":"a"}}`))))
		synctest.Wait()
		if got, _ := c.get(tk.TaskID); got.Status != mcp.StatusInputRequired {
			t.Fatalf("after one answer: %+v, want still input_required", got)
		}
		c.send(string(mcp.AppendResult(nil, asks[1].ID, []byte(`{"action":"accept","content":{"name":"b"}}`))))
		synctest.Wait()
		var final []byte
		for {
			data, ok := resp.nextEvent()
			if !ok {
				break
			}
			final = data
		}
		if !strings.Contains(string(final), "multi_input got a and b") {
			t.Fatalf("final reply %s, want both answers", final)
		}
	})
}

// TestFixtureMultiInputGET: with no tasks/result stream open, both elicitations of
// multi_input's round go out on the owner's GET stream (R39), not only the first.
func TestFixtureMultiInputGET(t *testing.T) {
	ruleRun(t, "multi_input on the GET stream", func(t *testing.T) {
		_, c := ruleSetup(t, mockserver.Config{Fixtures: true})
		get := ruleGETStream(t, c)
		tk := ruleCreate(t, c, mockserver.FixtureMultiInput, map[string]any{}, nil)
		synctest.Wait()
		first, second := ruleNextMessage(t, get), ruleNextMessage(t, get)
		if first.Method != mcp.MethodElicit || second.Method != mcp.MethodElicit || string(first.ID) == string(second.ID) {
			t.Fatalf("GET stream carried %s and %s, want two elicitation/create requests", first.Raw, second.Raw)
		}
		ruleAnswer(t, c, first, mcp.ElicitAccept)
		ruleWantStatus(t, c, tk.TaskID, mcp.StatusInputRequired)
		ruleAnswer(t, c, second, mcp.ElicitAccept)
		synctest.Wait()
		ruleWantStatus(t, c, tk.TaskID, mcp.StatusCompleted)
	})
}
