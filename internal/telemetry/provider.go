package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Options configure Start.
type Options struct {
	// Endpoint is the OTLP/HTTP base URL (--otlp-endpoint), as OTEL_EXPORTER_OTLP_ENDPOINT
	// is one: traces go to Endpoint/v1/traces, metrics to Endpoint/v1/metrics. It wins over
	// the OTEL_EXPORTER_OTLP_* endpoint variables; "" = those variables, and none of them
	// set = telemetry off (Start returns nil).
	Endpoint string
	// SampleRatio is the share of root spans sampled (--trace-sample-ratio), 0..1.
	SampleRatio float64
	// MaxPerSecond caps the new traces sampled a second (--trace-max-per-second); 0 = no cap.
	MaxPerSecond float64
	// Service is the service.name of the resource, unless OTEL_SERVICE_NAME or
	// OTEL_RESOURCE_ATTRIBUTES name one; Version its service.version.
	Service, Version string
	// Metrics, when non-nil, is exported every MetricsInterval over OTLP (the run's live
	// figures); nil = traces only.
	Metrics sdkmetric.Producer
	// MetricsInterval is the export period of Metrics; 0 = OTEL_METRIC_EXPORT_INTERVAL, else
	// DefaultMetricsInterval.
	MetricsInterval time.Duration
	// Note receives the one line said when an export fails (the first failure of either
	// signal; later ones are not repeated); nil = discarded.
	Note func(line string)
	// Now is the sampler's clock (its cap); nil = time.Now.
	Now func() time.Time
}

// DefaultMetricsInterval is the export period of the run's metrics when neither
// Options.MetricsInterval nor OTEL_METRIC_EXPORT_INTERVAL sets one: a run lasts minutes,
// the SDK's default of 60 s would show it in a handful of points.
const DefaultMetricsInterval = 10 * time.Second

// ShutdownTimeout bounds the final flush of Provider.Shutdown: an endpoint that does not
// answer delays the end of a run by this much at most.
const ShutdownTimeout = 5 * time.Second

// Provider is the tracer provider and, with Options.Metrics, the meter provider of one run
// or one server. A nil *Provider is telemetry off: its Tracer is nil, Shutdown does nothing.
type Provider struct {
	tp      *sdktrace.TracerProvider
	mp      *sdkmetric.MeterProvider // nil = no metrics
	tracer  trace.Tracer
	failure *failureNote
}

