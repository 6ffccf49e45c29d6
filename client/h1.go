package client

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/textproto"
	"net/url"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// h1Transport is a lean HTTP/1.1 client transport for plain http:// targets. Each round trip
// runs in the caller's goroutine: it takes an idle keep-alive connection (or dials one),
// writes the request, reads the status line and headers, and hands the connection to the
// response body, which gives it back to the pool once the body has been read to its end.
// There are no goroutines per connection and no channel handoffs, which is where
// net/http.Transport spends its time at tens of thousands of requests a second.
//
// A connection is reused only when it is known to be at a message boundary: the body was
// read to its end (Content-Length reached, or the last chunk and trailers read), neither side
// asked for Connection: close, and the request's context never fired while it was in use.
// A body closed before its end closes the connection (a cut SSE stream is not drained).
//
// Retries: a request that fails on a reused connection before any byte of the reply is
// retried once on a new connection only if it is replayable as net/http defines it (GET,
// HEAD, OPTIONS or TRACE, or an Idempotency-Key header, with a body that can be read again).
// A JSON-RPC POST is never retried: the server may have acted on it. To make that failure
// rare, an idle connection is checked before reuse (see alive) and dropped after
// idleTimeout.
//
// Not supported (the request fails or the feature is ignored): TLS and proxies (NewHTTPClient
// keeps net/http for https://), HTTP/2, protocol upgrades (101), waiting for 100 Continue
// (the body is sent at once; 1xx replies are skipped), response trailers (read and
// discarded), transfer codings other than chunked, obsolete header line folding, and
// automatic gzip. Idle connections are closed when found too old, not by a timer.
type h1Transport struct {
	dialer      net.Dialer
	sources     *sourceAddrs     // local addresses of the dials, round robin; nil = the system's
	maxIdle     int              // idle connections kept, all hosts together; more are closed
	idleTimeout time.Duration    // an idle connection older than this is closed, not reused
	now         func() time.Time // the clock of idle timestamps; time.Now when nil

	mu    sync.Mutex
	idle  map[string]*h1Idle // by host:port
	nIdle int

	writers sync.Pool    // *bufio.Writer, held only while a request is written
	interns [64]h1Intern // recently seen header values, so repeats cost no allocation
}

var (
	_ http.RoundTripper = (*h1Transport)(nil)
	_ http.RoundTripper = (*schemeTransport)(nil)
)

// h1Idle is a stack of idle connections to one host:port: the newest on top, so the oldest
// (at the bottom) are the ones that time out.
type h1Idle struct{ conns []*h1Conn }

// newH1Transport returns a transport that keeps at most maxIdle idle connections.
func newH1Transport(maxIdle int) *h1Transport {
	return &h1Transport{
		dialer:      net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second},
		maxIdle:     maxIdle,
		idleTimeout: 90 * time.Second,
		idle:        make(map[string]*h1Idle),
	}
}

// schemeTransport sends http:// requests through the lean transport and everything else
// (https://) through net/http's.
type schemeTransport struct {
	plain *h1Transport
	other *http.Transport
	// certAsked is set once a target asked for a client certificate in a handshake and
	// none was configured (watchCertRequests).
	certAsked atomic.Bool
}

// RoundTrip implements http.RoundTripper.
func (t *schemeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL != nil && req.URL.Scheme == "http" {
		return t.plain.RoundTrip(req)
	}
	resp, err := t.other.RoundTrip(req)
	if err != nil && t.certAsked.Load() && connBroken(err) {
		// In TLS 1.3 a server refuses a missing client certificate after the client's side
		// of the handshake is done: the request's write may fail first (a broken pipe, a
		// reset) and hide the server's alert. A target that asked and then closed the
		// connection under the request is told as such.
		err = &TLSError{Err: fmt.Errorf("%w (%w)", err, errClientCertAsked)}
	}
	return resp, tlsError(err) // a handshake failure says which flag fixes it (tls.go)
}

// connBroken reports whether err is a connection the peer closed under the request: a
// broken pipe, a reset, an end of stream, or the transport closing it on the peer's alert.
func connBroken(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed)
}

// watchCertRequests returns cfg (nil: Go's defaults) set to note, in t.certAsked, a
// handshake in which the target asked for a client certificate and none was configured: it
// answers with none, as Go does without the callback.
func (t *schemeTransport) watchCertRequests(cfg *tls.Config) *tls.Config {
	if cfg != nil && (len(cfg.Certificates) > 0 || cfg.GetClientCertificate != nil) {
		return cfg
	}
	if cfg == nil {
		cfg = &tls.Config{}
	} else {
		cfg = cfg.Clone()
	}
	cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		t.certAsked.Store(true)
		return &tls.Certificate{}, nil
	}
	return cfg
}

