package conform

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"net/http"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/results"
)

// checkFields fails the case on every required member of a task object that is missing or
// malformed (docs/RULES.md#task-object); what names the reply.
func (r *run) checkFields(f fields, what string) {
	if f.id == "" {
		r.fail("R11", "%s: the task has no taskId (a non-empty string)", what)
	}
	if !f.status.Valid() {
		r.fail("R14", "%s: status %s is none of working, input_required, completed, failed, cancelled", what, orAbsent(f.statusRaw))
	}
	for _, ts := range []struct {
		rule, name string
		raw        json.RawMessage
	}{{"R42", "createdAt", f.created}, {"R43", "lastUpdatedAt", f.updated}} {
		var v string
		if json.Unmarshal(ts.raw, &v) != nil {
			r.fail(ts.rule, "%s: %s should be an RFC 3339 timestamp; it is %s", what, ts.name, orAbsent(ts.raw))
		} else if _, err := mcp.ParseTime(v); err != nil {
			r.fail(ts.rule, "%s: %s %q is not an RFC 3339 timestamp", what, ts.name, v)
		}
	}
	if len(f.ttl) == 0 {
		r.fail("R44", "%s: ttl is absent; it is always sent, null for unlimited", what)
	} else if string(f.ttl) != "null" {
		var ms mcp.Ms
		if json.Unmarshal(f.ttl, &ms) != nil || ms < 0 {
			r.fail("R44", "%s: ttl should be milliseconds or null; it is %s", what, excerpt(f.ttl, 40))
		}
	}
	if len(f.poll) > 0 {
		var ms mcp.Ms
		if json.Unmarshal(f.poll, &ms) != nil || ms <= 0 {
			r.fail("R45", "%s: pollInterval should be a positive number of milliseconds; it is %s", what, excerpt(f.poll, 40))
		}
	}
}

func orAbsent(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "absent"
	}
	return excerpt(raw, 60)
}

// createFields reads the task of a CreateTaskResult.
func createFields(result json.RawMessage) fields {
	var ctr struct {
		Task json.RawMessage `json:"task"`
	}
	_ = json.Unmarshal(result, &ctr)
	return readFields(ctr.Task)
}

func caseCreateFields(r *run) {
	p := r.needPlan()
	k := r.create(p.long, nil)
	f := createFields(k.create)
	r.checkFields(f, "CreateTaskResult")
	if f.status != mcp.StatusWorking {
		r.fail("R13", "a new task starts in working; CreateTaskResult says %s", orAbsent(f.statusRaw))
	}
	r.pass("task %s created %s", short(k.id), f.status)
}

// idSample is how many task ids create.ids judges: the suite's and new ones.
const idSample = 5

func caseIDs(r *run) {
	p := r.needPlan()
	for len(r.s.order) < idSample {
		r.create(p.short, nil)
	}
	ids := append([]string{}, r.s.order...)
	minDiff := r.judgeIDs(ids, "R12")
	if minDiff >= 0 && minDiff < minDiffering {
		if creds := authHeaders(r.s.t.Header); len(creds) > 0 {
			if r.s.other == nil {
				r.skip(fmt.Sprintf("ids are guessable (consecutive ones differ in %d character(s)); the requests carry credentials (%s), but with no second identity nothing shows that tasks are bound to them (R54 wants unguessable ids where they are not)", minDiff, strings.Join(creds, ", ")), "give --other-header with another tenant's credentials")
			}
			r.pass("ids are guessable (consecutive ones differ in %d character(s)); the requests carry credentials (%s), and R54 wants unguessable ids only where tasks are not bound to them: the isolation cases judge the binding", minDiff, strings.Join(creds, ", "))
			return
		}
		r.fatal("R54", "task ids are guessable: two ids created one after the other differ in only %d character(s) (%s), and without an authorization context an id is the only key to a task", minDiff, strings.Join(shortAll(ids), ", "))
	}
	r.pass("%d ids, all distinct; consecutive ones differ in at least %d characters", len(ids), minDiff)
}

// judgeIDs fails the case under rule for an id given to two tasks, and returns the fewest
// characters in which ids created one after the other differ (0 when one is the next of
// the other, a counter; -1 with fewer than two ids).
func (r *run) judgeIDs(ids []string, rule string) int {
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			r.fail(rule, "task id %s was given to two tasks", short(id))
		}
		seen[id] = true
	}
	minDiff := -1
	for i := 1; i < len(ids); i++ {
		a, b := ids[i-1], ids[i]
		if nextOf(a) == b {
			return 0
		}
		if d := differing(a, b); minDiff < 0 || d < minDiff {
			minDiff = d
		}
	}
	return minDiff
}

