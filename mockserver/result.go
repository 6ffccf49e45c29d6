package mockserver

import (
	"github.com/tasksim/tasksim/internal/mcp"
)

// stream marks one open tasks/result SSE stream, so that an elicitation is carried by one
// live stream at a time and re-sent only when that stream is gone.
type stream struct{ done chan struct{} }

func (st *stream) alive() bool {
	select {
	case <-st.done:
		return false
	default:
		return true
	}
}

// tasksResult returns the task's payload, blocking while it is working or input_required
// (R17, R18). On a non-terminal task a client that accepts SSE gets a stream: the priming
// event (H5), then every pending elicitation/create of the task (spec/TASKS.md section 10),
// then the final reply. A dropped connection abandons the request, never the task (R62).
func (s *Server) tasksResult(c *call) {
	t, e := s.lookupTask(c)
	if e != nil {
		c.reply(nil, e)
		return
	}
	useSSE := accepts(c.r.Header.Get("Accept"), "text/event-stream")
	st := &stream{done: make(chan struct{})}
	defer close(st.done)
	var sw *sse
	if useSSE { // R39: only a stream can carry an elicitation; with a JSON-only waiter it goes to the GET stream
		t.mu.Lock()
		t.waiters++
		t.mu.Unlock()
		defer func() {
			t.mu.Lock()
			t.waiters--
			t.mu.Unlock()
		}()
	}
	for {
		t.mu.Lock()
		if t.gone {
			t.mu.Unlock()
			s.finalReply(c, sw, nil, mcp.Errorf(mcp.CodeInvalidParams, "task %s expired and was deleted before it finished (its ttl ran out)", t.id))
			return
		}
		if t.status.Terminal() {
			result, rpcErr := t.payloadLocked()
			t.fetched = true
			t.mu.Unlock()
			s.finalReply(c, sw, result, rpcErr)
			return
		}
		var out [][]byte
		if useSSE {
			for _, p := range t.pending {
				// H6: one message, one stream: not while the owner's GET stream that got it is connected.
				onGET := p.onGET && t.owner.getReaders.Load() > 0
				if !p.answered && !onGET && (p.deliveredTo == nil || !p.deliveredTo.alive()) {
					p.deliveredTo = st
					out = append(out, p.msg)
				}
			}
		}
		changed := t.changedLocked()
		t.mu.Unlock()

		if useSSE {
			if sw == nil {
				sw = newSSE(c.w, c.sess)
				if sw.start() != nil {
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
		case <-c.r.Context().Done():
			return
		case <-s.closing:
			return
		}
	}
}

// finalReply sends the terminal reply on the SSE stream if one was opened, else as JSON.
func (s *Server) finalReply(c *call, sw *sse, result []byte, e *mcp.Error) {
	if sw == nil {
		c.reply(result, e)
		return
	}
	if !c.replyLatency() {
		return
	}
	s.requests.answered(c.op, e != nil)
	var b []byte
	if e != nil {
		b = mcp.AppendError(nil, c.msg.ID, e)
	} else {
		b = mcp.AppendResult(nil, c.msg.ID, result)
	}
	_ = sw.event(b)
}

// payloadLocked is what the original tools/call would have returned (R17): the
// CallToolResult with related-task _meta (R19), or the same JSON-RPC error.
func (t *task) payloadLocked() ([]byte, *mcp.Error) {
	if t.end == endRPCError {
		return nil, simulatedError()
	}
	if t.end == endDownstream {
		return nil, downstreamError(t.statusMessage) // downstream.go
	}
	return appendToolResult(nil, &t.work, t.end, t.id, t.statusMessage), nil
}
