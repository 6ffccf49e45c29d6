package chaos

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// link is one accepted connection and, unless it is black-holed or reset at once, its
// upstream connection. Its state moves along this table; finish is the only way to
// stClosed, and it closes both connections:
//
//	state         event                                     next
//	stForwarding  ResetAfter bytes went downstream (Reset)  stReset, then stClosed
//	stForwarding  HalfOpenAfter elapsed (HalfOpen)          stSilent: upstream closed
//	stForwarding  both directions ended, an error, Close    stClosed
//	stSilent      the client's read side ended, Close       stClosed
//	stReset       (finish runs at once)                     stClosed
//
// A black-holed link has no upstream and stays stForwarding until its client's read side
// ends or the proxy closes.
type link struct {
	p      *Proxy
	client net.Conn
	conn   uint64    // index among the proxy's accepted connections
	start  time.Time // when it was accepted
	d      Decision
	state  atomic.Int32
	done   chan struct{} // closed by finish
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	upstream net.Conn // nil until dialed
}

const (
	stForwarding int32 = iota
	stSilent
	stReset
	stClosed
)

// closeWriter is an optional capability of a connection: half-closing it (TCP, Unix).
type closeWriter interface{ CloseWrite() error }

// lingerer is an optional capability of a connection: SetLinger(0) makes its Close a reset.
type lingerer interface{ SetLinger(sec int) error }

var (
	_ closeWriter = (*net.TCPConn)(nil)
	_ lingerer    = (*net.TCPConn)(nil)
)

func newLink(p *Proxy, c net.Conn, conn uint64, start time.Time, d Decision) *link {
	l := &link{p: p, client: c, conn: conn, start: start, d: d, done: make(chan struct{})}
	l.ctx, l.cancel = context.WithCancel(p.ctx)
	return l
}

// run serves the connection until it is closed.
func (l *link) run() {
	defer l.p.forget(l)
	defer l.finish()
	f := l.p.faults
	switch {
	case l.d.BlackHole:
		l.p.event("black_hole", &l.p.st.blackHoles)
		l.discard()
		return
	case l.d.Reset && f.ResetAfter <= 0:
		l.reset()
		return
	}
	up, err := l.p.Dial(l.ctx, "tcp", l.p.upstream)
	if err != nil {
		if l.ctx.Err() == nil { // not aborted by Close finishing the link
			l.p.st.dialErrors.Add(1)
		}
		return
	}
	l.mu.Lock()
	l.upstream = up
	l.mu.Unlock()
	if l.state.Load() == stClosed { // Close finished the link during the dial, maybe before up was set
		up.Close()
		return
	}

	var wg sync.WaitGroup
	if l.d.HalfOpen {
		wg.Go(l.halfOpenTimer)
	}
	var dirs sync.WaitGroup
	dirs.Go(func() { l.forward(l.client, up, false) })
	dirs.Go(func() { l.forward(up, l.client, true) })
	dirs.Wait()
	l.finish()
	wg.Wait()
}

// finish closes both connections (once) and wakes every goroutine of the link.
func (l *link) finish() {
	if l.state.Swap(stClosed) == stClosed {
		return
	}
	l.cancel()
	l.client.Close()
	l.mu.Lock()
	up := l.upstream
	l.mu.Unlock()
	if up != nil {
		up.Close()
	}
	close(l.done)
}

// reset resets the client's connection (an RST where the connection can: SetLinger(0),
// then Close) and closes the upstream, unless the link has left stForwarding.
func (l *link) reset() {
	if !l.state.CompareAndSwap(stForwarding, stReset) {
		return
	}
	l.p.event("reset", &l.p.st.resets)
	if lc, ok := l.client.(lingerer); ok {
		lc.SetLinger(0)
	}
	l.finish()
}

// halfOpenTimer turns the link silent HalfOpenAfter after it was accepted: it closes the
// upstream and leaves the client's side open, its bytes read and dropped, nothing written
// to it.
func (l *link) halfOpenTimer() {
	var t *time.Timer
	if !l.sleepUntil(l.start.Add(time.Duration(l.p.faults.HalfOpenAfter)), &t) {
		return
	}
	if !l.state.CompareAndSwap(stForwarding, stSilent) {
		return
	}
	l.p.event("half_open", &l.p.st.halfOpens)
	l.mu.Lock()
	up := l.upstream
	l.mu.Unlock()
	up.Close()
}

// discard reads and drops the client's bytes until its read side ends or the link finishes.
func (l *link) discard() {
	b := l.p.buf()
	defer l.p.put(b)
	for {
		if _, err := l.client.Read(*b); err != nil {
			return
		}
	}
}

// isSilent reports whether the link lost its upstream to a half-open fault.
func (l *link) isSilent() bool { return l.state.Load() == stSilent }

// sleepUntil waits until the link's clock reads t, on timer (re-armed; nil the first
// time), and reports false if the link finished first.
func (l *link) sleepUntil(t time.Time, timer **time.Timer) bool {
	d := t.Sub(l.p.Now())
	if d <= 0 {
		return true
	}
	if *timer == nil {
		*timer = time.NewTimer(d)
	} else {
		(*timer).Reset(d)
	}
	select {
	case <-(*timer).C:
		return true
	case <-l.done:
		(*timer).Stop()
		return false
	}
}
