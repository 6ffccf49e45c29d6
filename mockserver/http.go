package mockserver

import (
	"time"

	"bytes"
	"errors"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/tasksim/tasksim/internal/mcp"
)

// Header names of Streamable HTTP (H2, H3). Go canonicalises header keys, so these match
// any case on the wire.
const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "Mcp-Protocol-Version"
)

// bufPool lends the buffers of a request: its body, its result and its reply.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// maxPooledBuf is the largest buffer given back to bufPool: a rare large reply (a big
// payload_bytes) is left to the collector rather than kept for every later request.
const maxPooledBuf = 64 << 10

// getBuf borrows an empty buffer from bufPool; give it back with putBuf.
func getBuf() *[]byte {
	bp := bufPool.Get().(*[]byte)
	*bp = (*bp)[:0]
	return bp
}

// putBuf gives bp back to bufPool, keeping b, the buffer as it grew, when it is larger.
// Nothing may use either after.
func putBuf(bp *[]byte, b []byte) {
	if cap(b) > cap(*bp) {
		*bp = b[:0]
	}
	if cap(*bp) <= maxPooledBuf {
		bufPool.Put(bp)
	}
}

// serveMCP is the single MCP endpoint: POST carries one JSON-RPC message, GET opens the
// server-to-client stream, DELETE ends a session (docs/RULES.md: H4, H6, H9).
func (s *Server) serveMCP(w http.ResponseWriter, r *http.Request) {
	if !s.originAllowed(r.Header.Get("Origin")) {
		s.rejected(r, mcp.OpUnknown, http.StatusForbidden)
		httpError(w, http.StatusForbidden, "origin "+r.Header.Get("Origin")+" is not allowed (H10)")
		return
	}
	tenant, ok := s.authenticate(r)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="tasksim", error="invalid_token"`)
		s.rejected(r, mcp.OpUnknown, http.StatusUnauthorized)
		httpError(w, http.StatusUnauthorized, "a valid bearer token is required (H10)")
		return
	}
	if s.faults.perRequest && s.requestFault(w, r) {
		return // answered by an injected fault (faults.go)
	}
	switch r.Method {
	case http.MethodPost:
		s.servePost(w, r, tenant)
	case http.MethodGet, http.MethodDelete:
		s.streams(w, r) // initFronts chose who answers them
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		s.rejected(r, mcp.OpUnknown, http.StatusMethodNotAllowed)
		httpError(w, http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed on the MCP endpoint")
	}
}

func (s *Server) servePost(w http.ResponseWriter, r *http.Request, tenant string) {
	if !isJSON(r.Header.Get("Content-Type")) {
		s.rejected(r, mcp.OpUnknown, http.StatusUnsupportedMediaType)
		httpError(w, http.StatusUnsupportedMediaType, "Content-Type must be application/json, got "+quoteOrNone(r.Header.Get("Content-Type")))
		return
	}
	bp := getBuf()
	body, err := readBody(w, r, s.cfg.MaxBodyBytes, *bp)
	defer putBuf(bp, body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			s.rejected(r, mcp.OpUnknown, http.StatusRequestEntityTooLarge)
			httpError(w, http.StatusRequestEntityTooLarge, "request body exceeds the limit of "+itoa(mbe.Limit)+" bytes")
			return
		}
		s.rejected(r, mcp.OpUnknown, http.StatusBadRequest)
		httpError(w, http.StatusBadRequest, "reading request body: "+err.Error())
		return
	}
	msg, perr := mcp.Decode(body)
	if perr != nil {
		s.rejected(r, s.dialect.Op(msg.Method), http.StatusBadRequest)
		writeJSONError(w, http.StatusBadRequest, msg.ID, perr)
		return
	}
	if s.admitting && msg.Kind == mcp.KindRequest && !s.admit(r) {
		return // stalled, and the client gave up (latency.go)
	}
	if s.cfg.Tracer != nil && msg.Kind == mcp.KindRequest {
		s.traced(w, r, tenant, &msg) // under a server span (trace.go)
		return
	}
	s.route(w, r, tenant, &msg) // to the front ends of Config.Protocols (front.go)
}

// serve answers a POST of the session era: initialize, or a message of a session.
func (f *sessionFront) serve(w http.ResponseWriter, r *http.Request, tenant string, msg *mcp.Message) {
	s := f.srv
	op := s.dialect.Op(msg.Method)
	if msg.Kind == mcp.KindRequest && op == mcp.OpInitialize {
		f.initialize(w, r, msg)
		return
	}
	sess, status, reason := f.sessionOf(r)
	if sess == nil {
		s.rejected(r, op, status)
		httpErrorID(w, status, msg.ID, reason)
		return
	}
	switch msg.Kind {
	case mcp.KindNotification:
		if op == mcp.OpInitialized {
			sess.initialized.Store(true)
		}
		w.WriteHeader(http.StatusAccepted)
	case mcp.KindResult, mcp.KindError:
		s.answerElicitation(msg, tenant)
		w.WriteHeader(http.StatusAccepted)
	case mcp.KindRequest:
		c := call{srv: s, fe: f, w: w, r: r, sess: sess, tenant: tenant, msg: *msg, op: op}
		f.dispatch(&c)
	}
}

// serveStream answers a GET (the session's stream) or a DELETE (the session's end).
func (f *sessionFront) serveStream(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		f.serveGet(w, r)
	} else {
		f.serveDelete(w, r)
	}
}

// init sets the statuses of a missing and a lost session and the stand-in session of
// sessionless, as the known-bad modes choose them once (knownbad.go).
func (f *sessionFront) init(s *Server) {
	f.srv = s
	kb := s.cfg.KnownBad
	f.filter = kb.sessionReplies()
	f.sessionModes = kb.sessionModes(s.closing, s.modes.resultMeta)
	f.lostSession = http.StatusNotFound      // H8
	f.missingSession = http.StatusBadRequest // H2
	if kb.MissingSession404 {
		f.missingSession = http.StatusNotFound
	}
	if kb.LostSession400 {
		f.lostSession = http.StatusBadRequest
	}
	if kb.Sessionless {
		f.anon = newSession(s.newestVersion(), mcp.ClientCapabilities{})
		f.anon.tasks = f.anon.tasks && s.tasksOn()
	}
}

// sessionOf finds the session a non-initialize request belongs to and checks its protocol
// version header: 400 without a session id (H2) or with a bad version (H3), 404 for an
// unknown or ended session (H8). The known-bad modes sessionless and lost_session_400 change
// the first and the last (knownbad.go).
func (f *sessionFront) sessionOf(r *http.Request) (*session, int, string) {
	s := f.srv
	id := r.Header.Get(headerSessionID)
	var sess *session
	if id == "" {
		if sess = f.anon; sess == nil {
			return nil, f.missingSession, "missing " + headerSessionID + " header: send initialize first (H2)"
		}
	} else if sess = s.sessions.lookup(id); sess == nil {
		return nil, f.lostSession, "session not found: it is unknown or has ended; initialize again (H8)"
	}
	if v := r.Header.Get(headerProtocolVersion); v != "" && v != sess.version {
		if !mcp.SessionVersion(v) {
			return nil, http.StatusBadRequest, "unsupported " + headerProtocolVersion + " " + quoteOrNone(v) + " (H3)"
		}
		return nil, http.StatusBadRequest, headerProtocolVersion + " " + v + " does not match the negotiated version " + sess.version + " (H3)"
	}
	return sess, 0, ""
}

// serveGet opens the session's server-to-client SSE stream (H6). It carries status
// notifications and elicitation requests of the session's tasks; each message goes out on
// exactly one stream.
func (f *sessionFront) serveGet(w http.ResponseWriter, r *http.Request) {
	s := f.srv
	if !accepts(r.Header.Get("Accept"), "text/event-stream") {
		s.rejected(r, mcp.OpUnknown, http.StatusNotAcceptable)
		httpError(w, http.StatusNotAcceptable, "GET needs Accept: text/event-stream (H6)")
		return
	}
	sess, status, reason := f.sessionOf(r)
	if sess == nil {
		s.rejected(r, mcp.OpUnknown, status)
		httpError(w, status, reason)
		return
	}
	q := sess.queue()
	closed := sess.closed()
	sess.getReaders.Add(1)
	defer sess.endGET()
	sw := newSSE(w, sess)
	sw.retry = s.cfg.SSERetry
	if err := sw.start(); err != nil {
		return
	}
	for {
		select {
		case msg := <-q:
			if sw.event(msg) != nil {
				return
			}
		case <-r.Context().Done():
			return
		case <-closed:
			return
		case <-s.closing:
			return
		}
	}
}

// serveDelete ends a session (H9). Tasks outlive it: they are bound to the authorization
// context, not to the session (docs/RULES.md#r52).
func (f *sessionFront) serveDelete(w http.ResponseWriter, r *http.Request) {
	s := f.srv
	id := r.Header.Get(headerSessionID)
	if id == "" {
		s.rejected(r, mcp.OpUnknown, http.StatusBadRequest)
		httpError(w, http.StatusBadRequest, "missing "+headerSessionID+" header (H9)")
		return
	}
	if !f.sessions.remove(id) {
		s.rejected(r, mcp.OpUnknown, f.lostSession)
		httpError(w, f.lostSession, "session not found (H8)")
		return
	}
	w.WriteHeader(http.StatusOK)
}

// authenticate maps the bearer token to a tenant; without configured tokens every request is
// accepted with the empty tenant (no authorization context).
func (s *Server) authenticate(r *http.Request) (string, bool) {
	if len(s.cfg.Tokens) == 0 {
		return "", true
	}
	h := r.Header.Get("Authorization")
	const prefix = "Bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return "", false
	}
	tenant, ok := s.cfg.Tokens[h[len(prefix):]]
	if ok && s.revoked(tenant, false) {
		return "", false // revoked: as unknown as a token never issued (insecure.go)
	}
	return tenant, ok
}

// originAllowed accepts no Origin (non-browser clients), loopback origins, and the
// configured list (H10): a browser page elsewhere must not drive a local server.
func (s *Server) originAllowed(origin string) bool {
	if origin == "" {
		return true
	}
	for _, o := range s.cfg.AllowedOrigins {
		if o == origin {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// readBody reads at most limit bytes of the body into buf.
func readBody(w http.ResponseWriter, r *http.Request, limit int64, buf []byte) ([]byte, error) {
	rd := http.MaxBytesReader(w, r.Body, limit)
	bb := bytes.NewBuffer(buf)
	_, err := bb.ReadFrom(rd)
	return bb.Bytes(), err
}

// isJSON reports whether a Content-Type is application/json (parameters allowed).
func isJSON(ct string) bool {
	if ct == "application/json" {
		return true // the common case, without parsing
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// accepts reports whether an Accept header admits media type mt.
func accepts(accept, mt string) bool {
	for accept != "" {
		var part string
		part, accept, _ = strings.Cut(accept, ",")
		t := strings.TrimSpace(part)
		if i := strings.IndexByte(t, ';'); i >= 0 {
			t = strings.TrimSpace(t[:i])
		}
		if t == mt || t == "*/*" || (strings.HasSuffix(t, "/*") && strings.HasPrefix(mt, t[:len(t)-1])) {
			return true
		}
	}
	return false
}

// httpError writes a transport-level rejection with a JSON-RPC error body (id null), so that
// every client can read what went wrong.
func httpError(w http.ResponseWriter, status int, message string) {
	httpErrorID(w, status, mcp.ID{}, message)
}

func httpErrorID(w http.ResponseWriter, status int, id mcp.ID, message string) {
	writeJSONError(w, status, id, &mcp.Error{Code: mcp.CodeInvalidRequest, Message: message})
}

func writeJSONError(w http.ResponseWriter, status int, id mcp.ID, e *mcp.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(mcp.AppendError(nil, id, e))
}

// writeJSON writes a 200 reply holding one JSON-RPC message.
func writeJSON(w http.ResponseWriter, body []byte) {
	h := w.Header()
	h["Content-Type"] = contentTypeJSON
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

var contentTypeJSON = []string{"application/json"}

func quoteOrNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return `"` + s + `"`
}

// sse writes one Server-Sent Events stream. Only the handler goroutine that owns w uses it.
type sse struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	sess   *session
	stream uint64
	buf    []byte
	on     bool
	dup    bool          // the duplicate fault: the reply goes out twice (faults.go)
	retry  time.Duration // Config.SSERetry: sent as the priming event's retry field; 0 = none
}

func newSSE(w http.ResponseWriter, sess *session) *sse {
	return &sse{w: w, rc: http.NewResponseController(w), sess: sess, stream: sess.streams.Add(1)}
}

// start sends the headers and the priming event: an id and an empty data field, and the
// retry field when the server sets one (H5).
func (s *sse) start() error {
	if s.on {
		return nil
	}
	s.on = true
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	s.w.WriteHeader(http.StatusOK)
	return s.write(nil)
}

// event sends one message as an SSE event with a session-unique id (H7).
func (s *sse) event(msg []byte) error {
	if err := s.start(); err != nil {
		return err
	}
	return s.write(msg)
}

// comment writes an SSE comment line, which clients ignore: a write that fails tells that
// the client is gone.
func (s *sse) comment() error {
	if _, err := s.w.Write(ping); err != nil {
		return err
	}
	return s.rc.Flush()
}

var ping = []byte(": ping\n\n")

func (s *sse) write(msg []byte) error {
	b := s.buf[:0]
	if msg == nil && s.retry > 0 { // the priming event: how long to wait before reconnecting
		b = append(b, "retry: "...)
		b = strconv.AppendInt(b, s.retry.Milliseconds(), 10)
		b = append(b, '\n')
	}
	b = append(b, "id: "...)
	b = s.sess.eventID(b, s.stream)
	b = append(b, '\n')
	var err error
	s.buf, err = writeEvent(s.w, s.rc, b, msg)
	return err
}

// writeEvent appends msg to b, an SSE event's fields so far, as its data field and the
// event's end, writes the event and flushes it; it returns b as it grew, for reuse.
func writeEvent(w http.ResponseWriter, rc *http.ResponseController, b, msg []byte) ([]byte, error) {
	b = append(b, "data: "...)
	b = append(b, msg...) // JSON from our encoders never holds a raw newline
	b = append(b, "\n\n"...)
	if _, err := w.Write(b); err != nil {
		return b, err
	}
	return b, rc.Flush()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
