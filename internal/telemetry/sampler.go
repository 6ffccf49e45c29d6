package telemetry

import (
	"fmt"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/time/rate"
)

// Sampler decides which spans are recorded and exported, as an SRE expects of a
// parent-based ratio sampler, with a cap:
//
//	the span has a parent (local, or remote from _meta)  the parent's decision
//	a root linked to a span (a poll to its task)         the first link's decision
//	any other root (a task)                              the ratio (by trace id), then the cap
//
// The cap is a token bucket of MaxPerSecond new task (and other root) traces a second
// (burst: one second's worth): a root the ratio would sample is dropped when the bucket is
// empty, so that a 100,000-client run samples at most that many tasks a second whatever its
// rate. A poll follows its task outside the cap, so that a sampled task has all its polls
// and an unsampled one none: the export is bounded by the cap times the polls of a task.
type Sampler struct {
	ratio sdktrace.Sampler
	desc  string
	now   func() time.Time
	cap   *rate.Limiter // nil = no cap
}

// NewSampler returns the sampler of ratio (0..1; 1 samples every root) and at most
// perSecond new traces a second (0 = no cap), its bucket read at the instants now gives
// (nil = time.Now).
func NewSampler(ratio, perSecond float64, now func() time.Time) *Sampler {
	if now == nil {
		now = time.Now
	}
	s := &Sampler{ratio: sdktrace.TraceIDRatioBased(ratio), now: now,
		desc: fmt.Sprintf("tasksim{ratio=%g,max_per_second=%g}", ratio, perSecond)}
	if perSecond > 0 {
		s.cap = rate.NewLimiter(rate.Limit(perSecond), max(1, int(perSecond)))
	}
	return s
}

// ShouldSample implements sdktrace.Sampler.
func (s *Sampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	psc := trace.SpanContextFromContext(p.ParentContext)
	if psc.IsValid() {
		return decide(psc.IsSampled(), psc)
	}
	if len(p.Links) > 0 && p.Links[0].SpanContext.IsValid() {
		return decide(p.Links[0].SpanContext.IsSampled(), psc) // a poll follows its task
	}
	sampled := s.ratio.ShouldSample(p).Decision == sdktrace.RecordAndSample
	if sampled && s.cap != nil {
		sampled = s.cap.AllowN(s.now(), 1) // the limiter is safe for concurrent use
	}
	return decide(sampled, psc)
}

// decide is the result of a decision, the parent's tracestate kept.
func decide(sampled bool, parent trace.SpanContext) sdktrace.SamplingResult {
	d := sdktrace.Drop
	if sampled {
		d = sdktrace.RecordAndSample
	}
	return sdktrace.SamplingResult{Decision: d, Tracestate: parent.TraceState()}
}

// Description implements sdktrace.Sampler.
func (s *Sampler) Description() string { return s.desc }

var _ sdktrace.Sampler = (*Sampler)(nil)
