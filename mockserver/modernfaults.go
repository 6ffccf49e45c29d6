package mockserver

import (
	"net/http"

	"github.com/tasksim/tasksim/internal/mcp"
)

// The server faults, knobs and insecure modes whose legacy form acts on what the modern era
// does not have (sessions, the tasks/result stream, server-to-client requests), and what
// each becomes there. The rest act on the task core or on every POST and need no
// translation (faults.go, backpressure.go, insecure.go).
//
//	legacy                                   modern (2026-07-28)
//	session_expiry: the session is           the reply that carries a task's outcome is cut:
//	  forgotten, its request answered 404,   a tasks/get whose reply would inline the result
//	  and its tasks/result streams cut        or error, or a tasks/update once its answers are
//	  without the reply                      applied (the acknowledgement is lost); the
//	                                         connection closes with no reply, as reset does.
//	                                         A cut tasks/get does not count the result fetched
//	duplicate: the reply of a tasks/result   a tasks/get whose reply inlines the result or
//	  SSE stream is sent twice               error is sent as an SSE stream with the reply twice
//	restart: every session forgotten,        every open subscriptions/listen stream dropped
//	  their streams end                      without its result (listen.go)
//	revocation scope results: tasks/result   a tasks/get that would inline the result or error,
//	  gets 403                               and a listen asking for taskIds, get 403
//	session_bound: tasks bound to the        tasks bound to the client's self-description,
//	  creating session, not the tenant       _meta clientInfo (name, version), not the tenant:
//	                                         any valid token presenting the same clientInfo
//	                                         reads and cancels the task, and the same tenant
//	                                         presenting another cannot (E6: clientInfo is for
//	                                         display only; E67)
//	rate limits per client (the session)     per bearer token (the only client identity the
//	                                         era has, E4); one client without tokens
//
// The fault of a modern request draws from the same stream as its legacy form, and is counted
// and recorded under the same kind (Stats.Faults, Config.Events with the task's id).

// cutReply applies session_expiry to a modern reply that carries t's outcome: when it fires,
// the connection is closed with no reply (it does not return).
func (s *core) cutReply(t *task) {
	if !s.faults.trig[faultSessionExpiry].On() {
		return
	}
	now := s.clock.Now()
	if s.fires(faultSessionExpiry, now) {
		s.injected(faultSessionExpiry, now, t.id)
		panic(http.ErrAbortHandler) // net/http closes the connection without a reply
	}
}

// duplicates reports whether the duplicate fault sends this payload reply twice.
func (s *core) duplicates() bool {
	return s.faults.duplicate && s.fires(faultDuplicate, s.clock.Now())
}

// replyTwice writes result, a tasks/get result of t, as an SSE stream carrying the reply
// twice (the duplicate fault); a correct client keeps the first.
func (c *call) replyTwice(result []byte, t *task) {
	if !c.replyLatency() {
		return
	}
	c.srv.requests.answered(eraModern, c.op, false)
	b := mcp.AppendResult(nil, c.msg.ID, c.srv.modern.modernResult(result))
	es := newEventStream(c.w)
	if es.start() == nil && es.event(b) == nil && es.event(b) == nil {
		c.srv.injected(faultDuplicate, c.srv.clock.Now(), t.id)
	}
}

// clientOwner returns the owner standing for the client a modern request describes in its
// _meta clientInfo (session_bound, see above): one per distinct description, at most
// maxClientOwners; beyond, descriptions share the owner of their form capability.
func (m *statelessFront) clientOwner(client string, form int) *session {
	m.byClientMu.Lock()
	defer m.byClientMu.Unlock()
	key := client
	if form == 1 {
		key += "\x00form"
	}
	if o := m.byClient[key]; o != nil {
		return o
	}
	if len(m.byClient) >= maxClientOwners {
		return m.owners[form]
	}
	if m.byClient == nil {
		m.byClient = make(map[string]*session)
	}
	o := &session{id: "modern", version: mcp.Version20260728, tasks: true, elicitForm: form == 1}
	m.byClient[key] = o
	return o
}

// maxClientOwners bounds the owners of session_bound in the modern era.
const maxClientOwners = 4096

// clientName is what session_bound binds a modern task to: clientInfo's name and version,
// "" when the request sent none.
func clientName(info *mcp.Implementation) string {
	if info == nil {
		return ""
	}
	return info.Name + "\x00" + info.Version
}
