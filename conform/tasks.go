package conform

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/results"
)

// work is one call the suite can make: a tool and its arguments.
type work struct {
	tool string
	args json.RawMessage
	// lasts is how long the work runs when the suite knows it (tasksim's mock); 0 unknown.
	lasts time.Duration
}

// plan is the work of the lifecycle cases. On tasksim's mock each kind of task is its own
// call (a long one to cancel, a short one to finish, a failing one); elsewhere every kind is
// the one tool and arguments given, and the cases that need a kind of task the suite cannot
// ask for are skipped.
type plan struct {
	why string // "" when the lifecycle cases can run; else why not
	// optionErr says why --tool cannot be used at all (not listed, forbids tasks).
	optionErr string
	enable    string // what would let them run
	tool      string
	long      work  // a task to cancel and to read while it works
	medium    work  // a task that works a little while, to see tasks/result wait
	short     work  // a task that ends soon on its own
	failed    *work // a task whose tool result has isError: true (the mock's, or FailArgs)
	errors    *work // a task whose call ends in a JSON-RPC error (the mock's, or ErrorArgs)
	input     *work // a task that asks for input (mock only)
}

// The mock's task durations: short ends at once, medium lets tasks/result be seen waiting,
// long outlasts every case (it is cancelled, never waited for).
const (
	mockShort  = 50 * time.Millisecond
	mockMedium = 1500 * time.Millisecond
	mockLong   = 10 * time.Minute
	// mockInput is the work of a task that asks for input twice, so that the input cases
	// see a key answered and a new one asked for.
	mockInput = 200 * time.Millisecond
)

// makePlan picks the lifecycle tool and its arguments.
func (s *suite) makePlan() plan {
	tasksOn := s.init.Capabilities.Tasks.ToolCallTasks()
	var tool *mcp.Tool
	if s.o.Tool != "" {
		tool = s.tool(s.o.Tool)
		if tool == nil {
			return plan{optionErr: fmt.Sprintf("--tool %q: the server lists no such tool; the tools that support tasks: %s", s.o.Tool, s.toolNames(true))}
		}
		if !tasksOn {
			return plan{why: "the server does not declare capabilities.tasks.requests.tools.call", enable: "a server that offers tasks for tools/call (R1)"}
		}
		if tool.TaskSupport() == mcp.TaskForbidden {
			return plan{optionErr: fmt.Sprintf("--tool %q does not support tasks (taskSupport forbidden); the tools that do: %s", s.o.Tool, s.toolNames(true))}
		}
	} else {
		for i := range s.tools {
			if ts := s.tools[i].TaskSupport(); ts != mcp.TaskForbidden && (tool == nil || (s.mock && s.tools[i].Name == "work_task")) {
				tool = &s.tools[i]
			}
		}
		if tool == nil {
			return plan{why: "the server lists no tool that supports tasks", enable: "a tool with execution.taskSupport optional or required"}
		}
	}
	if !tasksOn {
		return plan{why: "the server does not declare capabilities.tasks.requests.tools.call", enable: "a server that offers tasks for tools/call (R1)"}
	}
	return s.planFor(tool)
}

// planFor is the plan of the lifecycle cases with tool: on tasksim's mock each kind of task
// by its arguments (unless --args are given), elsewhere --args or the minimal arguments.
func (s *suite) planFor(tool *mcp.Tool) plan {
	p := plan{tool: tool.Name}
	if s.mock && s.o.Args == nil {
		mk := func(d time.Duration, extra string) *work {
			a := fmt.Sprintf(`{"duration_ms":%d%s}`, d.Milliseconds(), extra)
			return &work{tool: tool.Name, args: json.RawMessage(a), lasts: d}
		}
		p.long, p.medium, p.short = *mk(mockLong, ""), *mk(mockMedium, ""), *mk(mockShort, "")
		p.failed = mk(mockShort, `,"outcome":"failed"`)
		p.errors = mk(mockShort, `,"outcome":"error"`)
		p.input = mk(mockShort, `,"input_required":true`)
		s.failWork(&p, tool)
		return p
	}
	args := s.o.Args
	if args == nil {
		a, err := s.minimalArgs(tool)
		if err != nil {
			return plan{why: err.Error(), enable: fmt.Sprintf("give --args with arguments for %q", tool.Name)}
		}
		args = a
	}
	w := work{tool: tool.Name, args: args}
	p.long, p.medium, p.short = w, w, w
	s.failWork(&p, tool)
	return p
}

