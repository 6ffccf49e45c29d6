package mockserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
)

// The default tools: one per taskSupport value.
const (
	ToolWork     = "work"      // taskSupport optional
	ToolWorkTask = "work_task" // taskSupport required
	ToolWorkSync = "work_sync" // taskSupport forbidden
)

// workInputSchema documents the per-call arguments every default tool takes. Arguments
// override the server's configuration per call, so tests are deterministic.
const workInputSchema = `{"type":"object","additionalProperties":false,"properties":{` +
	`"duration_ms":{"type":"integer","minimum":0,"maximum":86400000,"description":"how long the work takes, in ms"},` +
	`"outcome":{"type":"string","enum":["completed","failed","error"],"description":"completed; failed = CallToolResult with isError; error = JSON-RPC error"},` +
	`"input_required":{"type":"boolean","description":"ask for input once, through elicitation/create, halfway through the work"},` +
	`"input_rounds":{"type":"integer","minimum":0,"maximum":16,"description":"number of input rounds (overrides input_required)"},` +
	`"idempotency_key":{"type":"string","description":"domain ledger key: a second effect for one key is a duplicate"},` +
	`"payload_bytes":{"type":"integer","minimum":0,"maximum":1048576,"description":"size of filler text in the result"},` +
	`"note":{"type":"string","description":"free text for the caller's records; never shown back (tasksim plants secret canaries here)"}}}`

// toolList returns the tools/list entries: the default tools, then the fixture tools when
// Config.Fixtures is set (fixtures.go). Sessions without Tasks see the same list:
// taskSupport means nothing to them without the capability (R6), and R4 lets them call
// every tool synchronously. A server without the tasks capability at all (Config.NoTasks,
// or a Config.Protocol without Tasks) lists them without execution (compat.go).
func (s *core) toolList() []mcp.Tool {
	tools := defaultTools()
	if s.cfg.Fixtures {
		tools = append(tools, fixtureList()...)
	}
	return tools
}

// defaultTools returns the tools/list entries of the default tools.
func defaultTools() []mcp.Tool {
	mk := func(name, desc string, ts mcp.TaskSupport) mcp.Tool {
		return mcp.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(workInputSchema),
			Execution: &mcp.ToolExecution{TaskSupport: ts}}
	}
	return []mcp.Tool{
		mk(ToolWork, "Simulated work; may run as a task or synchronously.", mcp.TaskOptional),
		mk(ToolWorkTask, "Simulated long work; must run as a task.", mcp.TaskRequired),
		mk(ToolWorkSync, "Simulated work; never runs as a task.", mcp.TaskForbidden),
	}
}

// toolSupport returns the taskSupport of a listed tool: a default tool, or a fixture when
// they are on; ok is false for an unknown tool.
func (s *core) toolSupport(name string) (ts mcp.TaskSupport, ok bool) {
	if ts, ok = taskSupport(name); ok {
		return ts, true
	}
	if f := s.fixtureOf(name); f != nil {
		return f.ts, true
	}
	return "", false
}

// taskSupport returns the taskSupport of a default tool; ok is false for an unknown tool.
func taskSupport(name string) (ts mcp.TaskSupport, ok bool) {
	switch name {
	case ToolWork:
		return mcp.TaskOptional, true
	case ToolWorkTask:
		return mcp.TaskRequired, true
	case ToolWorkSync:
		return mcp.TaskForbidden, true
	}
	return "", false
}

// workArgs are the arguments of the default tools.
type workArgs struct {
	DurationMs     *int64 `json:"duration_ms"`
	Outcome        string `json:"outcome"`
	InputRequired  *bool  `json:"input_required"` // nil: not given, the tool profile decides
	InputRounds    *int   `json:"input_rounds"`
	IdempotencyKey string `json:"idempotency_key"`
	PayloadBytes   int    `json:"payload_bytes"`
	Note           string `json:"note"` // accepted and ignored: it is never shown back
}

// workPlan is what a call will do, decided when it arrives.
type workPlan struct {
	duration       time.Duration
	ending         ending // endCompleted, endToolError or endRPCError
	rounds         int    // input rounds
	inputDrawn     bool   // rounds came from the tool profile, not the arguments
	idempotencyKey string
	payloadBytes   int
	fixture        *fixtureCall // a fixture tool's call (fixtures.go); nil for the default tools
}

