package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
)

// Manifest is what the target declared before the first call, and the pollInterval and ttl
// it first advertised: it goes into summary.json as "manifest".
type Manifest struct {
	Target          string             `json:"target"`
	TakenAt         time.Time          `json:"taken_at"`
	ProtocolVersion string             `json:"protocol_version"`
	Server          mcp.Implementation `json:"server"`
	SessionID       bool               `json:"session_id"` // the server issued Mcp-Session-Id (H2)
	Tasks           TasksManifest      `json:"tasks"`
	Tools           []ToolManifest     `json:"tools"`
	Tool            string             `json:"tool"`              // the tool this run calls
	TaskSupport     string             `json:"tool_task_support"` // its taskSupport
	AsTask          bool               `json:"as_task"`           // whether calls carry a task parameter
	Fallback        string             `json:"fallback,omitempty"`

	mu                sync.Mutex
	PollIntervalMs    *int64 `json:"poll_interval_ms"`     // first pollInterval seen; null if none
	TTLMs             *int64 `json:"ttl_ms"`               // first ttl seen; null if unlimited or none
	PollIntervalFound bool   `json:"poll_interval_found"`  // false: the server advertised none
	FallbackInterval  int64  `json:"fallback_interval_ms"` // what clients use when none is advertised
	seen              bool
}

// TasksManifest is capabilities.tasks as declared.
type TasksManifest struct {
	Declared  bool `json:"declared"`
	List      bool `json:"list"`
	Cancel    bool `json:"cancel"`
	ToolsCall bool `json:"tools_call"`
}

// ToolManifest is one tool, its taskSupport and the arguments its inputSchema declares.
type ToolManifest struct {
	Name        string   `json:"name"`
	TaskSupport string   `json:"task_support"`
	Args        []string `json:"args,omitempty"` // inputSchema.properties, sorted
}

// DeclaresArg reports whether the run's tool declares argument name in its inputSchema.
func (m *Manifest) DeclaresArg(name string) bool {
	for _, t := range m.Tools {
		if t.Name == m.Tool {
			return slices.Contains(t.Args, name)
		}
	}
	return false
}

// sawTask records the pollInterval and ttl of the first task created.
func (m *Manifest) sawTask(t *mcp.Task) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen {
		return
	}
	m.seen = true
	if t.PollInterval != nil {
		v := int64(*t.PollInterval)
		m.PollIntervalMs, m.PollIntervalFound = &v, true
	}
	if t.TTL != nil {
		v := int64(*t.TTL)
		m.TTLMs = &v
	}
}

// setFallback records the wait clients use when the server advertises no pollInterval: the
// policy's first wait without jitter.
func (m *Manifest) setFallback(p PollPolicy) {
	p.Jitter = 0
	m.mu.Lock()
	defer m.mu.Unlock()
	m.FallbackInterval = p.Wait(0, 0, nil).Milliseconds()
}

// FirstPollInterval is the pollInterval of the first task created; 0 if none was advertised
// (or no task was created yet).
func (m *Manifest) FirstPollInterval() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.PollIntervalMs == nil {
		return 0
	}
	return time.Duration(*m.PollIntervalMs) * time.Millisecond
}

// MarshalJSON takes the lock, since tasks may still be updating the first-seen fields.
func (m *Manifest) MarshalJSON() ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	type plain Manifest
	return json.Marshal((*plain)(m))
}

// CapabilityError says why the target cannot run the tool as a task; a run stops on it
// with exit code 2 unless the scenario declares the sync fallback.
type CapabilityError struct{ Msg string }

func (e *CapabilityError) Error() string { return e.Msg }

// Probe reads the target's capability manifest: initialize and tools/list on a session of
// its own, which it then ends.
func Probe(ctx context.Context, t *Target, tool string) (*Manifest, error) {
	s, err := t.Connect(ctx, clientCaps)
	if err != nil {
		return nil, fmt.Errorf("cannot reach target %s: %w", t.URL, err)
	}
	defer s.Close(context.WithoutCancel(ctx))
	init := s.Init()
	m := &Manifest{
		Target:          t.URL,
		TakenAt:         time.Now().UTC(),
		ProtocolVersion: init.ProtocolVersion,
		Server:          init.ServerInfo,
		SessionID:       s.ID() != "",
		Tool:            tool,
	}
	if tc := init.Capabilities.Tasks; tc != nil {
		m.Tasks = TasksManifest{Declared: true, List: tc.List != nil, Cancel: tc.Cancel != nil, ToolsCall: tc.ToolCallTasks()}
	}
	var cursor string
	for page := 0; page < 100; page++ {
		params := []byte(`{}`)
		if cursor != "" {
			params = append(append([]byte(`{"cursor":`), mcp.AppendString(nil, cursor)...), '}')
		}
		rep, err := s.Call(ctx, mcp.MethodToolsList, params, nil)
		if err != nil {
			return nil, fmt.Errorf("tools/list on %s: %w", t.URL, err)
		}
		if rep.Err != nil {
			return nil, fmt.Errorf("tools/list on %s: %w", t.URL, rep.Err)
		}
		var res mcp.ListToolsResult
		if err := json.Unmarshal(rep.Result, &res); err != nil {
			return nil, fmt.Errorf("tools/list on %s: %w", t.URL, &ProtocolError{Msg: err.Error()})
		}
		for i := range res.Tools {
			var schema struct {
				Properties map[string]json.RawMessage `json:"properties"`
			}
			_ = json.Unmarshal(res.Tools[i].InputSchema, &schema) // no properties: no args
			m.Tools = append(m.Tools, ToolManifest{Name: res.Tools[i].Name, TaskSupport: string(res.Tools[i].TaskSupport()),
				Args: slices.Sorted(maps.Keys(schema.Properties))})
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	return m, nil
}

// Decide sets AsTask from the manifest, the tool's taskSupport and the fallback: a task
// parameter is sent only when the server declares tasks.requests.tools.call (R6) and the
// tool does not forbid tasks (R7). Otherwise the fallback decides; with FallbackRefuse the
// result is a *CapabilityError. A required tool is never called synchronously.
func (m *Manifest) Decide(fb Fallback) error {
	m.TaskSupport = ""
	for _, t := range m.Tools {
		if t.Name == m.Tool {
			m.TaskSupport = t.TaskSupport
		}
	}
	if m.TaskSupport == "" {
		return &CapabilityError{Msg: fmt.Sprintf("the target has no tool %q (tools: %s)", m.Tool, m.toolNames())}
	}
	var why string
	switch {
	case !m.Tasks.ToolsCall:
		why = "the target does not declare capabilities.tasks.requests.tools.call (R6)"
	case m.TaskSupport == string(mcp.TaskForbidden):
		why = fmt.Sprintf("tool %q forbids task-augmented calls (taskSupport forbidden, R7)", m.Tool)
	default:
		m.AsTask = true
		return nil
	}
	if fb == FallbackSync && m.TaskSupport != string(mcp.TaskRequired) {
		m.Fallback = "sync: " + why
		return nil
	}
	return &CapabilityError{Msg: why + "; no task parameter will be sent. Declare fallback: sync to call it synchronously"}
}

func (m *Manifest) toolNames() string {
	s := ""
	for i, t := range m.Tools {
		if i > 0 {
			s += ", "
		}
		s += t.Name
	}
	if s == "" {
		return "none"
	}
	return s
}