// failWork sets the failing work of p from Options.FailArgs and Options.ErrorArgs, where
// given (over the mock's own).
func (s *suite) failWork(p *plan, tool *mcp.Tool) {
	if s.o.FailArgs != nil {
		p.failed = &work{tool: tool.Name, args: s.o.FailArgs}
	}
	if s.o.ErrorArgs != nil {
		p.errors = &work{tool: tool.Name, args: s.o.ErrorArgs}
	}
}

// Where the flags of the failing work are named.
const (
	failArgsHint  = "give --fail-args JSON: arguments that make --tool end in a tool error (isError: true)"
	errorArgsHint = "give --error-args JSON: arguments that make --tool end in a protocol error (a JSON-RPC error)"
)

// minimalArgs returns tool's arguments: --tool-args when given, else what its inputSchema
// requires.
func (s *suite) minimalArgs(tool *mcp.Tool) (json.RawMessage, error) {
	if a, ok := s.o.ToolArgs[tool.Name]; ok {
		return a, nil
	}
	if tool.Name == s.o.Tool && s.o.Args != nil {
		return s.o.Args, nil
	}
	if s.mock {
		return json.RawMessage(fmt.Sprintf(`{"duration_ms":%d}`, mockShort.Milliseconds())), nil
	}
	m, err := client.MinimalArgs(tool.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("cannot build arguments for tool %q from its inputSchema: %v", tool.Name, err)
	}
	return json.Marshal(m)
}

func (s *suite) tool(name string) *mcp.Tool {
	for i := range s.tools {
		if s.tools[i].Name == name {
			return &s.tools[i]
		}
	}
	return nil
}

func (s *suite) toolNames(tasksOnly bool) string {
	var b bytes.Buffer
	for _, t := range s.tools {
		if tasksOnly && t.TaskSupport() == mcp.TaskForbidden {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t.Name)
	}
	if b.Len() == 0 {
		return "(none listed)"
	}
	return b.String()
}

// needPlan skips the case when the lifecycle cases cannot run.
func (r *run) needPlan() *plan {
	p := &r.s.plan
	if p.why != "" {
		r.skip(p.why, p.enable)
	}
	return p
}

// cancelDeclared reports whether the server declares tasks.cancel.
func (s *suite) cancelDeclared() bool {
	tc := s.init.Capabilities.Tasks
	return tc != nil && tc.Cancel != nil
}

// listDeclared reports whether the server declares tasks.list.
func (s *suite) listDeclared() bool {
	tc := s.init.Capabilities.Tasks
	return tc != nil && tc.List != nil
}

// callParams are the params of tools/call.
func callParams(w work, task *mcp.TaskMetadata) mcp.CallToolParams {
	return mcp.CallToolParams{Name: w.tool, Arguments: w.args, Task: task}
}

// create calls w as a task and returns the task; a reply that is not a CreateTaskResult
// fails the case under R11.
func (r *run) create(w work, ttl *mcp.Ms) *known {
	p := r.call(r.s.sess, "", mcp.OpToolsCall, callParams(w, &mcp.TaskMetadata{TTL: ttl}), nil, 0)
	built := r.s.o.Args == nil && !r.s.mock
	if p.code() == mcp.CodeInvalidParams && built {
		r.skip(fmt.Sprintf("the server refused the arguments the suite built for %q from its inputSchema: %s", w.tool, p), fmt.Sprintf("give --tool %s --args JSON", w.tool))
	}
	if p.err != nil || p.rpc != nil {
		r.fatal("R11", "a task-augmented call of %q should be answered with a CreateTaskResult; got %s", w.tool, p)
	}
	k, why := r.s.adopt(p.result, r.s.sess, w)
	if k == nil && built && isErrorResult(p.result) {
		r.skip(fmt.Sprintf("the server answered the call of %q with the arguments the suite built with an error result: %s", w.tool, excerpt(p.result, 200)), fmt.Sprintf("give --tool %s --args JSON", w.tool))
	}
	if k == nil {
		r.fatal("R11", "a task-augmented call of %q should be answered with a CreateTaskResult; %s: %s", w.tool, why, excerpt(p.result, 300))
	}
	return k
}