// minDiffering is the fewest characters in which two task ids created one after the other
// must differ: random ids (a UUID, 32 random hex digits) differ in almost every character,
// time-ordered ones (UUIDv7, ULID) in the dozen or more random characters after the time;
// a counter, or a time with a counter, in a handful.
const minDiffering = 8

// differing counts the positions in which a and b differ, the extra length of the longer
// one included.
func differing(a, b string) int {
	n := max(len(a), len(b)) - min(len(a), len(b))
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] != b[i] {
			n++
		}
	}
	return n
}

// nextOf returns the id one more than id, read as a number in the digits (hex or decimal)
// it ends with: the id a guesser tries first.
func nextOf(id string) string {
	b := []byte(id)
	for i := len(b) - 1; i >= 0; i-- {
		switch c := b[i]; {
		case c == '9' && !strings.ContainsAny(id, "abcdefABCDEF"):
			b[i] = '0'
		case c == '9':
			b[i] = 'a'
			return string(b)
		case c == 'f':
			b[i] = '0'
		case c == 'F':
			b[i] = '0'
		case (c >= '0' && c < '9') || (c >= 'a' && c < 'f') || (c >= 'A' && c < 'F'):
			b[i] = c + 1
			return string(b)
		default:
			return ""
		}
	}
	return ""
}

func shortAll(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = short(id)
	}
	return out
}

func caseGetFields(r *run) {
	k, _ := r.doneTask()
	rep, f := r.get(k.sess, "", k.id)
	if rep.err != nil || rep.rpc != nil {
		r.fatal("R46", "tasks/get of task %s, which the suite created and which has not expired, should answer the task; got %s", short(k.id), rep)
	}
	r.checkFields(f, mcp.OpTasksGet.Name())
	if f.id != k.id {
		r.fail("R46", "tasks/get of %s answered task %q", short(k.id), short(f.id))
	}
	if bytes.Contains(rep.result, []byte(mcp.MetaRelatedTask)) {
		r.pass("(the reply carries related-task _meta, which R34 advises against)")
	}
	r.pass("task %s: %s", short(k.id), f.status)
}

func casePollInterval(r *run) {
	k, _ := r.doneTask()
	_, f := r.get(k.sess, "", k.id)
	cf := createFields(k.create)
	switch {
	case len(f.poll) == 0 && len(cf.poll) == 0:
		r.fail("R15", "neither CreateTaskResult nor tasks/get advertises a pollInterval: clients cannot space their polls as R15 asks, and poll at a rate of their own choosing")
	case len(cf.poll) == 0:
		r.pass("pollInterval %s ms in tasks/get only", f.poll)
	default:
		r.pass("pollInterval %s ms", cf.poll)
	}
}

// getBound is how long a tasks/get may take while the task works before it counts as
// blocking: a poll is an instant read, and a reply held until the task ends defeats
// polling (docs/RULES.md#gap-14).
const getBound = 5 * time.Second

func caseNonBlocking(r *run) {
	p := r.needPlan()
	k := r.create(p.long, nil)
	var rep reply
	var took time.Duration
	for {
		start := time.Now()
		rep = r.call(k.sess, "", mcp.OpTasksGet, mcp.TaskIDParams{TaskID: k.id}, nil, getBound)
		took = time.Since(start)
		if rep.code() != mcp.CodeInvalidParams || time.Since(k.created) >= settleWindow || !sleep(r.ctx, 250*time.Millisecond) {
			break // not yet readable just after its creation: docs/RULES.md#gap-3
		}
	}
	switch {
	case rep.err != nil && rep.status == 0:
		r.fatal("R16", "tasks/get of working task %s should answer at once with its status; %s", short(k.id), rep)
	case rep.err != nil || rep.rpc != nil:
		r.fatal("R46", "tasks/get of task %s should answer the task; got %s", short(k.id), rep)
	}
	k.read = true
	f := readFields(rep.result)
	switch {
	case f.status.Terminal() && p.long.lasts > getBound:
		r.fatal("R16", "tasks/get of working task %s answered %s only after %v: it waited for the task to end", short(k.id), f.status, took.Round(time.Millisecond))
	case f.status.Terminal():
		r.skip(fmt.Sprintf("task %s had ended (%s) when tasks/get answered: whether tasks/get waits for the end was not seen", short(k.id), f.status), "give --tool a tool whose tasks last longer than a few seconds")
	}
	r.pass("answered %s in %s", f.status, ms(took))
}

// ms formats d in milliseconds, or in seconds from 10 s on.
func ms(d time.Duration) string {
	if d >= 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
}

