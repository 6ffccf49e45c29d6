package conform

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/results"
)

func caseDiscover(r *run) {
	p := r.mcall("", client.ModernRequest{Method: mcp.V20260728{}.Method(mcp.OpServerDiscover)})
	if p.err != nil || p.rpc != nil {
		r.fatal("E8", "server/discover should answer a DiscoverResult; got %s", p)
	}
	switch rt := resultType(p.result); rt {
	case string(mcp.ResultComplete):
	case "":
		r.fail("E11", "the server/discover result carries no resultType")
	default:
		r.fail("E11", "the server/discover result carries resultType %q, not \"complete\"", rt)
	}
	var d struct {
		SupportedVersions []string                   `json:"supportedVersions"`
		Capabilities      map[string]json.RawMessage `json:"capabilities"`
	}
	if err := json.Unmarshal(p.result, &d); err != nil || d.Capabilities == nil {
		r.fatal("E8", "server/discover should answer supportedVersions and a capabilities object; got %s", excerpt(p.result, 300))
	}
	if !slices.Contains(d.SupportedVersions, ProtocolModern) {
		r.fail("E8", "server/discover lists supportedVersions %v, without %s, which it answers", d.SupportedVersions, ProtocolModern)
	}
	var ext map[string]json.RawMessage
	_ = json.Unmarshal(d.Capabilities["extensions"], &ext)
	settings, ok := ext[mcp.ExtTasks]
	switch {
	case !ok:
		r.pass("versions %v; the Tasks extension is not advertised: the task cases are skipped", d.SupportedVersions)
	case len(settings) == 0 || settings[0] != '{':
		r.fail("E39", "capabilities.extensions[%q] is %s: an extension's settings are an object, {} for none", mcp.ExtTasks, excerpt(settings, 60))
	default:
		r.pass("versions %v; the Tasks extension advertised", d.SupportedVersions)
	}
}

// refusedWith judges a reply that rule says must be the JSON-RPC error code with HTTP
// status; what says what was sent.
func (r *run) refusedWith(p reply, rule string, code, status int, what string) bool {
	switch {
	case p.rpc != nil && p.rpc.Code == code && p.status == status:
		return true
	case p.rpc != nil && p.rpc.Code == code:
		r.fail("E27", "%s got %d as it should, but with HTTP %d instead of %d", what, code, p.status, status)
	case p.rpc != nil:
		r.fail(rule, "%s should get %d (HTTP %d); got %d (HTTP %d): %s", what, code, status, p.rpc.Code, p.status, oneLine(p.rpc.Message, 120))
	case p.err != nil:
		r.fail(rule, "%s should get JSON-RPC error %d (HTTP %d); got %s", what, code, status, p)
	default:
		r.fail(rule, "%s should get JSON-RPC error %d (HTTP %d); it was served: %s", what, code, status, excerpt(p.result, 160))
	}
	return false
}

// relabel names the last exchange recorded by what was special about it.
func (r *run) relabel(method string) { r.ex[len(r.ex)-1].Method = method }

func caseEnvelopeMeta(r *run) {
	meta := json.RawMessage(`{"` + mcp.MetaClientCapabilities + `":{}}`)
	p := r.mcall("", client.ModernRequest{Method: mcp.V20260728{}.Method(mcp.OpToolsList), Meta: meta})
	r.relabel("tools/list, _meta without protocolVersion")
	if r.refusedWith(p, "E3", mcp.CodeInvalidParams, http.StatusBadRequest, "a request whose _meta lacks "+mcp.MetaProtocolVersion) {
		r.pass("-32602, HTTP 400")
	}
}

// futureModern is a protocol version of the modern shape that no server speaks.
const futureModern = "2099-01-01"

func caseEnvelopeVersion(r *run) {
	p := r.mcall("", client.ModernRequest{Method: mcp.V20260728{}.Method(mcp.OpToolsList), Version: futureModern})
	r.relabel("tools/list, protocolVersion " + futureModern)
	if !r.refusedWith(p, "E9", mcp.CodeUnsupportedProtocolVersion, http.StatusBadRequest, "a request of protocolVersion "+futureModern) {
		return
	}
	var data mcp.UnsupportedProtocolVersionData
	if json.Unmarshal(p.rpc.Data, &data) != nil || data.Supported == nil {
		r.fatal("E9", "-32022 should carry data.supported and data.requested; data is %s", orAbsent(p.rpc.Data))
	}
	if !slices.Contains(data.Supported, ProtocolModern) {
		r.fail("E9", "-32022 lists data.supported %v, without %s, which the server answers", data.Supported, ProtocolModern)
	}
	if data.Requested != futureModern {
		r.fail("E9", "-32022 says data.requested %q; the request asked for %q", data.Requested, futureModern)
	}
	r.pass("-32022, HTTP 400, supported %v", data.Supported)
}

