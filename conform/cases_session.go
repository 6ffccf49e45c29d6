package conform

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/results"
)

// futureVersion is a protocol version no server speaks: initialize asking for it must be
// answered with one the server does speak (H1).
const futureVersion = "2099-01-01"

var versionShape = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

func caseVersion(r *run) {
	s := r.s
	r.pass("initialize with %s answered %s", mcp.Version20251125, s.init.ProtocolVersion)
	if s.init.ProtocolVersion != mcp.Version20251125 {
		r.pass("(the server offers an older version; the tasks cases follow it)")
	}
	params := mcp.InitializeParams{ProtocolVersion: futureVersion, Capabilities: client.ClientCapabilities(), ClientInfo: s.t.ClientInfo}
	body, _ := json.Marshal(params)
	ctx, cancel := context.WithTimeout(r.ctx, requestTimeout)
	defer cancel()
	rep, hdr, err := s.t.Attach("", "").CallHeader(ctx, mcp.V20251125{}.Method(mcp.OpInitialize), body, nil)
	p := reply{result: rep.Result, rpc: rep.Err, err: err}
	r.record(results.Exchange{Method: "initialize (a future version)", Request: excerpt(body, 300), Reply: p.String()})
	if id := hdr.Get("Mcp-Session-Id"); id != "" {
		defer s.t.Attach(id, "").Close(context.WithoutCancel(r.ctx))
	}
	if p.err != nil || p.rpc != nil {
		r.fatal("H1", "initialize asking for %s should be answered with a version the server speaks; got %s", futureVersion, p)
	}
	var res mcp.InitializeResult
	_ = json.Unmarshal(p.result, &res)
	switch {
	case res.ProtocolVersion == futureVersion:
		r.fail("H1", "initialize asking for %s was answered %s: the server echoed a version it cannot speak instead of offering one it does", futureVersion, futureVersion)
	case !versionShape.MatchString(res.ProtocolVersion):
		r.fail("H1", "initialize asking for %s should be answered with a version the server speaks; got protocolVersion %q", futureVersion, res.ProtocolVersion)
	default:
		r.pass("asking for %s it offered %s", futureVersion, res.ProtocolVersion)
	}
}

func caseCapabilities(r *run) {
	s := r.s
	caps := s.tasksCaps()
	r.record(results.Exchange{Method: mcp.OpInitialize.Name(), Reply: "result " + excerpt(s.raw, 600)})
	if len(caps) == 0 {
		for _, t := range s.tools {
			if ts := t.TaskSupport(); ts != mcp.TaskForbidden {
				r.fail("R1", "tool %q has taskSupport %s, but the server declares no capabilities.tasks, so no client may ask it for a task (R6)", t.Name, ts)
			}
		}
		r.pass("no capabilities.tasks: the server offers no tasks, and the task cases are skipped (tasks.ignored checks R4)")
		return
	}
	for _, bad := range nonObjectLeaves(caps) {
		r.fail("R1", "%s is %s: capabilities.tasks and every leaf of it is an object, {} when present (docs/RULES.md#capabilities)", strings.TrimSuffix("capabilities.tasks."+bad[0], "."), bad[1])
	}
	tasksOn := s.init.Capabilities.Tasks.ToolCallTasks()
	counts := map[mcp.TaskSupport]int{}
	for _, t := range s.tools {
		ts := t.TaskSupport()
		switch ts {
		case mcp.TaskForbidden, mcp.TaskOptional, mcp.TaskRequired:
			counts[ts]++
		default:
			r.fail("R1", "tool %q has execution.taskSupport %q; the values are forbidden, optional and required", t.Name, ts)
		}
		if ts == mcp.TaskRequired && !tasksOn {
			r.fail("R1", "tool %q requires tasks, but capabilities.tasks declares no requests.tools.call: no client may call it (R6, R9)", t.Name)
		}
	}
	r.pass("tasks declared (list %v, cancel %v, tools.call %v); tools: %d forbidden, %d optional, %d required",
		s.listDeclared(), s.cancelDeclared(), tasksOn,
		counts[mcp.TaskForbidden], counts[mcp.TaskOptional], counts[mcp.TaskRequired])
}

