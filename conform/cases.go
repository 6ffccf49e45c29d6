package conform

// caseDef is one case: the era whose suite it belongs to, its id, what it checks, the
// rules, and how. Final cases run after their suite's cleanup (they judge everything seen).
type caseDef struct {
	era       string // an eraSuite's name (eras.go)
	id, title string
	rules     []string
	run       func(*run)
	final     bool
}

// cases are the suite's cases, each in its era, in the order they run within it.
//
// 2025-11-25 (rules R and H of docs/RULES.md): the session, then tools, tasks, results,
// cancels, lists, input, expiry and isolation. 2026-07-28 with the Tasks extension (rules E):
// the envelope and the era's errors first, then the extension.
var cases = []caseDef{
	{era: ProtocolLegacy, id: "init.version", title: "initialize negotiates a protocol version the server speaks", rules: []string{"H1"}, run: caseVersion},
	{era: ProtocolLegacy, id: "init.capabilities", title: "the capability manifest: leaves are objects, taskSupport values valid", rules: []string{"R1"}, run: caseCapabilities},
	{era: ProtocolLegacy, id: "session.required", title: "a request without Mcp-Session-Id gets HTTP 400, or is served", rules: []string{"H2"}, run: caseSessionRequired},
	{era: ProtocolLegacy, id: "session.deleted", title: "a request on a session ended with DELETE gets HTTP 404", rules: []string{"H8", "H9"}, run: caseSessionDeleted},
	{era: ProtocolLegacy, id: "tasks.ignored", title: "a task parameter sent to a server without tasks for tools/call is ignored", rules: []string{"R4"}, run: caseIgnored},
	{era: ProtocolLegacy, id: "tool.forbidden", title: "a forbidden tool called with a task parameter gets -32601", rules: []string{"R8"}, run: caseForbidden},
	{era: ProtocolLegacy, id: "tool.required", title: "a required tool called without a task parameter gets -32601", rules: []string{"R10"}, run: caseRequired},
	{era: ProtocolLegacy, id: "tool.optional", title: "an optional tool answers both as a task and without one", rules: []string{"R11"}, run: caseOptional},
	{era: ProtocolLegacy, id: "create.fields", title: "CreateTaskResult: a task with id, status working, timestamps and ttl", rules: []string{"R11", "R13", "R42", "R43", "R44"}, run: caseCreateFields},
	{era: ProtocolLegacy, id: "create.ids", title: "task ids are unique and unguessable, over a sample", rules: []string{"R12", "R54"}, run: caseIDs},
	{era: ProtocolLegacy, id: "get.fields", title: "tasks/get answers the task with every required field", rules: []string{"R42", "R43", "R44", "R46"}, run: caseGetFields},
	{era: ProtocolLegacy, id: "get.poll_interval", title: "tasks/get advertises a pollInterval", rules: []string{"R15", "R45"}, run: casePollInterval},
	{era: ProtocolLegacy, id: "get.nonblocking", title: "tasks/get of a working task answers at once", rules: []string{"R16", "R18"}, run: caseNonBlocking},
	{era: ProtocolLegacy, id: "task.lifecycle", title: "a task left alone ends on its own, and not cancelled", rules: []string{"R13", "R14", "R27"}, run: caseLifecycle},
	{era: ProtocolLegacy, id: "result.waits", title: "tasks/result of a working task answers only once the task is terminal", rules: []string{"R18"}, run: caseResultWaits},
	{era: ProtocolLegacy, id: "result.payload", title: "tasks/result returns the tool's result with related-task _meta", rules: []string{"R17", "R19", "R51"}, run: caseResultPayload},
	{era: ProtocolLegacy, id: "result.failed", title: "a failed tool call: isError ends failed, a JSON-RPC error comes back from tasks/result", rules: []string{"R17", "R51"}, run: caseResultFailed},
	{era: ProtocolLegacy, id: "cancel.working", title: "tasks/cancel of a working task makes it cancelled, and it stays cancelled", rules: []string{"R27", "R28"}, run: caseCancelWorking},
	{era: ProtocolLegacy, id: "cancel.terminal", title: "tasks/cancel of a terminal task gets -32602", rules: []string{"R26"}, run: caseCancelTerminal},
	{era: ProtocolLegacy, id: "task.unknown", title: "tasks/get, tasks/result and tasks/cancel of an unknown id get -32602", rules: []string{"R46"}, run: caseUnknown},
	{era: ProtocolLegacy, id: "list.pages", title: "tasks/list: every page, cursors followed as given, the suite's tasks listed", rules: []string{"R22", "R23", "R24", "R25"}, run: caseListPages},
	{era: ProtocolLegacy, id: "list.bad_cursor", title: "tasks/list with a cursor the server never gave gets -32602", rules: []string{"R47"}, run: caseListBadCursor},
	{era: ProtocolLegacy, id: "list.authorization", title: "tasks/list is not offered without an authorization context", rules: []string{"R54"}, run: caseListAuth},
	{era: ProtocolLegacy, id: "input.round_trip", title: "input_required: the request for input comes on tasks/result, the answer lets the task go on", rules: []string{"R35", "R36", "R37", "R38"}, run: caseInput},
	{era: ProtocolLegacy, id: "ttl.expiry", title: "a task past its ttl is purged promptly: -32602", rules: []string{"R45", "R46", "R56"}, run: caseTTL},
	{era: ProtocolLegacy, id: "isolation.get", title: "a second identity cannot read the first one's task", rules: []string{"R52", "R53"}, run: caseIsoGet},
	{era: ProtocolLegacy, id: "isolation.session", title: "a second identity on the first one's session id cannot read its task", rules: []string{"R52", "H2"}, run: caseIsoSession},
	{era: ProtocolLegacy, id: "isolation.result", title: "a second identity cannot fetch the first one's result", rules: []string{"R52", "R53"}, run: caseIsoResult},
	{era: ProtocolLegacy, id: "isolation.cancel", title: "a second identity cannot cancel the first one's task", rules: []string{"R52", "R53"}, run: caseIsoCancel},
	{era: ProtocolLegacy, id: "isolation.list", title: "a second identity does not see the first one's tasks in tasks/list", rules: []string{"R52", "R53"}, run: caseIsoList},
	{era: ProtocolLegacy, id: "transitions", title: "every status sequence observed follows the state table; terminal never changes", rules: []string{"R13", "R14"}, run: caseTransitions, final: true},

	{era: ProtocolModern, id: "modern.discover", title: "server/discover answers the versions served, 2026-07-28 among them, the capabilities and resultType", rules: []string{"E8", "E11", "E39"}, run: caseDiscover},
	{era: ProtocolModern, id: "modern.envelope.meta", title: "a request whose _meta lacks protocolVersion gets -32602, HTTP 400", rules: []string{"E3", "E27"}, run: caseEnvelopeMeta},
	{era: ProtocolModern, id: "modern.envelope.version", title: "an unsupported protocolVersion gets -32022 with data.supported and data.requested, HTTP 400", rules: []string{"E9", "E27"}, run: caseEnvelopeVersion},
	{era: ProtocolModern, id: "modern.envelope.headers", title: "a missing or contradicting Mcp-Method header gets -32020, HTTP 400", rules: []string{"E26", "E27"}, run: caseEnvelopeHeaders},
	{era: ProtocolModern, id: "modern.envelope.unknown_method", title: "an unknown method gets -32601, HTTP 404", rules: []string{"E27"}, run: caseUnknownMethod},
	{era: ProtocolModern, id: "modern.removed", title: "tasks/result, tasks/list and ping are gone (-32601, HTTP 404); params.task is ignored", rules: []string{"E37", "E27"}, run: caseRemoved},
	{era: ProtocolModern, id: "modern.capability", title: "a task-only call without the extension gets -32021 naming it; no task to an undeclaring request", rules: []string{"E44", "E39", "E5"}, run: caseCapability},
	{era: ProtocolModern, id: "modern.create.fields", title: "CreateTaskResult: resultType task, a flat task with id, status, timestamps, ttlMs, pollIntervalMs", rules: []string{"E45", "E52"}, run: caseModernCreateFields},
	{era: ProtocolModern, id: "modern.create.ids", title: "task ids are unique and unguessable, over a sample", rules: []string{"E66"}, run: caseModernIDs},
	{era: ProtocolModern, id: "modern.get.fields", title: "tasks/get right after the create answers the task, resultType complete, every field", rules: []string{"E46", "E50", "E51"}, run: caseModernGetFields},
	{era: ProtocolModern, id: "modern.result.completed", title: "a completed task inlines its result; a tool result with isError stays completed", rules: []string{"E49", "E50"}, run: caseModernCompleted},
	{era: ProtocolModern, id: "modern.result.failed", title: "a call that ends in a JSON-RPC error is failed, the error inlined", rules: []string{"E49", "E50"}, run: caseModernFailed},
	{era: ProtocolModern, id: "modern.input", title: "input_required inlines inputRequests; tasks/update is acknowledged empty; an answered key is never asked again", rules: []string{"E50", "E57", "E58"}, run: caseModernInput},
	{era: ProtocolModern, id: "modern.cancel", title: "tasks/cancel is acknowledged with an empty result", rules: []string{"E60", "E51"}, run: caseModernCancel},
	{era: ProtocolModern, id: "modern.cancel.terminal", title: "tasks/cancel of a completed and of a failed task leaves its status and its inlined result unchanged", rules: []string{"E48", "E60"}, run: caseModernCancelTerminal},
	{era: ProtocolModern, id: "modern.unknown", title: "tasks/get of an unknown id gets -32602; tasks/update and tasks/cancel an error", rules: []string{"E65", "E58", "E60"}, run: caseModernUnknown},
	{era: ProtocolModern, id: "modern.routing", title: "task requests route by Mcp-Name: answered when it names the task, -32020 when it contradicts the body or is missing", rules: []string{"E64", "E26"}, run: caseRouting},
	{era: ProtocolModern, id: "modern.isolation", title: "a second identity cannot read, answer or cancel the first one's task", rules: []string{"E67"}, run: caseModernIsolation},
	{era: ProtocolModern, id: "modern.result_type", title: "every result the suite received carries resultType", rules: []string{"E11"}, run: caseResultType, final: true},
	{era: ProtocolModern, id: "modern.transitions", title: "every status sequence observed: a terminal status never changes", rules: []string{"E48"}, run: caseModernTransitions, final: true},
}
