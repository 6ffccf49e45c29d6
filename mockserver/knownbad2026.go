package mockserver

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/tasksim/tasksim/internal/mcp"
)

// Known-bad modes of the modern era (protocol 2026-07-28 with the Tasks extension): each
// breaks the rule of docs/RULES.md it names, so that each case of tasksim conform's modern
// suite is shown to fail (conform's TestModernKnownBadMatrix pins which). They are off by
// default, and wrappers the modern front end (modern.go) chooses once in its init: of its
// replies (statelessReplies), of the HTTP status of an error code (statusOf), of the reading
// of its headers (headerReader), and of its methods (statelessModes):
//
//	no_result_type         the results of server/discover, tools/list and a synchronous
//	                       tools/call carry no resultType (E11).
//	lenient_envelope       a request whose _meta lacks protocolVersion, or names one the server
//	                       does not speak, is served as 2026-07-28 instead of refused with
//	                       -32602 (E3) or -32022 (E9).
//	no_header_check        Mcp-Method and Mcp-Name are not checked against the body: missing or
//	                       contradicting, they are taken as the body says (E26, E64).
//	unknown_method_200     -32601 (an unknown or removed method) goes with HTTP 200 instead of
//	                       404 (E27).
//	legacy_methods         tasks/result, tasks/list and ping, which 2026-07-28 removed, are
//	                       answered (an empty result, an empty list) instead of -32601 (E37).
//	tasks_undeclared       a tools/call that does not declare the extension is made a task as
//	                       if it did: work_task gets a task instead of -32021 (E44, E39).
//	modern_missing_fields  ttlMs and lastUpdatedAt are left out of created tasks and tasks/get
//	                       replies (E45, E50).
//	get_not_ready          the first tasks/get of each task answers -32602, as if the task were
//	                       not readable yet when its CreateTaskResult was sent (E46).
//	is_error_failed        a tool result with isError true ends the task failed, its error
//	                       inlined, instead of completed with the result (E49: failed is for a
//	                       JSON-RPC error only).
//	no_inline_payload      tasks/get of a completed or failed task inlines neither its result
//	                       nor its error (E50).
//	reuse_input_keys       every input request of a task has the same key, "input", round after
//	                       round: a key answered is asked again for another request (E57).
//	ack_with_task          tasks/update and tasks/cancel are answered with the task, as
//	                       tasks/get would, instead of an empty result (E58, E60).
//
// wrong_error_codes (knownbad.go) sends the -32602 of the modern task methods as -32603 too
// (E65); predictable_ids, no_tenant_check (insecure.go) and cancel_not_final apply to tasks of
// either era (E66, E67, E48).
type KnownBad2026 struct {
	NoResultType        bool // no resultType on discover, tools/list, synchronous calls (E11)
	LenientEnvelope     bool // no protocolVersion, or an unsupported one, is served (E3, E9)
	NoHeaderCheck       bool // Mcp-Method and Mcp-Name not checked (E26, E64)
	UnknownMethod200    bool // -32601 with HTTP 200 (E27)
	LegacyMethods       bool // tasks/result, tasks/list, ping answered (E37)
	TasksUndeclared     bool // a task for a request that did not declare the extension (E44, E39)
	ModernMissingFields bool // no ttlMs, lastUpdatedAt on tasks (E45, E50)
	GetNotReady         bool // the first tasks/get of a task: -32602 (E46)
	IsErrorFailed       bool // an isError result ends failed (E49)
	NoInlinePayload     bool // no result or error in a terminal tasks/get (E50)
	ReuseInputKeys      bool // every input request keyed "input" (E57)
	AckWithTask         bool // update and cancel answered with the task (E58, E60)

	// The modes of the contract suite's terminal-cancel case (conform's
	// modern.cancel.terminal):
	//
	//	cancel_terminal_flip   tasks/cancel of a completed or failed task makes it cancelled,
	//	                       its inlined result or error dropped, instead of leaving it as
	//	                       it ended (E48: a terminal status is final).
	//	no_inline_result_type  the result a completed task inlines in tasks/get (its
	//	                       CallToolResult) carries no resultType, which the core schema's
	//	                       CallToolResult requires (E11, E50): the official requester
	//	                       @modelcontextprotocol/ext-tasks settles such a task failed.
	//	                       (no_result_type leaves the inlined result alone.)
	CancelTerminalFlip bool // a terminal task's cancel makes it cancelled (E48)
	NoInlineResultType bool // no resultType on the result inlined in tasks/get (E11, E50)
}