func caseLifecycle(r *run) {
	k, f := r.doneTask()
	r.notSelfCancelled(k, f)
	r.pass("task %s: %s", short(k.id), statusNames(r.s.statusesOf(k)))
}

// notSelfCancelled fails the case when k, which the suite did not cancel, ended cancelled.
func (r *run) notSelfCancelled(k *known, f fields) {
	if f.status == mcp.StatusCancelled && !k.cancel {
		r.fatal("R27", "task %s, which nobody cancelled, ended cancelled (statusMessage %s); a task is cancelled only by tasks/cancel (docs/RULES.md#gap-13); seen: %s", short(k.id), orAbsent(f.msg), statusNames(r.s.statusesOf(k)))
	}
}

func (s *suite) statusesOf(k *known) []mcp.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]mcp.Status{}, k.statuses...)
}

func statusNames(st []mcp.Status) string {
	names := make([]string, len(st))
	for i, x := range st {
		names[i] = x.String()
	}
	return strings.Join(names, " → ")
}

func caseResultWaits(r *run) {
	p := r.needPlan()
	k := r.create(p.medium, nil)
	if _, f := r.read(k); f.status.Terminal() || f.status == 0 {
		r.skip(fmt.Sprintf("task %s had ended (or could not be read) before tasks/result could be sent while it worked", short(k.id)), "give --tool a tool whose tasks last longer than a second")
	}
	rep := r.call(k.sess, "", mcp.OpTasksResult, mcp.TaskIDParams{TaskID: k.id}, &inputHandler{r: r, task: k.id}, r.s.o.Budget)
	if rep.err != nil && rep.status == 0 {
		r.skip(fmt.Sprintf("tasks/result of task %s ended without an answer (%s): a proxy may cut long requests (docs/RULES.md#gap-12)", short(k.id), rep), "give --budget more time, or --tool a shorter task")
	}
	g, f := r.read(k)
	if g.err != nil || g.rpc != nil {
		r.fatal("R46", "tasks/get of task %s after its tasks/result should answer the task; got %s", short(k.id), g)
	}
	if !f.status.Terminal() {
		r.fatal("R18", "tasks/result of task %s answered while the task was still %s: it must wait for a terminal status", short(k.id), f.status)
	}
	r.pass("sent while the task worked, answered once it was %s", f.status)
}

func caseResultPayload(r *run) {
	k, f := r.doneTask()
	if f.status == mcp.StatusCancelled {
		r.skip(fmt.Sprintf("task %s ended cancelled without a cancel (see task.lifecycle): there is no result to check", short(k.id)), "")
	}
	a := r.call(k.sess, "", mcp.OpTasksResult, mcp.TaskIDParams{TaskID: k.id}, nil, 0)
	if a.err != nil {
		r.fatal("R17", "tasks/result of terminal task %s should answer at once; got %s", short(k.id), a)
	}
	if a.rpc != nil {
		if f.status == mcp.StatusCompleted {
			r.fatal("R17", "tasks/result of completed task %s should return the tool's result; got %s", short(k.id), a)
		}
		r.pass("task %s failed; tasks/result returned its error %d", short(k.id), a.rpc.Code)
		return
	}
	var res mcp.CallToolResult
	if json.Unmarshal(a.result, &res) != nil || !hasContent(a.result) {
		r.fail("R17", "tasks/result of task %s should return the CallToolResult of %q (content, isError?); got %s", short(k.id), k.work.tool, excerpt(a.result, 200))
	}
	if got := mcp.RelatedTaskID(res.Meta); got != k.id {
		r.fail("R19", "the tasks/result reply of task %s carries related-task _meta naming %s", short(k.id), orNone(got))
	}
	if res.IsError && f.status == mcp.StatusCompleted {
		r.fail("R51", "task %s ended completed, but its tool result has isError: true; such a task ends failed", short(k.id))
	}
	b := r.call(k.sess, "", mcp.OpTasksResult, mcp.TaskIDParams{TaskID: k.id}, nil, 0)
	if b.err == nil && b.rpc == nil && !sameJSON(withoutMeta(a.result), withoutMeta(b.result)) {
		r.fail("R17", "two tasks/result calls of terminal task %s returned different results: %s and %s", short(k.id), excerpt(a.result, 120), excerpt(b.result, 120))
	}
	r.pass("task %s %s: its result, with related-task _meta", short(k.id), f.status)
}

func orNone(id string) string {
	if id == "" {
		return "no task"
	}
	return short(id)
}

// hasContent reports whether a result has a content array.
func hasContent(result json.RawMessage) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(result, &m) != nil {
		return false
	}
	c := bytes.TrimSpace(m["content"])
	return len(c) > 0 && c[0] == '['
}

