package conform

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tasksim/tasksim/internal/mcp"
)

// toolsOf returns the listed tools with taskSupport ts, and their arguments; tools whose
// arguments cannot be made are named in unusable.
func (r *run) toolsOf(ts mcp.TaskSupport) (use []work, unusable []string) {
	s := r.s
	for i := range s.tools {
		t := &s.tools[i]
		if t.TaskSupport() != ts {
			continue
		}
		args, err := s.minimalArgs(t)
		if err != nil {
			unusable = append(unusable, t.Name)
			continue
		}
		use = append(use, work{tool: t.Name, args: args})
	}
	if len(use) == 0 && len(unusable) == 0 {
		r.skip(fmt.Sprintf("the server lists no tool whose taskSupport is %s", ts), "")
	}
	if len(use) == 0 {
		r.skip(fmt.Sprintf("no arguments could be built for the %s tools %s from their inputSchema", ts, joinQuoted(unusable)),
			"give --tool-args NAME=JSON for them")
	}
	if len(unusable) > 0 {
		r.pass("not called (no arguments could be built; give --tool-args): %s", joinQuoted(unusable))
	}
	return use, unusable
}

// needToolTasks skips the case when the server declares no tasks for tools/call.
func (r *run) needToolTasks() {
	if !r.s.init.Capabilities.Tasks.ToolCallTasks() {
		r.skip("the server does not declare capabilities.tasks.requests.tools.call: taskSupport has no meaning there (see tasks.ignored)", "")
	}
}

// ranInstead says what a server did with a call it should have refused: made a task,
// answered a result with isError (a refusal in the wrong form), or ran the call.
func (r *run) ranInstead(p reply, w work) string {
	if k, _ := r.s.adopt(p.result, r.s.sess, w); k != nil {
		return fmt.Sprintf("the server created task %s", short(k.id))
	}
	var res mcp.CallToolResult
	if json.Unmarshal(p.result, &res) == nil && res.IsError {
		text := ""
		if len(res.Content) > 0 {
			text = ": " + oneLine(res.Content[0].Text, 120)
		}
		return "it answered a CallToolResult with isError: true instead" + text
	}
	return "the server ran the call and answered its result"
}

func caseForbidden(r *run) {
	r.needToolTasks()
	tools, _ := r.toolsOf(mcp.TaskForbidden)
	for _, w := range tools {
		p := r.call(r.s.sess, "", mcp.OpToolsCall, callParams(w, &mcp.TaskMetadata{}), nil, r.s.o.Budget)
		r.refused(p, w, "R8", "(taskSupport forbidden) called with a task parameter", false)
	}
}

func caseRequired(r *run) {
	r.needToolTasks()
	tools, _ := r.toolsOf(mcp.TaskRequired)
	for _, w := range tools {
		p := r.call(r.s.sess, "", mcp.OpToolsCall, callParams(w, nil), nil, r.s.o.Budget)
		r.refused(p, w, "R10", "(taskSupport required) called without a task parameter", true)
	}
}

// refused judges the reply to a call of w that rule says must be refused with -32601;
// invalidRequest accepts -32600 too (docs/RULES.md#gap-2). how says what the call was.
func (r *run) refused(p reply, w work, rule, how string, invalidRequest bool) {
	switch {
	case p.code() == mcp.CodeMethodNotFound:
		r.pass("%q: -32601", w.tool)
	case invalidRequest && p.code() == mcp.CodeInvalidRequest:
		r.pass("%q: -32600, which the error section allows (docs/RULES.md#gap-2)", w.tool)
	case p.err != nil:
		r.fail(rule, "tool %q %s should get JSON-RPC error -32601; got %s", w.tool, how, p)
	case p.rpc != nil:
		r.fail(rule, "tool %q %s should get -32601; got %d (%s)", w.tool, how, p.rpc.Code, oneLine(p.rpc.Message, 120))
	default:
		r.fail(rule, "tool %q %s should get JSON-RPC error -32601; %s", w.tool, how, r.ranInstead(p, w))
	}
}

func caseOptional(r *run) {
	r.needToolTasks()
	tools, _ := r.toolsOf(mcp.TaskOptional)
	for _, w := range tools {
		p := r.call(r.s.sess, "", mcp.OpToolsCall, callParams(w, &mcp.TaskMetadata{}), nil, 0)
		k, why := (*known)(nil), ""
		if p.err == nil && p.rpc == nil {
			k, why = r.s.adopt(p.result, r.s.sess, w)
		}
		if k == nil {
			if why == "" {
				why = "got " + p.String()
			} else {
				why += ": " + excerpt(p.result, 200)
			}
			r.fail("R11", "tool %q (taskSupport optional) called with a task parameter should be answered with a CreateTaskResult; %s", w.tool, why)
		}
		p = r.call(r.s.sess, "", mcp.OpToolsCall, callParams(w, nil), nil, r.s.o.Budget)
		switch {
		case p.err != nil || p.rpc != nil:
			r.fail("R11", "tool %q (taskSupport optional) called without a task parameter should run as a plain call; got %s", w.tool, p)
		default:
			if k2, _ := r.s.adopt(p.result, r.s.sess, w); k2 != nil {
				r.fail("R11", "tool %q (taskSupport optional) called without a task parameter should run as a plain call; the server created task %s unasked", w.tool, short(k2.id))
			} else if k != nil {
				r.pass("%q: a task, and a plain result", w.tool)
			}
		}
	}
}

// joinQuoted lists names quoted.
func joinQuoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