// CloseIdleConnections closes the idle connections of both transports
// (http.Client.CloseIdleConnections calls it).
func (t *schemeTransport) CloseIdleConnections() {
	t.plain.CloseIdleConnections()
	t.other.CloseIdleConnections()
}

func (t *h1Transport) clock() time.Time {
	if t.now != nil {
		return t.now()
	}
	return time.Now()
}

// h1Conn is one connection. Its reader lives as long as it does; its writer is borrowed
// from the transport for each request.
type h1Conn struct {
	t      *h1Transport
	key    string // host:port, the pool it returns to
	nc     net.Conn
	br     *bufio.Reader
	idleAt time.Time
	// deadline is the deadline set on nc for the current request (ReplyBy); zero = none.
	// It is set before the liveness probe of a reused connection, which a past one fails.
	deadline time.Time

	// The watch of the context whose end interrupts c's requests (watch), kept from one
	// request to the next of the same context: a run's requests, all under one context,
	// register once per connection instead of once per request (a context.AfterFunc and its
	// stop were about 2,700 instructions of every round trip).
	mu        sync.Mutex
	watchDone <-chan struct{} // Done of the watched context; nil = none watched
	stopWatch func() bool     // stops the watch; nil = none
	ended     bool            // the watched context ended (interruptFor)
	busy      bool            // a request is in flight on c (watch, release)
	cut       bool            // the request in flight was interrupted: c must not be reused

	// The liveness probe of alive: nil raw where the socket cannot be probed.
	raw      syscall.RawConn
	probe    func(fd uintptr) bool // c.probeFD, made once
	probeErr error
	probeBuf [1]byte
}

// watch marks c busy with a request under ctx and makes sure that ctx's end interrupts it:
// the watch of the previous request serves if it watches the same Done channel, else it is
// replaced. It reports false, c not busy, when ctx is seen ended already.
func (c *h1Conn) watch(ctx context.Context) bool {
	done := ctx.Done()
	c.mu.Lock()
	defer c.mu.Unlock()
	if done != c.watchDone {
		if c.stopWatch != nil {
			c.stopWatch() // if it runs anyway, interruptFor finds another Done watched
		}
		c.watchDone, c.stopWatch, c.ended = done, nil, false
		if done != nil {
			c.stopWatch = context.AfterFunc(ctx, func() { c.interruptFor(done) })
		}
	}
	if c.ended {
		return false
	}
	c.busy, c.cut = true, false
	return true
}

// interruptFor is the watch of the context whose Done is done: once it ends, the request
// in flight on c under it fails at once (its I/O deadline passes), and c is not reused.
func (c *h1Conn) interruptFor(done <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.watchDone != done {
		return // a stopped watch that ran late: c serves another context now
	}
	c.ended = true
	if c.busy {
		c.cut = true
		_ = c.nc.SetDeadline(aLongTimeAgo)
	}
}

// release ends c's request: it reports false if the request was interrupted (interruptFor),
// and c must then be closed.
func (c *h1Conn) release() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.busy = false
	return !c.cut
}

// setDeadline sets the I/O deadline of c's next request to at (zero: none), if it is not
// set already.
func (c *h1Conn) setDeadline(at time.Time) error {
	if at.Equal(c.deadline) {
		return nil
	}
	c.deadline = at
	return c.nc.SetDeadline(at)
}

// close closes c and stops its watch.
func (c *h1Conn) close() {
	c.mu.Lock()
	stop := c.stopWatch
	c.stopWatch, c.watchDone = nil, nil
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
	_ = c.nc.Close()
}

// aLongTimeAgo is a deadline that has passed: setting it fails blocked and future I/O at once.
var aLongTimeAgo = time.Unix(1, 0)

// errH1 marks errors of the transport itself (malformed replies, unsupported features).
var errH1 = errors.New("http/1.1 transport")

func h1Errorf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errH1}, args...)...)
}

// RoundTrip implements http.RoundTripper. It always closes req.Body.
func (t *h1Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	return t.roundTripFields(req, nil)
}