// withoutMeta returns the JSON object b without its _meta member (per-response metadata).
func withoutMeta(b json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return b
	}
	delete(m, "_meta")
	out, _ := json.Marshal(m)
	return out
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func caseResultFailed(r *run) {
	p := r.needPlan()
	if p.failed == nil && p.errors == nil {
		r.skip("no tool call is known to fail on this server: the suite knows one on tasksim's mock (outcome: failed, error), elsewhere only when told", failArgsHint+", and --error-args JSON (a JSON-RPC error)")
	}
	var seen, untried []string
	if p.failed != nil {
		k := r.create(*p.failed, nil)
		f := r.waitEnd(k)
		r.notSelfCancelled(k, f)
		a := r.call(k.sess, "", mcp.OpTasksResult, mcp.TaskIDParams{TaskID: k.id}, nil, 0)
		var res mcp.CallToolResult
		_ = json.Unmarshal(a.result, &res)
		switch {
		case a.err != nil || a.rpc != nil:
			r.fail("R17", "tasks/result of task %s, whose tool returned a result with isError: true, should return that result; got %s", short(k.id), a)
		case !res.IsError:
			r.fail("R17", "tasks/result of task %s should return the tool's result, which has isError: true; got %s", short(k.id), excerpt(a.result, 200))
		}
		if f.status != mcp.StatusFailed {
			r.fail("R51", "task %s, whose tool returned isError: true, should end failed; it ended %s", short(k.id), f.status)
		}
		seen = append(seen, "isError result: failed, returned as a result")
	} else {
		untried = append(untried, "a tool error (--fail-args)")
	}
	if p.errors != nil {
		k := r.create(*p.errors, nil)
		f := r.waitEnd(k)
		a := r.call(k.sess, "", mcp.OpTasksResult, mcp.TaskIDParams{TaskID: k.id}, nil, 0)
		if a.rpc == nil {
			r.fail("R17", "tasks/result of task %s, whose call ended in a JSON-RPC error, should return that error; got %s", short(k.id), a)
		}
		if f.status != mcp.StatusFailed {
			r.fail("R17", "task %s, whose call ended in a JSON-RPC error, should end failed; it ended %s", short(k.id), f.status)
		}
		seen = append(seen, "JSON-RPC error: failed, returned as the error")
	} else {
		untried = append(untried, "a protocol error (--error-args)")
	}
	if len(untried) > 0 {
		seen = append(seen, "not tried: "+strings.Join(untried, ", "))
	}
	r.pass("%s", strings.Join(seen, "; "))
}

// needCancel skips the case when the server does not declare tasks/cancel.
func (r *run) needCancel() {
	if !r.s.cancelDeclared() {
		r.skip("the server does not declare capabilities.tasks.cancel", "")
	}
}

func caseCancelWorking(r *run) {
	p := r.needPlan()
	r.needCancel()
	w := p.medium
	k := r.create(w, nil)
	k.cancel = true
	c := r.call(k.sess, "", mcp.OpTasksCancel, mcp.TaskIDParams{TaskID: k.id}, nil, 0)
	for c.code() == mcp.CodeInvalidParams && !k.read && time.Since(k.created) < settleWindow && sleep(r.ctx, 250*time.Millisecond) {
		c = r.call(k.sess, "", mcp.OpTasksCancel, mcp.TaskIDParams{TaskID: k.id}, nil, 0) // gap-3
	}
	if c.code() == mcp.CodeInvalidParams {
		if _, f := r.get(k.sess, "", k.id); f.status.Terminal() {
			r.skip(fmt.Sprintf("task %s ended (%s) before the cancel reached it", short(k.id), f.status), "give --tool a tool whose tasks last longer than a second")
		}
	}
	if c.err != nil || c.rpc != nil {
		r.fatal("R27", "tasks/cancel of working task %s should answer the task, cancelled; got %s", short(k.id), c)
	}
	if f := readFields(c.result); f.status != mcp.StatusCancelled {
		r.fail("R27", "tasks/cancel of working task %s should make it cancelled before it replies; the reply says %s", short(k.id), orAbsent(f.statusRaw))
	}
	// Stays cancelled: read it again once its work would have ended (the mock's work is
	// known; elsewhere after a poll interval or two).
	wait := 2 * time.Second
	if w.lasts > 0 {
		wait = w.lasts + 500*time.Millisecond
	}
	if !sleep(r.ctx, wait) {
		r.fatal("interrupted", "the suite was interrupted")
	}
	g, f := r.get(k.sess, "", k.id)
	switch {
	case g.code() == mcp.CodeInvalidParams:
		k.gone = true
		r.pass("(task %s was purged after its cancel, which R29 allows)", short(k.id))
	case g.err != nil || g.rpc != nil:
		r.fail("R28", "tasks/get of cancelled task %s should still answer it; got %s", short(k.id), g)
	case f.status != mcp.StatusCancelled:
		r.fail("R28", "task %s was cancelled, and %v later it is %s: a cancelled task stays cancelled even when its work ends", short(k.id), wait, f.status)
	default:
		r.pass("cancelled, and still cancelled %v later", wait)
	}
}

