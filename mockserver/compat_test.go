package mockserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/mockserver"
)

// The compatibility modes of compat.go: a server without the tasks capability
// (NoTasks) and a server pinned to protocol 2025-06-18 (Protocol).

// TestCompatNoTasks: without the capability, initialize declares no capabilities.tasks
// (R1), tools declare no execution.taskSupport, tasks/* are unknown methods, and a
// task-augmented tools/call is run synchronously with its task ignored (R4) and counted
// (the client broke R6).
func TestCompatNoTasks(t *testing.T) {
	ruleRun(t, "no tasks capability", func(t *testing.T) {
		h := newHarness(t, mockserver.Config{NoTasks: true})
		c := h.connect()
		if c.version != mcp.Version20251125 {
			t.Fatalf("negotiated %q, want %q: NoTasks keeps the protocol", c.version, mcp.Version20251125)
		}
		compatNoCapability(t, h, c, "does not declare capabilities.tasks")
	})
}

// TestCompatProtocol20250618: a server whose newest version is 2025-06-18 answers a
// 2025-11-25 initialize with 2025-06-18 (H1) and has no Tasks; an older version asked for
// is echoed.
func TestCompatProtocol20250618(t *testing.T) {
	ruleRun(t, "2025-06-18 server", func(t *testing.T) {
		h := newHarness(t, mockserver.Config{Protocol: mcp.Version20250618})
		c := h.connect() // asks for 2025-11-25
		if c.version != mcp.Version20250618 {
			t.Fatalf("negotiated %q, want %q", c.version, mcp.Version20250618)
		}
		compatNoCapability(t, h, c, "which has no Tasks")
		if old := h.connect(withVersion(mcp.Version20250326)); old.version != mcp.Version20250326 {
			t.Errorf("a client asking for 2025-03-26 negotiated %q, want it echoed", old.version)
		}
	})
	t.Run("unknown protocol is a config error", func(t *testing.T) {
		err := mockserver.Config{Protocol: "2030-01-01"}.Validate()
		if err == nil || !strings.Contains(err.Error(), `protocol "2030-01-01"`) {
			t.Errorf("Validate() = %v, want the unknown protocol named", err)
		}
	})
}

// TestCompatDefaultCountsNothing: the default server declares Tasks, lists taskSupport,
// and counts no ignored task parameter for a task-augmented call it accepts (R11).
func TestCompatDefaultCountsNothing(t *testing.T) {
	ruleRun(t, "default server", func(t *testing.T) {
		h, c := ruleSetup(t, mockserver.Config{})
		if caps := compatInit(t, h); caps.Tasks == nil || !caps.Tasks.ToolCallTasks() {
			t.Errorf("capabilities %+v, want tasks.requests.tools.call (R1)", caps)
		}
		if tools := compatTools(t, c); tools[mockserver.ToolWork] != mcp.TaskOptional {
			t.Errorf("work taskSupport %q, want optional", tools[mockserver.ToolWork])
		}
		c.createTask(mockserver.ToolWork, map[string]any{"duration_ms": 10})
		if n := h.srv.TaskParamsIgnored(); n != 0 {
			t.Errorf("TaskParamsIgnored = %d, want 0", n)
		}
	})
}

// compatNoCapability checks a session without Tasks: see TestCompatNoTasks.
func compatNoCapability(t *testing.T, h *harness, c *client, why string) {
	t.Helper()
	if caps := compatInit(t, h); caps.Tasks != nil {
		t.Errorf("initialize declares capabilities.tasks %+v, want none (R1)", caps.Tasks)
	}
	tools := compatTools(t, c)
	for name, ts := range tools {
		if ts != "" {
			t.Errorf("tool %s declares taskSupport %q, want none", name, ts)
		}
	}
	res := ruleOK(t, c.call("tools/call", map[string]any{"name": mockserver.ToolWork,
		"arguments": map[string]any{"duration_ms": 10}, "task": map[string]any{}}))
	if _, ok := ruleObject(t, res)["task"]; ok {
		t.Fatalf("got a CreateTaskResult %s, want a plain CallToolResult (R4)", res)
	}
	if tr := ruleToolResult(t, res); tr.IsError {
		t.Errorf("result %s, want completed work", res)
	}
	// A required tool is callable synchronously where the capability is absent (R10 only
	// binds a server that declared it).
	ruleOK(t, c.call("tools/call", map[string]any{"name": mockserver.ToolWorkTask, "arguments": map[string]any{"duration_ms": 10}}))
	if n := h.srv.TaskParamsIgnored(); n != 1 {
		t.Errorf("TaskParamsIgnored = %d, want 1", n)
	}
	if st := h.srv.Stats(); st.TasksCreated != 0 {
		t.Errorf("%d tasks created, want 0", st.TasksCreated)
	}
	ruleErr(t, c.call("tasks/get", map[string]any{"taskId": "x"}), mcp.CodeMethodNotFound, why)
}

// compatTools lists the tools and their declared taskSupport ("" = no execution).
func compatTools(t *testing.T, c *client) map[string]mcp.TaskSupport {
	t.Helper()
	var res struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport mcp.TaskSupport `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(ruleOK(t, c.call("tools/list", map[string]any{})), &res); err != nil {
		t.Fatal(err)
	}
	out := map[string]mcp.TaskSupport{}
	for _, tl := range res.Tools {
		out[tl.Name] = ""
		if tl.Execution != nil {
			out[tl.Name] = tl.Execution.TaskSupport
		}
	}
	return out
}

// compatInit initializes a fresh session and returns the capabilities the server declared.
func compatInit(t *testing.T, h *harness) mcp.ServerCapabilities {
	t.Helper()
	c := &client{h: h, accept: "application/json, text/event-stream"}
	resp := c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	var m struct {
		Result mcp.InitializeResult `json:"result"`
	}
	if err := json.Unmarshal(resp.all(), &m); err != nil {
		t.Fatalf("initialize reply: %v", err)
	}
	return m.Result.Capabilities
}