// isErrorResult reports whether result is a CallToolResult with isError true.
func isErrorResult(result json.RawMessage) bool {
	var res mcp.CallToolResult
	return json.Unmarshal(result, &res) == nil && res.IsError
}

// adopt records the task of a CreateTaskResult; nil and why when result is none.
func (s *suite) adopt(result json.RawMessage, sess *client.Session, w work) (*known, string) {
	var ctr struct {
		Task json.RawMessage `json:"task"`
	}
	if json.Unmarshal(result, &ctr) != nil || len(ctr.Task) == 0 {
		return nil, "the reply has no task"
	}
	f := readFields(ctr.Task)
	if f.id == "" {
		return nil, "its task has no taskId"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.tasks[f.id]
	if k == nil {
		k = &known{id: f.id, sess: sess, create: result, work: w, created: time.Now()}
		s.tasks[f.id] = k
		s.order = append(s.order, f.id)
	}
	s.sawLocked(k, f.status)
	return k, ""
}

// fields are a task object's members as sent: a member absent is nil (a json null is
// "null"), so that the field cases can tell absent from null from wrong.
type fields struct {
	raw                                         json.RawMessage
	id                                          string
	status                                      mcp.Status
	statusRaw, created, updated, ttl, poll, msg json.RawMessage
}

// readFields reads a task object of 2025-11-25 leniently.
func readFields(b json.RawMessage) fields { return readTaskFields(b, "ttl", "pollInterval") }

// readModernFields reads a task of the Tasks extension leniently: flat, ttlMs and
// pollIntervalMs.
func readModernFields(b json.RawMessage) fields { return readTaskFields(b, "ttlMs", "pollIntervalMs") }

// readTaskFields reads a task object whose ttl and poll interval have the names given.
func readTaskFields(b json.RawMessage, ttl, poll string) fields {
	f := fields{raw: b}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return f
	}
	_ = json.Unmarshal(m["taskId"], &f.id)
	f.statusRaw, f.created, f.updated, f.ttl, f.poll, f.msg = m["status"], m["createdAt"], m["lastUpdatedAt"], m[ttl], m[poll], m["statusMessage"]
	var st string
	if json.Unmarshal(f.statusRaw, &st) == nil {
		f.status, _ = mcp.ParseStatus(st)
	}
	return f
}

// observeReply records the statuses a reply shows: a tasks/get or tasks/cancel result,
// every task of a tasks/list page.
func (s *suite) observeReply(op mcp.Op, p reply) {
	if p.err != nil || p.rpc != nil {
		return
	}
	switch op {
	case mcp.OpTasksGet, mcp.OpTasksCancel:
		s.saw(readFields(p.result))
	case mcp.OpTasksList:
		var page struct {
			Tasks []json.RawMessage `json:"tasks"`
		}
		if json.Unmarshal(p.result, &page) == nil {
			for _, t := range page.Tasks {
				s.saw(readFields(t))
			}
		}
	}
}

// saw records f's status for a task the suite created.
func (s *suite) saw(f fields) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := s.tasks[f.id]; k != nil {
		s.sawLocked(k, f.status)
	}
}

func (s *suite) sawLocked(k *known, st mcp.Status) {
	if st == 0 {
		return
	}
	if n := len(k.statuses); n == 0 || k.statuses[n-1] != st {
		k.statuses = append(k.statuses, st)
	}
	if st.Terminal() && k.final == 0 {
		k.final = st
	}
}

// get reads a task with tasks/get.
func (r *run) get(sess *client.Session, identity, id string) (reply, fields) {
	p := r.call(sess, identity, mcp.OpTasksGet, mcp.TaskIDParams{TaskID: id}, nil, 0)
	if p.err != nil || p.rpc != nil {
		return p, fields{}
	}
	return p, readFields(p.result)
}

// settleWindow is how long after its creation a task the suite has not read yet may still
// be unknown to tasks/get: nothing promises that a task is readable the moment its
// CreateTaskResult is sent (docs/RULES.md#gap-3).
const settleWindow = 5 * time.Second