// roundTripFields is RoundTrip with req's header fields already rendered (fields, as
// writeFields writes them, the caller's promise that they are req.Header's): a session's
// POSTs send the same fields every time (headFields). nil: render req.Header.
func (t *h1Transport) roundTripFields(req *http.Request, fields []byte) (*http.Response, error) {
	ctx := req.Context()
	if req.URL == nil || req.URL.Scheme != "http" || req.URL.Host == "" {
		closeReqBody(req)
		return nil, h1Errorf("unsupported URL %v (http://host[:port]/... only)", req.URL)
	}
	if err := ctx.Err(); err != nil {
		closeReqBody(req)
		return nil, err
	}
	key := hostPort(req.URL)
	at, _ := replyDeadline(ctx)
	for attempt := 0; ; attempt++ {
		c, reused, err := t.conn(ctx, key, at, attempt > 0) // a retry goes on a new connection
		if err != nil {
			closeReqBody(req)
			return nil, withCtx(ctx, err)
		}
		resp, responded, err := c.roundTrip(ctx, req, fields) // closes req.Body
		if err == nil {
			return resp, nil
		}
		if attempt > 0 || !reused || responded || requestErr(ctx) != nil || !replayable(req) {
			return nil, err
		}
		if req.GetBody != nil {
			body, gerr := req.GetBody()
			if gerr != nil {
				return nil, err
			}
			req = req.Clone(ctx)
			req.Body = body
		}
	}
}

// replayable is net/http's rule for sending a request again after a failure on a reused
// connection: an idempotent method or an idempotency key, and a body that can be re-read.
func replayable(req *http.Request) bool {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	_, k1 := req.Header["Idempotency-Key"]
	_, k2 := req.Header["X-Idempotency-Key"]
	return k1 || k2
}

func closeReqBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// hostPort is u's host with the default port 80 when it names none.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

// conn takes an idle connection to key that is still open, or dials a new one (always when
// fresh), with the I/O deadline at (zero: none) for the request it is taken for.
func (t *h1Transport) conn(ctx context.Context, key string, at time.Time, fresh bool) (c *h1Conn, reused bool, err error) {
	if !fresh {
		if c := t.takeIdle(key, at); c != nil {
			return c, true, nil
		}
	}
	d := t.sources.dialer(&t.dialer)
	if !at.IsZero() { // the dial too is bounded by the reply deadline, as by a context's
		dd := *d
		dd.Deadline = at
		d = &dd
	}
	nc, err := d.DialContext(ctx, "tcp", key)
	if err != nil {
		return nil, false, err
	}
	c = &h1Conn{t: t, key: key, nc: nc, br: bufio.NewReaderSize(nc, 4096)}
	if err := c.setDeadline(at); err != nil {
		c.close()
		return nil, false, err
	}
	if sc, ok := nc.(syscall.Conn); ok && runtime.GOOS != "windows" {
		if raw, err := sc.SyscallConn(); err == nil {
			c.raw, c.probe = raw, c.probeFD
		}
	}
	return c, false, nil
}

// takeIdle pops the newest idle connection to key that has neither timed out nor been
// closed by the server, its I/O deadline set to at. Connections found timed out are closed
// with every older one.
func (t *h1Transport) takeIdle(key string, at time.Time) *h1Conn {
	for {
		t.mu.Lock()
		p := t.idle[key]
		if p == nil || len(p.conns) == 0 {
			t.mu.Unlock()
			return nil
		}
		n := len(p.conns) - 1
		c := p.conns[n]
		p.conns[n] = nil
		p.conns = p.conns[:n]
		t.nIdle--
		var stale []*h1Conn
		expired := t.clock().Sub(c.idleAt) > t.idleTimeout
		if expired { // so are all below it
			stale = append(stale, p.conns...)
			clear(p.conns)
			p.conns = p.conns[:0]
			t.nIdle -= len(stale)
		}
		t.mu.Unlock()
		if expired {
			c.close()
			for _, s := range stale {
				s.close()
			}
			return nil
		}
		if c.setDeadline(at) == nil && c.alive() { // the deadline first: a past one fails the probe
			return c
		}
		c.close()
	}
}

// putIdle returns c to its pool, or closes it if the pool is full or c holds unread bytes.
// Idle connections of the same host that have timed out are closed on the way.
func (t *h1Transport) putIdle(c *h1Conn) {
	if c.br.Buffered() > 0 { // bytes beyond the reply: the connection is out of step
		c.close()
		return
	}
	now := t.clock()
	c.idleAt = now
	t.mu.Lock()
	if t.nIdle >= t.maxIdle {
		t.mu.Unlock()
		c.close()
		return
	}
	p := t.idle[c.key]
	if p == nil {
		p = &h1Idle{}
		t.idle[c.key] = p
	}
	var stale []*h1Conn
	if len(p.conns) > 0 && now.Sub(p.conns[0].idleAt) > t.idleTimeout {
		i := 1
		for i < len(p.conns) && now.Sub(p.conns[i].idleAt) > t.idleTimeout {
			i++
		}
		stale = append(stale, p.conns[:i]...)
		k := copy(p.conns, p.conns[i:])
		clear(p.conns[k:])
		p.conns = p.conns[:k]
		t.nIdle -= i
	}
	p.conns = append(p.conns, c)
	t.nIdle++
	t.mu.Unlock()
	for _, s := range stale {
		s.close()
	}
}