// nonObjectLeaves returns [path, value] for every capability leaf of capabilities.tasks
// that is not an object: list, cancel, requests and each of its request types and their
// methods. What a leaf object holds is the server's (the schema allows more members).
func nonObjectLeaves(caps json.RawMessage) [][2]string {
	var out [][2]string
	obj := func(raw json.RawMessage, path string) map[string]json.RawMessage {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil || m == nil {
			out = append(out, [2]string{path, excerpt(raw, 40)})
			return nil
		}
		return m
	}
	top := obj(caps, "")
	for _, k := range []string{"list", "cancel"} {
		if v, ok := top[k]; ok {
			obj(v, k)
		}
	}
	if v, ok := top["requests"]; ok {
		for kind, methods := range obj(v, "requests") {
			for m, leaf := range obj(methods, "requests."+kind) {
				obj(leaf, "requests."+kind+"."+m)
			}
		}
	}
	slices.SortFunc(out, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	return out
}

func caseSessionRequired(r *run) {
	s := r.s
	if s.sess.ID() == "" {
		r.skip("the server issued no Mcp-Session-Id: it keeps no sessions, so there is no session rule to check", "")
	}
	p := r.call(s.t.Attach("", s.sess.Version()), "", mcp.OpToolsList, nil, nil, 0)
	r.ex[len(r.ex)-1].Method = "tools/list without Mcp-Session-Id"
	switch {
	case p.status == http.StatusBadRequest:
		r.pass("HTTP 400: the server requires its session id")
	case p.status == http.StatusOK && p.err == nil && p.rpc == nil:
		r.pass("served without a session id: the server issues one but does not require it, which H2 allows")
	default:
		r.fail("H2", "a server that requires its session id answers a request without it with HTTP 400 (one that does not, serves it); got %s", describeStatus(p))
	}
}

func caseSessionDeleted(r *run) {
	s := r.s
	if s.sess.ID() == "" {
		r.skip("the server issued no Mcp-Session-Id: there is no session to end", "")
	}
	ctx, cancel := context.WithTimeout(r.ctx, requestTimeout)
	defer cancel()
	sess, _, _, err := openSession(ctx, s.t)
	if err != nil {
		r.fatal("H1", "a second session could not be opened: %v", err)
	}
	status, derr := deleteStatus(ctx, s.t, sess)
	r.record(results.Exchange{Method: "DELETE (end a new session)", HTTPStatus: status, Reply: errText(derr)})
	if derr != nil || status/100 != 2 {
		defer s.close(r.ctx, sess) // not ended: end it as a client would
	}
	switch {
	case derr != nil:
		r.fatal("H9", "DELETE of the session got no HTTP reply: %v", derr)
	case status == http.StatusMethodNotAllowed:
		r.skip("the server does not let clients end sessions (DELETE: HTTP 405, which H9 allows)", "")
	case status/100 != 2:
		r.fatal("H9", "DELETE of a live session should be accepted (2xx) or refused with 405; got HTTP %d", status)
	}
	p := r.call(sess, "", mcp.OpToolsList, nil, nil, 0)
	r.ex[len(r.ex)-1].Method = "tools/list on the ended session"
	if p.status != http.StatusNotFound {
		r.fail("H8", "a request carrying a session id the server ended gets HTTP 404, so that the client knows to initialize again; got %s", describeStatus(p))
		return
	}
	r.pass("DELETE HTTP %d, then HTTP 404", status)
}

// deleteStatus ends sess with DELETE and returns the HTTP status.
func deleteStatus(ctx context.Context, t *client.Target, sess *client.Session) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, t.URL, nil)
	if err != nil {
		return 0, err
	}
	for k, v := range t.Header {
		req.Header[k] = v
	}
	req.Header.Set("Mcp-Session-Id", sess.ID())
	req.Header.Set("Mcp-Protocol-Version", sess.Version())
	resp, err := t.Client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// describeStatus says what came back in HTTP terms.
func describeStatus(p reply) string {
	switch {
	case p.status == 0 && p.err != nil:
		return "no HTTP reply (" + p.err.Error() + ")"
	case p.status == http.StatusOK:
		if p.rpc != nil {
			return "HTTP 200 with " + p.String()
		}
		return "HTTP 200 with a result"
	}
	return p.String()
}

func caseIgnored(r *run) {
	s := r.s
	if s.init.Capabilities.Tasks.ToolCallTasks() {
		r.skip("the server declares tasks for tools/call: a task parameter on a tool that forbids tasks is judged by tool.forbidden (R8)", "")
	}
	var tool *mcp.Tool // --tool, else the first listed
	if s.o.Tool != "" {
		tool = s.tool(s.o.Tool)
	} else if len(s.tools) > 0 {
		tool = &s.tools[0]
	}
	if tool == nil {
		r.skip("the server lists no tool", "")
	}
	args, err := s.minimalArgs(tool)
	if err != nil {
		r.skip(err.Error(), fmt.Sprintf("give --tool-args %s=JSON", tool.Name))
	}
	p := r.call(s.sess, "", mcp.OpToolsCall, callParams(work{tool: tool.Name, args: args}, &mcp.TaskMetadata{}), nil, s.o.Budget)
	if p.err != nil {
		r.fatal("R4", "a tools/call with a task parameter should run as a plain call on a server without tasks; got %s", p)
	}
	if p.rpc != nil {
		r.fatal("R4", "a server that declares no tasks for tools/call ignores a task parameter and runs the call; it refused: %s", p)
	}
	if k, _ := s.adopt(p.result, s.sess, work{tool: tool.Name}); k != nil {
		r.fatal("R4", "a server that declares no tasks for tools/call created task %s anyway", short(k.id))
	}
	r.pass("tool %q ran as a plain call", tool.Name)
}
