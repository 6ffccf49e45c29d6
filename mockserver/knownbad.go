package mockserver

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
)

// Known-bad modes: deliberately broken behaviours of the server, so that tasksim's contract
// suite (tasksim conform) can be shown to fail case by case: a case that passes against
// the server with every mode off must fail against it with the mode that breaks its rule.
// None is ever on by default. Each breaks the rule of docs/RULES.md it names; a broken rule
// may take others down with it (a tasks/get that blocks also hides input_required, an
// error code sent wrong is wrong in every method that sends it), and conform's matrix test
// (TestKnownBadMatrix) pins which cases each mode fails:
//
//	blocking_get           tasks/get of a task that is not terminal waits until the task is
//	                       terminal (or the request ends, or its session or the server closes),
//	                       then answers. tasks/get must answer at once, so that a requestor
//	                       can poll it (R15, R16); only tasks/result blocks (R18).
//	no_poll_interval       no pollInterval on any task object: the create reply, tasks/get,
//	                       tasks/list, tasks/cancel and notifications/tasks/status. The field
//	                       is optional, but without it a requestor has nothing to space its
//	                       polls by (R15): conform judges its absence.
//	missing_fields         task objects lack createdAt, lastUpdatedAt and ttl (R42, R43, R44).
//	cancel_terminal_ok     tasks/cancel of a terminal task answers the task as it is, instead
//	                       of -32602 (R26).
//	cancel_not_final       tasks/cancel of a working task whose work is under way answers it
//	                       cancelled, and it reads cancelled, but the work goes on, and when
//	                       it ends the task takes the work's outcome, completed or failed (R28,
//	                       and so R14: a terminal status changes). A task waiting for input or
//	                       for a worker is cancelled for good, as usual.
//	early_result           tasks/result of a task that is not terminal answers at once with an
//	                       empty CallToolResult (content []) carrying related-task _meta; the
//	                       task goes on (R18).
//	no_related_meta        successful tasks/result replies lack the related-task _meta (R19).
//	is_error_completed     a tool result with isError true ends the task completed instead of
//	                       failed (R51); tasks/result still returns that result.
//	list_without_auth      with no Tokens (no authorization context) initialize still declares
//	                       capabilities.tasks.list and tasks/list is served, listing every task
//	                       (R54). With Tokens it changes nothing.
//	list_truncated         tasks/list returns the first page only: no nextCursor, however many
//	                       tasks remain (R23).
//	wrong_error_codes      every -32602 that tasks/get, tasks/result, tasks/cancel and
//	                       tasks/list send (unknown, malformed or expired id, terminal cancel,
//	                       bad cursor, bad params) is sent as -32603 (R46, R47, R26), and the
//	                       -32601 of taskSupport enforcement as -32602 (R8, R10).
//	no_task_support_check  taskSupport is not enforced: a forbidden tool (work_sync) called with
//	                       params.task creates a task, a required one (work_task) called without
//	                       it runs synchronously and returns its CallToolResult (R8, R10).
//	never_expire           tasks are never deleted when their ttl has passed: lookups and
//	                       tasks/list keep answering them, though the ttl granted is still
//	                       advertised. Deleting is a MAY (R45), but an expired task must be
//	                       gone, -32602 (R46), and that is how conform judges it.
//	lost_session_400       a request with an unknown or ended Mcp-Session-Id gets 400 instead of
//	                       404 (H8).
//	sessionless            a request without Mcp-Session-Id (but initialize) is served, instead
//	                       of refused with 400 (H2), on a stand-in session that never appears in
//	                       the session table: the server's newest version, no client
//	                       capabilities (so no elicitation, R60).
//	any_version            initialize echoes the protocolVersion the client asked for, even one
//	                       the server does not speak such as "2099-01-01" (H1: the answer must
//	                       be a version the server supports); the session then expects that
//	                       version in MCP-Protocol-Version, and otherwise behaves as a session
//	                       of the version the server would have negotiated.
//	ignore_task_param      a task-augmented call of an optional tool (work) runs as a plain call
//	                       and answers its CallToolResult instead of a CreateTaskResult (R11).
//	refuse_task_param      a server without tasks for tools/call (NoTasks, or a protocol version
//	                       without Tasks) refuses a tools/call that carries params.task with
//	                       -32602 instead of ignoring the parameter and running the call (R4).
//	self_cancel            a task whose work ends ends cancelled, statusMessage "context
//	                       canceled", though nobody cancelled it (R27, docs/RULES.md#gap-13):
//	                       what mcp-go does to tasks whose handler honours its context.
//	missing_session_404    a request without Mcp-Session-Id gets 404 instead of 400 (H2): 404
//	                       says "your session ended", and a client initializes again, and again.
//	boolean_leaves         the capability leaves of capabilities.tasks (list, cancel,
//	                       requests.tools.call) are sent as true instead of {} (R1, where the
//	                       prose says boolean and the schema an object: docs/RULES.md#capabilities).
//	input_no_meta          the elicitation/create requests of input_required lack related-task
//	                       _meta (R36).
//
// cancel_ignored and cancel_terminal act on tasks/cancel of either era (knownbadcancel.go).
//
// Sequential task ids (predictable_ids) and broken isolation (session_bound,
// no_tenant_check) are insecure modes (insecure.go).
//
// The modes are wrappers chosen once when the server is built, so that the request path
// tests none of them: of the task core's seams (modes.go: the task writer, the cancel, the
// expiry, the outcome of a task's work, the related-task _meta), of the session front's
// replies (sessionReplies) and of its methods (sessionModes), and values chosen in its init
// (the statuses of a missing and a lost session, the sessionless stand-in session).
type KnownBad struct {
	BlockingGet        bool // tasks/get waits for a terminal status (R15, R16)
	NoPollInterval     bool // no pollInterval on task objects (R15)
	MissingFields      bool // no createdAt, lastUpdatedAt, ttl on task objects (R42-R44)
	CancelTerminalOK   bool // cancel of a terminal task is answered, not refused (R26)
	CancelNotFinal     bool // the work's outcome overrides a cancel (R28, R14)
	EarlyResult        bool // tasks/result answers at once with an empty result (R18)
	NoRelatedMeta      bool // tasks/result replies without related-task _meta (R19)
	IsErrorCompleted   bool // an isError result ends the task completed (R51)
	ListWithoutAuth    bool // tasks.list declared and served without tokens (R54)
	ListTruncated      bool // tasks/list never sends nextCursor (R23)
	WrongErrorCodes    bool // -32602 sent as -32603, -32601 as -32602 (R46, R47, R26, R8, R10)
	NoTaskSupportCheck bool // taskSupport not enforced (R8, R10)
	NeverExpire        bool // expired tasks are kept and answered (R46)
	LostSession400     bool // unknown or ended session: 400, not 404 (H8)
	Sessionless        bool // requests without Mcp-Session-Id are served (H2)
	AnyVersion         bool // initialize echoes any protocolVersion (H1)
	InputNoMeta        bool // elicitation/create without related-task _meta (R36)
	IgnoreTaskParam    bool // an optional tool called as a task runs as a plain call (R11)
	RefuseTaskParam    bool // without tasks, a task parameter is refused, not ignored (R4)
	SelfCancel         bool // work that ends ends the task cancelled (R27)
	MissingSession404  bool // a request without Mcp-Session-Id gets 404, not 400 (H2)
	BooleanLeaves      bool // capabilities.tasks leaves sent as true, not {} (R1)
	CancelIgnored      bool // a cancel of a working task is accepted and does nothing (R27; E60 allows it)
	CancelTerminal     bool // a cancel of a completed or failed task makes it cancelled (R26, R14, R28)

	KnownBad2026 // the modes of the modern era (knownbad2026.go)
}

