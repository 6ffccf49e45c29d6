package mockserver

import (
	"context"
	"net/http"

	"golang.org/x/time/rate"

	"github.com/tasksim/tasksim/internal/mcp"
)

// The endpoint /mcp is one task core (the store, the task lifecycle, the executor, the
// downstream, the ledger and idempotency, TTL, the pollInterval policy, backpressure) and
// one front end per protocol era over it. A front end owns what its era spells: how a
// request reaches a method (its method table), the envelope of a reply and the encoding
// of a task in it. The core knows no era: it answers through call.reply and writes a
// create reply with call.fe.appendCreateLocked, and the front end of the call decides the
// bytes.
//
//	front end        era                    file
//	sessionFront     2025-11-25 and older   methods.go, session.go, result.go, http.go (GET, DELETE)
//	statelessFront   2026-07-28             modern.go, listen.go, modernfaults.go
//
// HTTP listening stays shared (http.go: origin, tokens, faults per request, the body): a POST
// is then handed to its front end by route, the stateless front first when Config.Protocols
// turns it on; initFronts chooses once who answers a GET or a DELETE. A new era would be a
// new front end, its case in call.reply, its turn in route and its line in initFronts,
// nothing else.

// frontEnd is one era's side of the endpoint, as the task core sees it.
type frontEnd interface {
	// era names the front end: it indexes the request counters (requests.go).
	era() era
	// reply writes result, or e, as the reply to c in the era's envelope.
	reply(c *call, result []byte, e *mcp.Error)
	// appendCreateLocked appends the CreateTaskResult of t, whose mu is held, in the era's
	// encoding.
	appendCreateLocked(t *task, dst []byte) []byte
	// limiter returns the per-client rate limiter of kind k of the request r on sess: the
	// era says who the client is (ratelimit.go); nil when k has no per-client rate.
	limiter(l *limits, sess *session, r *http.Request, k limitKind) *rate.Limiter
}

// No method of frontEnd called through the interface takes the *call: c would escape to
// the heap on every request. call.reply calls reply through a type switch for that.

var (
	_ frontEnd = (*sessionFront)(nil)
	_ frontEnd = (*statelessFront)(nil)
)

// getWait holds a tasks/get of t, a request with ctx on sess, before it answers: ok false
// means the get is answered e, or abandoned when e is nil.
type getWait func(ctx context.Context, sess *session, t *task) (ok bool, e *mcp.Error)

// replyFilter rewrites the reply to a request of op, a result or an error, before its front
// end writes it. The known-bad modes that break replies are filters, composed once when the
// front end is built (knownbad.go, knownbad2026.go); with every mode off the filter is
// keepReply. A filter takes the op, never the *call, which would escape to the heap.
type replyFilter func(op mcp.Op, result []byte, e *mcp.Error) ([]byte, *mcp.Error)

// keepReply is the filter of an honest server: the reply as it was built.
func keepReply(_ mcp.Op, result []byte, e *mcp.Error) ([]byte, *mcp.Error) { return result, e }

// then returns the filter that applies f, then g.
func (f replyFilter) then(g replyFilter) replyFilter {
	return func(op mcp.Op, result []byte, e *mcp.Error) ([]byte, *mcp.Error) {
		result, e = f(op, result, e)
		return g(op, result, e)
	}
}

// sessionFront is the front end of protocol 2025-11-25 (and the versions before it): it
// negotiates a session with initialize (H1, H2), keeps the session table, serves the
// session's GET stream and DELETE, and dispatches the methods of a session (methods.go).
// Server embeds it, so that its session table is the server's.
type sessionFront struct {
	srv      *Server
	dialect  mcp.Dialect // the era's spelling: mcp.V20251125
	sessions sessions
	compat   compatCounters // calls whose task parameter was ignored (compat.go)
	// The known-bad modes of its replies and its methods, chosen once by init
	// (knownbad.go).
	filter replyFilter
	sessionModes
	// anon serves requests without Mcp-Session-Id (sessionless, knownbad.go); nil = they
	// are refused with missingSession.
	anon *session
	// missingSession is the status of a request without Mcp-Session-Id: 400 (H2), or 404
	// with missing_session_404; lostSession that of a request on an unknown or ended
	// session: 404 (H8), or 400 with lost_session_400 (knownbad.go).
	missingSession, lostSession int
}

func (f *sessionFront) era() era { return eraLegacy }

// appendCreateLocked is the CreateTaskResult of 2025-11-25: the task nested under "task".
func (f *sessionFront) appendCreateLocked(t *task, dst []byte) []byte {
	return t.appendCreateLocked(dst)
}

// limiter is the session's limiter: a session is the client of 2025-11-25.
func (f *sessionFront) limiter(l *limits, sess *session, _ *http.Request, k limitKind) *rate.Limiter {
	return l.clientLimiter(sess, k)
}

func (m *statelessFront) era() era { return eraModern }

// appendCreateLocked is the CreateTaskResult of 2026-07-28 (E45).
func (m *statelessFront) appendCreateLocked(t *task, dst []byte) []byte {
	return t.appendCreateModernLocked(dst)
}

// limiter is the bearer token's limiter: the only client identity 2026-07-28 has (E4).
func (m *statelessFront) limiter(l *limits, _ *session, r *http.Request, k limitKind) *rate.Limiter {
	return l.tokenLimiter(m.srv.bound(), r, k)
}

// initFronts builds the front ends and chooses, once, which answers a GET or a DELETE
// (streams), by Config.Protocols: the session front's stream and end of session, or with
// modern only 405 (E30).
func (s *Server) initFronts() {
	s.sessionFront.init(s)
	s.modern.init(s)
	s.streams = s.sessionFront.serveStream
	if s.modern.only {
		s.streams = s.modern.refuseStream
	}
}

// route hands a decoded POST to its front end (docs/RULES.md#era-detection): the stateless
// front first when it is on (Config.Protocols both or modern), which serves what is of its
// era, refuses what its rules refuse, and hands back the rest; the session front then.
// A method, not a func chosen once: through a func value msg would escape to the heap.
func (s *Server) route(w http.ResponseWriter, r *http.Request, tenant string, msg *mcp.Message) {
	if s.modern.on && s.modern.routeModern(w, r, tenant, msg) {
		return
	}
	s.sessionFront.serve(w, r, tenant, msg)
}
