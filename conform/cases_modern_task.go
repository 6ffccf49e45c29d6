package conform

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
)

// checkModernFields fails the case on every member of a task of the extension that is
// missing or malformed (the schema's Task); rule is the rule of the reply that carries it,
// what names it.
func (r *run) checkModernFields(f fields, rule, what string) {
	if f.id == "" {
		r.fail(rule, "%s: the task has no taskId (a non-empty string)", what)
	}
	if !f.status.Valid() {
		r.fail(rule, "%s: status %s is none of working, input_required, completed, failed, cancelled", what, orAbsent(f.statusRaw))
	}
	for _, ts := range []struct {
		name string
		raw  json.RawMessage
	}{{"createdAt", f.created}, {"lastUpdatedAt", f.updated}} {
		var v string
		if json.Unmarshal(ts.raw, &v) != nil {
			r.fail(rule, "%s: %s should be an ISO 8601 timestamp; it is %s", what, ts.name, orAbsent(ts.raw))
		} else if _, err := mcp.ParseTime(v); err != nil {
			r.fail(rule, "%s: %s %q is not an ISO 8601 timestamp", what, ts.name, v)
		}
	}
	var ms mcp.Ms
	switch {
	case len(f.ttl) == 0:
		r.fail(rule, "%s: ttlMs is absent; it is always sent, null for unlimited (docs/RULES.md#ext-gap-10)", what)
	case string(f.ttl) != "null" && (json.Unmarshal(f.ttl, &ms) != nil || ms < 0 || strings.ContainsAny(string(f.ttl), ".eE")):
		r.fail(rule, "%s: ttlMs should be an integer of milliseconds or null; it is %s", what, excerpt(f.ttl, 40))
	}
	switch {
	case len(f.poll) == 0:
		r.fail("E52", "%s: no pollIntervalMs: a client has nothing to space its polls by", what)
	case json.Unmarshal(f.poll, &ms) != nil || ms <= 0 || strings.ContainsAny(string(f.poll), ".eE"):
		r.fail("E52", "%s: pollIntervalMs should be a positive integer of milliseconds; it is %s", what, excerpt(f.poll, 40))
	}
}

func caseModernCreateFields(r *run) {
	p := r.needPlan()
	k := r.mcreate(p.long)
	if hasMember(k.create, "task") {
		r.fail("E45", "the CreateTaskResult nests a \"task\" member: the extension's task is flat (docs/RULES.md#ext-gap-5)")
	}
	f := readModernFields(k.create)
	r.checkModernFields(f, "E45", "CreateTaskResult")
	r.pass("task %s created %s, resultType task", short(k.id), f.status)
}

func caseModernIDs(r *run) {
	p := r.needPlan()
	var ids []string
	for len(ids) < idSample {
		ids = ids[:0]
		for _, id := range r.s.order {
			if r.s.tasks[id].sess == nil {
				ids = append(ids, id)
			}
		}
		if len(ids) < idSample {
			r.mcreate(p.short)
		}
	}
	minDiff := r.judgeIDs(ids, "E66")
	if minDiff >= 0 && minDiff < minDiffering {
		r.fatal("E66", "task ids are guessable: two ids created one after the other differ in only %d character(s) (%s); an id may serve as a bearer handle", minDiff, strings.Join(shortAll(ids), ", "))
	}
	r.pass("%d ids, all distinct; consecutive ones differ in at least %d characters", len(ids), minDiff)
}

func caseModernGetFields(r *run) {
	p := r.needPlan()
	k := r.mcreate(p.long)
	g := r.mcall("", taskReq(mcp.OpTasksGet, k.id)) // at once: no settling (E46)
	if g.err != nil || g.rpc != nil {
		r.fatal("E46", "tasks/get of task %s right after its CreateTaskResult should answer it; got %s", short(k.id), g)
	}
	k.read = true
	switch rt := resultType(g.result); rt {
	case string(mcp.ResultComplete):
	case string(mcp.ResultTask):
		r.pass("(resultType \"task\" on tasks/get, as the spec's examples have it: accepted, docs/RULES.md#ext-gap-1)")
	default:
		r.fail("E51", "tasks/get should answer resultType \"complete\"; it answered %s", orAbsent(json.RawMessage(quoteOrEmpty(rt))))
	}
	f := readModernFields(g.result)
	r.checkModernFields(f, "E50", mcp.OpTasksGet.Name())
	if f.id != k.id {
		r.fail("E50", "tasks/get of %s answered task %q", short(k.id), short(f.id))
	}
	if _, _, err := mcp.ParseGetTaskResult(g.result); err != nil && f.status.Valid() {
		r.fail("E50", "tasks/get of %s (%s): %v", short(k.id), f.status, err)
	}
	r.pass("task %s: %s", short(k.id), f.status)
}

