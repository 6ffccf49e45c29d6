package loadgen

import (
	"cmp"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

// ErrorSample is one kind of failed request as the clients saw it: the method, how it
// failed (outcome, JSON-RPC code or HTTP status), how often, and the first message seen,
// so that a summary can name the top errors of a run ("tools/call -32602 x 9,000: Invalid
// arguments for tool work: ...") rather than only count them.
type ErrorSample struct {
	Method  string `json:"method"`           // JSON-RPC method, or "DELETE"
	Outcome string `json:"outcome"`          // metrics.Outcome name: rpc_error, http_error, transport, protocol
	Code    int    `json:"code,omitempty"`   // JSON-RPC error code; 0 = none
	Status  int    `json:"status,omitempty"` // HTTP status; 0 = none
	Count   int64  `json:"count"`
	// Message is the first message seen for this kind: the JSON-RPC error message, the
	// HTTP status line with the start of a plain-text body, or the transport failure. It is
	// one line, cut at maxSampleMessage bytes; it may hold what the target echoed, so a
	// caller that prints it redacts its own secrets first.
	Message string `json:"message"`
}

// maxErrorKinds bounds the kinds of error an errorBook keeps: a peer that puts a fresh
// code or status in every reply cannot grow it without end. Errors of further kinds are
// still counted by the metrics, only not sampled here.
const maxErrorKinds = 64

// maxSampleMessage bounds a sampled message, in bytes.
const maxSampleMessage = 200

// errorKey is what sets one kind of error apart.
type errorKey struct {
	m            mcp.Op
	o            metrics.Outcome
	code, status int
}

// errorBook samples the errors of a run. Only failed requests reach it, and a kind seen
// before costs a read lock and an atomic add: a run whose every request fails (a target
// gone) does not serialize its clients on it.
type errorBook struct {
	mu    sync.RWMutex
	kinds map[errorKey]*errorKind
}

// errorKind is one kind's sample and its count.
type errorKind struct {
	sample ErrorSample // Count unused: n holds it
	n      atomic.Int64
}

// note records one failed request; msg is called only for a kind seen for the first time.
func (b *errorBook) note(k errorKey, msg func() string) {
	b.mu.RLock()
	kind := b.kinds[k]
	b.mu.RUnlock()
	if kind == nil {
		b.mu.Lock()
		if kind = b.kinds[k]; kind == nil {
			if len(b.kinds) >= maxErrorKinds {
				b.mu.Unlock()
				return
			}
			if b.kinds == nil {
				b.kinds = make(map[errorKey]*errorKind)
			}
			kind = &errorKind{sample: ErrorSample{Method: k.m.Name(), Outcome: k.o.Name(), Code: k.code,
				Status: k.status, Message: client.OneLine(msg(), maxSampleMessage)}}
			b.kinds[k] = kind
		}
		b.mu.Unlock()
	}
	kind.n.Add(1)
}

// samples returns every kind, the most frequent first (then by method, code and status, so
// that the order is stable).
func (b *errorBook) samples() []ErrorSample {
	b.mu.RLock()
	out := make([]ErrorSample, 0, len(b.kinds))
	for _, k := range b.kinds {
		s := k.sample
		s.Count = k.n.Load()
		out = append(out, s)
	}
	b.mu.RUnlock()
	slices.SortFunc(out, func(a, b ErrorSample) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Method, b.Method),
			cmp.Compare(a.Code, b.Code), cmp.Compare(a.Status, b.Status), strings.Compare(a.Outcome, b.Outcome))
	})
	return out
}

// ErrorSamples returns the kinds of failed request the run met, the most frequent first,
// each with the first message seen. Only outcomes that are errors (metrics.Outcome.IsError)
// are here; a kind beyond the first 64 is counted in the metrics but not sampled.
func (e *Engine) ErrorSamples() []ErrorSample { return e.errors.samples() }

// errorMessage says what failed in one line: the JSON-RPC error's message, or the error.
func errorMessage(rep client.Reply, err error) string {
	if err == nil && rep.Err != nil {
		return rep.Err.Message
	}
	if err == nil {
		return ""
	}
	var he *client.HTTPError
	if errors.As(err, &he) {
		return he.Error()
	}
	return err.Error()
}