// CloseIdleConnections closes every idle connection. Connections in use are not affected.
func (t *h1Transport) CloseIdleConnections() {
	t.mu.Lock()
	var all []*h1Conn
	for _, p := range t.idle {
		all = append(all, p.conns...)
		clear(p.conns)
		p.conns = p.conns[:0]
	}
	t.nIdle = 0
	t.mu.Unlock()
	for _, c := range all {
		c.close()
	}
}

// alive reports whether an idle connection can be reused: the server has neither closed it
// nor sent anything on it. One non-blocking read on the socket tells: EAGAIN means open and
// quiet; end of file, a reset or a stray byte mean it must go (a byte read here is lost,
// but the connection is closed anyway). Where the socket cannot be probed (Windows, or a
// net.Conn without a descriptor) the connection is trusted.
func (c *h1Conn) alive() bool {
	if c.raw == nil {
		return true
	}
	c.probeErr = nil
	if err := c.raw.Read(c.probe); err != nil {
		return false
	}
	// EAGAIN (Errno.Timeout also holds for ETIMEDOUT, a dead connection that the request
	// will then find dead: the same as no probe, and rare).
	te, ok := c.probeErr.(interface{ Timeout() bool })
	return ok && te.Timeout()
}

// probeFD is the read alive makes, run by syscall.RawConn.Read.
func (c *h1Conn) probeFD(fd uintptr) bool {
	_, c.probeErr = readFD(syscall.Read, fd, c.probeBuf[:])
	return true // never wait for the socket to become readable
}

// readFD calls read with fd as the platform's descriptor type (int on Unix), so that one
// source compiles everywhere.
func readFD[FD ~int | ~uintptr](read func(FD, []byte) (int, error), fd uintptr, b []byte) (int, error) {
	return read(FD(fd), b)
}

// withCtx wraps err with ctx's error when ctx has ended or its reply deadline passed
// (requestErr), so that callers can tell a timeout (errors.Is(err,
// context.DeadlineExceeded)) from a failure of the peer.
func withCtx(ctx context.Context, err error) error {
	if cerr := requestErr(ctx); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w: %w", cerr, err)
	}
	return err
}

// roundTrip writes req on c and reads the head of the reply. responded reports whether any
// byte of a reply arrived (the request must then not be sent again). The context is
// watched until the body ends (watch); on error c is closed.
func (c *h1Conn) roundTrip(ctx context.Context, req *http.Request, fields []byte) (resp *http.Response, responded bool, err error) {
	if !c.watch(ctx) {
		c.close()
		return nil, false, ctx.Err()
	}
	if err := c.writeRequest(req, fields); err != nil {
		c.release()
		c.close()
		return nil, false, withCtx(ctx, err)
	}
	resp, responded, err = c.readHead(req)
	if err != nil {
		c.release()
		c.close()
		return nil, responded, withCtx(ctx, err)
	}
	b := resp.Body.(*h1Body)
	b.ctx = ctx
	if b.left == 0 && b.cr == nil { // no body: the connection is free now
		resp.Body = http.NoBody
		b.end(io.EOF)
	}
	return resp, true, nil
}

// writeRequest writes req's head (its header fields rendered already when fields is not
// nil) and body and flushes them. It closes req.Body.
func (c *h1Conn) writeRequest(req *http.Request, fields []byte) error {
	body := req.Body
	if body == http.NoBody {
		body = nil
	}
	if body != nil {
		defer body.Close()
	}
	bw := c.t.writer(c.nc)
	defer c.t.putWriter(bw)
	n, err := writeHead(bw, req, body != nil, fields)
	if err != nil {
		return err
	}
	switch {
	case n > 0:
		if err := copyBody(bw, body, n); err != nil {
			return err
		}
	case n < 0:
		cw := httputil.NewChunkedWriter(bw)
		if _, err := io.Copy(cw, body); err != nil {
			return err
		}
		if err := cw.Close(); err != nil {
			return err
		}
		bw.WriteString("\r\n") // no trailers
	}
	return bw.Flush()
}