// On reports whether any known-bad mode is on.
func (k KnownBad) On() bool { return k != KnownBad{} }

// taskWriter returns the writer of the 2025-11-25 task object: appendTaskLocked, or
// appendBadLocked with no_poll_interval or missing_fields.
func (k *KnownBad) taskWriter() func(t *task, dst []byte) []byte {
	if k.NoPollInterval || k.MissingFields {
		return (*task).appendBadLocked
	}
	return (*task).appendTaskLocked
}

// appendBadLocked is appendLocked for no_poll_interval and missing_fields: the same task
// object without the fields the modes leave out.
func (t *task) appendBadLocked(dst []byte) []byte {
	kb := &t.srv.cfg.KnownBad
	dst = append(dst, `{"taskId":`...)
	dst = mcp.AppendString(dst, t.id)
	dst = append(dst, `,"status":"`...)
	dst = append(dst, t.status.String()...)
	dst = append(dst, '"')
	if msg := t.wireMessageLocked(); msg != "" {
		dst = append(dst, `,"statusMessage":`...)
		dst = mcp.AppendString(dst, msg)
	}
	if !kb.MissingFields {
		dst = append(dst, `,"createdAt":`...)
		dst = t.created.appendJSON(dst)
		dst = append(dst, `,"lastUpdatedAt":`...)
		dst = t.updated.appendJSON(dst)
		dst = append(dst, `,"ttl":`...)
		dst = t.ttl.appendJSON(dst)
	}
	if !kb.NoPollInterval {
		dst = append(dst, `,"pollInterval":`...)
		dst = strconv.AppendInt(dst, t.srv.pollInterval(t.tool).Milliseconds(), 10)
	}
	return append(dst, '}')
}

