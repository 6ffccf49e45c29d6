package mockserver

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
)

// The fixture tools of the official conformance suite (@modelcontextprotocol/conformance,
// its tasks-* server scenarios), listed after the default tools when Config.Fixtures is set
// (tasksim serve sets it). Each is a plan for the one task core the default tools run on:
// the same store, executor, ttl, cancel, input flow and era translation (modern.go); only
// the arguments, the result text and the form of its input requests are its own.
//
//	tool                 taskSupport  arguments           what it does
//	greet                forbidden    name (required)     "Hello, {name}!" at once
//	slow_compute         optional     seconds, label      sleeps seconds (0: at once), then a result;
//	                                                      a cancel while it runs makes it cancelled
//	failing_job          required     -                   a tool execution error (isError) after 1s
//	protocol_error_job   required     -                   a JSON-RPC error -32603 after 100ms
//	confirm_delete       required     filename            asks once (elicitation/create, confirm),
//	                                                      then "Deleted {filename}" or "Kept ..."
//	multi_input          required     -                   asks twice at once: two input requests
//	                                                      pending together; ends when both are answered
//	test_tool_with_task  required     -                   2026-07-28: MRTR first (an InputRequiredResult
//	                                                      asking user_name), then a task whose result
//	                                                      greets that name; 2025-11-25: a task that asks
//	                                                      for the name through its input flow
//
// Arguments the schema does not name are ignored, not refused: the contract suite (conform)
// calls every listed tool of the mock with the default tools' duration_ms.
const (
	FixtureGreet            = "greet"
	FixtureSlowCompute      = "slow_compute"
	FixtureFailingJob       = "failing_job"
	FixtureProtocolErrorJob = "protocol_error_job"
	FixtureConfirmDelete    = "confirm_delete"
	FixtureMultiInput       = "multi_input"
	FixtureToolWithTask     = "test_tool_with_task"
)

// fixtureTool describes one fixture tool.
type fixtureTool struct {
	name   string
	desc   string
	ts     mcp.TaskSupport
	schema string // inputSchema
}

// fixtureTools are the fixtures in the order tools/list shows them.
var fixtureTools = [...]fixtureTool{
	{FixtureGreet, "Conformance fixture: says hello at once; never a task.", mcp.TaskForbidden,
		`{"type":"object","properties":{"name":{"type":"string","description":"who to greet"}},"required":["name"]}`},
	{FixtureSlowCompute, "Conformance fixture: sleeps seconds, then answers; a task when the client can take one.", mcp.TaskOptional,
		`{"type":"object","properties":{"seconds":{"type":"number","minimum":0,"maximum":86400,"description":"how long it sleeps; 0 answers at once"},` +
			`"label":{"type":"string","description":"named in the result"}}}`},
	{FixtureFailingJob, "Conformance fixture: a task that ends in a tool execution error after 1s.", mcp.TaskRequired, `{"type":"object"}`},
	{FixtureProtocolErrorJob, "Conformance fixture: a task that ends in a JSON-RPC error (-32603).", mcp.TaskRequired, `{"type":"object"}`},
	{FixtureConfirmDelete, "Conformance fixture: a task that asks once for confirmation, then deletes (nothing).", mcp.TaskRequired,
		`{"type":"object","properties":{"filename":{"type":"string","description":"the file to delete"}}}`},
	{FixtureMultiInput, "Conformance fixture: a task that asks for two inputs at once.", mcp.TaskRequired, `{"type":"object"}`},
	{FixtureToolWithTask, "Conformance fixture: asks for a name (MRTR in 2026-07-28), then greets it from a task.", mcp.TaskRequired, `{"type":"object"}`},
}

// fixtureOf returns the fixture named name, or nil when there is none or fixtures are off.
// A default tool's name costs one switch (taskSupport): the calls of the default tools are
// the hot path.
func (s *core) fixtureOf(name string) *fixtureTool {
	if _, dflt := taskSupport(name); dflt || !s.cfg.Fixtures {
		return nil
	}
	for i := range fixtureTools {
		if fixtureTools[i].name == name {
			return &fixtureTools[i]
		}
	}
	return nil
}

