package chaos

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/scenarios"
)

// Proxy is a TCP proxy that forwards every accepted connection to one upstream address and
// injects the network faults it was made with. Set the exported fields, if at all, before
// Start or Listen; a Proxy is started once and Closed once. Its methods other than Start
// are safe for concurrent use.
//
// Each accepted connection gets a Decision (see Decide), then:
//
//   - Pass-through: it dials the upstream and copies both ways, byte for byte. The end of
//     one direction is passed on as a half-close (CloseWrite) where the destination can
//     take one; where it cannot (net.Pipe), the whole connection is closed.
//   - Latency (every connection, both directions): each chunk read is written a sample of
//     Latency after it was read, and never before the chunk ahead of it, so chunks in
//     flight overlap and order is kept; the end of the direction is delayed likewise.
//     At most 8 chunks of 16 KiB are in flight per direction (a window), so with latency
//     L a direction carries at most about 128 KiB per L.
//   - Bandwidth (every connection, each direction apart): writes are split into pieces
//     of 10 ms at the cap and spaced so that N bytes sent back to back take N/Bandwidth
//     seconds; an idle direction banks no credit.
//   - Reset: once ResetAfter bytes have been written to the client (the write that would
//     pass it is cut short), the client's connection is reset (SetLinger(0), then Close:
//     a TCP RST; other connections are just closed) and the upstream is closed. With
//     ResetAfter 0 the reset comes at once and nothing is dialed.
//   - Black hole: nothing is dialed; the client's bytes are read and dropped and nothing
//     is ever written to it, until its read side ends (it closed) or Close.
//   - Half-open: HalfOpenAfter after the accept the upstream is closed (it sees an orderly
//     end); from then on the client's bytes are read and dropped and nothing is written to
//     it, until its read side ends (it closed) or Close.
//
// In a black hole or a half-open connection, a client that only half-closes its side is
// closed as one that closed: the proxy cannot tell the two apart.
//
// A reset and a half-open drawn for the same connection race: the first to happen wins.
type Proxy struct {
	// Dial opens the upstream connection of each accepted connection (network "tcp",
	// address the upstream given to New); a black-holed or at-once reset connection dials
	// nothing. nil = a zero net.Dialer's DialContext. Tests hand in net.Pipe ends.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// Now is the clock of trigger windows, latency and bandwidth deadlines and event times;
	// waits use the time package's timers, which testing/synctest makes virtual along with
	// time.Now. nil = time.Now.
	Now func() time.Time
	// Epoch is the instant trigger windows count from (the start of the load phase, when the
	// caller knows it). Zero = the instant Start is called.
	Epoch time.Time

	upstream string
	faults   scenarios.NetworkFaults
	seed     uint64
	ev       *metrics.Events
	latency  bool // faults.Latency is set

	ln     net.Listener
	ctx    context.Context // canceled by Close: aborts dials
	cancel context.CancelFunc
	quit   chan struct{} // closed by Close: stops the accept loop's backoff
	wg     sync.WaitGroup
	bufs   sync.Pool // *[]byte of bufSize

	mu     sync.Mutex
	links  map[*link]struct{} // live connections
	closed bool

	st counters
}

var _ io.Closer = (*Proxy)(nil)

// Stats are the proxy's counts since Start.
type Stats struct {
	Connections int64 // connections accepted
	Open        int64 // connections accepted and not yet closed by the proxy
	DialErrors  int64 // connections closed because the upstream could not be dialed
	Resets      int64 // connections reset (reset fault)
	BlackHoles  int64 // connections black-holed (black_hole fault)
	HalfOpens   int64 // connections that lost their upstream (half_open fault)
	BytesUp     int64 // bytes forwarded from clients to the upstream
	BytesDown   int64 // bytes forwarded from the upstream to clients
}

// counters are Stats as they are counted, from every connection's goroutines.
type counters struct {
	conns, open, dialErrors, resets, blackHoles, halfOpens, up, down atomic.Int64
}

