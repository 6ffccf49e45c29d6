// Package telemetry owns tasksim's OpenTelemetry: the providers of `tasksim run
// --otlp-endpoint` and `tasksim serve --otlp-endpoint` (OTLP over HTTP, traces to
// URL/v1/traces and metrics to URL/v1/metrics, the standard OTEL_* variables read by the
// SDK), their sampler (parent-based, a ratio and a cap of new traces per second), the
// attribute names of the OpenTelemetry MCP semantic conventions, and the W3C trace context
// carried in a request's params._meta (traceparent, tracestate): written by the client,
// read by the mock server (docs/METRICS.md#traces).
//
// Off by default: with no endpoint, Start installs nothing and returns a nil *Provider,
// whose Tracer is nil, and the client and the server pay one nil check per request. It
// installs no global provider, propagator or error handler (STYLE habit 5): the tracer is
// handed to client.Target and mockserver.Config.
//
// It imports nothing of tasksim: client, loadgen, mockserver and runner import it.
package telemetry
