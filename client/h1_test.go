package client

// Tests of the lean HTTP/1.1 transport (h1.go) against real loopback servers
// (httptest, 127.0.0.1:0). Connection reuse is observed from the server's side: every new
// connection is one http.StateNew, every closed one an http.StateClosed. Steps are sequenced
// with channels, never with sleeps.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// h1Server is an httptest server that counts the connections it accepts and reports every
// one it sees closed.
type h1Server struct {
	*httptest.Server
	news   atomic.Int32
	closed chan struct{} // one send per connection closed or hijacked
}

func newH1Server(t *testing.T, h http.HandlerFunc) *h1Server {
	t.Helper()
	s := &h1Server{Server: httptest.NewUnstartedServer(h), closed: make(chan struct{}, 1024)}
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			s.news.Add(1)
		case http.StateClosed, http.StateHijacked:
			s.closed <- struct{}{}
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// conns is how many connections the server has accepted.
func (s *h1Server) conns() int { return int(s.news.Load()) }

// h1Client is NewHTTPClient's client, its idle connections closed at the end of the test.
func h1Client(t *testing.T) *http.Client {
	c := NewHTTPClient(8)
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// send POSTs body and returns the reply with its body read in full.
func send(t *testing.T, c *http.Client, ctx context.Context, url string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the reply: %v", err)
	}
	return resp, b
}

// echo answers with the request's body as JSON, with a Content-Length.
func echo(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}

func TestH1ReusesOneConnection(t *testing.T) {
	s := newH1Server(t, echo)
	c := h1Client(t)
	for i := range 200 {
		body := []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"tasks/get"}`)
		resp, got := send(t, c, context.Background(), s.URL+"/mcp?x=1", body)
		if resp.StatusCode != http.StatusOK || !bytes.Equal(got, body) {
			t.Fatalf("request %d: %d %q, want 200 %q", i, resp.StatusCode, got, body)
		}
		if resp.ContentLength != int64(len(body)) || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("request %d: ContentLength %d, Content-Type %q", i, resp.ContentLength, resp.Header.Get("Content-Type"))
		}
	}
	if n := s.conns(); n != 1 {
		t.Errorf("200 sequential requests used %d connections, want 1", n)
	}
}

func TestH1RequestHead(t *testing.T) {
	got := make(chan *http.Request, 1)
	s := newH1Server(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		got <- r
	})
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/a%20b/c?q=1&r=2", strings.NewReader("xyz"))
	req.Header["Mcp-Session-Id"] = []string{"s1"}
	req.Header.Add("X-Multi", "one")
	req.Header.Add("X-Multi", "two")
	resp, err := h1Client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	drain(resp.Body)
	r := <-got
	if r.Method != http.MethodPost || r.URL.EscapedPath() != "/a%20b/c" || r.URL.RawQuery != "q=1&r=2" {
		t.Errorf("server saw %s %s?%s", r.Method, r.URL.EscapedPath(), r.URL.RawQuery)
	}
	if r.Host != s.Listener.Addr().String() || r.ContentLength != 3 {
		t.Errorf("Host %q, ContentLength %d", r.Host, r.ContentLength)
	}
	if v := r.Header.Values("X-Multi"); len(v) != 2 || v[0] != "one" || v[1] != "two" {
		t.Errorf("X-Multi %q, want [one two]", v)
	}
	if v := r.Header.Get("Mcp-Session-Id"); v != "s1" {
		t.Errorf("Mcp-Session-Id %q", v)
	}

	bad, _ := http.NewRequest(http.MethodGet, s.URL, nil)
	bad.Header.Set("X-Evil", "a\r\nX-Injected: 1")
	if _, err := h1Client(t).Do(bad); err == nil {
		t.Error("a header value holding CRLF was sent")
	}
}

func TestH1StatusesAndHeaders(t *testing.T) {
	s := newH1Server(t, func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["x-lower-case"] = []string{"kept"} // sent as written: the client canonicalizes
		h.Add("X-Multi", "a")
		h.Add("X-Multi", "b")
		switch r.URL.Path {
		case "/429":
			h.Set("Retry-After", "3")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, "slow down")
		case "/404":
			http.NotFound(w, r)
		case "/204":
			w.WriteHeader(http.StatusNoContent)
		}
	})
	c := h1Client(t)
	for _, tc := range []struct {
		path   string
		status int
		body   string
	}{{"/429", 429, "slow down"}, {"/404", 404, "404 page not found\n"}, {"/204", 204, ""}, {"/429", 429, "slow down"}} {
		resp, body := send(t, c, context.Background(), s.URL+tc.path, nil)
		if resp.StatusCode != tc.status || string(body) != tc.body {
			t.Errorf("%s: %d %q, want %d %q", tc.path, resp.StatusCode, body, tc.status, tc.body)
		}
		if want := strconv.Itoa(tc.status) + " " + http.StatusText(tc.status); resp.Status != want {
			t.Errorf("%s: Status %q, want %q", tc.path, resp.Status, want)
		}
		if v := resp.Header["X-Multi"]; len(v) != 2 || v[0] != "a" || v[1] != "b" {
			t.Errorf("%s: X-Multi %q, want [a b]", tc.path, v)
		}
		if v := resp.Header.Get("X-Lower-Case"); v != "kept" {
			t.Errorf("%s: X-Lower-Case %q, want kept", tc.path, v)
		}
		if tc.status == 429 {
			if v := resp.Header.Get("Retry-After"); v != "3" {
				t.Errorf("Retry-After %q, want 3", v)
			}
			resp.Body = io.NopCloser(strings.NewReader(string(body)))
			var he *HTTPError
			if err := statusError(resp, false); !errors.As(err, &he) || he.RetryAfter != 3*time.Second {
				t.Errorf("statusError: %v, want Retry-After 3s", err)
			}
		}
	}
	if n := s.conns(); n != 1 {
		t.Errorf("%d connections, want 1: error replies keep the connection", n)
	}
}

func TestH1HeadHasNoBody(t *testing.T) {
	s := newH1Server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "5")
		_, _ = io.WriteString(w, "hello") // not sent for HEAD
	})
	c := h1Client(t)
	for range 3 {
		req, _ := http.NewRequest(http.MethodHead, s.URL, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if len(b) != 0 || err != nil || resp.ContentLength != 5 {
			t.Errorf("HEAD: %q, %v, ContentLength %d; want no body and 5", b, err, resp.ContentLength)
		}
	}
	if n := s.conns(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

// readEvent reads one SSE event (up to its blank line).
func readEvent(t *testing.T, rd *bufio.Reader) string {
	t.Helper()
	var ev strings.Builder
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("reading an event: %v (so far %q)", err, ev.String())
		}
		if line == "\n" {
			return ev.String()
		}
		ev.WriteString(line)
	}
}

func TestH1ChunkedStreamIsReadAsItComes(t *testing.T) {
	next := make(chan struct{})
	s := newH1Server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		<-next // sent only after the client has read "one"
		_, _ = io.WriteString(w, "data: two\n\n")
	})
	c := h1Client(t)
	for range 2 {
		req, _ := http.NewRequest(http.MethodPost, s.URL, strings.NewReader("{}"))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ContentLength != -1 || len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
			t.Fatalf("ContentLength %d, TransferEncoding %q: want a chunked reply", resp.ContentLength, resp.TransferEncoding)
		}
		rd := bufio.NewReader(resp.Body)
		if ev := readEvent(t, rd); ev != "data: one\n" {
			t.Fatalf("first event %q", ev)
		}
		next <- struct{}{}
		if ev := readEvent(t, rd); ev != "data: two\n" {
			t.Fatalf("second event %q", ev)
		}
		if b, err := io.ReadAll(rd); err != nil || len(b) != 0 {
			t.Fatalf("after the last event: %q, %v; want a clean end", b, err)
		}
		resp.Body.Close()
	}
	if n := s.conns(); n != 1 {
		t.Errorf("%d connections, want 1: a stream read to its last chunk frees the connection", n)
	}
}

func TestH1CloseMidStreamClosesTheConnection(t *testing.T) {
	gone := make(chan struct{})
	s := newH1Server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/json" {
			echo(w, r)
			return
		}
		_, _ = io.ReadAll(r.Body) // the server watches for a disconnect once the body is read
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the client went away
		close(gone)
	})
	c := h1Client(t)
	req, _ := http.NewRequest(http.MethodPost, s.URL, strings.NewReader("{}"))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if ev := readEvent(t, bufio.NewReader(resp.Body)); ev != "data: one\n" {
		t.Fatalf("first event %q", ev)
	}
	resp.Body.Close()
	<-gone
	if _, err := resp.Body.Read(make([]byte, 1)); err == nil {
		t.Error("Read after Close succeeded")
	}
	if resp, body := send(t, c, context.Background(), s.URL+"/json", []byte("ok")); resp.StatusCode != 200 || string(body) != "ok" {
		t.Fatalf("next request: %d %q", resp.StatusCode, body)
	}
	if n := s.conns(); n != 2 {
		t.Errorf("%d connections, want 2: the cut stream's connection is not reused", n)
	}
}

func TestH1CloseUnblocksARead(t *testing.T) {
	s := newH1Server(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	req, _ := http.NewRequest(http.MethodPost, s.URL, strings.NewReader("{}"))
	resp, err := h1Client(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		_, err := resp.Body.Read(make([]byte, 64))
		done <- err
	}()
	resp.Body.Close() // before, during or after the Read blocks: it must end either way
	if err := <-done; err == nil {
		t.Error("Read returned no error after Close")
	}
}

func TestH1ConnectionClose(t *testing.T) {
	s := newH1Server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		echo(w, r)
	})
	c := h1Client(t)
	for i := range 3 {
		resp, body := send(t, c, context.Background(), s.URL, []byte("hi"))
		if string(body) != "hi" || !resp.Close {
			t.Fatalf("request %d: %q, Close %v", i, body, resp.Close)
		}
	}
	if n := s.conns(); n != 3 {
		t.Errorf("%d connections, want 3: Connection: close is honoured", n)
	}

	s2 := newH1Server(t, echo) // the client asks for it
	for range 2 {
		req, _ := http.NewRequest(http.MethodPost, s2.URL, strings.NewReader("x"))
		req.Close = true
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		drain(resp.Body)
	}
	if n := s2.conns(); n != 2 {
		t.Errorf("%d connections with Request.Close, want 2", n)
	}
}

func TestH1DeadlineWhileTheServerStalls(t *testing.T) {
	release := make(chan struct{})
	s := newH1Server(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		if r.URL.Path == "/body" {
			w.Header().Set("Content-Length", "10")
			_, _ = io.WriteString(w, "12345")
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) }) // before the server's Close waits for the handlers
	c := h1Client(t)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/head", strings.NewReader("{}"))
	_, err := c.Do(req)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("stalled head: %v, want context.DeadlineExceeded", err)
	}

	ctx2, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel2()
	req, _ = http.NewRequestWithContext(ctx2, http.MethodPost, s.URL+"/body", strings.NewReader("{}"))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("the head came: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	if string(b) != "12345" || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("stalled body: %q, %v; want 12345 and context.DeadlineExceeded", b, err)
	}
	resp.Body.Close()

	ctx3, cancel3 := context.WithCancel(context.Background())
	req, _ = http.NewRequestWithContext(ctx3, http.MethodPost, s.URL+"/body", strings.NewReader("{}"))
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	cancel3()
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled body: %v, want context.Canceled", err)
	}
	resp.Body.Close()
	for range 3 { // every interrupted connection is closed, none reused
		<-s.closed
	}
	if n := s.conns(); n != 3 {
		t.Errorf("%d connections, want 3", n)
	}
}

func TestH1ServerClosesIdleConnections(t *testing.T) {
	s := newH1Server(t, echo)
	tr := newH1Transport(8)
	c := &http.Client{Transport: tr}
	t.Cleanup(c.CloseIdleConnections)
	for i := range 20 {
		if _, body := send(t, c, context.Background(), s.URL, []byte("a")); string(body) != "a" {
			t.Fatalf("round %d: %q", i, body)
		}
		s.CloseClientConnections() // the idle connection the client holds, as an idle timeout would
		// The server's close reaches the client's socket asynchronously: wait (without a
		// sleep) until the liveness probe sees it, so that what is tested is what the
		// transport does with a connection it can know is dead, never a race with the FIN.
		for !idleConnsDead(tr) {
			runtime.Gosched()
		}
	}
	if n := s.conns(); n != 20 {
		t.Errorf("%d connections, want 20", n)
	}
}

func TestH1IdleTimeout(t *testing.T) {
	s := newH1Server(t, echo)
	now := time.Unix(1000, 0)
	tr := newH1Transport(4)
	tr.now = func() time.Time { return now }
	c := &http.Client{Transport: tr}
	defer c.CloseIdleConnections()
	send(t, c, context.Background(), s.URL, []byte("a"))
	now = now.Add(tr.idleTimeout)
	send(t, c, context.Background(), s.URL, []byte("b"))
	if n := s.conns(); n != 1 {
		t.Fatalf("%d connections, want 1 (idle for exactly the timeout)", n)
	}
	now = now.Add(tr.idleTimeout + time.Nanosecond)
	send(t, c, context.Background(), s.URL, []byte("c"))
	<-s.closed
	if n := s.conns(); n != 2 {
		t.Errorf("%d connections, want 2 (idle longer than the timeout)", n)
	}
}

func TestH1IdlePoolIsBounded(t *testing.T) {
	hold := make(chan struct{})
	s := newH1Server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "2")
		_, _ = io.WriteString(w, "o")
		w.(http.Flusher).Flush()
		<-hold
		_, _ = io.WriteString(w, "k")
	})
	tr := newH1Transport(1)
	c := &http.Client{Transport: tr}
	defer c.CloseIdleConnections()
	var resps []*http.Response
	for range 3 { // three replies open at once: three connections
		req, _ := http.NewRequest(http.MethodGet, s.URL, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resps = append(resps, resp)
	}
	close(hold)
	for _, resp := range resps {
		if b, err := io.ReadAll(resp.Body); string(b) != "ok" || err != nil {
			t.Fatalf("%q, %v", b, err)
		}
		resp.Body.Close()
	}
	<-s.closed
	<-s.closed // two of the three did not fit in the pool
	tr.mu.Lock()
	idle := tr.nIdle
	tr.mu.Unlock()
	if idle != 1 {
		t.Errorf("%d idle connections, want 1", idle)
	}
}

func TestH1LargeBodies(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	s := newH1Server(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if !bytes.Equal(b, big) {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if r.URL.Path == "/chunked" {
			for i := 0; i < len(b); i += 10_000 {
				_, _ = w.Write(b[i:min(len(b), i+10_000)])
				w.(http.Flusher).Flush()
			}
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		_, _ = w.Write(b)
	})
	c := h1Client(t)
	for _, path := range []string{"/length", "/chunked", "/length"} {
		resp, b := send(t, c, context.Background(), s.URL+path, big)
		if resp.StatusCode != 200 || !bytes.Equal(b, big) {
			t.Errorf("%s: %d, %d bytes back (want the 1 MiB sent)", path, resp.StatusCode, len(b))
		}
	}
	// A body of unknown length goes out chunked.
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/length", io.MultiReader(bytes.NewReader(big[:1000]), bytes.NewReader(big[1000:])))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(b, big) {
		t.Errorf("unknown-length body: %d bytes back", len(b))
	}
	if n := s.conns(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

func TestH1BodyUntilClose(t *testing.T) {
	s := newH1Server(t, func(w http.ResponseWriter, r *http.Request) {
		conn, bw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		_, _ = bw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end")
		_ = bw.Flush()
		conn.Close()
	})
	resp, body := send(t, h1Client(t), context.Background(), s.URL, nil)
	if string(body) != "until the end" || resp.ContentLength != -1 || !resp.Close {
		t.Errorf("%q, ContentLength %d, Close %v", body, resp.ContentLength, resp.Close)
	}
}

// TestH1RetriesOnlyReplayableRequests: the server drops the second request of a
// connection without a reply, as a server that closed the connection just as the request
// arrived. A GET is sent again on a new connection; a POST is not (it may have been acted
// on), and its error says so.
func TestH1RetriesOnlyReplayableRequests(t *testing.T) {
	for _, tc := range []struct {
		method string
		retry  bool
	}{{http.MethodGet, true}, {http.MethodPost, false}} {
		t.Run(tc.method, func(t *testing.T) {
			var n atomic.Int32
			s := newH1Server(t, func(w http.ResponseWriter, r *http.Request) {
				if n.Add(1) == 2 {
					conn, _, _ := http.NewResponseController(w).Hijack()
					conn.Close()
					return
				}
				echo(w, r)
			})
			c := h1Client(t)
			for i := range 2 {
				req, _ := http.NewRequest(tc.method, s.URL, strings.NewReader("z"))
				resp, err := c.Do(req)
				if i == 0 || tc.retry {
					if err != nil {
						t.Fatalf("request %d: %v", i, err)
					}
					drain(resp.Body)
					continue
				}
				if err == nil {
					t.Fatal("a POST dropped by the server succeeded")
				}
			}
			want := 2
			if tc.retry {
				want = 3
			}
			if got := int(n.Load()); got != want {
				t.Errorf("server saw %d requests, want %d", got, want)
			}
		})
	}
}

func TestH1HTTPSUsesNetHTTP(t *testing.T) {
	s := httptest.NewTLSServer(http.HandlerFunc(echo))
	defer s.Close()
	c := NewHTTPClient(2)
	st := c.Transport.(*schemeTransport)
	st.other.TLSClientConfig = s.Client().Transport.(*http.Transport).TLSClientConfig
	defer c.CloseIdleConnections()
	if _, body := send(t, c, context.Background(), s.URL, []byte("tls")); string(body) != "tls" {
		t.Errorf("%q", body)
	}
}

// FuzzH1ReadHead feeds arbitrary bytes to the reply parser and the body decoder: they must
// fail cleanly, never panic, and what they accept must be self-consistent.
func FuzzH1ReadHead(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-A: 1\r\nx-a: 2\r\n\r\nok"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nT: 1\r\n\r\n"))
	f.Add([]byte("HTTP/1.0 100 Continue\r\n\r\nHTTP/1.0 404 Not Found\r\nConnection: keep-alive\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 204\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		nc, other := net.Pipe() // closed when the body ends; never read or written
		defer other.Close()
		c := &h1Conn{t: newH1Transport(0), nc: nc, br: bufio.NewReaderSize(bytes.NewReader(data), 64)}
		req := &http.Request{Method: http.MethodPost, Header: http.Header{}}
		resp, _, err := c.readHead(req)
		if err != nil {
			return
		}
		if resp.StatusCode < 200 || resp.StatusCode > 999 {
			t.Fatalf("status %d accepted", resp.StatusCode)
		}
		for k := range resp.Header {
			if k != http.CanonicalHeaderKey(k) {
				t.Fatalf("header key %q is not canonical", k)
			}
		}
		b := resp.Body.(*h1Body)
		b.ctx = context.Background()
		got, err := io.ReadAll(io.LimitReader(b, 1<<20))
		if err == nil && resp.ContentLength >= 0 && int64(len(got)) != resp.ContentLength && b.left >= 0 {
			t.Fatalf("read %d bytes of a %d-byte body", len(got), resp.ContentLength)
		}
	})
}

// BenchmarkH1RoundTrip: one small JSON POST and its Content-Length reply over loopback, from
// 64 goroutines, through the lean transport and through net/http's (with NewHTTPClient's
// old settings) for comparison, each request bounded by context.WithTimeout; and through the
// lean transport bounded by ReplyBy under one cancellable context, as a virtual client's
// requests are (h1-replyby: no timer, no context and no watch per request). The server is
// net/http's in the same process, so ns/op and allocs/op count both sides; the difference
// between two sub-benchmarks is the client's.
func BenchmarkH1RoundTrip(b *testing.B) {
	reply := []byte(`{"jsonrpc":"2.0","id":1,"result":{"taskId":"5b9f0c2e8d7a4e31a1c4f0d2b6e8a913","status":"working","ttl":60000,"pollInterval":1000}}`)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(reply)
	}))
	defer s.Close()
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"5b9f0c2e8d7a4e31a1c4f0d2b6e8a913"}}`)
	run, stop := context.WithCancel(context.Background())
	defer stop()
	for _, tc := range []struct {
		name    string
		rt      http.RoundTripper
		replyBy bool
	}{
		{"h1", newH1Transport(64), false},
		{"h1-replyby", newH1Transport(64), true},
		{"net-http", &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64, DisableCompression: true}, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c := &http.Client{Transport: tc.rt}
			defer c.CloseIdleConnections()
			b.SetParallelism(32) // 64 goroutines on 2 processors
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				buf := make([]byte, 512)
				for pb.Next() {
					ctx, cancel := ReplyBy(run, time.Now().Add(30*time.Second)), context.CancelFunc(func() {})
					if !tc.replyBy {
						ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
					}
					req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, bytes.NewReader(body))
					req.Header["Content-Type"] = []string{"application/json"}
					resp, err := c.Do(req)
					if err != nil {
						b.Error(err)
						cancel()
						return
					}
					n, _ := readAll(buf[:0], resp.Body, len(buf))
					resp.Body.Close()
					cancel()
					if len(n) != len(reply) {
						b.Errorf("%d bytes back", len(n))
						return
					}
				}
			})
		})
	}
}

// idleConnsDead reports whether every idle connection of tr fails the liveness probe.
func idleConnsDead(tr *h1Transport) bool {
	tr.mu.Lock()
	var conns []*h1Conn
	for _, p := range tr.idle {
		conns = append(conns, p.conns...)
	}
	tr.mu.Unlock()
	for _, c := range conns {
		if c.raw != nil && c.alive() { // without a probe (Windows) there is nothing to wait for
			return false
		}
	}
	return true
}
