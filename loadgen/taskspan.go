package loadgen

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/tasksim/tasksim/internal/telemetry"
)

// The task as a span (docs/METRICS.md#traces), when the run traces (client.Target.Tracer):
// "task {tool}", from the client's create to the task's known outcome (endTask), with
// mcp.task.id once the create brought one and mcp.task.status, the last status seen, at
// its end. The create's request span is its child (the create's context carries it); each
// later request of the task (polls, tasks/result, tasks/update, tasks/cancel) is the root
// of a trace of its own that links to it, so that a task polled a thousand times is not
// one trace of a thousand spans, and the sampler lets a poll follow its task's decision
// (telemetry.Sampler). Without a Tracer v.span stays nil and nothing here runs.

// startTaskSpan starts the span of the task v begins and returns the context of its
// create; ctx unchanged when the run does not trace.
func (v *vu) startTaskSpan(ctx context.Context) context.Context {
	tr := v.e.target.Tracer
	if tr == nil {
		return ctx
	}
	ctx, v.span = tr.Start(ctx, "task "+v.e.cfg.Tool, trace.WithSpanKind(trace.SpanKindInternal))
	return ctx
}

// taskCreated notes the task's id on its span.
func (v *vu) taskCreated(id string) {
	if v.span != nil && v.span.IsRecording() {
		v.span.SetAttributes(attribute.String(telemetry.AttrTaskID, id))
	}
}

// taskContext returns ctx carrying the link of the requests about the task to its span.
func (v *vu) taskContext(ctx context.Context) context.Context {
	if v.span == nil {
		return ctx
	}
	return telemetry.WithLink(ctx, v.span.SpanContext())
}

// endTaskSpan ends the task's span: with the task's last status and its outcome when it
// was created (created false: the create brought no task to follow), an error status for
// a task that failed or whose outcome is not known.
func (v *vu) endTaskSpan(created bool) {
	s := v.span
	if s == nil {
		return
	}
	v.span = nil
	defer s.End()
	if !s.IsRecording() {
		return
	}
	s.SetAttributes(attribute.String(telemetry.AttrToolName, v.e.cfg.Tool))
	if !created {
		s.SetAttributes(attribute.String(telemetry.AttrTaskOutcome, "no_task"))
		return
	}
	lc := &v.lc
	if lc.Status != 0 {
		s.SetAttributes(attribute.String(telemetry.AttrTaskStatus, lc.Status.String()))
	}
	s.SetAttributes(attribute.String(telemetry.AttrTaskOutcome, lc.Outcome.String()))
	switch lc.Outcome {
	case OutcomeCompleted, OutcomeCancelled:
	default:
		s.SetStatus(codes.Error, lc.Outcome.String())
	}
}
