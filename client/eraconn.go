package client

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/tasksim/tasksim/internal/mcp"
)

// Conn is one virtual client's connection to a target in one protocol era, chosen once when
// the run picks its Dialer (DialerFor): 2025-11-25's session (legacyConn) or 2026-07-28's
// stateless requester (statelessConn). Each method sends one request and returns what it
// said in values of no era, with the Reply (the JSON-RPC result or error, for counting and
// classifying) and the error of the exchange (*TransportError, *HTTPError, ErrSessionGone,
// ErrCut...). A reply that is a JSON-RPC error leaves the value zero; a result that does not
// read as the method's leaves it with Malformed set. A new era is a new implementation of
// Conn and its Dialer; the load engine's driver does not change.
//
// cut injects the client's own fault into the exchange (Cut); an era with no stream treats
// CutStream, CutBeforeAnswer and CutAfterAnswer as the points that never came.
type Conn interface {
	// Create sends the create (tools/call with the run's params call) and reads its reply:
	// a task, a synchronous result, or an input round. answers, when non-nil, make the call
	// the retry of the previous round (MRTR, docs/RULES.md#e15), with a new request id.
	Create(ctx context.Context, call []byte, answers *InputAnswers, cut Cut) (Created, Reply, error)
	// Get reads a task (tasks/get): the task and, in an era that inlines them, its payload
	// or its input requests (E50).
	Get(ctx context.Context, ref TaskRef) (TaskRead, Reply, error)
	// Result fetches a task's payload where the era has a request for it (tasks/result, a
	// stream on which h answers server requests); an era that inlines payloads (Traits.Inline)
	// refuses it without sending anything.
	Result(ctx context.Context, ref TaskRef, h ServerHandler, cut Cut) (Reply, error)
	// Answer answers a task's input requests where the era asks for input in a read
	// (tasks/update, E55-E57); an era that asks on a stream refuses it without sending.
	Answer(ctx context.Context, ref TaskRef, responses mcp.InputResponses, cut Cut) (Reply, error)
	// Cancel asks the server to cancel a task: the reply is the task, or an acknowledgement
	// that says nothing of the outcome (E60).
	Cancel(ctx context.Context, ref TaskRef, cut Cut) (Cancelled, Reply, error)
	// List sends one page request of the tasks list (params: {} or {"cursor":...}).
	List(ctx context.Context, params []byte) (Reply, error)
	// Close ends the connection (a session's DELETE, H9); nothing where there is nothing to end.
	Close(ctx context.Context) error
}

// Dialer opens the connections of one era on a target (a tenant's Target, with its token)
// and says what the driver must know of the era's behaviour (Traits). A run has one.
type Dialer interface {
	// Dial opens a connection: a session (initialize, notifications/initialized), or nothing
	// at all for a stateless era. It sends a request only when Traits().Sessions.
	Dial(ctx context.Context, t *Target) (Conn, error)
	// Traits are the era's: fixed for the Dialer's life.
	Traits() Traits
}

// Traits are what a virtual client must know of an era beyond the values its Conn returns.
type Traits struct {
	// Dialect spells the era's methods: error messages name them, and server requests are
	// recognised by them (elicitation/create).
	Dialect mcp.Dialect
	// Sessions: a connection is a session, opened with a request (Dial sends initialize,
	// counted as such, and a new one after the first is a reconnect), ended by Close, and
	// lost with a 404 (ErrSessionGone). False: Dial sends nothing and cannot be lost.
	Sessions bool
	// Inline: a read carries the payload with the terminal status and the input requests
	// with input_required (loadgen's Lifecycle.Inline), input is answered with Answer, and
	// there is no Result.
	Inline bool
	// TaskParam: a create asks for a task in its own params (params.task, 2025-11-25).
	// False: the era has no task parameter; AsksTasks says whether every call asks.
	TaskParam bool
	// AsksTasks: every call on the connection declares the Tasks extension, so that a task
	// is a valid answer to it (E13, E39).
	AsksTasks bool
}

// TaskRef names a task to the requests about it: its id, and the params of tasks/get,
// tasks/cancel and tasks/result encoded once for all of them (NewTaskRef), so that a poll
// encodes nothing. An era spelled otherwise reads ID.
type TaskRef struct {
	ID      string
	params  []byte // {"taskId": ID}
	mcpName string // ID as Mcp-Name carries it (mcp.EncodeHeaderValue): ID itself when plain
}

