package runner

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	prombridge "go.opentelemetry.io/contrib/bridges/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/tasksim/tasksim/internal/telemetry"
)

// Telemetry is the OpenTelemetry export of a run or a standalone server
// (docs/METRICS.md#traces): OTLP over HTTP to Endpoint, the providers set up by
// internal/telemetry.
type Telemetry struct {
	// Endpoint is the OTLP/HTTP base URL (--otlp-endpoint): traces to Endpoint/v1/traces,
	// metrics to Endpoint/v1/metrics. It wins over OTEL_EXPORTER_OTLP_ENDPOINT and the
	// other OTEL_* variables the SDK reads; "" = those variables, and with none of them
	// nothing is exported, no tracer is installed and the requests carry no trace context.
	Endpoint string
	// SampleRatio is the share of new traces sampled (--trace-sample-ratio, parent-based:
	// a span with a parent follows it, a poll its task), 0..1; 0 samples none (metrics only).
	SampleRatio float64
	// MaxPerSecond caps the new traces sampled a second (--trace-max-per-second), a token
	// bucket; 0 = no cap.
	MaxPerSecond float64
}

// Check returns why t cannot be used; nil when it can.
func (t Telemetry) Check() error {
	if err := telemetry.CheckEndpoint(t.Endpoint); err != nil {
		return usageErrorf("--otlp-endpoint: %v", err)
	}
	if t.SampleRatio < 0 || t.SampleRatio > 1 {
		return usageErrorf("--trace-sample-ratio %g: want a share from 0 to 1", t.SampleRatio)
	}
	if t.MaxPerSecond < 0 {
		return usageErrorf("--trace-max-per-second %g: want 0 (no cap) or more", t.MaxPerSecond)
	}
	return nil
}

// StartServe starts the telemetry of a standalone server (`tasksim serve
// --otlp-endpoint`): its traces, the server spans (mockserver.Config.Tracer, which it
// sets on cfg's caller's behalf through the returned provider's Tracer), and, when m is
// not nil, its metrics once m has them (ServeMetrics.Set); nil when off. notes hears of a
// failed export, once. The caller shuts it down.
func (t Telemetry) StartServe(ctx context.Context, m *ServeMetrics, notes func(string)) (*telemetry.Provider, error) {
	var prod sdkmetric.Producer // a nil *ServeMetrics must not be a non-nil Producer
	if m != nil {
		prod = &m.lateMetrics
	}
	return t.start(ctx, "tasksim-serve", prod, notes)
}

// lateMetrics is the OTLP metrics of a run or a server whose source exists only after its
// telemetry started: the telemetry comes first, so that the probe's requests (a run) or the
// server's spans (serve) have their tracer; an export before set has nothing to send.
type lateMetrics struct {
	p atomic.Pointer[sdkmetric.Producer]
}

// set hands over the source; nil keeps none.
func (l *lateMetrics) set(p sdkmetric.Producer) {
	if p != nil {
		l.p.Store(&p)
	}
}

// Produce implements sdkmetric.Producer: the source's export, none before set.
func (l *lateMetrics) Produce(ctx context.Context) ([]metricdata.ScopeMetrics, error) {
	if p := l.p.Load(); p != nil {
		return (*p).Produce(ctx)
	}
	return nil, nil
}

// ServeMetrics is the metrics of a standalone server for its OTLP export (StartServe): its
// registry (mockserver.Server.Gatherer, what /metrics serves), handed over with Set once
// the server exists, read through the OpenTelemetry Prometheus bridge.
type ServeMetrics struct{ lateMetrics }

// Set hands over the server's registry.
func (m *ServeMetrics) Set(g prometheus.Gatherer) {
	m.set(prombridge.NewMetricProducer(prombridge.WithGatherer(g)))
}

// start starts the providers of t for service (nil when telemetry is off), exporting
// metrics's figures when it is non-nil; notes hears of a failed export, once.
func (t Telemetry) start(ctx context.Context, service string, metrics sdkmetric.Producer, notes func(string)) (*telemetry.Provider, error) {
	if err := t.Check(); err != nil {
		return nil, err
	}
	o := telemetry.Options{Endpoint: t.Endpoint, SampleRatio: t.SampleRatio, MaxPerSecond: t.MaxPerSecond,
		Service: service, Version: Version, Note: notes}
	if metrics != nil {
		o.Metrics = metrics
	}
	p, err := telemetry.Start(ctx, o)
	if err != nil {
		return nil, &UsageError{err}
	}
	return p, nil
}

// startTelemetry starts the run's telemetry, before the probe, so that its requests are
// spans too, and keeps its tracer (r.tracer), which reach hands to the target: its
// clients' requests and tasks are then spans (client/trace.go, loadgen/taskspan.go). Its
// metrics are the run's live figures, exported from when they exist (r.late, after the
// probe). nil when the run exports none.
func (r *runRequest) startTelemetry(ctx context.Context) (*telemetry.Provider, error) {
	p, err := r.opts.Telemetry.start(ctx, "tasksim", &r.late, func(line string) { r.note("%s", line) })
	if err != nil || p == nil {
		return nil, err
	}
	r.tracer = p.Tracer()
	where := r.opts.Telemetry.Endpoint
	if where == "" {
		where = "the OTEL_EXPORTER_OTLP_* endpoint"
	}
	limit := "no cap"
	if n := r.opts.Telemetry.MaxPerSecond; n > 0 {
		limit = fmt.Sprintf("at most %g new task traces a second", n)
	}
	r.note("telemetry: traces and metrics over OTLP to %s (sample ratio %g, %s)", where, r.opts.Telemetry.SampleRatio, limit)
	return p, nil
}
