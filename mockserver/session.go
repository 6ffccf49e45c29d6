package mockserver

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/tasksim/tasksim/internal/mcp"
)

// session is one MCP session (H2): created by initialize, ended by DELETE or server close.
// Sessions are not authentication: the tenant of each request comes from its own token.
type session struct {
	id         string
	version    string // negotiated protocol version
	tasks      bool   // the version has Tasks and the capability was declared
	elicitForm bool   // the client declared form-mode elicitation (R60)

	initialized atomic.Bool                 // notifications/initialized arrived
	getReaders  atomic.Int32                // open GET streams
	getQ        atomic.Pointer[chan []byte] // messages for the GET stream (H6), made by the first GET: each read by one stream only
	events      atomic.Uint64               // SSE event ids, unique across the session's streams (H7)
	streams     atomic.Uint64               // stream numbers, encoded in event ids
	limits      sessionLimits               // rate limiters, made on first use (ratelimit.go)

	gmu    sync.Mutex
	getEnd chan struct{} // closed and cleared when a GET stream ends; nil until awaited
	done   chan struct{} // closed when the session ends; nil until awaited (most never are)
	ended  bool          // the session has ended
}

// getQueueLen bounds the GET stream backlog; a full queue drops notifications (they are
// optional, R20) while elicitations stay pending for the next tasks/result.
const getQueueLen = 256

func newSession(version string, caps mcp.ClientCapabilities) *session {
	return &session{
		id:         randomID(),
		version:    version,
		tasks:      mcp.HasTasks(version),
		elicitForm: caps.Elicitation.SupportsForm(),
	}
}

// queue returns the GET stream queue, making it on first use. Most sessions never open a
// GET stream, so they never pay for the queue (a 256-slot channel is ~6 KB; 10k sessions
// would hold 60 MB that the GC scans).
func (s *session) queue() chan []byte {
	if q := s.getQ.Load(); q != nil {
		return *q
	}
	q := make(chan []byte, getQueueLen)
	if s.getQ.CompareAndSwap(nil, &q) {
		return q
	}
	return *s.getQ.Load()
}

// getEnded returns a channel closed when the next GET stream of s ends (result.go: an
// elicitation it carried goes to a tasks/result stream instead).
func (s *session) getEnded() <-chan struct{} {
	s.gmu.Lock()
	defer s.gmu.Unlock()
	if s.getEnd == nil {
		s.getEnd = make(chan struct{})
	}
	return s.getEnd
}

// endGET counts a GET stream of s out and wakes whoever waits for it to end.
func (s *session) endGET() {
	s.getReaders.Add(-1)
	s.gmu.Lock()
	if s.getEnd != nil {
		close(s.getEnd)
		s.getEnd = nil
	}
	s.gmu.Unlock()
}

// close ends s: its streams end. Only the first call counts.
func (s *session) close() {
	s.gmu.Lock()
	if !s.ended {
		s.ended = true
		if s.done != nil {
			close(s.done)
		}
	}
	s.gmu.Unlock()
}

// closed returns a channel that is closed when s ends (at once if it has).
func (s *session) closed() <-chan struct{} {
	s.gmu.Lock()
	defer s.gmu.Unlock()
	if s.done == nil {
		s.done = make(chan struct{})
		if s.ended {
			close(s.done)
		}
	}
	return s.done
}

// eventID returns a fresh SSE event id "<stream>-<n>" (H7).
func (s *session) eventID(dst []byte, stream uint64) []byte {
	dst = strconv.AppendUint(dst, stream, 10)
	dst = append(dst, '-')
	return strconv.AppendUint(dst, s.events.Add(1), 10)
}

// sessions is the table of live sessions.
type sessions struct {
	mu sync.RWMutex
	m  map[string]*session
}

func (ss *sessions) add(s *session) {
	ss.mu.Lock()
	if ss.m == nil {
		ss.m = make(map[string]*session)
	}
	ss.m[s.id] = s
	ss.mu.Unlock()
}

func (ss *sessions) lookup(id string) *session {
	ss.mu.RLock()
	s := ss.m[id]
	ss.mu.RUnlock()
	return s
}

// remove ends the session with id and reports whether it existed.
func (ss *sessions) remove(id string) bool {
	ss.mu.Lock()
	s, ok := ss.m[id]
	delete(ss.m, id)
	ss.mu.Unlock()
	if ok {
		s.close()
	}
	return ok
}

// closeAll ends every session (server shutdown).
func (ss *sessions) closeAll() {
	ss.mu.Lock()
	for id, s := range ss.m {
		s.close()
		delete(ss.m, id)
	}
	ss.mu.Unlock()
}

func (ss *sessions) count() int {
	ss.mu.RLock()
	defer ss.mu.RUnlock()
	return len(ss.m)
}

// randomID returns 128 bits from crypto/rand as 32 hex digits: session and task ids are
// unguessable (R12, R54, H2).
func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}