// fixtureList returns the tools/list entries of the fixtures.
func fixtureList() []mcp.Tool {
	out := make([]mcp.Tool, len(fixtureTools))
	for i, f := range fixtureTools {
		out[i] = mcp.Tool{Name: f.name, Description: f.desc, InputSchema: json.RawMessage(f.schema),
			Execution: &mcp.ToolExecution{TaskSupport: f.ts}}
	}
	return out
}

// fixtureNames lists the fixture names, for messages.
func fixtureNames() string {
	names := make([]string, len(fixtureTools))
	for i, f := range fixtureTools {
		names[i] = f.name
	}
	return strings.Join(names, ", ")
}

// fixtureArgs are the arguments of every fixture; each reads its own.
type fixtureArgs struct {
	Name     *string  `json:"name"`
	Seconds  *float64 `json:"seconds"`
	Label    string   `json:"label"`
	Filename string   `json:"filename"`
}

// fixtureCall is what a fixture call does besides its workPlan: the text of its result and
// the form of its input requests. The answers of its input rounds are kept, under the
// task's mu, for the text.
type fixtureCall struct {
	tool    *fixtureTool
	text    string // the result text (a tool error's too) when it does not depend on answers
	asks    int    // elicitations per input round, at once (default 1)
	message string // the elicitations' message
	schema  string // their requestedSchema
	subject string // confirm_delete: the file; test_tool_with_task: a name given by MRTR

	answers []json.RawMessage // the content of each accepted answer, in order; guarded by the task's mu
}

// confirmSchema, nameSchema: the forms of the fixtures' input requests.
const (
	confirmSchema = `{"type":"object","properties":{"confirm":{"type":"boolean","description":"delete it"}},"required":["confirm"]}`
	nameSchema    = `{"type":"object","properties":{"name":{"type":"string","description":"your name"}},"required":["name"]}`
)

// userNameKey is the MRTR key under which test_tool_with_task asks for the name.
const userNameKey = "user_name"

// planFixture plans a call of fixture f with arguments raw. asked is the name
// test_tool_with_task was given before its task, when the call's front end asked for it
// (2026-07-28 asks by MRTR: toolWithTaskMRTR); "" makes the task ask it in an input round.
// Problems are -32602, all at once.
func (s *core) planFixture(f *fixtureTool, raw json.RawMessage, asked string) (workPlan, *mcp.Error) {
	var a fixtureArgs
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &a); err != nil {
			return workPlan{}, mcp.Errorf(mcp.CodeInvalidParams, "invalid arguments for tool %q: %v", f.name, err)
		}
	}
	fc := &fixtureCall{tool: f, asks: 1}
	p := workPlan{ending: endCompleted, fixture: fc}
	switch f.name {
	case FixtureGreet:
		if a.Name == nil {
			return workPlan{}, mcp.Errorf(mcp.CodeInvalidParams, "invalid arguments for tool %q: name is required", f.name)
		}
		fc.text = "Hello, " + *a.Name + "!"
	case FixtureSlowCompute:
		secs := 0.0
		if a.Seconds != nil {
			secs = *a.Seconds
		}
		if !(secs >= 0 && secs <= 86400) {
			return workPlan{}, mcp.Errorf(mcp.CodeInvalidParams, "invalid arguments for tool %q: seconds must be in [0, 86400], got %v", f.name, secs)
		}
		p.duration = time.Duration(secs * float64(time.Second))
		fc.text = "slow_compute finished after " + strconv.FormatFloat(secs, 'f', -1, 64) + "s"
		if a.Label != "" {
			fc.text += " (" + a.Label + ")"
		}
	case FixtureFailingJob:
		p.duration, p.ending = time.Second, endToolError
		fc.text = "failing_job failed: a tool execution error, as this fixture always ends"
	case FixtureProtocolErrorJob:
		p.duration, p.ending = 100*time.Millisecond, endRPCError
	case FixtureConfirmDelete:
		p.rounds, fc.subject, fc.schema = 1, a.Filename, confirmSchema
		fc.message = "Delete " + strconv.Quote(a.Filename) + "?"
	case FixtureMultiInput:
		p.rounds, fc.asks, fc.schema = 1, 2, nameSchema
		fc.message = "multi_input needs two inputs: give a name"
	case FixtureToolWithTask:
		p.duration = 100 * time.Millisecond
		if asked != "" {
			fc.subject = asked // asked before the task (toolWithTaskMRTR)
		} else {
			p.rounds, fc.schema, fc.message = 1, nameSchema, "What is your name?"
		}
	}
	return p, nil
}