func caseCancelTerminal(r *run) {
	r.needPlan()
	r.needCancel()
	k, f := r.doneTask()
	c := r.call(k.sess, "", mcp.OpTasksCancel, mcp.TaskIDParams{TaskID: k.id}, nil, 0)
	switch {
	case c.code() == mcp.CodeInvalidParams:
		if g, _ := r.get(k.sess, "", k.id); g.code() == mcp.CodeInvalidParams {
			k.gone = true
			r.skip(fmt.Sprintf("task %s is gone: its -32602 may say only that it was purged", short(k.id)), "")
		}
		r.pass("task %s (%s): -32602, and the task is still there", short(k.id), f.status)
	case c.err != nil:
		r.fail("R26", "tasks/cancel of terminal task %s should get JSON-RPC error -32602; got %s", short(k.id), c)
	case c.rpc != nil:
		r.fail("R26", "tasks/cancel of terminal task %s should get -32602 (Invalid params); got %d (%s)", short(k.id), c.rpc.Code, oneLine(c.rpc.Message, 120))
	default:
		r.fail("R26", "tasks/cancel of terminal task %s (%s) should be refused with -32602; it was answered %s", short(k.id), f.status, excerpt(c.result, 160))
	}
}

// unknownID is a task id no server gave.
const unknownID = "tasksim-conform-no-such-task-0d1e2a"

func caseUnknown(r *run) {
	if r.s.init.Capabilities.Tasks == nil {
		r.skip("the server declares no capabilities.tasks", "")
	}
	ops := []mcp.Op{mcp.OpTasksGet, mcp.OpTasksResult}
	if r.s.cancelDeclared() {
		ops = append(ops, mcp.OpTasksCancel)
	}
	names := make([]string, len(ops))
	for i, op := range ops {
		names[i] = op.Name()
		c := r.call(r.s.sess, "", op, mcp.TaskIDParams{TaskID: unknownID}, nil, 0)
		switch {
		case c.code() == mcp.CodeInvalidParams:
		case c.rpc != nil:
			r.fail("R46", "%s of an unknown task id should get -32602 (Invalid params); got %d (%s)", names[i], c.rpc.Code, oneLine(c.rpc.Message, 120))
		default:
			r.fail("R46", "%s of an unknown task id should get JSON-RPC error -32602; got %s", names[i], c)
		}
	}
	r.pass("-32602 from %s", strings.Join(names, ", "))
}

// needList skips the case when the server does not declare tasks/list.
func (r *run) needList() {
	if !r.s.listDeclared() {
		r.skip("the server does not declare capabilities.tasks.list", "")
	}
}

// maxListPages bounds the pages a list walk reads.
const maxListPages = 1000

// listAll walks every page of tasks/list on sess and returns the ids listed.
func (r *run) listAll(sess *client.Session, identity string) (map[string]bool, int) {
	ids := map[string]bool{}
	seen := map[string]bool{}
	var cursor *string
	pages := 0
	for {
		pages++
		c := r.call(sess, identity, mcp.OpTasksList, mcp.ListTasksParams{Cursor: cursor}, nil, 0)
		if c.err != nil || c.rpc != nil {
			r.fatal("R22", "tasks/list (page %d) should answer a page of tasks; got %s", pages, c)
		}
		var page struct {
			Tasks      []json.RawMessage `json:"tasks"`
			NextCursor *string           `json:"nextCursor"`
		}
		if json.Unmarshal(c.result, &page) != nil || page.Tasks == nil {
			r.fatal("R22", "tasks/list (page %d) should answer {tasks: [...], nextCursor?}; got %s", pages, excerpt(c.result, 200))
		}
		for _, t := range page.Tasks {
			ids[readFields(t).id] = true
		}
		if page.NextCursor == nil || *page.NextCursor == "" {
			return ids, pages
		}
		if seen[*page.NextCursor] {
			r.fatal("R23", "tasks/list gave cursor %s twice: the pages loop", excerpt([]byte(*page.NextCursor), 60))
		}
		if pages >= maxListPages {
			r.fatal("R23", "tasks/list gave more than %d pages", maxListPages)
		}
		seen[*page.NextCursor] = true
		cursor = page.NextCursor
	}
}

