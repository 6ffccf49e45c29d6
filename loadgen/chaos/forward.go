package chaos

import (
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// bufSize is the most one read takes; queueLen is how many chunks one direction holds
// between its reader and its writer. Like a TCP window they bound the bytes in flight per
// direction, to (queueLen+2) * bufSize: with latency L, one direction carries at most
// about queueLen * bufSize per L (Proxy's doc quotes these figures).
const (
	bufSize  = 16 << 10
	queueLen = 8
)

// chunk is what one read of a direction's source returned, in flight to its destination.
type chunk struct {
	b   *[]byte   // the bytes, (*b)[:n]; nil when n == 0
	n   int       // bytes read
	err error     // the read's error; a chunk with one is the direction's last
	due time.Time // when it may be written: read time + a latency sample, and never before the previous chunk's due
}

// forward copies src to dst, through the latency, bandwidth and reset faults: the client's
// bytes upstream (down false) or the upstream's to the client (down true). It returns when
// the direction has ended: src's read side ended and its end was passed on to dst (a
// half-close where dst can, else the link finishes), or the link finished.
func (l *link) forward(src, dst net.Conn, down bool) {
	q := make(chan chunk, queueLen)
	var rd sync.WaitGroup
	rd.Go(func() { l.read(src, q, down) })
	w := writer{l: l, dst: dst, down: down, pace: pacer{bw: l.p.faults.Bandwidth}, bytes: &l.p.st.up}
	if down {
		w.bytes = &l.p.st.down
	}
	w.run(q)
	if w.timer != nil {
		w.timer.Stop()
	}
	rd.Wait()
}

// read reads src into chunks stamped with their due time until a read fails (the last
// chunk carries the error) or the link finishes.
func (l *link) read(src net.Conn, q chan<- chunk, down bool) {
	lat := l.p.faults.Latency
	var rng *rand.Rand
	if l.p.latency {
		rng = latencyRand(l.p.seed, l.conn, down)
	}
	var last time.Time
	for {
		b := l.p.buf()
		n, err := src.Read(*b)
		if n == 0 {
			l.p.put(b)
			b = nil
			if err == nil {
				continue
			}
		}
		c := chunk{b: b, n: n, err: err, due: l.p.Now()}
		if rng != nil {
			c.due = c.due.Add(lat.Sample(rng))
		}
		if c.due.Before(last) { // order is kept within a direction
			c.due = last
		}
		last = c.due
		select {
		case q <- c:
		case <-l.done:
			if b != nil {
				l.p.put(b)
			}
			return
		}
		if err != nil {
			return
		}
	}
}

// writer is the writing half of one direction.
type writer struct {
	l     *link
	dst   net.Conn
	down  bool
	pace  pacer
	timer *time.Timer   // re-armed for every wait
	sent  int64         // bytes written to dst
	bytes *atomic.Int64 // the proxy's count of this direction
}

// run writes the chunks of q to dst, each at its due time, until the last chunk or until
// the link finishes. A failed write finishes the link, unless the link is silent: then
// the chunk is dropped, as every chunk is once the link is silent.
func (w *writer) run(q <-chan chunk) {
	l := w.l
	for {
		var c chunk
		select {
		case c = <-q:
		case <-l.done:
			return
		}
		ok := w.deliver(c)
		if c.b != nil {
			l.p.put(c.b)
		}
		if !ok {
			l.finish()
			return
		}
		if c.err != nil {
			w.end(c.err)
			return
		}
	}
}

// deliver writes c's bytes at its due time, paced by the bandwidth cap, and resets the
// link once ResetAfter bytes went downstream. It reports false when the link must finish
// (or has finished).
func (w *writer) deliver(c chunk) bool {
	l := w.l
	if c.n == 0 || l.isSilent() {
		return true
	}
	if !l.sleepUntil(c.due, &w.timer) {
		return false
	}
	resets := w.down && l.d.Reset
	after := l.p.faults.ResetAfter
	data := (*c.b)[:c.n]
	for len(data) > 0 {
		if l.isSilent() {
			return true
		}
		piece := data
		if w.pace.bw > 0 {
			piece = data[:min(len(data), w.pace.piece())]
		}
		if resets {
			piece = piece[:min(int64(len(piece)), after-w.sent)]
		}
		if w.pace.bw > 0 && !l.sleepUntil(w.pace.at(l.p.Now(), len(piece)), &w.timer) {
			return false
		}
		n, err := w.dst.Write(piece)
		w.sent += int64(n)
		w.bytes.Add(int64(n))
		if err != nil {
			return l.isSilent()
		}
		data = data[n:]
		if resets && w.sent >= after {
			l.reset()
			return false
		}
	}
	return true
}

// end passes the end of the source on: an EOF half-closes dst where it can (else the link
// finishes, closing both sides), any other error finishes the link. A silent link passes
// nothing to its client.
func (w *writer) end(err error) {
	l := w.l
	switch {
	case l.isSilent():
	case err != io.EOF:
		l.finish()
	default:
		if cw, ok := w.dst.(closeWriter); ok {
			cw.CloseWrite()
		} else {
			l.finish()
		}
	}
}

// pacer caps one direction at bw bytes per second (0 = no cap). A piece of n bytes may be
// written at
//
//	next = max(now, next) + n * 1e9 / bw  nanoseconds
//
// the remainder of the division carried to the next piece, so that any run of
// back-to-back pieces totalling N bytes ends exactly floor(N * 1e9 / bw) ns after it began.
type pacer struct {
	bw   int64
	next time.Time
	rem  int64 // carried remainder, in [0, bw)
}

// piece is the most one write may carry: 10 ms at the cap (at least a byte), at most a
// chunk, so that a capped direction trickles rather than bursts.
func (p *pacer) piece() int { return int(max(1, min(p.bw/100, bufSize))) }

// at returns when a piece of n bytes, ready at now, may be written.
func (p *pacer) at(now time.Time, n int) time.Time {
	if p.next.Before(now) {
		p.next, p.rem = now, 0
	}
	ns := int64(n)*int64(time.Second) + p.rem
	p.next = p.next.Add(time.Duration(ns / p.bw))
	p.rem = ns % p.bw
	return p.next
}
