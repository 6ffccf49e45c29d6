package mockserver

import (
	"github.com/tasksim/tasksim/internal/mcp"
)

// stream marks one open tasks/result SSE stream, so that an elicitation is carried by one
// live stream at a time and re-sent only when that stream is gone. probe asks the stream to
// check that its client is still there (see tasksResult).
type stream struct {
	done  chan struct{}
	probe chan struct{} // buffered 1
}

func (st *stream) alive() bool {
	select {
	case <-st.done:
		return false
	default:
		return true
	}
}

// tasksResult returns the task's payload, blocking while it is working or input_required (R17,
// R18). On a non-terminal task a client that accepts SSE gets a stream: the priming event (H5),
// then every pending elicitation/create of the task (docs/RULES.md#input-required-flow), then the
// final reply. A dropped connection abandons the request, never the task (R62).
//
// An elicitation is carried by one live stream at a time (H6). When the stream that carried
// it ends before it was answered, the other waiters on the task are woken, so that a stream
// open meanwhile (or the next tasks/result) sends it again: a client whose stream dropped
// before it answered is asked again, never left in input_required. The same holds when the
// owner's GET stream that carried it ends. A stream finds its client gone when its request
// context ends (net/http cancels it when the connection closes) or when a write fails: a
// new stream that finds the elicitation held by another asks that one to write an SSE
// comment (": ping"), so that a stream whose client left without the server noticing (a
// transport that does not cancel the context) ends and gives the elicitation up.
//
// The stream ends without a reply when the caller's session ends (DELETE, session_expiry,
// restart): the client asks again on a new session.
func (f *sessionFront) tasksResult(c *call) {
	s := f.srv
	if s.resultDenied(c) {
		return // 403: the token lost the results scope (insecure.go)
	}
	t, e := s.lookupTask(c)
	if e != nil {
		c.reply(nil, e)
		return
	}
	useSSE := accepts(c.r.Header.Get("Accept"), "text/event-stream")
	if useSSE { // R39: only a stream can carry an elicitation; with a JSON-only waiter it goes to the GET stream
		t.mu.Lock()
		t.waiters++
		t.mu.Unlock()
	}
	var st *stream // made when the call first waits: a result at hand needs none
	defer func() { t.streamEnded(st, useSSE) }()
	var sw *sse
	for {
		t.mu.Lock()
		if t.gone {
			why := t.goneWhyLocked()
			t.mu.Unlock()
			f.finalReply(c, sw, t.id, nil, mcp.Errorf(mcp.CodeInvalidParams, "task %s %s", t.id, why))
			return
		}
		if t.status.Terminal() {
			bp := getBuf()
			result, rpcErr := t.payloadLocked(*bp)
			t.fetched = true
			t.mu.Unlock()
			f.finalReply(c, sw, t.id, result, rpcErr)
			putBuf(bp, result)
			return
		}
		if b := f.early(t); b != nil { // early_result answers at once (R18 broken, knownbad.go)
			t.mu.Unlock()
			c.reply(b, nil)
			return
		}
		if st == nil {
			st = &stream{done: make(chan struct{}), probe: make(chan struct{}, 1)}
		}
		var out [][]byte
		var getEnded <-chan struct{} // the owner's GET stream ends: an elicitation it carried is ours to send
		if useSSE {
			out, getEnded = t.claimElicitationsLocked(st)
		}
		changed := t.changedLocked()
		t.mu.Unlock()

		if useSSE {
			if sw == nil {
				if sw = f.openResultStream(c); sw == nil {
					return
				}
			}
			for _, m := range out {
				if sw.event(m) != nil {
					return
				}
			}
		}
		select {
		case <-changed:
		case <-getEnded:
		case <-st.probe:
			if sw != nil && sw.comment() != nil {
				return // the client is gone: streamEnded wakes the stream that asked
			}
		case <-c.r.Context().Done():
			return
		case <-c.sess.closed():
			return
		case <-s.closing:
			return
		}
	}
}