// writeHead writes req's request line and header fields (fields when not nil, else
// req.Header's, writeFields), ending with the blank line, and returns the length of the
// body that follows: 0 for none, -1 for a chunked one.
func writeHead(bw *bufio.Writer, req *http.Request, hasBody bool, fields []byte) (int64, error) {
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	if !validToken(method) {
		return 0, h1Errorf("invalid method %q", method)
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	if !validValue(host) {
		return 0, h1Errorf("invalid Host %q", host)
	}
	bw.WriteString(method)
	bw.WriteByte(' ')
	writeTarget(bw, req.URL)
	bw.WriteString(" HTTP/1.1\r\nHost: ")
	bw.WriteString(host)
	bw.WriteString("\r\n")
	if fields != nil {
		bw.Write(fields)
	} else if err := writeFields(bw, req.Header); err != nil {
		return 0, err
	}
	if req.Close && req.Header["Connection"] == nil {
		bw.WriteString("Connection: close\r\n")
	}
	n := req.ContentLength
	switch {
	case !hasBody:
		n = 0
		if method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
			bw.WriteString("Content-Length: 0\r\n")
		}
	case n > 0:
		bw.WriteString("Content-Length: ")
		bw.Write(strconv.AppendInt(bw.AvailableBuffer(), n, 10))
		bw.WriteString("\r\n")
	default: // a body of unknown length (ContentLength 0 with a body means unknown)
		n = -1
		bw.WriteString("Transfer-Encoding: chunked\r\n")
	}
	bw.WriteString("\r\n")
	return n, nil
}

