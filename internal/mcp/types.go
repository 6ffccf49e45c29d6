package mcp

import "encoding/json"

// Implementation names a client or server (clientInfo, serverInfo).
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// Leaf is a capability leaf. In 2025-11-25 every leaf is an object whose presence means
// "supported" (docs/RULES.md#capabilities): a nil *Leaf is absent, a non-nil one is sent as {}.
type Leaf struct{}

// On returns a present leaf.
func On() *Leaf { return &Leaf{} }

// TasksCapability is capabilities.tasks for either side.
type TasksCapability struct {
	List     *Leaf              `json:"list,omitempty"`
	Cancel   *Leaf              `json:"cancel,omitempty"`
	Requests *TaskRequestsLeafs `json:"requests,omitempty"`
}

// TaskRequestsLeafs is capabilities.tasks.requests: the exhaustive set of request types that
// may be task-augmented (R2).
type TaskRequestsLeafs struct {
	Tools       *ToolsTaskLeafs       `json:"tools,omitempty"`
	Sampling    *SamplingTaskLeafs    `json:"sampling,omitempty"`
	Elicitation *ElicitationTaskLeafs `json:"elicitation,omitempty"`
}

// ToolsTaskLeafs is capabilities.tasks.requests.tools (server side).
type ToolsTaskLeafs struct {
	Call *Leaf `json:"call,omitempty"`
}

// SamplingTaskLeafs is capabilities.tasks.requests.sampling (client side).
type SamplingTaskLeafs struct {
	CreateMessage *Leaf `json:"createMessage,omitempty"`
}

// ElicitationTaskLeafs is capabilities.tasks.requests.elicitation (client side).
type ElicitationTaskLeafs struct {
	Create *Leaf `json:"create,omitempty"`
}

// ToolCallTasks reports whether c declares tasks.requests.tools.call (R6).
func (c *TasksCapability) ToolCallTasks() bool {
	return c != nil && c.Requests != nil && c.Requests.Tools != nil && c.Requests.Tools.Call != nil
}

// ElicitationCapability is the client's capabilities.elicitation. An empty object means
// form mode only (docs/RULES.md#r60).
type ElicitationCapability struct {
	Form *Leaf `json:"form,omitempty"`
	URL  *Leaf `json:"url,omitempty"`
}

// SupportsForm reports whether form-mode elicitation may be sent to the client (R60).
func (c *ElicitationCapability) SupportsForm() bool {
	return c != nil && (c.Form != nil || c.URL == nil)
}

// ClientCapabilities is the subset of client capabilities tasksim reads or sends.
type ClientCapabilities struct {
	Elicitation *ElicitationCapability `json:"elicitation,omitempty"`
	Sampling    *Leaf                  `json:"sampling,omitempty"`
	Tasks       *TasksCapability       `json:"tasks,omitempty"`
}

// ServerCapabilities is the subset of server capabilities tasksim reads or sends.
type ServerCapabilities struct {
	Tools *ToolsCapability `json:"tools,omitempty"`
	Tasks *TasksCapability `json:"tasks,omitempty"`
}

// ToolsCapability is capabilities.tools.
type ToolsCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// InitializeParams are the params of initialize.
type InitializeParams struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ClientCapabilities `json:"capabilities"`
	ClientInfo      Implementation     `json:"clientInfo"`
}

// InitializeResult is the result of initialize.
type InitializeResult struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ServerCapabilities `json:"capabilities"`
	ServerInfo      Implementation     `json:"serverInfo"`
	Instructions    string             `json:"instructions,omitempty"`
}

// TaskSupport is Tool.execution.taskSupport; absent means forbidden (docs/RULES.md#capabilities).
type TaskSupport string

const (
	TaskForbidden TaskSupport = "forbidden"
	TaskOptional  TaskSupport = "optional"
	TaskRequired  TaskSupport = "required"
)

// ToolExecution is Tool.execution.
type ToolExecution struct {
	TaskSupport TaskSupport `json:"taskSupport,omitempty"`
}

// Tool is one tools/list item.
type Tool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Execution   *ToolExecution  `json:"execution,omitempty"`
}

// TaskSupport returns the tool's effective taskSupport: forbidden when absent.
func (t *Tool) TaskSupport() TaskSupport {
	if t.Execution == nil || t.Execution.TaskSupport == "" {
		return TaskForbidden
	}
	return t.Execution.TaskSupport
}

// ListToolsResult is the result of tools/list.
type ListToolsResult struct {
	Tools      []Tool `json:"tools"`
	NextCursor string `json:"nextCursor,omitempty"`
}

// TaskMetadata is params.task on a task-augmented request: the requested ttl in ms.
type TaskMetadata struct {
	TTL *Ms `json:"ttl,omitempty"`
}

// CallToolParams are the params of tools/call. Task is non-nil on a task-augmented call.
type CallToolParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Task      *TaskMetadata   `json:"task,omitempty"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// Content is a content block; tasksim only produces and reads text blocks.
type Content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// CallToolResult is the result of a plain tools/call and the payload of tasks/result.
type CallToolResult struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
	Meta              json.RawMessage `json:"_meta,omitempty"`
}

// TaskIDParams are the params of tasks/get, tasks/result and tasks/cancel.
type TaskIDParams struct {
	TaskID string          `json:"taskId"`
	Meta   json.RawMessage `json:"_meta,omitempty"`
}

// ListTasksParams are the (optional) params of tasks/list.
type ListTasksParams struct {
	Cursor *string `json:"cursor,omitempty"`
}

// ListTasksResult is the result of tasks/list.
type ListTasksResult struct {
	Tasks      []Task `json:"tasks"`
	NextCursor string `json:"nextCursor,omitempty"`
}

// CreateTaskResult is the reply to an accepted task-augmented request (R11): the task is
// nested under "task", unlike every other task result, which is flattened.
type CreateTaskResult struct {
	Task Task            `json:"task"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ElicitRequestParams are the params of a form-mode elicitation/create.
type ElicitRequestParams struct {
	Mode            string          `json:"mode,omitempty"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema"`
	Meta            json.RawMessage `json:"_meta,omitempty"`
}

// Elicitation actions.
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// ElicitResult is the client's answer to elicitation/create.
type ElicitResult struct {
	Action  string          `json:"action"`
	Content json.RawMessage `json:"content,omitempty"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// MetaRelatedTask is the _meta key that ties a message to a task (R19, R31, R36).
const MetaRelatedTask = "io.modelcontextprotocol/related-task"

// RelatedTaskMeta returns the encoded _meta object {"io.modelcontextprotocol/related-task":
// {"taskId": id}}.
func RelatedTaskMeta(taskID string) json.RawMessage {
	b := append([]byte(`{"`+MetaRelatedTask+`":{"taskId":`), AppendString(nil, taskID)...)
	return append(b, "}}"...)
}

// RelatedTaskID reads the related-task id from a _meta object; "" when absent.
func RelatedTaskID(meta json.RawMessage) string {
	if len(meta) == 0 {
		return ""
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) != nil {
		return ""
	}
	var rt struct {
		TaskID string `json:"taskId"`
	}
	if json.Unmarshal(m[MetaRelatedTask], &rt) != nil {
		return ""
	}
	return rt.TaskID
}
