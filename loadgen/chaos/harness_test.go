package chaos

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/scenarios"
)

// memListener is a net.Listener over net.Pipe, usable inside testing/synctest: dial hands
// the proxy one end of a new pipe and returns the other, the client's.
type memListener struct {
	conns   chan net.Conn
	done    chan struct{}
	once    sync.Once
	lingers atomic.Int32 // SetLinger(0) calls on accepted connections (resets)
}

func newMemListener() *memListener {
	return &memListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (m *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-m.conns:
		return c, nil
	case <-m.done:
		return nil, net.ErrClosed
	}
}

func (m *memListener) Close() error   { m.once.Do(func() { close(m.done) }); return nil }
func (m *memListener) Addr() net.Addr { return memAddr{} }

// dial opens a connection to the proxy and returns the client's end once it is accepted.
func (m *memListener) dial() net.Conn {
	client, server := net.Pipe()
	m.conns <- lingerConn{server, &m.lingers}
	return client
}

type memAddr struct{}

func (memAddr) Network() string { return "pipe" }
func (memAddr) String() string  { return "pipe" }

// lingerConn is a pipe end that counts SetLinger(0) calls, as a *net.TCPConn would take them.
type lingerConn struct {
	net.Conn
	n *atomic.Int32
}

func (c lingerConn) SetLinger(sec int) error {
	if sec == 0 {
		c.n.Add(1)
	}
	return nil
}

var _ lingerer = lingerConn{}

// harness is a proxy over pipes: clients dial ln, and every upstream the proxy dials
// arrives on ups as the upstream server's end.
type harness struct {
	p   *Proxy
	ln  *memListener
	ups chan net.Conn
	ev  *metrics.Events
}

// startPipes starts a harness that the test's cleanup closes.
func startPipes(t *testing.T, f scenarios.NetworkFaults, seed uint64) *harness {
	t.Helper()
	h := newPipes(t, f, seed)
	t.Cleanup(func() { h.p.Close() })
	return h
}

// newPipes starts a harness that the test must close.
func newPipes(t testing.TB, f scenarios.NetworkFaults, seed uint64) *harness {
	t.Helper()
	h := &harness{ln: newMemListener(), ups: make(chan net.Conn, 64), ev: metrics.NewEvents(0)}
	h.p = New("upstream:1", f, seed, h.ev)
	h.p.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if network != "tcp" || addr != "upstream:1" {
			t.Errorf("Dial(%q, %q), want (tcp, upstream:1)", network, addr)
		}
		proxySide, server := net.Pipe()
		h.ups <- server
		return proxySide, nil
	}
	h.p.Start(h.ln)
	return h
}

// connect opens a connection through the proxy and returns the client's end and the
// upstream server's end.
func (h *harness) connect() (client, upstream net.Conn) {
	client = h.ln.dial()
	return client, <-h.ups
}