// writeTarget writes the request target of u: its opaque form, or its path and query.
func writeTarget(bw *bufio.Writer, u *url.URL) {
	if u.Opaque != "" {
		bw.WriteString(u.Opaque)
		return
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	bw.WriteString(p)
	if u.ForceQuery || u.RawQuery != "" {
		bw.WriteByte('?')
		bw.WriteString(u.RawQuery)
	}
}

// writeFields writes the header fields of h (those the transport frames itself left out),
// then User-Agent: h's, or Go's default when h has none, as net/http sends it.
func writeFields(bw *bufio.Writer, h http.Header) error {
	ua := "Go-http-client/1.1"
	for k, vs := range h {
		switch k {
		case "Host", "Content-Length", "Transfer-Encoding", "Trailer":
			continue
		case "User-Agent":
			if len(vs) > 0 {
				ua = vs[0]
			}
			continue
		}
		if !validToken(k) {
			return h1Errorf("invalid header field name %q", k)
		}
		for _, v := range vs {
			if !validValue(v) {
				return h1Errorf("invalid header field value for %q", k)
			}
			writeField(bw, k, v)
		}
	}
	if ua != "" && validValue(ua) {
		bw.WriteString("User-Agent: ")
		bw.WriteString(ua)
		bw.WriteString("\r\n")
	}
	return nil
}

// copyBody copies exactly n bytes of body into bw, reading straight into bw's free buffer.
func copyBody(bw *bufio.Writer, body io.Reader, n int64) error {
	for n > 0 {
		if bw.Available() == 0 {
			if err := bw.Flush(); err != nil {
				return err
			}
		}
		buf := bw.AvailableBuffer()
		buf = buf[:min(int64(cap(buf)), n)]
		k, err := body.Read(buf)
		bw.Write(buf[:k])
		n -= int64(k)
		if err == io.EOF {
			if n > 0 {
				return h1Errorf("request body ended %d bytes short of its ContentLength", n)
			}
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (t *h1Transport) writer(w io.Writer) *bufio.Writer {
	if v := t.writers.Get(); v != nil {
		bw := v.(*bufio.Writer)
		bw.Reset(w)
		return bw
	}
	return bufio.NewWriterSize(w, 4096)
}

func (t *h1Transport) putWriter(bw *bufio.Writer) {
	bw.Reset(nil)
	t.writers.Put(bw)
}

// Limits of a reply's head.
const (
	maxHeadBytes = 1 << 20
	maxFields    = 256
)

// h1Field is one header line of a reply.
type h1Field struct{ k, v string }

// readHead reads the status line and header of the reply to req (skipping 1xx replies) and
// returns a response whose Body is an *h1Body not yet bound to a context.
func (c *h1Conn) readHead(req *http.Request) (resp *http.Response, responded bool, err error) {
	budget := maxHeadBytes
	var arr [24]h1Field
	for {
		line, err := c.readLine(&budget)
		responded = responded || len(line) > 0 || err == nil
		if err != nil {
			return nil, responded, eofAsUnexpected(err)
		}
		code, minor, err := parseStatusLine(line)
		if err != nil {
			return nil, true, err
		}
		status := c.t.intern(line[9:])
		fields, err := c.readFields(&budget, arr[:0])
		if err != nil {
			return nil, true, err
		}
		if code == http.StatusSwitchingProtocols {
			return nil, true, h1Errorf("protocol upgrades (101) are not supported")
		}
		if code >= 200 {
			resp, err := c.response(req, code, minor, status, fields)
			return resp, true, err
		}
		// 1xx: informational; the reply follows.
	}
}

// parseStatusLine reads "HTTP/1.x NNN reason": the status code and the minor version.
func parseStatusLine(line []byte) (code, minor int, err error) {
	if len(line) < 12 || string(line[:5]) != "HTTP/" || line[5] != '1' || line[6] != '.' ||
		line[7] < '0' || line[7] > '9' || line[8] != ' ' || (len(line) > 12 && line[12] != ' ') {
		return 0, 0, h1Errorf("malformed status line %q", line)
	}
	for _, d := range line[9:12] {
		if d < '0' || d > '9' {
			return 0, 0, h1Errorf("malformed status code in %q", line)
		}
		code = code*10 + int(d-'0')
	}
	if code < 100 {
		return 0, 0, h1Errorf("malformed status code in %q", line)
	}
	return code, int(line[7] - '0'), nil
}

// readFields reads header lines up to the blank line that ends them, appending them to
// fields.
func (c *h1Conn) readFields(budget *int, fields []h1Field) ([]h1Field, error) {
	for {
		line, err := c.readLine(budget)
		if err != nil {
			return nil, eofAsUnexpected(err)
		}
		if len(line) == 0 {
			return fields, nil
		}
		if line[0] == ' ' || line[0] == '\t' {
			return nil, h1Errorf("obsolete header line folding is not supported")
		}
		i := bytes.IndexByte(line, ':')
		if i <= 0 {
			return nil, h1Errorf("malformed header line %q", line)
		}
		k, ok := c.t.canonicalKey(line[:i])
		if !ok {
			return nil, h1Errorf("malformed header field name %q", line[:i])
		}
		if len(fields) == maxFields {
			return nil, h1Errorf("more than %d header fields", maxFields)
		}
		fields = append(fields, h1Field{k, c.t.intern(trimOWS(line[i+1:]))})
	}
}

// trimOWS trims the optional whitespace (spaces and tabs) around a header field value.
func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// response builds the response of a final reply (code >= 200) to req from its head: the
// header, and the body framed by it.
func (c *h1Conn) response(req *http.Request, code, minor int, status string, fields []h1Field) (*http.Response, error) {
	r := new(h1Reply) // the response, its body and its header values in one allocation
	h, framing := r.header(fields)
	b := &r.body
	b.c, b.left = c, -1
	b.keep = !req.Close && !hasToken(req.Header["Connection"], "close") && keepAlive(h, minor, framing&hasConnection != 0)
	cl := int64(-1)
	var te []string
	switch {
	case framing&hasTransferEncoding != 0:
		v := h["Transfer-Encoding"]
		if len(v) != 1 || !asciiEqualFold([]byte(v[0]), "chunked") {
			return nil, h1Errorf("unsupported Transfer-Encoding %q", v)
		}
		te = []string{"chunked"}
		delete(h, "Transfer-Encoding")
		delete(h, "Content-Length")
	case framing&hasContentLength != 0:
		v := h["Content-Length"]
		for _, s := range v {
			n, err := parseLength(s)
			if err != nil || n < 0 || (cl >= 0 && n != cl) {
				return nil, h1Errorf("bad Content-Length %q", v)
			}
			cl = n
		}
	}
	switch {
	case code == http.StatusNoContent || code == http.StatusNotModified:
		b.left, cl = 0, 0
	case req.Method == http.MethodHead: // ContentLength tells what a GET would have sent
		b.left = 0
	case te != nil:
		b.cr = httputil.NewChunkedReader(c.br)
	case cl >= 0:
		b.left = cl
	default: // delimited by the end of the connection
		b.keep = false
	}
	r.resp = http.Response{
		Status:           status,
		StatusCode:       code,
		Proto:            proto(minor),
		ProtoMajor:       1,
		ProtoMinor:       minor,
		Header:           h,
		Body:             b,
		ContentLength:    cl,
		TransferEncoding: te,
		Close:            !b.keep,
		Request:          req,
	}
	return &r.resp, nil
}

// The framing fields a reply's header has (h1Reply.header): response looks up only those.
const (
	hasTransferEncoding uint8 = 1 << iota
	hasContentLength
	hasConnection
)

// header builds the header of fields, its values backed by r's array when they fit, and
// says which framing fields it has.
func (r *h1Reply) header(fields []h1Field) (http.Header, uint8) {
	h := make(http.Header, len(fields))
	vals := r.vals[:]
	if len(fields) > len(vals) {
		vals = make([]string, len(fields))
	}
	var framing uint8
	for i, f := range fields {
		switch f.k {
		case "Transfer-Encoding":
			framing |= hasTransferEncoding
		case "Content-Length":
			framing |= hasContentLength
		case "Connection":
			framing |= hasConnection
		}
		if old, ok := h[f.k]; ok {
			h[f.k] = append(old, f.v)
			continue
		}
		vals[i] = f.v
		h[f.k] = vals[i : i+1 : i+1]
	}
	return h, framing
}

// parseLength is strconv.ParseInt(s, 10, 64) of a Content-Length: plain digits (what
// servers send) without strconv, anything else (a sign, too many digits) by it.
func parseLength(s string) (int64, error) {
	if len(s) == 0 || len(s) > 18 {
		return strconv.ParseInt(s, 10, 64)
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return strconv.ParseInt(s, 10, 64)
		}
		n = n*10 + int64(c-'0')
	}
	return n, nil
}

// h1Reply is what readHead allocates for one reply.
type h1Reply struct {
	resp http.Response
	body h1Body
	vals [8]string // backing of the header values (one each) when there are at most 8
}

// proto is the protocol name of HTTP/1.minor.
func proto(minor int) string {
	switch minor {
	case 0:
		return "HTTP/1.0"
	case 1:
		return "HTTP/1.1"
	}
	return "HTTP/1." + strconv.Itoa(minor)
}

// readLine reads one line of a reply's head, without its line ending, charging it to budget.
// The slice is valid until the next read from c.
func (c *h1Conn) readLine(budget *int) ([]byte, error) {
	line, err := c.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) { // longer than the reader's buffer: rare
		long := append([]byte(nil), line...)
		for errors.Is(err, bufio.ErrBufferFull) && len(long) <= *budget {
			line, err = c.br.ReadSlice('\n')
			long = append(long, line...)
		}
		line = long
	}
	if *budget -= len(line); *budget < 0 {
		return line, h1Errorf("reply head longer than %d bytes", maxHeadBytes)
	}
	if err != nil {
		return line, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// keepAlive reports whether the server lets the connection be reused after this reply
// (has: its header has a Connection field).
func keepAlive(h http.Header, minor int, has bool) bool {
	var v []string
	if has {
		v = h["Connection"]
	}
	if hasToken(v, "close") {
		return false
	}
	return minor >= 1 || hasToken(v, "keep-alive")
}

// hasToken reports whether a comma-separated header holds token (case-insensitive).
func hasToken(vs []string, token string) bool {
	for _, v := range vs {
		for len(v) > 0 {
			var t string
			t, v, _ = cutByte(v, ',')
			if asciiEqualFold([]byte(textproto.TrimString(t)), token) {
				return true
			}
		}
	}
	return false
}

func cutByte(s string, c byte) (before, after string, found bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// asciiEqualFold reports whether b and s are equal under ASCII case folding.
func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// knownKeys are header names that replies commonly carry, in canonical form: a name seen
// in any case maps to one of these without allocating.
var knownKeys = [...]string{
	"Content-Type", "Content-Length", "Date", "Transfer-Encoding", "Connection",
	"Mcp-Session-Id", "Retry-After", "Cache-Control", "Keep-Alive", "Server", "Vary",
	"Allow", "Www-Authenticate", "Location", "Content-Encoding", "X-Content-Type-Options",
	"Mcp-Protocol-Version", "Trailer",
}

// canonicalKey returns the canonical form of a header name, or false if b is not a token.
// The known names as servers spell them are found by exact comparison first (mostly a
// length that differs), other spellings of them by case folding, without allocating.
func (t *h1Transport) canonicalKey(b []byte) (string, bool) {
	for _, k := range knownKeys {
		if string(b) == k { // mostly a length that differs
			return k, true
		}
	}
	for _, k := range knownKeys {
		if asciiEqualFold(b, k) {
			return k, true
		}
	}
	if !validToken(string(b)) {
		return "", false
	}
	return textproto.CanonicalMIMEHeaderKey(string(b)), true
}

// h1Intern is one slot of the transport's cache of header values.
type h1Intern = atomic.Pointer[string]

// intern returns b as a string, from a small cache of recent values when it is there, so
// that values that repeat from reply to reply (Content-Type, Date within a second, status
// texts, common lengths) cost no allocation.
func (t *h1Transport) intern(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > 64 {
		return string(b)
	}
	h := uint32(2166136261) // FNV-1a
	for _, x := range b {
		h = (h ^ uint32(x)) * 16777619
	}
	slot := &t.interns[h%uint32(len(t.interns))]
	if p := slot.Load(); p != nil && *p == string(b) {
		return *p
	}
	s := string(b)
	slot.Store(&s)
	return s
}

// writeField writes the header line "k: v": appended in the writer's free buffer in one
// copy when it fits, as four writes when it does not.
func writeField(bw *bufio.Writer, k, v string) {
	if bw.Available() < len(k)+len(v)+4 {
		bw.WriteString(k)
		bw.WriteString(": ")
		bw.WriteString(v)
		bw.WriteString("\r\n")
		return
	}
	b := append(bw.AvailableBuffer(), k...)
	b = append(append(b, ": "...), v...)
	bw.Write(append(b, "\r\n"...))
}

// validToken reports whether s is an RFC 9110 token (a method or header field name).
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !tokenChars[s[i]] {
			return false
		}
	}
	return true
}

// tokenChars are the bytes of an RFC 9110 token: a table, since every header name of every
// request is checked against it.
var tokenChars = func() (t [256]bool) {
	for c := range 256 {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-', c == '!', c == '#', c == '$', c == '%', c == '&', c == '\'', c == '*',
			c == '+', c == '.', c == '^', c == '_', c == '`', c == '|', c == '~':
		default:
			continue
		}
		t[c] = true
	}
	return t
}()

// validValue reports whether s may be sent as a header field value: no control bytes but
// horizontal tab (so no CR or LF that would inject a header). Eight bytes at a time are
// cleared by the has-less-than test (a tab, or a borrow, sends them to the byte loop).
func validValue(s string) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:]), 8)) // no copy
		del := x ^ (lo * 0x7f)
		if ((x-lo*0x20)&^x|(del-lo)&^del)&hi != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// Body states.