func caseEnvelopeHeaders(r *run) {
	ok := 0
	for _, h := range []struct{ value, label string }{
		{"", "tools/list without Mcp-Method"},
		{mcp.V20260728{}.Method(mcp.OpToolsCall), "tools/list with Mcp-Method: tools/call"},
	} {
		p := r.mcall("", client.ModernRequest{Method: mcp.V20260728{}.Method(mcp.OpToolsList), Header: map[string]string{mcp.HeaderMethod: h.value}})
		r.relabel(h.label)
		if r.refusedWith(p, "E26", mcp.CodeHeaderMismatch, http.StatusBadRequest, "a "+h.label) {
			ok++
		}
	}
	if ok == 2 {
		r.pass("-32020, HTTP 400, for a missing and for a contradicting Mcp-Method")
	}
}

// noSuchMethod is a method no server has.
const noSuchMethod = "tasksim/no-such-method"

func caseUnknownMethod(r *run) {
	p := r.mcall("", client.ModernRequest{Method: noSuchMethod})
	if r.refusedWith(p, "E27", mcp.CodeMethodNotFound, http.StatusNotFound, "method "+noSuchMethod) {
		r.pass("-32601, HTTP 404")
	}
}

func caseRemoved(r *run) {
	gone := 0
	for _, op := range []mcp.Op{mcp.OpTasksResult, mcp.OpTasksList, mcp.OpPing} {
		m := mcp.V20251125{}.Method(op) // V20260728 has no method for them
		req := client.ModernRequest{Method: m, Tasks: true}
		if op == mcp.OpTasksResult { // as taskReq builds it
			req.Params, _ = json.Marshal(mcp.TaskIDParams{TaskID: unknownID})
			req.Form = true
		}
		if r.refusedWith(r.mcall("", req), "E37", mcp.CodeMethodNotFound, http.StatusNotFound, m+" (gone from 2026-07-28)") {
			gone++
		}
	}
	if gone == 3 {
		r.pass("tasks/result, tasks/list and ping: -32601, HTTP 404")
	}
	p := r.s.plan
	if p.why != "" || p.tool == "" {
		r.pass("(params.task not tried: %s)", orText(p.why, "no tool"))
		return
	}
	w := p.short
	if r.s.mock {
		w.tool = "work" // runs as a task only when the request declares the extension
	}
	var call map[string]json.RawMessage
	_ = json.Unmarshal(callReq(w, false).Params, &call)
	call["task"] = json.RawMessage(`{"ttl":60000}`)
	req := callReq(w, false)
	req.Params, _ = json.Marshal(call)
	c := r.mcall("", req)
	r.relabel("tools/call with a 2025-11-25 params.task, the extension not declared")
	rt := resultType(c.result)
	switch {
	case c.err == nil && c.rpc == nil && rt == string(mcp.ResultTask):
		r.fail("E37", "a tools/call carrying params.task but not declaring %s was answered with a task: params.task must be ignored (and E39)", mcp.ExtTasks)
	case c.code() == mcp.CodeMissingRequiredClientCapability && !r.s.mock:
		r.pass("params.task ignored: %q can only run as a task, -32021", w.tool)
	case c.err != nil || c.rpc != nil:
		r.judgeTaskRefusal(w, c)
	case isToolError(c.result):
		r.pass("params.task ignored: the call ran synchronously, and the tool reported its own error (isError), which is no refusal of params.task")
	default:
		r.pass("params.task ignored: the call ran synchronously")
	}
}

// judgeTaskRefusal judges a tools/call of w carrying params.task that got the error c: the
// same call without params.task tells a refusal of the parameter (E37) from the tool's own
// failure, or its arguments refused, which say nothing of params.task.
func (r *run) judgeTaskRefusal(w work, c reply) {
	ctl := r.mcall("", callReq(w, false))
	r.relabel("tools/call of " + w.tool + " without params.task (the control)")
	switch {
	case ctl.err == nil && ctl.rpc == nil:
		r.fail("E37", "a tools/call carrying params.task should run as if it had none; it was refused (%s), and the same call without params.task was served", c)
	case ctl.code() == c.code():
		r.pass("(params.task not judged: the call of %q fails without params.task too, %s: the tool's own error or its arguments, not a refusal of params.task)", w.tool, ctl)
	default:
		r.fail("E37", "a tools/call carrying params.task should run as if it had none; it got %s, and the same call without params.task %s", c, ctl)
	}
}

