package conform

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/results"
)

// The suite of 2026-07-28 with the Tasks extension (rules E of docs/RULES.md): the same
// runner, evidence, verdicts and cleanup as 2025-11-25's, its own cases (cases_modern*.go).
// No session: every request carries its envelope (client.ModernClient), the first
// identity's requests Target.Header, the second's Options.Other. A task is created by a
// tools/call that declares the extension (E39), when the server decides to make one (E40).

// modern is the state of the modern suite.
type modern struct {
	c, other *client.ModernClient // other: nil without a second identity
	ext      bool                 // server/discover advertises the Tasks extension
	results  int                  // results seen (modern.result_type)
	noType   []string             // the methods of results seen without resultType, each once
	done     *known               // a task that ended on its own (fixture), once made
}

// openModern reaches the target in 2026-07-28 (server/discover), lists its tools and plans
// the era's cases (eraSuite.open). Its error is only that the target could not be reached,
// or that --tool cannot be used.
func (s *suite) openModern(ctx context.Context, res *results.Contract) error {
	m := &s.m
	m.c = s.t.ModernClient()
	if s.other != nil {
		m.other = s.other.ModernClient()
	}
	dctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	rep, _, err := m.c.Send(dctx, client.ModernRequest{Method: mcp.V20260728{}.Method(mcp.OpServerDiscover)})
	if err != nil {
		return s.t.ExplainConnect(err)
	}
	var d struct {
		Capabilities mcp.ModernServerCapabilities `json:"capabilities"`
		Meta         struct {
			ServerInfo mcp.Implementation `json:"io.modelcontextprotocol/serverInfo"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(rep.Result, &d) // modern.discover judges it
	m.ext = d.Capabilities.DeclaresTasks()
	res.Protocol = joinProtocol(res.Protocol, ProtocolModern)
	if res.Server == "" {
		res.Server = strings.TrimSpace(d.Meta.ServerInfo.Name + " " + d.Meta.ServerInfo.Version)
	}
	tools, err := m.c.ListTools(dctx)
	if err != nil {
		return fmt.Errorf("target %s: tools/list: %w", s.t.URL, err)
	}
	s.tools = tools
	s.mock = d.Meta.ServerInfo.Name == "tasksim-mock"
	if s.mock && s.o.Fallback {
		s.o.Tool, s.o.Args = "", nil
	}
	s.plan = s.modernPlan()
	if s.plan.optionErr != "" {
		return &OptionError{Msg: s.plan.optionErr}
	}
	return nil
}

// modernPlan picks the work of the task cases: on tasksim's mock its task-only tool,
// work_task, with arguments for each kind of task; elsewhere --tool (default: the first
// listed tool) with --args (default: its minimal arguments). The era's tools say nothing
// of tasks: the server decides per request (E40).
func (s *suite) modernPlan() plan {
	var tool *mcp.Tool
	switch {
	case s.o.Tool != "":
		if tool = s.tool(s.o.Tool); tool == nil {
			return plan{optionErr: fmt.Sprintf("--tool %q: the server lists no such tool; its tools: %s", s.o.Tool, s.toolNames(false))}
		}
	case s.mock && s.tool("work_task") != nil:
		tool = s.tool("work_task")
	case len(s.tools) > 0:
		tool = &s.tools[0]
	default:
		return plan{why: "the server lists no tool", enable: "a server with a tool that may run as a task"}
	}
	if !s.m.ext {
		return plan{why: "server/discover does not advertise the Tasks extension " + mcp.ExtTasks, enable: "a server that offers the extension (E39)"}
	}
	p := s.planFor(tool)
	if p.input != nil {
		p.input = &work{tool: tool.Name, args: json.RawMessage(fmt.Sprintf(`{"duration_ms":%d,"input_rounds":2}`, mockInput.Milliseconds())), lasts: mockInput}
	}
	return p
}

// mcall sends req as identity ("" the first, "second") and records the exchange.
func (r *run) mcall(identity string, req client.ModernRequest) reply {
	c := r.s.m.c
	if identity != "" {
		c = r.s.m.other
	}
	ctx, cancel := context.WithTimeout(r.ctx, requestTimeout)
	defer cancel()
	rep, status, err := c.Send(ctx, req)
	p := reply{result: rep.Result, rpc: rep.Err, err: err, status: status}
	if err != nil && status == 0 && ctx.Err() != nil && r.ctx.Err() == nil {
		p.err = fmt.Errorf("no reply within %v", requestTimeout)
	}
	r.record(results.Exchange{Method: req.Method, Identity: identity, Request: excerpt(req.Params, 300), HTTPStatus: status, Reply: p.String()})
	r.checkSchema(true, req.Method, p)
	r.s.observeModern(req.Method, p)
	return p
}

// taskReq is a request of a task method for id, declaring the extension as every task
// request must (E65), and form elicitation, as tools/call does (docs/RULES.md#ext-gap-6).
func taskReq(op mcp.Op, id string) client.ModernRequest {
	p, _ := json.Marshal(mcp.TaskIDParams{TaskID: id})
	return client.ModernRequest{Method: mcp.V20260728{}.Method(op), Params: p, Tasks: true, Form: true}
}

// observeModern counts a result and its resultType (E11), and records the status a
// tasks/get shows.
func (s *suite) observeModern(method string, p reply) {
	if p.err != nil || p.rpc != nil || p.result == nil {
		return
	}
	s.mu.Lock()
	s.m.results++
	if !hasMember(p.result, "resultType") && !containsString(s.m.noType, method) {
		s.m.noType = append(s.m.noType, method)
	}
	s.mu.Unlock()
	if (mcp.V20260728{}).Op(method) == mcp.OpTasksGet {
		s.saw(readModernFields(p.result))
	}
}

// hasMember reports whether the JSON object b has member name.
func hasMember(b json.RawMessage, name string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return false
	}
	_, ok := m[name]
	return ok
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// callReq is a tools/call of w; tasks declares the extension.
func callReq(w work, tasks bool) client.ModernRequest {
	p, _ := json.Marshal(mcp.CallToolRequestParams{Name: w.tool, Arguments: w.args, Meta: nil})
	return client.ModernRequest{Method: mcp.V20260728{}.Method(mcp.OpToolsCall), Params: withoutMeta(p), Tasks: tasks, Form: true}
}

// mcreate calls w declaring the extension and returns the task created; a call the
// server answered otherwise skips the case (the server decides, E40), an error fails it.
func (r *run) mcreate(w work) *known {
	p := r.mcall("", callReq(w, true))
	built := r.s.o.Args == nil && !r.s.mock
	if p.code() == mcp.CodeInvalidParams && built {
		r.skip(fmt.Sprintf("the server refused the arguments the suite built for %q from its inputSchema: %s", w.tool, p), fmt.Sprintf("give --tool %s --args JSON", w.tool))
	}
	if p.err != nil || p.rpc != nil {
		r.fatal("E45", "a tools/call of %q declaring %s should be answered with a result; got %s", w.tool, mcp.ExtTasks, p)
	}
	rt := resultType(p.result)
	if rt != string(mcp.ResultTask) {
		r.skip(fmt.Sprintf("the server answered the call of %q with resultType %q, not a task: it decides (E40)", w.tool, rt), "give --tool a tool the server runs as a task")
	}
	f := readModernFields(p.result)
	if f.id == "" {
		r.fatal("E45", "the CreateTaskResult of %q has no taskId at its top level (the task is flat, docs/RULES.md#ext-gap-5): %s", w.tool, excerpt(p.result, 300))
	}
	s := r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.tasks[f.id]
	if k == nil {
		k = &known{id: f.id, create: p.result, work: w, created: time.Now()}
		s.tasks[f.id] = k
		s.order = append(s.order, f.id)
	}
	s.sawLocked(k, f.status)
	return k
}

// resultType returns the resultType of a result; "" when it has none.
func resultType(result json.RawMessage) string {
	var m struct {
		ResultType *string `json:"resultType"`
	}
	if json.Unmarshal(result, &m) != nil || m.ResultType == nil {
		return ""
	}
	return *m.ResultType
}

// mread reads k with tasks/get. A -32602 for a task never read yet and younger than
// settleWindow is read again: modern.get.fields alone judges E46, so that the other cases
// judge their own rules.
func (r *run) mread(k *known) (reply, fields) {
	for {
		p := r.mcall("", taskReq(mcp.OpTasksGet, k.id))
		if p.code() == mcp.CodeInvalidParams && !k.read && time.Since(k.created) < settleWindow {
			if !sleep(r.ctx, 250*time.Millisecond) {
				return p, fields{}
			}
			continue
		}
		if p.err != nil || p.rpc != nil {
			return p, fields{}
		}
		k.read = true
		return p, readModernFields(p.result)
	}
}

// mwait polls k until it is terminal, answering its input requests on the way (E55), for
// at most the budget; it returns the last tasks/get reply.
func (r *run) mwait(k *known) (reply, fields) {
	answered := map[string]bool{}
	return r.mwaitInput(k, func(g reply) { r.answerAll(k, g.result, answered) })
}

// mwaitInput is mwait, with input handling each input_required tasks/get reply.
func (r *run) mwaitInput(k *known, input func(reply)) (reply, fields) {
	deadline := time.Now().Add(r.s.o.Budget)
	for {
		if !time.Now().Before(deadline) {
			r.skip(fmt.Sprintf("task %s had not ended after the budget of %v", short(k.id), r.s.o.Budget), "give --budget more time, or --tool a shorter task")
		}
		p, f := r.mread(k)
		if p.err != nil || p.rpc != nil {
			r.fatal("E65", "tasks/get of task %s, which the suite created and which has not expired, should answer the task; got %s", short(k.id), p)
		}
		if f.status.Terminal() {
			return p, f
		}
		if f.status == mcp.StatusInputRequired {
			input(p)
		}
		if !sleep(r.ctx, k.pollInterval(f)) {
			r.fatal("interrupted", "the suite was interrupted while task %s was %s", short(k.id), f.status)
		}
	}
}

// mdone returns a task that ended on its own (the short work), made once and shared.
func (r *run) mdone() (*known, fields, reply) {
	p := r.needPlan()
	if k := r.s.m.done; k != nil && !k.gone {
		g, f := r.mread(k)
		return k, f, g
	}
	k := r.mcreate(p.short)
	g, f := r.mwait(k)
	r.s.m.done = k
	return k, f, g
}

// inputRequests returns the inputRequests of a tasks/get result, by key; nil when none.
func inputRequests(result json.RawMessage) map[string]mcp.InputRequest {
	var t struct {
		InputRequests map[string]mcp.InputRequest `json:"inputRequests"`
	}
	_ = json.Unmarshal(result, &t)
	return t.InputRequests
}

// answerAll answers every input request of an input_required tasks/get result with one
// tasks/update (E55, E56): a form elicitation accepted with the minimal content its schema
// asks for. A request the suite cannot answer skips the case. It returns the update's
// reply and the keys answered.
func (r *run) answerAll(k *known, result json.RawMessage, answered map[string]bool) (u reply, keys []string, sent bool) {
	reqs := inputRequests(result)
	if len(reqs) == 0 {
		r.fatal("E50", "task %s is input_required, but its tasks/get carries no inputRequests: %s", short(k.id), excerpt(result, 200))
	}
	answers := mcp.InputResponses{}
	for key, q := range reqs {
		if answered[key] {
			continue // answered already, and shown again before the answer took (E58): never twice (E56)
		}
		if (mcp.V20260728{}).Op(q.Method) != mcp.OpElicit {
			r.skip(fmt.Sprintf("task %s asks for %s, which the suite does not answer", short(k.id), q.Method), "give --tool a tool whose input requests are form elicitations")
		}
		var p mcp.ElicitRequestParams
		_ = json.Unmarshal(q.Params, &p)
		content, err := client.MinimalArgs(formSchema(p.RequestedSchema))
		if err != nil {
			r.skip(fmt.Sprintf("task %s asked for input the suite could not give (%v)", short(k.id), err), "give --tool a tool whose requests for input are plain forms")
		}
		c, _ := json.Marshal(content)
		answers[key], _ = json.Marshal(mcp.ElicitResult{Action: mcp.ElicitAccept, Content: c})
		keys = append(keys, key)
	}
	if len(answers) == 0 {
		return reply{}, nil, false
	}
	params, _ := json.Marshal(mcp.UpdateTaskParams{TaskID: k.id, InputResponses: answers})
	req := taskReq(mcp.OpTasksUpdate, k.id)
	req.Params = params
	for _, key := range keys {
		answered[key] = true
	}
	return r.mcall("", req), keys, true
}

// cleanupModern brings the modern tasks the suite created and did not see end to an end:
// each is read once more, cancelled when still running, and read again (a cancel is only
// acknowledged, E60).
func (s *suite) cleanupModern(ctx context.Context) {
	r := &run{s: s, ctx: context.WithoutCancel(ctx)}
	for _, id := range s.order {
		k := s.tasks[id]
		if k.sess != nil || k.final != 0 || k.gone {
			continue // a legacy task, or one that ended
		}
		for _, op := range []mcp.Op{mcp.OpTasksGet, mcp.OpTasksCancel, mcp.OpTasksGet} {
			p := r.mcall("", taskReq(op, id))
			if p.code() == mcp.CodeInvalidParams {
				k.gone = true
			}
			if k.gone || k.final != 0 {
				break
			}
		}
	}
}

// needExt skips the case when the server does not advertise the Tasks extension.
func (r *run) needExt() {
	if !r.s.m.ext {
		r.skip("server/discover does not advertise the Tasks extension "+mcp.ExtTasks, "a server that offers the extension (E39)")
	}
}