// statelessReplies composes the filter of the modern front's replies from the modes that
// rewrite them: wrong_error_codes (knownbad.go), then those that rewrite results.
func (k *KnownBad) statelessReplies() replyFilter {
	f := replyFilter(keepReply)
	if k.WrongErrorCodes {
		f = f.then(wrongCodes)
	}
	if k.NoResultType || k.ModernMissingFields || k.NoInlinePayload || k.NoInlineResultType {
		kb := k.KnownBad2026
		f = f.then(func(op mcp.Op, result []byte, e *mcp.Error) ([]byte, *mcp.Error) {
			if e != nil {
				return result, e
			}
			return kb.badResult(op, result), nil
		})
	}
	return f
}

// reusedInputKey is the key of every input request with reuse_input_keys.
const reusedInputKey = "input"

// badResult is the result b of a request of op, as the modern front writes it, as the modes
// that rewrite results send it.
func (k *KnownBad2026) badResult(op mcp.Op, b []byte) []byte {
	var drop []string
	switch op {
	case mcp.OpServerDiscover, mcp.OpToolsList:
		if k.NoResultType {
			drop = append(drop, "resultType")
		}
	case mcp.OpToolsCall:
		task := bytes.HasPrefix(b, []byte(`{"resultType":"task"`))
		if k.NoResultType && !task {
			drop = append(drop, "resultType")
		}
		if k.ModernMissingFields && task {
			drop = append(drop, "ttlMs", "lastUpdatedAt")
		}
	case mcp.OpTasksGet:
		if k.ModernMissingFields {
			drop = append(drop, "ttlMs", "lastUpdatedAt")
		}
		if k.NoInlinePayload {
			drop = append(drop, "result", "error")
		}
		if k.NoInlineResultType {
			return withoutInlineResultType(b)
		}
	}
	if len(drop) == 0 {
		return b
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(b, &obj) != nil {
		return b
	}
	for _, key := range drop {
		delete(obj, key)
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return b
	}
	return out
}

// statusOf returns the HTTP status of a modern error of a code (E27): mcp.HTTPStatus, or
// with unknown_method_200 200 for -32601.
func (k *KnownBad2026) statusOf() func(code int) int {
	if !k.UnknownMethod200 {
		return mcp.HTTPStatus
	}
	return func(code int) int {
		if code == mcp.CodeMethodNotFound {
			return http.StatusOK
		}
		return mcp.HTTPStatus(code)
	}
}

// headerReader returns how the modern front reads Mcp-Method and Mcp-Name: as sent, or with
// no_header_check as the body has them (trustedHeaders).
func (k *KnownBad2026) headerReader() func(h mcp.RequestHeaders, method string, params []byte) mcp.RequestHeaders {
	if k.NoHeaderCheck {
		return trustedHeaders
	}
	return func(h mcp.RequestHeaders, _ string, _ []byte) mcp.RequestHeaders { return h }
}

// refuseEnvelope answers msg, whose envelope was refused with e: with e (modernRefuse), or,
// when lenient says so (lenient_envelope), by serving it as a request of 2026-07-28.
func (m *statelessFront) refuseEnvelope(w http.ResponseWriter, r *http.Request, tenant string, msg *mcp.Message, e *mcp.Error) {
	if !m.lenient(e.Code) {
		m.modernRefuse(w, r, msg, e)
		return
	}
	mr := modernReq{tasks: bytes.Contains(msg.Params, []byte(mcp.ExtTasks)), form: true}
	m.dispatchModernReq(w, r, tenant, msg, &mr)
}

// lenientCodes is statelessModes.lenient with lenient_envelope: the refusals of a missing
// (-32602, E3) or unsupported (-32022, E9) version are served.
func lenientCodes(code int) bool {
	return code == mcp.CodeInvalidParams || code == mcp.CodeUnsupportedProtocolVersion
}

// trustedHeaders returns h with Mcp-Method and Mcp-Name as the body (method, params) has
// them (no_header_check): whatever was sent passes CheckHeaders.
func trustedHeaders(h mcp.RequestHeaders, method string, params []byte) mcp.RequestHeaders {
	h.Method = method
	if body, err := mcp.HeadersFor(method, params); err == nil || body.Name != "" {
		h.Name = body.Name
	}
	return h
}

// legacyMethod answers a method 2026-07-28 removed, as legacy_methods does; ok is false for
// any other method.
func legacyMethod(method string) (result []byte, ok bool) {
	switch (mcp.V20251125{}).Op(method) {
	case mcp.OpTasksList:
		return []byte(`{"tasks":[]}`), true
	case mcp.OpTasksResult, mcp.OpPing:
		return []byte(`{}`), true
	}
	return nil, false
}

// statelessModes are the known-bad modes of the modern front's methods, chosen once by its
// init (statelessModes): a server with every mode off has the honest ones.
type statelessModes struct {
	// notReady reports whether this tasks/get of t, whose mu is held, is refused -32602
	// (get_not_ready: its first); honest, never.
	notReady func(t *task) bool
	// inlined is the payload a finished task t inlines, from its own: as it is, or with
	// is_error_failed an isError result as a JSON-RPC error (E49 broken).
	inlined func(t *task, result json.RawMessage, e *mcp.Error) (json.RawMessage, *mcp.Error)
	// keyOf is the key of e in inputRequests (E57), and answered the id of the elicitation
	// of t that a key of inputResponses answers: inputKey and the key itself, or
	// reusedInputKey and the first outstanding with reuse_input_keys.
	keyOf    func(e *elicitation) string
	answered func(t *task, key string) string
	// ack is the acknowledgement of tasks/update and tasks/cancel of t: an empty result
	// (E58, E60), or with ack_with_task the task as tasks/get writes it.
	ack func(m *statelessFront, t *task) []byte
	// removed answers a method 2026-07-28 removed (legacy_methods); ok is false, for every
	// method, on an honest server (E37).
	removed func(method string) (result []byte, ok bool)
	// lenient reports whether an envelope refused with an error of code is served anyway
	// (lenient_envelope: lenientCodes); honest, never (E3, E9).
	lenient func(code int) bool
	// declared says whether a tools/call declares the Tasks extension, from what its
	// envelope says: as it says (E39, E44), or always with tasks_undeclared.
	declared func(says bool) bool
	// versionOf is the version a request names in MCP-Protocol-Version, as era detection
	// reads it: the header, or with any_version none on a request of a session, which may
	// have been granted any version, 2099-01-01 too.
	versionOf func(r *http.Request) string
	// clientOf and ownerOf are session_bound's (insecure.go: clientBinding): the client a
	// request's clientInfo describes, and the owner its tasks are bound to.
	clientOf func(info *mcp.Implementation) string
	ownerOf  func(m *statelessFront, client string, form int) *session
}

// statelessModes returns the modern front's method modes of k.
func (k *KnownBad) statelessModes() statelessModes {
	sm := statelessModes{
		notReady: func(*task) bool { return false },
		inlined:  func(_ *task, result json.RawMessage, e *mcp.Error) (json.RawMessage, *mcp.Error) { return result, e },
		keyOf:    inputKey,
		answered: func(_ *task, key string) string { return mcp.StringID(key).String() },
		ack:      emptyAck,
		removed:  func(string) ([]byte, bool) { return nil, false },
		declared: func(says bool) bool { return says },
		lenient:  func(int) bool { return false },
		versionOf: func(r *http.Request) string {
			return r.Header.Get(headerProtocolVersion)
		},
	}
	if k.TasksUndeclared {
		sm.declared = func(bool) bool { return true }
	}
	if k.AnyVersion {
		sm.versionOf = anyVersionOf
	}
	if k.LenientEnvelope {
		sm.lenient = lenientCodes
	}
	if k.GetNotReady {
		sm.notReady = notReadyOnce
	}
	if k.IsErrorFailed {
		sm.inlined = isErrorFailed
	}
	if k.ReuseInputKeys {
		sm.keyOf = func(*elicitation) string { return reusedInputKey }
		sm.answered = reusedKeyAnswers
	}
	if k.AckWithTask {
		sm.ack = taskAck
	}
	if k.LegacyMethods {
		sm.removed = legacyMethod
	}
	return sm
}

// anyVersionOf is statelessModes.versionOf with any_version: a request of a session names
// no version, the session front judges it.
func anyVersionOf(r *http.Request) string {
	if r.Header.Get(headerSessionID) != "" {
		return ""
	}
	return r.Header.Get(headerProtocolVersion)
}

// notReadyOnce reports whether this tasks/get of t is its first (get_not_ready).
func notReadyOnce(t *task) bool {
	if t.readOnce {
		return false
	}
	t.readOnce = true
	return true
}

// isErrorFailed is the payload of a finished task as is_error_failed has it: a tool result
// with isError becomes a JSON-RPC error.
func isErrorFailed(t *task, result json.RawMessage, e *mcp.Error) (json.RawMessage, *mcp.Error) {
	if t.end == endToolError {
		return nil, &mcp.Error{Code: mcp.CodeInternalError, Message: "the tool returned isError: true"}
	}
	return result, e
}

// reusedKeyAnswers returns the id of the elicitation of t that key answers with
// reuse_input_keys: the first one outstanding for reusedInputKey, key itself otherwise.
func reusedKeyAnswers(t *task, key string) string {
	if key == reusedInputKey {
		t.mu.Lock()
		defer t.mu.Unlock()
		for _, e := range t.pending {
			if !e.answered {
				return e.id
			}
		}
	}
	return mcp.StringID(key).String()
}

// emptyAck is the acknowledgement of tasks/update and tasks/cancel: an empty result (E58, E60).
func emptyAck(m *statelessFront, _ *task) []byte { return mcp.AppendEmptyResult(nil, m.info) }

// taskAck is ack_with_task's acknowledgement: t as tasks/get writes it.
func taskAck(m *statelessFront, t *task) []byte {
	t.mu.Lock()
	d := t.detailedLocked(true)
	t.mu.Unlock()
	b, err := mcp.AppendGetTaskResult(nil, &d, m.info)
	if err != nil {
		return emptyAck(m, t)
	}
	return b
}

// flipping returns the modern tasks/cancel: cancel, or with cancel_terminal_flip cancel
// after flipTerminal.
func (k *KnownBad2026) flipping(cancel func(t *task, dst []byte) ([]byte, *mcp.Error)) func(t *task, dst []byte) ([]byte, *mcp.Error) {
	if !k.CancelTerminalFlip {
		return cancel
	}
	return func(t *task, dst []byte) ([]byte, *mcp.Error) {
		t.flipTerminal()
		return cancel(t, dst)
	}
}

// flipTerminal makes t, terminal, cancelled, as cancel_terminal_flip does on its tasks/cancel
// (E48 broken); a task still running is left alone.
func (t *task) flipTerminal() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status.Terminal() && t.status != mcp.StatusCancelled {
		t.status, t.statusMessage, t.end = mcp.StatusCancelled, "cancelled by requestor", endCancelled
		t.updated = stampOf(t.srv.clock.Now())
	}
}

// withoutInlineResultType is the tasks/get result b with the resultType of its inlined
// result dropped (no_inline_result_type); b itself when it inlines no result.
func withoutInlineResultType(b []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil || m["result"] == nil {
		return b
	}
	var inner map[string]json.RawMessage
	if json.Unmarshal(m["result"], &inner) != nil {
		return b
	}
	delete(inner, "resultType")
	r, err := json.Marshal(inner)
	if err != nil {
		return b
	}
	m["result"] = r
	out, err := json.Marshal(m)
	if err != nil {
		return b
	}
	return out
}