func caseListPages(r *run) {
	r.needPlan()
	r.needList()
	if len(r.s.order) == 0 {
		r.doneTask()
	}
	ids, pages := r.listAll(r.s.sess, "")
	var missing []string
	for _, id := range r.s.order {
		k := r.s.tasks[id]
		if ids[id] || k.gone {
			continue
		}
		if g, _ := r.get(k.sess, "", id); g.code() == mcp.CodeInvalidParams {
			k.gone = true // purged (R29, R45): no longer the suite's to find
			continue
		}
		missing = append(missing, short(id))
	}
	if len(missing) > 0 {
		r.fail("R25", "tasks/list (%d page(s), %d tasks) leaves out %d task(s) the suite can read with tasks/get: %s; a page without nextCursor says no task remains (R23)", pages, len(ids), len(missing), strings.Join(missing, ", "))
		return
	}
	r.pass("%d page(s), %d tasks, the suite's %d among them", pages, len(ids), len(r.s.order))
}

func caseListBadCursor(r *run) {
	r.needList()
	bogus := "tasksim-conform-not-a-cursor"
	c := r.call(r.s.sess, "", mcp.OpTasksList, mcp.ListTasksParams{Cursor: &bogus}, nil, 0)
	switch {
	case c.code() == mcp.CodeInvalidParams:
		r.pass("-32602")
	case c.rpc != nil:
		r.fail("R47", "tasks/list with a cursor the server never gave should get -32602; got %d (%s)", c.rpc.Code, oneLine(c.rpc.Message, 120))
	default:
		r.fail("R47", "tasks/list with a cursor the server never gave should get JSON-RPC error -32602; got %s", c)
	}
}

func caseListAuth(r *run) {
	if r.s.init.Capabilities.Tasks == nil {
		r.skip("the server declares no capabilities.tasks", "")
	}
	creds := authHeaders(r.s.t.Header)
	if len(creds) > 0 {
		r.skip(fmt.Sprintf("the requests carry credentials (%s): the server may bind tasks to them, and R54 is about servers that do not", strings.Join(creds, ", ")), "run without credentials to check a server that has no authorization context")
	}
	r.record(results.Exchange{Method: "initialize (capabilities.tasks, with no credentials sent)", Reply: excerpt(r.s.tasksCaps(), 300)})
	if r.s.listDeclared() {
		r.fail("R54", "the server has no authorization context (it served requests that carry no credentials) and yet declares tasks.list: anyone may list everyone's tasks")
		return
	}
	r.pass("no authorization context, and tasks.list not declared")
}

func caseInput(r *run) {
	p := r.needPlan()
	if p.input != nil {
		k := r.create(*p.input, nil)
		f := r.waitEnd(k)
		r.notSelfCancelled(k, f)
		seq := r.s.statusesOf(k)
		if !containsStatus(seq, mcp.StatusInputRequired) {
			r.fatal("R35", "task %s, asked to need input, never showed input_required: %s", short(k.id), statusNames(seq))
		}
		if f.status != mcp.StatusCompleted {
			r.fail("R38", "task %s got its input and should have gone on to complete; it ended %s", short(k.id), f.status)
		}
	}
	r.s.mu.Lock()
	ok, ev := r.s.inputOK, r.s.inputEv
	r.s.mu.Unlock()
	if ok == "" {
		if p.input != nil {
			r.fatal("R37", "the task showed input_required, but its tasks/result stream carried no request for input")
		}
		r.skip("no task of the suite asked for input", "give --tool a tool that asks for input (elicitation), or run against tasksim serve")
	}
	if p.input == nil {
		r.ex = append(r.ex, ev...)
	}
	r.pass("%s", ok)
}

func containsStatus(seq []mcp.Status, st mcp.Status) bool {
	for _, x := range seq {
		if x == st {
			return true
		}
	}
	return false
}

// expiryTTL is the ttl the expiry case asks for; a server may grant another (R45).
var expiryTTL = mcp.Millis(time.Second)