// resultText is the text of the call's CallToolResult. Called with the task's mu held, or
// on a synchronous call, which has no answers.
func (fc *fixtureCall) resultText() string {
	switch fc.tool.name {
	case FixtureConfirmDelete:
		var c struct {
			Confirm bool `json:"confirm"`
		}
		if len(fc.answers) > 0 && json.Unmarshal(fc.answers[0], &c) == nil && c.Confirm {
			return "Deleted " + fc.subject
		}
		return "Kept " + fc.subject + ": the deletion was not confirmed"
	case FixtureMultiInput:
		return "multi_input got " + strings.Join(fc.answerNames(), " and ")
	case FixtureToolWithTask:
		name := fc.subject
		if names := fc.answerNames(); len(names) > 0 {
			name = names[0]
		}
		return "Hello, " + name + "!"
	}
	return fc.text
}

// answerNames returns the name member of each answer ("?" where there is none).
func (fc *fixtureCall) answerNames() []string {
	names := make([]string, len(fc.answers))
	for i, a := range fc.answers {
		var c struct {
			Name string `json:"name"`
		}
		names[i] = "?"
		if json.Unmarshal(a, &c) == nil && c.Name != "" {
			names[i] = c.Name
		}
	}
	return names
}

// toolWithTaskMRTR is the MRTR phase of test_tool_with_task in the 2026-07-28 era (E15,
// E47): without an accepted answer under user_name it replies an InputRequiredResult asking
// for it and reports ok false; with one it returns the name given. A declined answer ends
// the call with a tool error, synchronously. A request that declares no form elicitation
// cannot be asked (E15): -32021 naming it.
func (m *statelessFront) toolWithTaskMRTR(c *call) (name string, ok bool) {
	var p struct {
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	if err := json.Unmarshal(c.msg.Params, &p); err != nil {
		c.reply(nil, mcp.Errorf(mcp.CodeInvalidParams, "invalid tools/call params: %v", err))
		return "", false
	}
	if raw, given := p.InputResponses[userNameKey]; given {
		var r struct {
			mcp.ElicitResult
			Content struct {
				Name string `json:"name"`
			} `json:"content"`
		}
		if json.Unmarshal(raw, &r) != nil || r.Action != mcp.ElicitAccept || r.Content.Name == "" {
			text := fmt.Sprintf("test_tool_with_task: no name was given (inputResponses[%q] is not an accepted answer with content.name)", userNameKey)
			c.reply(appendTextResult(nil, text, true), nil)
			return "", false
		}
		return r.Content.Name, true
	}
	if !c.modern.form {
		req := mcp.ModernClientCapabilities{Elicitation: &mcp.ElicitationCapability{Form: &mcp.Leaf{}}}
		c.reply(nil, mcp.MissingRequiredClientCapability("tools/call of tool \"test_tool_with_task\" asks for a name through form elicitation", req))
		return "", false
	}
	params := []byte(`{"mode":"form","message":"What is your name?","requestedSchema":` + nameSchema + `}`)
	b, err := json.Marshal(mcp.InputRequiredResult{
		InputRequests: mcp.InputRequests{userNameKey: {Method: mcp.V20260728{}.Method(mcp.OpElicit), Params: params}},
		Meta:          m.info,
	})
	if err != nil {
		c.reply(nil, mcp.Errorf(mcp.CodeInternalError, "encoding the input request: %v", err))
		return "", false
	}
	c.reply(b, nil)
	return "", false
}

// appendTextResult appends a CallToolResult with one text item.
func appendTextResult(dst []byte, text string, isError bool) []byte {
	dst = append(dst, `{"content":[{"type":"text","text":`...)
	dst = mcp.AppendString(dst, text)
	dst = append(dst, "}]"...)
	if isError {
		dst = append(dst, `,"isError":true`...)
	}
	return append(dst, '}')
}