// getWaiter returns the session front's getWait: the honest tasks/get, which never waits
// (R40), or blocking_get's awaitTerminal until the server closes (closing).
func (k *KnownBad) getWaiter(closing <-chan struct{}) getWait {
	if !k.BlockingGet {
		return func(context.Context, *session, *task) (bool, *mcp.Error) { return true, nil }
	}
	return func(ctx context.Context, sess *session, t *task) (bool, *mcp.Error) {
		return awaitTerminal(ctx, sess, t, closing)
	}
}

// awaitTerminal holds a tasks/get of t, on sess, until t is terminal (blocking_get). It
// reports false when the get is to be answered e or abandoned (e nil) meanwhile: t was
// deleted (answered as unknown, R46), or the request (ctx), its session or the server
// (closing) ended.
func awaitTerminal(ctx context.Context, sess *session, t *task, closing <-chan struct{}) (bool, *mcp.Error) {
	for {
		t.mu.Lock()
		if t.gone {
			t.mu.Unlock()
			return false, notFound(t.id)
		}
		if t.status.Terminal() {
			t.mu.Unlock()
			return true, nil
		}
		changed := t.changedLocked()
		t.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return false, nil
		case <-sess.closed():
			return false, nil
		case <-closing:
			return false, nil
		}
	}
}

// taskDecider returns the session front's decideTask as the known-bad modes of the task
// parameter break it: refuse_task_param (R4), ignore_task_param (R11) and
// no_task_support_check (R8, R10).
func (k *KnownBad) taskDecider() decideTask {
	if !k.RefuseTaskParam && !k.IgnoreTaskParam && !k.NoTaskSupportCheck {
		return taskSupportRules
	}
	kb := *k
	return func(tool string, ts mcp.TaskSupport, task, tasks bool) (bool, *mcp.Error) {
		if task && !tasks && kb.RefuseTaskParam {
			return false, mcp.Errorf(mcp.CodeInvalidParams, "tool %q: task-augmented calls are not supported", tool)
		}
		asTask := task && tasks
		if asTask && ts == mcp.TaskOptional && kb.IgnoreTaskParam {
			asTask = false
		}
		if kb.NoTaskSupportCheck {
			return asTask, nil
		}
		return taskSupportRules(tool, ts, asTask, tasks)
	}
}