func caseTTL(r *run) {
	p := r.needPlan()
	start := time.Now()
	k := r.create(p.short, expiryTTL)
	f := createFields(k.create)
	var ttl mcp.Ms
	switch {
	case string(f.ttl) == "null":
		r.skip("the server granted ttl null (unlimited) when asked for 1000 ms: its tasks never expire", "")
	case json.Unmarshal(f.ttl, &ttl) != nil:
		r.skip("the create reply carries no ttl to wait for (see create.fields)", "")
	case ttl.Duration() > r.s.o.Budget:
		r.skip(fmt.Sprintf("the server granted a ttl of %v when asked for 1 s, longer than the budget of %v", ttl.Duration(), r.s.o.Budget), fmt.Sprintf("give --budget %v or more", (ttl.Duration()+30*time.Second).Round(time.Second)))
	}
	deadline := start.Add(r.s.o.Budget)
	if !sleep(r.ctx, time.Until(start.Add(ttl.Duration()))) {
		r.fatal("interrupted", "the suite was interrupted")
	}
	for {
		g, gf := r.get(k.sess, "", k.id)
		if g.code() == mcp.CodeInvalidParams {
			k.gone = true
			r.pass("gone (-32602) %v after creation; ttl %v", time.Since(start).Round(100*time.Millisecond), ttl.Duration())
			return
		}
		if g.rpc != nil || g.err != nil {
			r.fatal("R46", "tasks/get of task %s after its ttl should answer -32602 (gone) or the task; got %s", short(k.id), g)
		}
		if !time.Now().Before(deadline) {
			r.fatal("R56", "task %s (ttl %v) was still readable (%s) %v after its creation, past the budget: expired tasks are to be purged promptly (R56), and then answer -32602 (R46)", short(k.id), ttl.Duration(), gf.status, time.Since(start).Round(time.Second))
		}
		if !sleep(r.ctx, min(k.pollInterval(gf), time.Until(deadline)+time.Millisecond)) {
			r.fatal("interrupted", "the suite was interrupted")
		}
	}
}

// needSecond skips the case when no second identity, or the first one again, was given.
func (r *run) needSecond() {
	if r.s.other == nil {
		enable := r.s.o.OtherHint
		if enable == "" {
			enable = "give --other-header 'K: V' with another tenant's credentials"
		}
		r.skip("no second identity was given", enable)
	}
	if SameIdentity(r.s.t.Header, r.s.other.Header) {
		r.skip("the second identity's headers are the first one's: it is the same identity", "give --other-header another tenant's credentials")
	}
}

// needOther returns the second identity's session, or skips the case.
func (r *run) needOther() *client.Session {
	r.needSecond()
	r.needPlan()
	if r.s.otherSess == nil {
		ctx, cancel := context.WithTimeout(r.ctx, requestTimeout)
		defer cancel()
		sess, _, _, err := openSession(ctx, r.s.other)
		if err != nil {
			r.skip(fmt.Sprintf("the second identity could not open a session: %v", r.s.redact(err.Error())), "check the --other-header credentials")
		}
		r.s.otherSess = sess
	}
	return r.s.otherSess
}

// SameIdentity reports whether the second identity's headers b change nothing of the first
// identity's a: then it is no second identity.
func SameIdentity(a, b http.Header) bool {
	for k := range b {
		if strings.Join(a.Values(k), "\n") != strings.Join(b.Values(k), "\n") {
			return false
		}
	}
	return true
}

// isolationVerdict judges a second identity's request for the first one's task: any
// refusal is right; a result is a leak, which breaks rule.
func (r *run) isolationVerdict(c reply, rule, what, id string) {
	switch {
	case c.rpc != nil:
		if c.rpc.Code != mcp.CodeInvalidParams {
			r.pass("%s refused with %d (docs/RULES.md#gap-11 advises -32602, so that existence does not leak)", what, c.rpc.Code)
			return
		}
		r.pass("%s refused: -32602", what)
	case c.err != nil && c.status >= 400 && c.status < 500:
		r.pass("%s refused: HTTP %d", what, c.status)
	case c.err != nil:
		r.skip(fmt.Sprintf("%s by the second identity got no answer that says anything: %s", what, c), "run the suite again")
	default:
		r.fail(rule, "the second identity's %s of task %s, which the first identity created, succeeded: %s", what, short(id), excerpt(c.result, 160))
	}
}

// ownTask creates a long task and reads it as its creator first, so that a refusal of the
// second identity cannot be a task not yet readable (gap-3). A read that gets no answer in
// getBound (a tasks/get that waits, which get.nonblocking judges) is not waited for.
func (r *run) ownTask() *known {
	k := r.create(r.s.plan.long, nil)
	for {
		p := r.call(k.sess, "", mcp.OpTasksGet, mcp.TaskIDParams{TaskID: k.id}, nil, getBound)
		switch {
		case p.err == nil && p.rpc == nil:
			k.read = true
			return k
		case p.err != nil && p.status == 0:
			return k
		case p.code() == mcp.CodeInvalidParams && time.Since(k.created) < settleWindow && sleep(r.ctx, 250*time.Millisecond):
			continue
		}
		r.fatal("R46", "tasks/get of task %s by its creator should answer it; got %s", short(k.id), p)
	}
}