// isToolError reports whether result is a CallToolResult with isError: true (the tool's
// own failure, E49).
func isToolError(result json.RawMessage) bool {
	var t mcp.CallToolResult
	return json.Unmarshal(result, &t) == nil && t.IsError
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// maxCapabilityTools bounds the tools modern.capability calls.
const maxCapabilityTools = 32

// caseCapability calls every listed tool without declaring the extension: a tool the server
// can serve only as a task gets -32021 naming the extension (E44, E5), and no call gets a
// task (E39). The era's tools/list says nothing of tasks (E40), so every tool is tried, not
// only --tool. On tasksim's mock the tools are known: work_task must get -32021, work a
// plain result.
func caseCapability(r *run) {
	r.needExt()
	r.needPlan()
	tools := r.s.tools
	if len(tools) > maxCapabilityTools {
		r.pass("(only the first %d of %d tools tried)", maxCapabilityTools, len(tools))
		tools = tools[:maxCapabilityTools]
	}
	var refused, plain, other []string
	for i := range tools {
		t := &tools[i]
		args, err := r.s.capabilityArgs(t)
		if err != nil {
			other = append(other, fmt.Sprintf("%q not tried (%v)", t.Name, err))
			continue
		}
		c := r.mcall("", callReq(work{tool: t.Name, args: args}, false))
		r.relabel("tools/call of " + t.Name + " without the extension declared")
		switch {
		case c.code() == mcp.CodeMissingRequiredClientCapability:
			var data mcp.MissingRequiredClientCapabilityData
			_ = json.Unmarshal(c.rpc.Data, &data)
			if !data.RequiredCapabilities.DeclaresTasks() {
				r.fail("E44", "-32021 for %q should name %s in data.requiredCapabilities.extensions; data is %s", t.Name, mcp.ExtTasks, orAbsent(c.rpc.Data))
			}
			if c.status != http.StatusBadRequest {
				r.fail("E5", "-32021 for %q goes with HTTP 400; got HTTP %d", t.Name, c.status)
			}
			if r.s.mock && t.Name != "work_task" && t.Name != "work" {
				other = append(other, fmt.Sprintf("%q -32021", t.Name))
				continue
			}
			if r.s.mock && t.Name == "work" {
				r.fail("E39", "%q without the extension should run synchronously; got %s", t.Name, c)
				continue
			}
			refused = append(refused, t.Name)
		case c.err == nil && c.rpc == nil && resultType(c.result) == string(mcp.ResultTask):
			r.fail("E44", "%q, called without declaring %s, was answered with a task: a request that can be served only as a task gets -32021 (E44), and no task goes to an undeclaring request (E39)", t.Name, mcp.ExtTasks)
		case r.s.mock && t.Name == "work_task":
			r.fail("E44", "%q can run only as a task: called without the extension it should get -32021; got %s", t.Name, c)
		case c.err == nil && c.rpc == nil:
			plain = append(plain, t.Name)
		case r.s.mock && t.Name == "work":
			r.fail("E39", "%q without the extension should run synchronously; got %s", t.Name, c)
		default: // the tool's own error, or its arguments refused: no evidence either way
			other = append(other, fmt.Sprintf("%q %s", t.Name, oneLine(c.String(), 80)))
		}
	}
	if len(refused)+len(plain) == 0 && len(r.failed) == 0 {
		r.skip("no tool could be judged without the extension: "+strings.Join(other, "; "), "give --tool-args NAME=JSON for the tools whose minimal arguments are refused")
	}
	var saw []string
	if len(refused) > 0 {
		saw = append(saw, "-32021 naming the extension: "+strings.Join(refused, ", "))
	}
	if len(plain) > 0 {
		saw = append(saw, "a plain result: "+strings.Join(plain, ", "))
	}
	if len(other) > 0 {
		saw = append(saw, "not judged: "+strings.Join(other, "; "))
	}
	r.pass("without the extension, %s", strings.Join(saw, "; "))
}

// capabilityArgs are the arguments modern.capability calls t with: the lifecycle work's for
// the lifecycle tool, else --tool-args or t's minimal ones.
func (s *suite) capabilityArgs(t *mcp.Tool) (json.RawMessage, error) {
	if t.Name == s.plan.tool && s.plan.short.args != nil {
		return s.plan.short.args, nil
	}
	return s.minimalArgs(t)
}

func caseResultType(r *run) {
	r.s.mu.Lock()
	n, missing := r.s.m.results, append([]string{}, r.s.m.noType...)
	r.s.mu.Unlock()
	if n == 0 {
		r.skip("the suite received no result", "")
	}
	if len(missing) > 0 {
		r.fail("E11", "results of %s carried no resultType", strings.Join(missing, ", "))
		return
	}
	r.pass("%s, each with its resultType", plural(n, "result"))
}

func caseModernTransitions(r *run) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	n, moves := 0, 0
	for _, id := range r.s.order {
		k := r.s.tasks[id]
		if k.sess != nil {
			continue // a task of the legacy suite (transitions judges it)
		}
		n++
		seq := k.statuses
		moves += max(len(seq)-1, 0)
		for i := 1; i < len(seq); i++ {
			if seq[i-1].Terminal() {
				r.fail("E48", "task %s went %s → %s (%s): a terminal status is final", short(id), seq[i-1], seq[i], statusNames(seq))
				break
			}
		}
	}
	if n == 0 {
		r.skip("the suite created no task", "")
	}
	seen := fmt.Sprintf("%s, %s", plural(n, "task"), plural(moves, "change of status", "changes of status"))
	r.ex = append(r.ex, results.Exchange{Method: "(statuses observed)", Reply: seen})
	r.pass("%s; no terminal status changed", seen)
}