const (
	bodyOpen   int32 = iota // being read; the body owns the connection
	bodyDone                // ended (EOF or error); the connection is back in the pool or closed
	bodyClosed              // closed by the caller before its end; the connection is closed
)

// errBodyClosed is what Read returns after Close, as net/http's does.
var errBodyClosed = errors.New("http: read on closed response body")

// h1Body is a reply body read straight from its connection: framed by Content-Length
// (left >= 0), chunked (cr != nil) or by the end of the connection (neither). At its end the
// connection goes back to the pool if keep; Close before the end closes the connection.
// Close may be called while a Read blocks in another goroutine: it unblocks the Read.
type h1Body struct {
	c     *h1Conn
	ctx   context.Context
	cr    io.Reader // chunked decoder
	left  int64     // bytes left when framed by Content-Length, else -1
	keep  bool      // the connection may be reused after the body
	state atomic.Int32
	err   error // what Read returns once bodyDone
}

// Read implements io.Reader. The read that reaches the end returns io.EOF with its bytes.
func (b *h1Body) Read(p []byte) (int, error) {
	switch b.state.Load() {
	case bodyDone:
		return 0, b.err
	case bodyClosed:
		return 0, errBodyClosed
	}
	if len(p) == 0 {
		return 0, nil
	}
	var (
		n   int
		err error
	)
	switch {
	case b.cr != nil:
		n, err = b.cr.Read(p)
		if err == io.EOF {
			err = b.readTrailer()
		}
	case b.left >= 0:
		if int64(len(p)) > b.left {
			p = p[:b.left]
		}
		n, err = b.c.br.Read(p)
		b.left -= int64(n)
		if b.left == 0 {
			err = io.EOF
		} else if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
	default:
		n, err = b.c.br.Read(p)
	}
	if err != nil {
		return n, b.end(err)
	}
	return n, nil
}

// readTrailer reads the trailer section after the last chunk (and discards it); it returns
// io.EOF when the body ended cleanly.
func (b *h1Body) readTrailer() error {
	budget := maxHeadBytes
	for {
		line, err := b.c.readLine(&budget)
		if err != nil {
			return eofAsUnexpected(err)
		}
		if len(line) == 0 {
			return io.EOF
		}
	}
}

// end finishes the body with err (io.EOF for a clean end): it ends the connection's request
// (release) and returns the connection to the pool, or closes it. It returns what Read
// should return.
func (b *h1Body) end(err error) error {
	if err != io.EOF {
		err = withCtx(b.ctx, err)
	}
	if !b.state.CompareAndSwap(bodyOpen, bodyDone) {
		return errBodyClosed // Close won the race
	}
	b.err = err
	if ok := b.c.release(); ok && err == io.EOF && b.keep {
		b.c.t.putIdle(b.c)
	} else {
		b.c.close()
	}
	return err
}

// Close implements io.Closer. Before the end of the body it closes the connection (a long
// or endless body is never drained); after it, it does nothing.
func (b *h1Body) Close() error {
	if b.state.CompareAndSwap(bodyOpen, bodyClosed) {
		b.c.release()
		b.c.close()
	}
	return nil
}