func caseIsoGet(r *run) {
	o := r.needOther()
	k := r.ownTask()
	r.isolationVerdict(r.call(o, "second", mcp.OpTasksGet, mcp.TaskIDParams{TaskID: k.id}, nil, 0), "R53", mcp.OpTasksGet.Name(), k.id)
}

func caseIsoSession(r *run) {
	r.needOther()
	if r.s.sess.ID() == "" {
		r.skip("the server issued no Mcp-Session-Id: there is no session to borrow", "")
	}
	if len(authHeaders(r.s.o.Other)) == 0 {
		r.skip("the second identity carries no credentials (no Authorization, cookie or key header): there is nothing to tell the identities apart", "give --other-header with the second identity's credentials")
	}
	k := r.ownTask()
	borrowed := r.s.other.Attach(r.s.sess.ID(), r.s.sess.Version())
	c := r.call(borrowed, "second", mcp.OpTasksGet, mcp.TaskIDParams{TaskID: k.id}, nil, 0)
	r.ex[len(r.ex)-1].Method = "tasks/get on the first identity's session id"
	if c.err == nil && c.rpc == nil {
		r.fatal("R52", "the second identity's credentials on the first identity's session id read its task %s: the task is not bound to the first identity's credentials, so a leaked session id is a key (H2)", short(k.id))
	}
	r.isolationVerdict(c, "R53", "tasks/get on a borrowed session id", k.id)
}

func caseIsoResult(r *run) {
	o := r.needOther()
	k, _ := r.doneTask()
	r.isolationVerdict(r.call(o, "second", mcp.OpTasksResult, mcp.TaskIDParams{TaskID: k.id}, nil, 0), "R53", mcp.OpTasksResult.Name(), k.id)
}

func caseIsoCancel(r *run) {
	o := r.needOther()
	r.needCancel()
	k := r.ownTask()
	r.isolationVerdict(r.call(o, "second", mcp.OpTasksCancel, mcp.TaskIDParams{TaskID: k.id}, nil, 0), "R53", mcp.OpTasksCancel.Name(), k.id)
	if _, f := r.get(k.sess, "", k.id); f.status == mcp.StatusCancelled {
		r.fail("R53", "task %s is cancelled after the second identity's tasks/cancel", short(k.id))
	}
}

func caseIsoList(r *run) {
	o := r.needOther()
	if !r.s.listDeclared() {
		r.skip("the server does not declare capabilities.tasks.list", "")
	}
	if len(r.s.order) == 0 {
		r.create(r.s.plan.long, nil)
	}
	ids, pages := r.listAll(o, "second")
	var leaked []string
	for _, id := range r.s.order {
		if ids[id] {
			leaked = append(leaked, short(id))
		}
	}
	if len(leaked) > 0 {
		r.fail("R53", "the second identity's tasks/list shows %d of the first identity's tasks: %s", len(leaked), strings.Join(leaked, ", "))
		return
	}
	r.pass("%d page(s), %d tasks, none of the first identity's %d", pages, len(ids), len(r.s.order))
}

func caseTransitions(r *run) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if len(r.s.order) == 0 {
		r.skip("the suite created no task", "")
	}
	moves := 0
	for _, id := range r.s.order {
		k := r.s.tasks[id]
		seq := k.statuses
		if len(seq) > 0 && seq[0] != mcp.StatusWorking {
			r.fail("R13", "task %s started %s; every new task starts working", short(id), seq[0])
		}
		for i := 1; i < len(seq); i++ {
			moves++
			if !mcp.CanTransition(seq[i-1], seq[i]) {
				r.fail("R14", "task %s went %s → %s (%s), which the state table forbids", short(id), seq[i-1], seq[i], statusNames(seq))
			}
		}
	}
	seen := fmt.Sprintf("%s, %s", plural(len(r.s.order), "task"), plural(moves, "change of status", "changes of status"))
	r.ex = append(r.ex, results.Exchange{Method: "(statuses observed)", Reply: seen})
	r.pass("%s, all allowed", seen)
}

// plural is "1 task", "2 tasks"; forms[1], when given, is the plural.
func plural(n int, forms ...string) string {
	if n == 1 {
		return "1 " + forms[0]
	}
	if len(forms) > 1 {
		return fmt.Sprintf("%d %s", n, forms[1])
	}
	return fmt.Sprintf("%d %ss", n, forms[0])
}
