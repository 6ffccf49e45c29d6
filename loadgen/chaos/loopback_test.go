package chaos

// Tests over real loopback sockets, for behaviour that does not depend on timing: every
// wait below ends on an event (EOF, a reset, a reply), never on a clock.

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"syscall"
	"testing"

	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/scenarios"
)

// listen starts a proxy to upstream on loopback; the test's cleanup closes it.
func listen(t *testing.T, upstream string, f scenarios.NetworkFaults, ev *metrics.Events) *Proxy {
	t.Helper()
	p := New(upstream, f, 1, ev)
	if err := p.Listen(""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	if a, ok := p.Addr().(*net.TCPAddr); !ok || !a.IP.IsLoopback() {
		t.Fatalf("proxy listens on %v, want loopback", p.Addr())
	}
	return p
}

// tcpServer serves each connection with serve on loopback until the test ends.
func tcpServer(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { defer c.Close(); serve(c) })
		}
	})
	return ln.Addr().String()
}

// TestChaosLoopbackPassThrough: without faults, bytes pass exactly both ways, and a
// client's half-close reaches the upstream (which only answers after reading to EOF).
func TestChaosLoopbackPassThrough(t *testing.T) {
	flip := func(b []byte) []byte {
		out := make([]byte, len(b))
		for i, x := range b {
			out[i] = ^x
		}
		return out
	}
	up := tcpServer(t, func(c net.Conn) {
		in, err := io.ReadAll(c) // ends only on the client's half-close
		if err != nil {
			t.Errorf("upstream: %v", err)
			return
		}
		c.Write(flip(in))
	})
	p := listen(t, up, scenarios.NetworkFaults{}, nil)

	const clients, size = 4, 256 << 10
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			msg := make([]byte, size)
			rand.NewChaCha8([32]byte{byte(i)}).Read(msg)
			c, err := net.Dial("tcp", p.Addr().String())
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			if _, err := c.Write(msg); err != nil {
				t.Error(err)
				return
			}
			c.(*net.TCPConn).CloseWrite()
			got, err := io.ReadAll(c)
			if err != nil || !bytes.Equal(got, flip(msg)) {
				t.Errorf("client %d: read %d bytes (%v), want its %d bytes flipped", i, len(got), err, size)
			}
		})
	}
	wg.Wait()
	p.Close()
	st := p.Stats()
	if st != (Stats{Connections: clients, BytesUp: clients * size, BytesDown: clients * size}) {
		t.Errorf("stats %+v, want %d connections and %d bytes each way", st, clients, clients*size)
	}
}

// TestChaosLoopbackReset: a TCP client reads exactly ResetAfter bytes, then gets a reset
// (ECONNRESET), not an orderly end.
func TestChaosLoopbackReset(t *testing.T) {
	up := tcpServer(t, func(c net.Conn) {
		// Answer only once the client speaks, which it does after its dial returned: a
		// reset before that would fail the dial instead.
		if _, err := c.Read(make([]byte, 1)); err == nil {
			c.Write([]byte("0123456789"))
			io.Copy(io.Discard, c)
		}
	})
	ev := metrics.NewEvents(0)
	p := listen(t, up, scenarios.NetworkFaults{Reset: always(), ResetAfter: 5}, ev)
	c, err := net.Dial("tcp", p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("?"))
	got, err := io.ReadAll(c)
	if string(got) != "01234" || !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("read %q, %v; want 01234, then ECONNRESET", got, err)
	}
	if n := ev.Counts()["network.reset"]; n != 1 {
		t.Errorf("%d reset events, want 1", n)
	}
}

// TestChaosLoopbackHTTP: HTTP works through the proxy without faults, and fails cleanly
// (an error, no hang) when every connection is reset, at once or mid-reply.
func TestChaosLoopbackHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello "+r.URL.Path)
	}))
	defer srv.Close()
	upstream := srv.Listener.Addr().String()

	get := func(p *Proxy, path string) (string, error) {
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr}).Get("http://" + p.Addr().String() + path)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}

	p := listen(t, upstream, scenarios.NetworkFaults{}, nil)
	for _, path := range []string{"/a", "/b", "/c"} {
		if got, err := get(p, path); got != "hello "+path || err != nil {
			t.Errorf("GET %s through the proxy: %q, %v", path, got, err)
		}
	}

	for _, after := range []int64{0, 20} {
		ev := metrics.NewEvents(0)
		p := listen(t, upstream, scenarios.NetworkFaults{Reset: always(), ResetAfter: after}, ev)
		if got, err := get(p, "/x"); err == nil {
			t.Errorf("reset after %d bytes: GET succeeded with %q", after, got)
		}
		p.Close()
		if n := ev.Counts()["network.reset"]; n < 1 {
			t.Errorf("reset after %d bytes: %d reset events, want at least 1", after, n)
		}
	}
}

// TestChaosLoopbackCloseEndsClients: Close ends live TCP connections (here, black-holed)
// rather than leaving their clients waiting.
func TestChaosLoopbackCloseEndsClients(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan struct{}, 1)
	p := New("127.0.0.1:1", scenarios.NetworkFaults{BlackHole: always()}, 1, nil)
	p.Start(acceptNotifier{ln, accepted})
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("hello?"))
	<-accepted
	p.Close()
	if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Errorf("after Close, read %d, %v; want the connection ended", n, err)
	}
}

// acceptNotifier signals every accepted connection on accepted.
type acceptNotifier struct {
	net.Listener
	accepted chan<- struct{}
}

func (l acceptNotifier) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted <- struct{}{}
	}
	return c, err
}