// cancelNotFinalLocked answers a cancel of t, whose work is under way, with t cancelled,
// and leaves the work running (cancel_not_final): its timer, its worker and its in-flight
// count stay, and when the work ends (phaseDone) overruleLocked puts the task back to
// working for that instant, so that the work's outcome replaces cancelled. Called with t.mu
// held; it unlocks it.
func (t *task) cancelNotFinalLocked(dst []byte) []byte {
	t.status, t.statusMessage = mcp.StatusCancelled, "cancelled by requestor"
	t.updated = stampOf(t.srv.clock.Now())
	t.end = endCancelled
	t.overrule = true
	t.signalLocked()
	dst = t.appendLocked(dst)
	snap := t.srv.statusNotification(t)
	t.mu.Unlock()
	t.srv.notifyOwner(t.owner, snap)
	return dst
}

// overruleLocked undoes the cancel of cancel_not_final when the work's phase ends, so that
// the work goes on as if no cancel had come.
func (t *task) overruleLocked() {
	if t.overrule {
		t.overrule = false
		t.status = mcp.StatusWorking
	}
}

// expiry returns coreModes.expiry: the ttl honoured, or with never_expire never.
func (k *KnownBad) expiry() func(now time.Time, d time.Duration) time.Time {
	if k.NeverExpire {
		return func(time.Time, time.Duration) time.Time { return time.Time{} }
	}
	return time.Time.Add
}

// outcome returns coreModes.outcome: workOutcome, or as is_error_completed (an isError
// result completes, R51 wants failed) and self_cancel (every ending is cancelled, "context
// canceled") change it.
func (k *KnownBad) outcome() func(work ending) (ending, mcp.Status, string) {
	if !k.IsErrorCompleted && !k.SelfCancel {
		return workOutcome
	}
	errorCompletes, selfCancel := k.IsErrorCompleted, k.SelfCancel
	return func(work ending) (ending, mcp.Status, string) {
		end, to, msg := workOutcome(work)
		if errorCompletes && end == endToolError {
			to = mcp.StatusCompleted
		}
		if selfCancel {
			end, to, msg = endCancelled, mcp.StatusCancelled, "context canceled"
		}
		return end, to, msg
	}
}

// relatedMeta returns coreModes.resultMeta and inputMeta: the task's id, or none with
// no_related_meta and input_no_meta.
func (k *KnownBad) relatedMeta() (result, input func(taskID string) string) {
	same := func(id string) string { return id }
	none := func(string) string { return "" }
	result, input = same, same
	if k.NoRelatedMeta {
		result = none
	}
	if k.InputNoMeta {
		input = none
	}
	return result, input
}

// listOffered reports whether the server declares tasks.list and serves tasks/list: only
// with an authorization context (R54), or always with list_without_auth.
func (s *core) listOffered() bool { return s.bound() || s.cfg.KnownBad.ListWithoutAuth }

// sessionModes are the known-bad modes of the session front's methods, chosen once by its
// init (sessionModes): a server with every mode off has the honest ones.
type sessionModes struct {
	// decide serves a tools/call as a task or not: taskSupportRules, or as
	// refuse_task_param, ignore_task_param and no_task_support_check break them.
	decide decideTask
	// getWait is what a tasks/get waits for: nothing (R40), or with blocking_get a
	// terminal status.
	getWait getWait
	// grant is the version initialize grants for asked, negotiated from it: negotiated
	// (H1), or with any_version asked.
	grant func(asked, negotiated string) string
	// nextCursor appends the nextCursor of a tasks/list page that is not the last:
	// appendNextCursor (R23), or nothing with list_truncated.
	nextCursor func(b []byte, last uint64) []byte
	// early is the reply of a tasks/result of t, whose mu is held, before t is terminal:
	// nil (it waits, R18), or with early_result an empty CallToolResult at once.
	early func(t *task) []byte
}