// New returns a proxy to upstream (host:port) that injects f, its decisions drawn from seed
// (see Decide), its fault events (Source "network"; Kind "reset", "black_hole" or
// "half_open", one per connection the fault hits) recorded in ev, which may be nil.
func New(upstream string, f scenarios.NetworkFaults, seed uint64, ev *metrics.Events) *Proxy {
	return &Proxy{
		upstream: upstream,
		faults:   f,
		seed:     seed,
		ev:       ev,
		latency:  f.Latency != (scenarios.Dist{}),
		links:    make(map[*link]struct{}),
		quit:     make(chan struct{}),
	}
}

// Listen listens on addr ("" = "127.0.0.1:0": loopback, any free port) and Starts.
func (p *Proxy) Listen(addr string) error {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	p.Start(ln)
	return nil
}

// Start serves ln until Close, which closes it. It returns at once. Starting a closed
// proxy closes ln.
func (p *Proxy) Start(ln net.Listener) {
	if p.isClosed() {
		ln.Close()
		return
	}
	p.ln = ln
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.Dial == nil {
		p.Dial = (&net.Dialer{}).DialContext
	}
	if p.Epoch.IsZero() {
		p.Epoch = p.Now()
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.bufs.New = func() any { b := make([]byte, bufSize); return &b }
	p.wg.Go(p.serve)
}

// Addr is the address the proxy listens on (nil before Start).
func (p *Proxy) Addr() net.Addr {
	if p.ln == nil {
		return nil
	}
	return p.ln.Addr()
}

// Close closes the listener and every live connection, both sides, and returns when all
// of the proxy's goroutines have ended. It returns the listener's Close error.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed || p.ln == nil {
		p.closed = true
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	live := make([]*link, 0, len(p.links))
	for l := range p.links {
		live = append(live, l)
	}
	p.mu.Unlock()

	err := p.ln.Close()
	p.cancel()
	close(p.quit)
	for _, l := range live {
		l.finish()
	}
	p.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// Stats returns the counts so far.
func (p *Proxy) Stats() Stats {
	c := &p.st
	return Stats{
		Connections: c.conns.Load(), Open: c.open.Load(), DialErrors: c.dialErrors.Load(),
		Resets: c.resets.Load(), BlackHoles: c.blackHoles.Load(), HalfOpens: c.halfOpens.Load(),
		BytesUp: c.up.Load(), BytesDown: c.down.Load(),
	}
}

// serve accepts connections until the listener is closed. After any other Accept error it
// waits (5 ms, doubling up to 1 s, like net/http) and tries again.
func (p *Proxy) serve() {
	var conn uint64
	var wait time.Duration
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if p.isClosed() || errors.Is(err, net.ErrClosed) {
				return
			}
			wait = min(max(2*wait, 5*time.Millisecond), time.Second)
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-p.quit:
				t.Stop()
				return
			}
			continue
		}
		wait = 0
		now := p.Now()
		l := newLink(p, c, conn, now, Decide(p.faults, p.seed, conn, now.Sub(p.Epoch)))
		conn++
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			return
		}
		p.links[l] = struct{}{}
		p.st.conns.Add(1)
		p.st.open.Add(1)
		p.wg.Go(l.run)
		p.mu.Unlock()
	}
}

func (p *Proxy) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// forget removes l, whose connections are closed, from the live set.
func (p *Proxy) forget(l *link) {
	p.mu.Lock()
	delete(p.links, l)
	p.mu.Unlock()
	p.st.open.Add(-1)
}

// event records one fault event of kind and counts it in c.
func (p *Proxy) event(kind string, c *atomic.Int64) {
	c.Add(1)
	p.ev.Add(metrics.Event{At: p.Now(), Source: "network", Kind: kind})
}

func (p *Proxy) buf() *[]byte  { return p.bufs.Get().(*[]byte) }
func (p *Proxy) put(b *[]byte) { p.bufs.Put(b) }