// planWork decodes and checks a call's arguments; every problem is reported at once, as
// -32602 with what was wrong.
func (s *core) planWork(tool string, raw json.RawMessage) (workPlan, *mcp.Error) {
	if f := s.fixtureOf(tool); f != nil {
		return s.planFixture(f, raw, "") // fixtures.go
	}
	var a workArgs
	if len(raw) > 0 && string(raw) != "null" && !readArgs(raw, &a) { // params.go
		var err error
		if a, err = decodeArgs(raw); err != nil {
			return workPlan{}, mcp.Errorf(mcp.CodeInvalidParams, "invalid arguments for tool %q: %v", tool, err)
		}
	}
	p := workPlan{duration: s.cfg.DefaultDuration, ending: endCompleted, idempotencyKey: a.IdempotencyKey, payloadBytes: a.PayloadBytes}
	var probs []string
	if a.DurationMs != nil {
		if *a.DurationMs < 0 || *a.DurationMs > maxDurationMs {
			probs = append(probs, fmt.Sprintf("duration_ms must be in [0, %d], got %d", maxDurationMs, *a.DurationMs))
		}
		p.duration = time.Duration(*a.DurationMs) * time.Millisecond
	}
	switch a.Outcome {
	case "", "completed":
	case "failed":
		p.ending = endToolError
	case "error":
		p.ending = endRPCError
	default:
		probs = append(probs, fmt.Sprintf(`outcome must be "completed", "failed" or "error", got %q`, a.Outcome))
	}
	if a.InputRequired != nil && *a.InputRequired {
		p.rounds = 1
	}
	if a.InputRounds != nil {
		if *a.InputRounds < 0 || *a.InputRounds > maxInputRounds {
			probs = append(probs, fmt.Sprintf("input_rounds must be in [0, %d], got %d", maxInputRounds, *a.InputRounds))
		}
		p.rounds = *a.InputRounds
	}
	if a.PayloadBytes < 0 || a.PayloadBytes > maxPayloadBytes {
		probs = append(probs, fmt.Sprintf("payload_bytes must be in [0, %d], got %d", maxPayloadBytes, a.PayloadBytes))
	}
	if len(probs) > 0 {
		return workPlan{}, mcp.Errorf(mcp.CodeInvalidParams, "invalid arguments for tool %q: %s", tool, strings.Join(probs, "; "))
	}
	s.applyProfile(tool, &a, &p) // arguments left unset come from Config.Tools (profile.go)
	return p, nil
}

// decodeArgs decodes arguments with encoding/json, unknown members refused.
func decodeArgs(raw json.RawMessage) (workArgs, error) {
	var a workArgs
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(&a)
	return a, err
}

// endMessage is the statusMessage of a task that ended with e (R50).
func endMessage(e ending) string {
	switch e {
	case endToolError:
		return "simulated tool failure: the result has isError true"
	case endRPCError:
		return "simulated internal error: tasks/result returns JSON-RPC error -32603"
	}
	return ""
}

// workOutcome is how a task whose work ended with work ends: completed for a plain result,
// failed otherwise, with a diagnostic statusMessage (R50, R51).
func workOutcome(work ending) (ending, mcp.Status, string) {
	if work != endCompleted {
		return work, mcp.StatusFailed, endMessage(work)
	}
	return work, mcp.StatusCompleted, endMessage(work)
}

// simulatedError is the JSON-RPC error of outcome "error".
func simulatedError() *mcp.Error {
	return &mcp.Error{Code: mcp.CodeInternalError, Message: "simulated internal error (outcome=error)"}
}

// appendToolResult appends the CallToolResult of finished work. taskID, when set, adds the
// related-task _meta that a tasks/result reply must carry (R19).
func appendToolResult(dst []byte, p *workPlan, end ending, taskID, statusMessage string) []byte {
	dst = append(dst, `{"content":[{"type":"text","text":`...)
	isError := true
	switch {
	case p.fixture != nil && (end == endCompleted || end == endToolError): // fixtures.go
		isError = end == endToolError
		dst = mcp.AppendString(dst, p.fixture.resultText())
	case end == endCompleted:
		isError = false
		dst = append(dst, `"work completed in `...) // plain ASCII: no escapes to write
		dst = strconv.AppendInt(dst, p.duration.Milliseconds(), 10)
		dst = append(dst, ` ms"`...)
	case end == endCancelled:
		// docs/RULES.md#gap-1: tasks/result of a cancelled task is unspecified;
		// tasksim answers with an isError result so the reply still carries related-task _meta.
		dst = mcp.AppendString(dst, "task was cancelled before its work finished")
	default:
		text := statusMessage
		if text == "" {
			text = endMessage(end)
		}
		dst = mcp.AppendString(dst, text)
	}
	dst = append(dst, '}')
	if end == endCompleted && p.payloadBytes > 0 {
		dst = append(dst, `,{"type":"text","text":"`...)
		for range p.payloadBytes {
			dst = append(dst, 'x')
		}
		dst = append(dst, `"}`...)
	}
	dst = append(dst, ']')
	if isError {
		dst = append(dst, `,"isError":true`...)
	}
	if taskID != "" { // mcp.RelatedTaskMeta(taskID), written in place
		dst = append(dst, `,"_meta":{"`+mcp.MetaRelatedTask+`":{"taskId":`...)
		dst = mcp.AppendString(dst, taskID)
		dst = append(dst, "}}"...)
	}
	return append(dst, '}')
}