// sessionModes returns the session front's method modes of k; closing is closed when the
// server closes (blocking_get waits for it), resultMeta is the core's (no_related_meta).
func (k *KnownBad) sessionModes(closing <-chan struct{}, resultMeta func(string) string) sessionModes {
	sm := sessionModes{
		decide:     k.taskDecider(),
		getWait:    k.getWaiter(closing),
		grant:      func(_, negotiated string) string { return negotiated },
		nextCursor: appendNextCursor,
		early:      func(*task) []byte { return nil },
	}
	if k.AnyVersion {
		sm.grant = func(asked, _ string) string { return asked }
	}
	if k.ListTruncated {
		sm.nextCursor = func(b []byte, _ uint64) []byte { return b }
	}
	if k.EarlyResult {
		sm.early = func(t *task) []byte { return earlyResult(t, resultMeta) }
	}
	return sm
}

// earlyResult is the reply of early_result to a tasks/result of t, not terminal: an empty
// CallToolResult with related-task _meta (none with no_related_meta: resultMeta).
func earlyResult(t *task, resultMeta func(string) string) []byte {
	b := []byte(`{"content":[]`)
	if id := resultMeta(t.id); id != "" {
		b = append(b, `,"_meta":`...)
		b = append(b, mcp.RelatedTaskMeta(id)...)
	}
	return append(b, '}')
}

// sessionReplies composes the filter of the session front's replies from the modes that
// rewrite them: wrong_error_codes, boolean_leaves.
func (k *KnownBad) sessionReplies() replyFilter {
	f := replyFilter(keepReply)
	if k.WrongErrorCodes {
		f = f.then(wrongCodes)
	}
	if k.BooleanLeaves {
		f = f.then(booleanLeavesReply)
	}
	return f
}

// wrongCodes is the reply filter of wrong_error_codes (wrongCode).
func wrongCodes(op mcp.Op, result []byte, e *mcp.Error) ([]byte, *mcp.Error) {
	if e != nil {
		e = wrongCode(op, e)
	}
	return result, e
}

// booleanLeavesReply is the reply filter of boolean_leaves: an initialize result that
// declares capabilities.tasks gets its leaves as true (booleanLeaves).
func booleanLeavesReply(op mcp.Op, result []byte, e *mcp.Error) ([]byte, *mcp.Error) {
	if op != mcp.OpInitialize || e != nil {
		return result, e
	}
	return booleanLeaves(result), nil
}

// wrongCode is e as wrong_error_codes sends it: a -32602 of the tasks methods as -32603,
// the -32601 of taskSupport enforcement (the only -32601 of tools/call) as -32602.
func wrongCode(op mcp.Op, e *mcp.Error) *mcp.Error {
	code := e.Code
	switch op {
	case mcp.OpTasksGet, mcp.OpTasksResult, mcp.OpTasksCancel, mcp.OpTasksList:
		if code == mcp.CodeInvalidParams {
			code = mcp.CodeInternalError
		}
	case mcp.OpToolsCall:
		if code == mcp.CodeMethodNotFound {
			code = mcp.CodeInvalidParams
		}
	}
	if code == e.Code {
		return e
	}
	w := *e
	w.Code = code
	return &w
}

// booleanLeaves returns the initialize result b with its capabilities.tasks written with
// every leaf true instead of {} (boolean_leaves); b itself when it declares no tasks.
func booleanLeaves(b []byte) []byte {
	var res, caps map[string]json.RawMessage
	if json.Unmarshal(b, &res) != nil || json.Unmarshal(res["capabilities"], &caps) != nil || caps["tasks"] == nil {
		return b
	}
	// capabilities.tasks is json.Marshal's compact encoding of an mcp.TasksCapability, whose
	// leaves are its only empty objects.
	caps["tasks"] = bytes.ReplaceAll(caps["tasks"], []byte(`{}`), []byte(`true`))
	res["capabilities"], _ = json.Marshal(caps)
	out, err := json.Marshal(res)
	if err != nil {
		return b
	}
	return out
}