// Configured reports whether Start would install a provider for endpoint: it is set, or
// the environment names an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or the traces'
// own), and OTEL_SDK_DISABLED is not true.
func Configured(endpoint string) bool {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	return endpoint != "" || os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// CheckEndpoint returns why endpoint is no OTLP/HTTP base URL; nil for "" (none).
func CheckEndpoint(endpoint string) error {
	if endpoint == "" {
		return nil
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL (an OTLP/HTTP base, e.g. http://127.0.0.1:4318)", endpoint)
	}
	return nil
}

// Start installs the providers of o, or nothing (nil, nil) when telemetry is not
// Configured. Exporters connect lazily: an unreachable endpoint fails no Start, only
// exports, which o.Note hears of once.
func Start(ctx context.Context, o Options) (*Provider, error) {
	if !Configured(o.Endpoint) {
		return nil, nil
	}
	if err := CheckEndpoint(o.Endpoint); err != nil {
		return nil, err
	}
	res, err := resource.New(ctx, resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", o.Service), attribute.String("service.version", o.Version)),
		resource.WithFromEnv()) // last: OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES win
	if err != nil && res == nil {
		return nil, fmt.Errorf("telemetry resource: %w", err)
	}
	base := strings.TrimRight(o.Endpoint, "/")
	topts := []otlptracehttp.Option{}
	if base != "" {
		topts = append(topts, otlptracehttp.WithEndpointURL(base+"/v1/traces"))
	}
	texp, err := otlptracehttp.New(ctx, topts...)
	if err != nil {
		return nil, fmt.Errorf("otlp traces: %w", err)
	}
	p := &Provider{failure: &failureNote{note: o.Note, endpoint: o.Endpoint}}
	p.tp = sdktrace.NewTracerProvider(sdktrace.WithResource(res),
		sdktrace.WithSampler(NewSampler(o.SampleRatio, o.MaxPerSecond, o.Now)),
		sdktrace.WithBatcher(spanExporter{texp, p.failure}))
	p.tracer = p.tp.Tracer("github.com/tasksim/tasksim")
	if o.Metrics != nil && metricsConfigured(base) {
		if p.mp, err = startMetrics(ctx, base, res, o, p.failure); err != nil {
			_ = p.tp.Shutdown(ctx)
			return nil, err
		}
	}
	return p, nil
}

// metricsConfigured reports whether metrics have an endpoint: the base URL, or one of the
// environment (a traces-only endpoint exports no metrics to the SDK's default).
func metricsConfigured(base string) bool {
	return base != "" || os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != ""
}

// startMetrics starts the meter provider exporting o.Metrics periodically.
func startMetrics(ctx context.Context, base string, res *resource.Resource, o Options, f *failureNote) (*sdkmetric.MeterProvider, error) {
	mopts := []otlpmetrichttp.Option{}
	if base != "" {
		mopts = append(mopts, otlpmetrichttp.WithEndpointURL(base+"/v1/metrics"))
	}
	mexp, err := otlpmetrichttp.New(ctx, mopts...)
	if err != nil {
		return nil, fmt.Errorf("otlp metrics: %w", err)
	}
	ropts := []sdkmetric.PeriodicReaderOption{sdkmetric.WithProducer(o.Metrics)}
	switch {
	case o.MetricsInterval > 0:
		ropts = append(ropts, sdkmetric.WithInterval(o.MetricsInterval))
	case os.Getenv("OTEL_METRIC_EXPORT_INTERVAL") == "":
		ropts = append(ropts, sdkmetric.WithInterval(DefaultMetricsInterval))
	}
	reader := sdkmetric.NewPeriodicReader(metricExporter{mexp, f}, ropts...)
	return sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(reader)), nil
}

// Tracer is the tracer of p's spans; nil when p is nil (telemetry off).
func (p *Provider) Tracer() trace.Tracer {
	if p == nil {
		return nil
	}
	return p.tracer
}

// Shutdown flushes what is left (the last spans, a final export of the metrics) and stops
// the providers, within ShutdownTimeout whatever ctx allows: a run's end, or its
// interruption, is never held up longer by an endpoint that does not answer.
func (p *Provider) Shutdown(ctx context.Context) {
	if p == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	var errs []error
	if p.mp != nil {
		errs = append(errs, p.mp.Shutdown(ctx))
	}
	errs = append(errs, p.tp.Shutdown(ctx))
	if err := errors.Join(errs...); err != nil {
		p.failure.fail("flush", err)
	}
}

// failureNote says the first export failure, once for the provider: an unreachable
// endpoint is one clear line, not a line per batch, and never a failed run.
type failureNote struct {
	once     sync.Once
	note     func(string)
	endpoint string
}

// fail notes err, the first time.
func (f *failureNote) fail(what string, err error) {
	f.once.Do(func() {
		if f.note == nil {
			return
		}
		where := f.endpoint
		if where == "" {
			where = "the OTEL_EXPORTER_OTLP_* endpoint"
		}
		f.note(fmt.Sprintf("telemetry: %s to %s failed; tasksim goes on without it (later failures are not shown): %v", what, where, err))
	})
}

// spanExporter is the OTLP span exporter whose failures are noted (failureNote) and
// dropped: the batch processor then has nothing to hand to the SDK's global error
// handler, which would print every failure.
type spanExporter struct {
	sdktrace.SpanExporter
	f *failureNote
}

// ExportSpans implements sdktrace.SpanExporter.
func (e spanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if err := e.SpanExporter.ExportSpans(ctx, spans); err != nil {
		e.f.fail("exporting traces", err)
	}
	return nil
}

// metricExporter is the OTLP metric exporter whose failures are noted and dropped, as
// spanExporter's.
type metricExporter struct {
	sdkmetric.Exporter
	f *failureNote
}

// Export implements sdkmetric.Exporter.
func (e metricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	if err := e.Exporter.Export(ctx, rm); err != nil {
		e.f.fail("exporting metrics", err)
	}
	return nil
}

var (
	_ sdktrace.SpanExporter = spanExporter{}
	_ sdkmetric.Exporter    = metricExporter{}
)
