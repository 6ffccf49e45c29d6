package mockserver

import (
	"net/http"
	"sync/atomic"

	"github.com/tasksim/tasksim/internal/mcp"
)

// Server-side request counting: every JSON-RPC request the MCP endpoint answers, by the Op
// of its method and by Outcome, and every transport-level rejection by HTTP status. The
// counters are atomics indexed by enums, so counting a request is one atomic add and no
// allocation (docs/METRICS.md#server).
//
// What is counted:
//
//	ok, rpc_error  a request the server replied to: a JSON-RPC result, or a JSON-RPC error
//	               object (HTTP 200), as JSON or as the final event of a tasks/result stream.
//	http_error     a POST rejected with an HTTP status, under the Op of its message's
//	               method: 400/404 without a live session, 429 from a rate limit or a full
//	               server with refuse_429 (backpressure.go); mcp.OpUnknown when the body was
//	               not decoded (403, 401, 415, 413, unreadable body).
//	Rejections     every rejection of the MCP endpoint by status, POST, GET and DELETE alike.
//
// Each request is counted in the era whose front end answered it (modern.go): Stats.Requests
// holds both eras, Stats.ModernRequests the modern era's part. A rejection before the era is
// known (403, 401, 415, 413, an unreadable body) counts as modern when its
// MCP-Protocol-Version header names a modern version.
//
// Not counted: notifications and JSON-RPC responses a client POSTs (202 Accepted, no reply),
// requests never answered because the client went away or the server closed first, and
// requests answered by an injected fault (http_5xx, reset, session_expiry: Stats.Faults,
// faults.go).

// Outcome is how the server answered one JSON-RPC request.
type Outcome uint8

const (
	OutcomeOK        Outcome = iota // a JSON-RPC result
	OutcomeRPCError                 // a JSON-RPC error object (HTTP 200)
	OutcomeHTTPError                // an HTTP rejection (4xx) instead of a JSON-RPC reply
	NumOutcomes
)

// String returns the outcome's stable name: "ok", "rpc_error" or "http_error".
func (o Outcome) String() string {
	switch o {
	case OutcomeOK:
		return "ok"
	case OutcomeRPCError:
		return "rpc_error"
	case OutcomeHTTPError:
		return "http_error"
	}
	return "unknown"
}

// RequestCounts counts JSON-RPC requests by Op and Outcome: RequestCounts[op][outcome].
type RequestCounts [mcp.NumOps][NumOutcomes]uint64

// Total returns the number of requests of op, all outcomes.
func (rc *RequestCounts) Total(op mcp.Op) uint64 {
	var n uint64
	if op < mcp.NumOps {
		for _, v := range rc[op] {
			n += v
		}
	}
	return n
}

// numRejectSlots is the number of Rejections slots: nine statuses (see rejectSlot) and a
// last slot for every other status.
const numRejectSlots = 10

// rejectSlot maps an HTTP status to its slot in Rejections.
func rejectSlot(code int) int {
	switch code {
	case http.StatusBadRequest:
		return 0
	case http.StatusUnauthorized:
		return 1
	case http.StatusForbidden:
		return 2
	case http.StatusNotFound:
		return 3
	case http.StatusMethodNotAllowed:
		return 4
	case http.StatusNotAcceptable:
		return 5
	case http.StatusRequestEntityTooLarge:
		return 6
	case http.StatusUnsupportedMediaType:
		return 7
	case http.StatusTooManyRequests:
		return 8
	}
	return numRejectSlots - 1
}

// rejectCode is the inverse of rejectSlot; 0 for the "any other status" slot.
func rejectCode(slot int) int {
	switch slot {
	case 0:
		return http.StatusBadRequest
	case 1:
		return http.StatusUnauthorized
	case 2:
		return http.StatusForbidden
	case 3:
		return http.StatusNotFound
	case 4:
		return http.StatusMethodNotAllowed
	case 5:
		return http.StatusNotAcceptable
	case 6:
		return http.StatusRequestEntityTooLarge
	case 7:
		return http.StatusUnsupportedMediaType
	case 8:
		return http.StatusTooManyRequests
	}
	return 0
}

// Rejections counts the HTTP rejections of the MCP endpoint by status: 400, 401, 403, 404,
// 405, 406, 413, 415 and 429 each have a slot, and one more slot holds any other status.
type Rejections [numRejectSlots]uint64

// Of returns the number of rejections with status code. For a status without its own slot
// it returns the count of all such statuses together.
func (r *Rejections) Of(code int) uint64 { return r[rejectSlot(code)] }

// Each calls f for every slot in order, with code 0 for the "any other status" slot.
func (r *Rejections) Each(f func(code int, n uint64)) {
	for i, n := range r {
		f(rejectCode(i), n)
	}
}

// era is the protocol era of a request: which front end answered it. It indexes the request
// counters.
type era uint8

const (
	eraLegacy era = iota // 2025-11-25 and older, with sessions
	eraModern            // 2026-07-28, stateless (modern.go)
	numEras
)

// String returns the era's stable name, the era label of /metrics: "legacy" or "modern".
func (e era) String() string {
	if e == eraModern {
		return "modern"
	}
	return "legacy"
}

// era is the era of c: its front end's.
func (c *call) era() era { return c.fe.era() }

// requestCounters is the live form of RequestCounts and Rejections.
type requestCounters struct {
	byOp     [numEras][mcp.NumOps][NumOutcomes]atomic.Uint64
	byStatus [numRejectSlots]atomic.Uint64
}

// answered counts a reply to a request of op in era e: a result, or a JSON-RPC error when
// rpcErr.
func (rc *requestCounters) answered(e era, op mcp.Op, rpcErr bool) {
	o := OutcomeOK
	if rpcErr {
		o = OutcomeRPCError
	}
	rc.byOp[e%numEras][op%mcp.NumOps][o].Add(1)
}

// snapshot copies the counters: the requests of both eras, those of the modern era, and the
// rejections.
func (rc *requestCounters) snapshot() (all, modern RequestCounts, rej Rejections) {
	for e := range rc.byOp {
		for op := range rc.byOp[e] {
			for o := range rc.byOp[e][op] {
				n := rc.byOp[e][op][o].Load()
				all[op][o] += n
				if era(e) == eraModern {
					modern[op][o] = n
				}
			}
		}
	}
	for i := range rc.byStatus {
		rej[i] = rc.byStatus[i].Load()
	}
	return all, modern, rej
}

// rejected counts a transport-level rejection of r with status: by status, and for a POST
// (one JSON-RPC message) as an http_error of op, mcp.OpUnknown when the body was not decoded,
// in the era its MCP-Protocol-Version header names. Call it next to the httpError that
// writes the rejection.
func (s *Server) rejected(r *http.Request, op mcp.Op, status int) {
	e := eraLegacy
	if mcp.IsModern(r.Header.Get(headerProtocolVersion)) {
		e = eraModern
	}
	s.rejectedIn(e, r, op, status)
}

// rejectedIn is rejected in era e, for a request whose era is known.
func (s *Server) rejectedIn(e era, r *http.Request, op mcp.Op, status int) {
	s.requests.byStatus[rejectSlot(status)].Add(1)
	if r.Method == http.MethodPost {
		s.requests.byOp[e%numEras][op%mcp.NumOps][OutcomeHTTPError].Add(1)
	}
}