func quoteOrEmpty(s string) string {
	if s == "" {
		return ""
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// payload is the inlined result or error of a terminal tasks/get.
type payload struct {
	Result json.RawMessage `json:"result"`
	Error  *mcp.Error      `json:"error"`
}

func payloadOf(result json.RawMessage) payload {
	var p payload
	_ = json.Unmarshal(result, &p)
	return p
}

func caseModernCompleted(r *run) {
	k, f, g := r.mdone()
	var unchecked string // why the completed task's result was not checked; "" when it was
	switch f.status {
	case mcp.StatusCompleted:
		pl := payloadOf(g.result)
		if !hasContent(pl.Result) {
			r.fail("E50", "completed task %s should inline its result, the CallToolResult; got result %s", short(k.id), orAbsent(pl.Result))
		} else {
			r.pass("task %s completed, its result inlined", short(k.id))
		}
	default:
		unchecked = fmt.Sprintf("task %s ended %s, not completed: no inlined result to check", short(k.id), f.status)
	}
	p := r.needPlan()
	if p.failed == nil {
		if unchecked != "" {
			r.skip(unchecked+"; and no call is known to end in a tool error on this server", "give --tool a tool that completes, or "+failArgsHint)
		}
		r.pass("(isError not tried: %s)", failArgsHint)
		return
	}
	if unchecked != "" {
		r.pass("(%s)", unchecked)
	}
	k = r.mcreate(*p.failed)
	g, f = r.mwait(k)
	pl := payloadOf(g.result)
	var res mcp.CallToolResult
	_ = json.Unmarshal(pl.Result, &res)
	switch {
	case f.status != mcp.StatusCompleted:
		r.fail("E49", "task %s, whose tool returned a result with isError: true, should end completed (failed is only for a JSON-RPC error); it ended %s", short(k.id), f.status)
	case !res.IsError:
		r.fail("E50", "task %s should inline the tool's result, which has isError: true; got result %s", short(k.id), orAbsent(pl.Result))
	default:
		r.pass("isError: completed, the result inlined")
	}
}

func caseModernFailed(r *run) {
	p := r.needPlan()
	if p.errors == nil {
		r.skip("no tool call is known to end in a JSON-RPC error on this server: the suite knows one on tasksim's mock (outcome: error), elsewhere only when told", errorArgsHint)
	}
	k := r.mcreate(*p.errors)
	g, f := r.mwait(k)
	pl := payloadOf(g.result)
	switch {
	case f.status != mcp.StatusFailed:
		r.fail("E49", "task %s, whose call ended in a JSON-RPC error, should end failed; it ended %s", short(k.id), f.status)
	case pl.Error == nil || pl.Error.Message == "":
		r.fail("E50", "failed task %s should inline its JSON-RPC error {code, message}; got error %s", short(k.id), orAbsent(rawMember(g.result, "error")))
	default:
		r.pass("failed, error %d inlined", pl.Error.Code)
	}
}

func rawMember(b json.RawMessage, name string) json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(b, &m)
	return m[name]
}

// emptyAck reports whether result is an empty acknowledgement: resultType "complete" and
// nothing but _meta besides (E51, E58, E60).
func emptyAck(result json.RawMessage) (ok bool, why string) {
	var m map[string]json.RawMessage
	if json.Unmarshal(result, &m) != nil {
		return false, "not an object"
	}
	if resultType(result) != string(mcp.ResultComplete) {
		return false, "resultType " + orAbsent(m["resultType"]) + ", not \"complete\""
	}
	var extra []string
	for k := range m {
		if k != "resultType" && k != "_meta" {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		return false, "it carries " + strings.Join(extra, ", ")
	}
	return true, ""
}

func caseModernInput(r *run) {
	p := r.needPlan()
	if p.input == nil {
		r.skip("no tool call is known to ask for input on this server: the suite knows one only on tasksim's mock (input_rounds)", "")
	}
	k := r.mcreate(*p.input)
	asked := map[string]string{} // key -> the request's params as first seen
	answered := map[string]bool{}
	updates := 0
	_, f := r.mwaitInput(k, func(g reply) {
		reqs := inputRequests(g.result)
		if len(reqs) == 0 {
			r.fatal("E50", "task %s is input_required, but tasks/get inlines no inputRequests", short(k.id))
		}
		for key, q := range reqs {
			if first, ok := asked[key]; ok && answered[key] && first != string(q.Params) {
				r.fatal("E57", "key %q of task %s, answered already, names another request now: keys are unique over the task's life", key, short(k.id))
			}
			asked[key] = string(q.Params)
		}
		u, _, sent := r.answerAll(k, g.result, answered)
		if !sent {
			return // only keys answered already: the answer has not shown yet (E58)
		}
		updates++
		if u.err != nil || u.rpc != nil {
			r.fatal("E58", "tasks/update of task %s should be acknowledged; got %s", short(k.id), u)
		}
		if ok, why := emptyAck(u.result); !ok {
			r.fatal("E58", "tasks/update of task %s should be acknowledged with an empty result; %s: %s", short(k.id), why, excerpt(u.result, 160))
		}
	})
	if f.status != mcp.StatusCompleted {
		r.fail("E58", "task %s got every answer and should have gone on to complete; it ended %s", short(k.id), f.status)
	}
	if updates == 0 {
		r.fatal("E50", "task %s, asked to need input, never showed input_required: %s", short(k.id), statusNames(r.s.statusesOf(k)))
	}
	r.pass("%s answered by %s, each acknowledged empty, no key asked again; completed", plural(len(asked), "input request"), plural(updates, mcp.OpTasksUpdate.Name()))
}

func caseModernCancel(r *run) {
	p := r.needPlan()
	w := p.medium
	k := r.mcreate(w)
	k.cancel = true
	c := r.mcall("", taskReq(mcp.OpTasksCancel, k.id))
	for c.code() == mcp.CodeInvalidParams && !k.read && time.Since(k.created) < settleWindow && sleep(r.ctx, 250*time.Millisecond) {
		c = r.mcall("", taskReq(mcp.OpTasksCancel, k.id)) // not yet readable: modern.get.fields judges E46
	}
	if c.err != nil || c.rpc != nil {
		r.fatal("E60", "tasks/cancel of task %s should be acknowledged with an empty result; got %s", short(k.id), c)
	}
	if ok, why := emptyAck(c.result); !ok {
		rule := "E60"
		if !strings.HasPrefix(why, "it carries") {
			rule = "E51"
		}
		r.fatal(rule, "tasks/cancel of task %s should be acknowledged with an empty result; %s: %s", short(k.id), why, excerpt(c.result, 160))
	}
	_, now := r.mread(k)    // the status the cancel left, for modern.transitions
	wait := 2 * time.Second // once its work would have ended: E60 lets it end otherwise
	if w.lasts > 0 {
		wait = w.lasts + 500*time.Millisecond
	}
	if !sleep(r.ctx, wait) {
		r.fatal("interrupted", "the suite was interrupted")
	}
	g, f := r.mread(k)
	switch {
	case g.code() == mcp.CodeInvalidParams:
		k.gone = true
		r.pass("acknowledged; the task was purged after its cancel")
	case g.err != nil || g.rpc != nil:
		r.pass("acknowledged; tasks/get then got %s", g)
	case f.status == mcp.StatusCancelled:
		r.pass("acknowledged empty; the task %s, and %v later cancelled", orText(now.status.String(), "unread"), wait)
	default:
		r.pass("acknowledged empty; the task %s, and %v later %s, which E60 allows (a cancel signals intent)", orText(now.status.String(), "unread"), wait, f.status)
	}
}

func caseModernUnknown(r *run) {
	r.needExt()
	g := r.mcall("", taskReq(mcp.OpTasksGet, unknownID))
	switch {
	case g.code() == mcp.CodeInvalidParams:
	case g.rpc != nil:
		r.fail("E65", "tasks/get of an unknown task id should get -32602 (Invalid params); got %d (%s)", g.rpc.Code, oneLine(g.rpc.Message, 120))
	default:
		r.fail("E65", "tasks/get of an unknown task id should get JSON-RPC error -32602; got %s", g)
	}
	upd := taskReq(mcp.OpTasksUpdate, unknownID)
	upd.Params, _ = json.Marshal(mcp.UpdateTaskParams{TaskID: unknownID, InputResponses: mcp.InputResponses{"tasksim-conform-key": json.RawMessage(`{"action":"decline"}`)}})
	var notes []string
	for _, c := range []struct {
		rule string
		op   mcp.Op
		rep  reply
	}{{"E58", mcp.OpTasksUpdate, r.mcall("", upd)}, {"E60", mcp.OpTasksCancel, r.mcall("", taskReq(mcp.OpTasksCancel, unknownID))}} {
		switch {
		case c.rep.code() == mcp.CodeInvalidParams:
			notes = append(notes, c.op.Name()+" -32602")
		case c.rep.rpc != nil:
			notes = append(notes, fmt.Sprintf("%s %d (E65 advises -32602)", c.op, c.rep.rpc.Code))
		case c.rep.err != nil:
			notes = append(notes, fmt.Sprintf("%s: %s", c.op, c.rep))
		default: // a SHOULD (docs/RULES.md#ext-gap-7): reported, not failed
			notes = append(notes, fmt.Sprintf("%s acknowledged an unknown task, where %s says it SHOULD be an error (reported, not failed: docs/RULES.md#ext-gap-7)", c.op, c.rule))
		}
	}
	r.pass("tasks/get -32602; %s", strings.Join(notes, "; "))
}

func caseRouting(r *run) {
	p := r.needPlan()
	k := r.mcreate(p.long)
	if g, _ := r.mread(k); g.err != nil || g.rpc != nil {
		r.fatal("E64", "tasks/get of task %s with Mcp-Name naming it should answer it; got %s", short(k.id), g)
	}
	ok := 0
	for _, h := range []struct{ value, label string }{
		{unknownID, "tasks/get with Mcp-Name naming another task"},
		{"", "tasks/get without Mcp-Name"},
	} {
		req := taskReq(mcp.OpTasksGet, k.id)
		req.Header = map[string]string{mcp.HeaderName: h.value}
		c := r.mcall("", req)
		r.relabel(h.label)
		if r.refusedWith(c, "E26", mcp.CodeHeaderMismatch, 400, "a "+h.label) {
			ok++
		}
	}
	if ok == 2 {
		r.pass("answered with Mcp-Name: the task id; -32020, HTTP 400, when it contradicts the body or is missing")
	}
}

func caseModernIsolation(r *run) {
	r.needSecond()
	p := r.needPlan()
	k := r.mcreate(p.long)
	if g, _ := r.mread(k); g.err != nil || g.rpc != nil {
		r.fatal("E65", "tasks/get of task %s by its creator should answer it; got %s", short(k.id), g)
	}
	upd := taskReq(mcp.OpTasksUpdate, k.id)
	upd.Params, _ = json.Marshal(mcp.UpdateTaskParams{TaskID: k.id, InputResponses: mcp.InputResponses{"tasksim-conform-key": json.RawMessage(`{"action":"decline"}`)}})
	for _, req := range []struct {
		op  mcp.Op
		rep func() reply
	}{
		{mcp.OpTasksGet, func() reply { return r.mcall("second", taskReq(mcp.OpTasksGet, k.id)) }},
		{mcp.OpTasksUpdate, func() reply { return r.mcall("second", upd) }},
		{mcp.OpTasksCancel, func() reply { return r.mcall("second", taskReq(mcp.OpTasksCancel, k.id)) }},
	} {
		c := req.rep()
		if ok, _ := emptyAck(c.result); ok && c.err == nil && c.rpc == nil && req.op != mcp.OpTasksGet {
			what := "the task is read again below"
			if req.op == mcp.OpTasksUpdate {
				what = "the task asks for no input, so an answer has nothing to change"
			}
			r.pass("%s acknowledged, which proves nothing (docs/RULES.md#ext-gap-7): %s", req.op, what)
			continue
		}
		r.isolationVerdict(c, "E67", req.op.Name(), k.id)
	}
	g, f := r.mread(k)
	switch {
	case g.err != nil || g.rpc != nil:
		r.fatal("E65", "tasks/get of task %s by its creator, after the second identity's requests, should answer it; got %s", short(k.id), g)
	case f.status == mcp.StatusCancelled:
		r.fail("E67", "task %s is cancelled after the second identity's tasks/cancel", short(k.id))
	}
}
