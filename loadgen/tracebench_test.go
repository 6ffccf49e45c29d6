package loadgen_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/looplimit"
	"github.com/tasksim/tasksim/internal/telemetry"
)

// otlpSink is an OTLP/HTTP endpoint on 127.0.0.1 that reads and discards every export,
// as a collector that keeps up would.
func otlpSink(tb testing.TB) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	tb.Cleanup(srv.Close)
	return srv.URL
}

// tracerTo returns the tracer of a provider exporting to endpoint at ratio 1 with a cap of
// perSecond new traces a second (0 = none), shut down (flushed) when tb ends.
func tracerTo(tb testing.TB, endpoint string, perSecond float64) trace.Tracer {
	p, err := telemetry.Start(context.Background(), telemetry.Options{Endpoint: endpoint, SampleRatio: 1, MaxPerSecond: perSecond, Service: "tasksim-bench"})
	if err != nil || p == nil {
		tb.Fatalf("telemetry.Start: %v, %v", p, err)
	}
	tb.Cleanup(func() { p.Shutdown(context.Background()) })
	return p.Tracer()
}

// BenchmarkPollThroughputTraced holds tasksim's tasks/get poll traced against the same poll
// untraced (tracing's default), in the same run, in each era: ratio is traced req/s over
// untraced req/s (the median of ABBA pairs of rounds, as BenchmarkPollThroughputVsLoopLimit
// has it), untraced-req/s the untraced side's. Traced is "all": ratio 1.0 and no cap, every
// request a sampled client span, its trace context in params._meta, exported over
// OTLP/HTTP to a sink on loopback; or "default-cap": ratio 1.0 and the command line's
// default cap (1000 new traces a second), the requests beyond it spans not sampled that
// still carry their context. The cost of tracing off is in the untraced side itself: one
// nil check a request (client.Session.do), which BenchmarkPollThroughputVsLoopLimit guards.
func BenchmarkPollThroughputTraced(b *testing.B) {
	sink := otlpSink(b)
	for _, version := range []string{client.ProtocolLegacy, client.ProtocolModern} {
		for _, tc := range []struct {
			name      string
			perSecond float64
		}{{"all", 0}, {"default-cap", 1000}} {
			b.Run(version+"/"+tc.name, func(b *testing.B) {
				traced := newTasksimPollWith(b, version, tracerTo(b, sink, tc.perSecond))
				untraced := newTasksimPollIn(b, version)
				for i, s := range []requester{traced, untraced} {
					if _, err := round(s, 4*loopConc); err != nil {
						b.Fatalf("side %d warm-up: %v", i, err)
					}
				}
				looplimit.CompareWith(b, traced.do, untraced.do, "untraced")
			})
		}
	}
}

// TestTracedPollPlumbing checks the traced benchmark's plumbing once (not its speed): a
// traced poll answers in both eras.
func TestTracedPollPlumbing(t *testing.T) {
	sink := otlpSink(t)
	for _, version := range []string{client.ProtocolLegacy, client.ProtocolModern} {
		if _, err := round(newTasksimPollWith(t, version, tracerTo(t, sink, 0)), 2*loopConc); err != nil {
			t.Fatal(err)
		}
	}
}