// NewTaskRef returns the reference of the task id.
func NewTaskRef(id string) TaskRef {
	return TaskRef{ID: id, params: TaskIDParams(id), mcpName: mcp.EncodeHeaderValue(id)}
}

// name is the Mcp-Name of the requests about the task (E64): its id, encoded.
func (r TaskRef) name() string {
	if r.mcpName == "" && r.ID != "" {
		return mcp.EncodeHeaderValue(r.ID)
	}
	return r.mcpName
}

// Params are the {"taskId": ...} params of the requests about the task.
func (r TaskRef) Params() []byte {
	if r.params == nil && r.ID != "" {
		return TaskIDParams(r.ID)
	}
	return r.params
}

// Created is what a create's reply said, in any era: exactly one of Task, Call and Input
// when Malformed is nil.
type Created struct {
	Task  *mcp.Task           // created: follow it
	Call  *mcp.CallToolResult // the tool ran synchronously (R4, or the sync fallback)
	Input *InputRound         // the server asks for input before it decides (MRTR)
	// Malformed says why the result is no create reply of the era.
	Malformed error
}

// InputRound is a create answered with a request for input (an InputRequiredResult, E15,
// E16): answer each request, then call Create again with the answers.
type InputRound struct {
	Requests mcp.InputRequests
	State    string // requestState, to echo unread
}

// InputAnswers answer an InputRound: the responses by the requests' keys, and the round's
// State.
type InputAnswers struct {
	Responses mcp.InputResponses
	State     string
}

// TaskRead is what a read of a task said, in any era.
type TaskRead struct {
	Task mcp.Task
	// Payload is the result inlined with completed or failed (Traits.Inline); nil otherwise.
	Payload json.RawMessage
	// Inputs are the outstanding input requests inlined with input_required (Traits.Inline).
	Inputs mcp.InputRequests
	// Quirks are what was read leniently (the ext-gaps), for the manifest; even of a
	// malformed read.
	Quirks mcp.Quirks
	// Malformed says why the result is no task (the message of loadgen's protocol error);
	// a task without a valid status is malformed.
	Malformed error
}

// Cancelled is what a cancel's reply said, in any era.
type Cancelled struct {
	// Task is the task as the cancel left it, unless Acked.
	Task mcp.Task
	// Acked: the era acknowledges a cancel without the task (E60): what it did shows in
	// later reads.
	Acked bool
	// Malformed says why the result is no task.
	Malformed error
}

// errNoStatus is the Malformed of a read whose task has no valid status.
var errNoStatus = errors.New("no valid task status")

// DialerFor returns the dialer of a run's virtual clients on t, whose manifest is m: t.Dialer
// when set (an era implemented outside this package), else the one of m.Era, the
// stateless requester of 2026-07-28 declaring form elicitation and, when the run creates
// tasks, the Tasks extension (E39; the same capabilities on every request, ext-gap-6), or
// the session of 2025-11-25.
func DialerFor(t *Target, m *Manifest) (Dialer, error) {
	if t.Dialer != nil {
		return t.Dialer, nil
	}
	if m.Era != ProtocolModern {
		return legacyDialer{caps: ClientCapabilities(), dialect: t.dialect()}, nil
	}
	caps := mcp.ModernClientCapabilities{Elicitation: &mcp.ElicitationCapability{Form: mcp.On()}}
	if m.AsTask {
		caps.DeclareTasks()
	}
	env, err := t.NewEnvelope(m.ProtocolVersion, caps)
	if err != nil {
		return nil, err
	}
	return StatelessDialer(env), nil
}

// PlainDialer is a Dialer whose era can make a call that asks for no task on another
// connection than its own (2026-07-28: an envelope without the Tasks extension), for a
// rollback drill's plain calls. A Dialer without it makes them on its own connections,
// with params that ask for no task (Traits.TaskParam).
type PlainDialer interface {
	Dialer
	// Plain returns the dialer of connections on t that ask for no task.
	Plain(t *Target) (Dialer, error)
}

// SessionConn is a Conn over a Session, the raw request path (Session.CallOpCut, raw.go):
// for the probes, which send what no driver would, and for what only a session has (its id,
// the SSE retry, Idle).
type SessionConn interface {
	Conn
	Session() *Session
}

// SessionOf returns the Session under c, nil when c has none.
func SessionOf(c Conn) *Session {
	if sc, ok := c.(SessionConn); ok {
		return sc.Session()
	}
	return nil
}

var (
	_ SessionConn = legacyConn{}
	_ SessionConn = statelessConn{}
	_ Dialer      = legacyDialer{}
	_ PlainDialer = statelessDialer{}
)