// read reads k with tasks/get, as its creator; a -32602 for a task never read yet and
// younger than settleWindow is read again (gap-3).
func (r *run) read(k *known) (reply, fields) {
	for {
		p, f := r.get(k.sess, "", k.id)
		if p.code() == mcp.CodeInvalidParams && !k.read && time.Since(k.created) < settleWindow {
			if !sleep(r.ctx, 250*time.Millisecond) {
				return p, f
			}
			continue
		}
		if p.err == nil && p.rpc == nil {
			k.read = true
		}
		return p, f
	}
}

// pollInterval is the interval to poll k at: what the server advertised (bounded to
// [50ms, 5s]), else 1s.
func (k *known) pollInterval(f fields) time.Duration {
	var ms mcp.Ms
	if json.Unmarshal(f.poll, &ms) == nil && ms > 0 {
		return min(max(ms.Duration(), 50*time.Millisecond), 5*time.Second)
	}
	return time.Second
}

// waitEnd polls k until it is terminal, answering input on the way (R37), or fails the
// case when it is not terminal within the budget. It returns the last tasks/get reply.
func (r *run) waitEnd(k *known) fields {
	deadline := time.Now().Add(r.s.o.Budget)
	for {
		if !time.Now().Before(deadline) {
			r.skip(fmt.Sprintf("task %s had not ended after the budget of %v", short(k.id), r.s.o.Budget), "give --budget more time, or --tool a shorter task")
		}
		p, f := r.read(k)
		if p.err != nil && p.status == 0 && r.ctx.Err() == nil {
			r.fatal("R16", "tasks/get of task %s got no answer (%s): a poll must answer at once with the status, or no requestor can see input_required or the end", short(k.id), p)
		}
		if p.err != nil || p.rpc != nil {
			r.fatal("R46", "tasks/get of task %s, which the suite created and which has not expired, should answer the task; got %s", short(k.id), p)
		}
		if f.status.Terminal() {
			return f
		}
		if f.status == mcp.StatusInputRequired {
			r.answerInput(k, time.Until(deadline))
			continue
		}
		if !sleep(r.ctx, k.pollInterval(f)) {
			r.fatal("interrupted", "the suite was interrupted while task %s was %s", short(k.id), f.status)
		}
	}
}

// sleep waits d or until ctx ends; false when ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// doneTask returns a task that ended on its own (the short work), made once and shared by
// the cases that need one.
func (r *run) doneTask() (*known, fields) {
	p := r.needPlan()
	if k := r.s.done; k != nil && !k.gone {
		_, f := r.get(k.sess, "", k.id)
		return k, f
	}
	k := r.create(p.short, nil)
	f := r.waitEnd(k)
	r.s.done = k
	return k, f
}

// answerInput calls tasks/result on a task that is input_required and answers the
// requests for input that come on its stream (R37, the input_required flow), for at most
// left; it keeps the evidence for the input case. A tasks/result that answers a result
// while the task is not terminal breaks R18; a stream that carries no request for input
// may be right (the server may send it on the GET stream, R39, which the suite does not
// read): the case is skipped.
func (r *run) answerInput(k *known, left time.Duration) {
	h := &inputHandler{r: r, task: k.id}
	p := r.call(k.sess, "", mcp.OpTasksResult, mcp.TaskIDParams{TaskID: k.id}, h, max(left, time.Second))
	if h.noMeta > 0 {
		r.fail("R36", "%d request(s) for input of task %s came without related-task _meta naming the task", h.noMeta, short(k.id))
	}
	if h.refused > 0 {
		r.skip(fmt.Sprintf("task %s asked for input the suite could not give (%s)", short(k.id), h.why), "give --tool a tool whose requests for input are plain forms")
	}
	if h.answered > 0 {
		r.s.mu.Lock()
		if r.s.inputOK == "" {
			r.s.inputOK = fmt.Sprintf("task %s asked for input %d time(s) on its tasks/result stream, the suite answered, and the call then answered %s", short(k.id), h.answered, oneLine(p.String(), 120))
			r.s.inputEv = append(r.s.inputEv, r.ex...)
		}
		r.s.mu.Unlock()
		return
	}
	if p.status != 0 { // an answer: a result, a JSON-RPC error or an HTTP error
		if _, f := r.read(k); !f.status.Terminal() {
			r.fatal("R18", "tasks/result of task %s answered (%s) while the task was %s, with no request for input on its stream", short(k.id), p, f.status)
		}
		return
	}
	r.skip(fmt.Sprintf("task %s is input_required, but its tasks/result stream carried no request for input (%s); the server may send it on the session's GET stream (R39), which the suite does not read", short(k.id), p), "")
}