// goneWhyLocked says why tasksResult finds t deleted, for its error: the ttl ran out before
// the task finished, or after it finished but before its result was fetched. t.mu is held.
func (t *task) goneWhyLocked() string {
	if t.status.Terminal() {
		return "was deleted before its result was fetched"
	}
	return "expired and was deleted before it finished (its ttl ran out)"
}

// claimElicitationsLocked returns the pending elicitations of t that stream st is to send
// now, and marks st as their carrier: those unanswered that no live stream carries (H6: one
// message, one stream). An elicitation that another stream holds makes st ask that stream to
// probe its client; one carried by the owner's GET stream stays there while it is connected,
// and getEnded (nil when no elicitation went to the GET stream) is closed when that stream
// ends. t.mu is held.
func (t *task) claimElicitationsLocked(st *stream) (out [][]byte, getEnded <-chan struct{}) {
	for _, p := range t.pending {
		if p.answered {
			continue
		}
		// H6: one message, one stream: not while the owner's GET stream that got it is
		// connected.
		onGET := false
		if p.onGET {
			getEnded = t.owner.getEnded() // before the test, so that no end is missed
			onGET = t.owner.getReaders.Load() > 0
		}
		switch {
		case onGET:
		case p.deliveredTo == nil || !p.deliveredTo.alive():
			p.deliveredTo = st
			out = append(out, p.msg)
		case p.deliveredTo != st:
			select { // is its client still there?
			case p.deliveredTo.probe <- struct{}{}:
			default:
			}
		}
	}
	return out, getEnded
}

// openResultStream starts tasksResult's SSE reply with its priming event (carrying the
// server's retry hint; when the duplicate fault fires, the reply will go out twice) and
// returns it, or nil when the client is already gone.
func (f *sessionFront) openResultStream(c *call) *sse {
	s := f.srv
	sw := newSSE(c.w, c.sess)
	sw.retry = s.cfg.SSERetry
	sw.dup = s.faults.duplicate && f.srv.fires(faultDuplicate, f.srv.clock.Now()) // faults.go
	if sw.start() != nil {
		return nil
	}
	return sw
}

// streamEnded is the end of tasksResult's stream st: st is no longer alive, and when it
// carried an elicitation still unanswered, the task's other waiters are woken to send it.
// st is nil when the call never waited.
func (t *task) streamEnded(st *stream, useSSE bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if st != nil {
		close(st.done)
	}
	if !useSSE {
		return
	}
	t.waiters--
	if st == nil {
		return // nothing was delivered to it
	}
	for _, p := range t.pending {
		if p.deliveredTo == st && !p.answered {
			t.signalLocked()
			return
		}
	}
}

// finalReply sends the terminal reply on the SSE stream if one was opened, else as JSON.
// On a stream chosen by the duplicate fault it is sent twice (faults.go).
func (f *sessionFront) finalReply(c *call, sw *sse, taskID string, result []byte, e *mcp.Error) {
	s := f.srv
	if sw == nil {
		c.reply(result, e)
		return
	}
	if !c.replyLatency() {
		return
	}
	result, e = f.filter(c.op, result, e) // the known-bad modes (knownbad.go)
	s.requests.answered(eraLegacy, c.op, e != nil)
	var b []byte
	if e != nil {
		b = mcp.AppendError(nil, c.msg.ID, e)
	} else {
		b = mcp.AppendResult(nil, c.msg.ID, result)
	}
	if sw.event(b) == nil && sw.dup && sw.event(b) == nil {
		f.srv.injected(faultDuplicate, f.srv.clock.Now(), taskID)
	}
}

// payloadLocked appends what the original tools/call would have returned (R17): the
// CallToolResult with related-task _meta (R19), or else returns dst and the same JSON-RPC
// error.
func (t *task) payloadLocked(dst []byte) ([]byte, *mcp.Error) {
	if t.end == endRPCError {
		return dst, simulatedError()
	}
	if t.end == endDownstream {
		return dst, downstreamError(t.statusMessage) // downstream.go
	}
	id := t.srv.modes.resultMeta(t.id) // names the task in related-task _meta; "" with no_related_meta (R19)
	return t.srv.injectResult(appendToolResult(dst, &t.work, t.end, id, t.statusMessage)), nil
}
