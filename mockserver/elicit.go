package mockserver

import (
	"encoding/json"
	"strconv"

	"github.com/tasksim/tasksim/internal/mcp"
)

// elicitation is one elicitation/create the server sends for a task in input_required. Its
// id is unique across the server, so it is never reused within any session (H11), and an
// answer is routed by it. Mutable fields are guarded by the task's mu.
type elicitation struct {
	id    string // JSON-RPC id text, e.g. "e-7" with quotes
	t     *task
	round int
	msg   []byte // the encoded request

	answered    bool
	deliveredTo *stream // the tasks/result stream that carried it, if any
	onGET       bool    // queued for the owner's GET stream (H6: not repeated while that stream is up)
}

// elicitationSchema is the form every input round asks for.
const elicitationSchema = `{"type":"object","properties":{"answer":{"type":"string","description":"any text"}},"required":["answer"]}`

// appendFormLocked appends the message and requestedSchema members of round's elicitation
// of t, after a leading "message": key: tasksim's own form, or a fixture's (fixtures.go).
func (t *task) appendFormLocked(dst []byte, round int) []byte {
	if fc := t.work.fixture; fc != nil && fc.schema != "" {
		dst = mcp.AppendString(dst, fc.message)
		return append(dst, `,"requestedSchema":`+fc.schema...)
	}
	dst = mcp.AppendString(dst, "tasksim needs input for task "+t.id+" (round "+strconv.Itoa(round)+" of "+strconv.Itoa(t.work.rounds)+")")
	return append(dst, `,"requestedSchema":`+elicitationSchema...)
}

// newElicitation builds and registers the request for round of t. It carries related-task
// _meta (R31, R36).
func (s *Server) newElicitation(t *task, round int) *elicitation {
	id := mcp.StringID("e-" + strconv.FormatUint(s.elicitSeq.Add(1), 10))
	params := t.appendFormLocked([]byte(`{"mode":"form","message":`), round)
	if id := s.modes.inputMeta(t.id); id != "" { // input_no_meta: none (R36, knownbad.go)
		params = append(params, `,"_meta":`...)
		params = append(params, mcp.RelatedTaskMeta(id)...)
	}
	params = append(params, '}')
	e := &elicitation{id: id.String(), t: t, round: round, msg: mcp.AppendRequest(nil, id, s.dialect.Method(mcp.OpElicit), params)}
	s.elicitMu.Lock()
	s.elicits[e.id] = e
	s.elicitMu.Unlock()
	return e
}

// pendingElicitations is the number of elicitations registered and not yet answered.
func (s *core) pendingElicitations() int {
	s.elicitMu.Lock()
	defer s.elicitMu.Unlock()
	return len(s.elicits)
}

// forgetElicitation unregisters e; later answers to it are ignored.
func (s *core) forgetElicitation(e *elicitation) {
	s.elicitMu.Lock()
	delete(s.elicits, e.id)
	s.elicitMu.Unlock()
}

// answerElicitation routes a client's response message to the waiting task. Answers to
// unknown ids, or from another tenant than the task's, are ignored: a response needs no reply.
func (s *core) answerElicitation(msg *mcp.Message, tenant string) {
	s.elicitMu.Lock()
	e := s.elicits[msg.ID.String()]
	if e != nil && e.t.tenant == tenant {
		delete(s.elicits, e.id)
	} else {
		e = nil
	}
	s.elicitMu.Unlock()
	if e == nil {
		return
	}
	s.applyAnswer(e, msg.Kind == mcp.KindError, msg.Result)
}

// applyAnswer hands the requestor's answer to e, taken out of the registry, to its task:
// a JSON-RPC error (rpcErr), or an ElicitResult. Both eras answer through it: a response
// POSTed to the legacy endpoint, an inputResponses entry of tasks/update (modern.go).
func (s *core) applyAnswer(e *elicitation, rpcErr bool, result json.RawMessage) {
	if rpcErr {
		e.t.answer(e, "", nil, true)
		return
	}
	var r mcp.ElicitResult
	if err := json.Unmarshal(result, &r); err != nil {
		r.Action = "malformed"
	}
	e.t.mu.Lock()
	s.modes.echo(e.t, "; answer: ", r.Content) // echo_secrets (insecure.go)
	e.t.mu.Unlock()
	e.t.answer(e, r.Action, r.Content, false)
}

// statusNotification encodes notifications/tasks/status for t when they are enabled; nil
// otherwise. It has no related-task _meta (R21). Called with t.mu held.
func (s *Server) statusNotification(t *task) []byte {
	if !s.cfg.StatusNotifications || t.owner.getReaders.Load() == 0 {
		return nil
	}
	return mcp.AppendRequest(nil, mcp.ID{}, s.dialect.Method(mcp.OpTaskStatus), t.appendLocked(nil))
}

// notifyOwner queues a status notification for the owning session's GET stream only (never
// broadcast); a full queue drops it, since notifications are optional (R20). A queued one is
// counted sent (Stats.Notifications).
func (s *Server) notifyOwner(sess *session, msg []byte) {
	if s.enqueue(sess, msg) {
		s.notes.count(eraLegacy, noteTaskStatus)
	}
}

// enqueue queues msg for sess's GET stream and reports whether it did.
func (s *core) enqueue(sess *session, msg []byte) bool {
	if msg == nil {
		return false
	}
	q := sess.getQ.Load()
	if q == nil {
		return false // no GET stream was ever opened: nobody could read it
	}
	select {
	case *q <- msg:
		return true
	default:
		return false
	}
}

// sendOwner queues a server request for the owning session's GET stream when one is open.
// If it is dropped, the request is still pending and the next tasks/result carries it.
func (s *core) sendOwner(sess *session, msg []byte) {
	if sess.getReaders.Load() == 0 {
		return
	}
	s.enqueue(sess, msg)
}