// inputHandler answers the requests for input that come on a tasks/result stream: an
// elicitation is accepted with the minimal content its requestedSchema asks for.
type inputHandler struct {
	r                         *run
	task                      string
	answered, refused, noMeta int
	why                       string // why the last refused request could not be answered
}

func (h *inputHandler) Request(msg *mcp.Message) ([]byte, *mcp.Error) {
	h.r.record(results.Exchange{Method: msg.Method + " (from the server)", Request: excerpt(msg.Params, 300)})
	if (mcp.V20251125{}).Op(msg.Method) != mcp.OpElicit {
		return nil, mcp.Errorf(mcp.CodeMethodNotFound, "tasksim conform answers only elicitation/create")
	}
	var p mcp.ElicitRequestParams
	_ = json.Unmarshal(msg.Params, &p)
	if mcp.RelatedTaskID(p.Meta) != h.task {
		h.noMeta++
	}
	content, err := client.MinimalArgs(formSchema(p.RequestedSchema))
	if err != nil {
		h.refused++
		h.why = err.Error()
		return nil, mcp.Errorf(mcp.CodeInvalidParams, "tasksim conform cannot fill this form: %v", err)
	}
	h.answered++
	c, _ := json.Marshal(content)
	out, _ := json.Marshal(mcp.ElicitResult{Action: mcp.ElicitAccept, Content: c, Meta: mcp.RelatedTaskMeta(h.task)})
	return out, nil
}

func (h *inputHandler) Notify(*mcp.Message) {}

// cleanup brings every task the suite created and did not see end to an end: it reads
// each once more and cancels those still running, where tasks/cancel is declared. What
// stays running is left behind (Contract.LeftBehind).
func (s *suite) cleanup(ctx context.Context) {
	r := &run{s: s, ctx: context.WithoutCancel(ctx)}
	for _, id := range s.order {
		k := s.tasks[id]
		if k.final != 0 || k.gone {
			continue
		}
		p, f := r.get(k.sess, "", id)
		if p.code() == mcp.CodeInvalidParams {
			k.gone = true
			continue
		}
		if f.status.Terminal() || !s.cancelDeclared() {
			continue
		}
		r.call(k.sess, "", mcp.OpTasksCancel, mcp.TaskIDParams{TaskID: id}, nil, 0)
	}
}

// formSchema rewrites an elicitation form's requestedSchema so that MinimalArgs can fill
// it: a titled single-select (oneOf or anyOf of {const, title}) becomes an enum of those
// consts, in properties and in array items (multi-select); anything else is left as is.
func formSchema(schema json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(schema, &m) != nil {
		return schema
	}
	var props map[string]json.RawMessage
	if json.Unmarshal(m["properties"], &props) != nil || props == nil {
		return schema
	}
	for name, p := range props {
		props[name] = titledEnum(p)
	}
	m["properties"], _ = json.Marshal(props)
	out, err := json.Marshal(m)
	if err != nil {
		return schema
	}
	return out
}

// titledEnum turns one property schema with a oneOf or anyOf of consts (or an array whose
// items are such) into an enum of the consts.
func titledEnum(raw json.RawMessage) json.RawMessage {
	var p map[string]json.RawMessage
	if json.Unmarshal(raw, &p) != nil {
		return raw
	}
	if items, ok := p["items"]; ok {
		p["items"] = titledEnum(items)
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		var alts []struct {
			Const json.RawMessage `json:"const"`
		}
		if json.Unmarshal(p[k], &alts) != nil || len(alts) == 0 {
			continue
		}
		var consts []json.RawMessage
		for _, a := range alts {
			if a.Const == nil {
				consts = nil
				break
			}
			consts = append(consts, a.Const)
		}
		if consts != nil {
			delete(p, k)
			p["enum"], _ = json.Marshal(consts)
		}
	}
	out, err := json.Marshal(p)
	if err != nil {
		return raw
	}
	return out
}
