package telemetry

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// spanContext is a valid span context, sampled or not.
func spanContext(sampled bool) trace.SpanContext {
	flags := trace.TraceFlags(0)
	if sampled {
		flags = trace.FlagsSampled
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6}, TraceFlags: flags})
}

// TestSamplerCap: the cap is a token bucket of new traces a second, read at the sampler's
// clock: a second's worth at once, then one more per 1/rate; children and spans with a
// sampled parent are not capped, and a root linked to a span follows that span.
func TestSamplerCap(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	s := NewSampler(1, 2, func() time.Time { return now })
	root := func(links ...trace.Link) bool {
		return s.ShouldSample(sdktrace.SamplingParameters{ParentContext: context.Background(), TraceID: trace.TraceID{9}, Links: links}).Decision == sdktrace.RecordAndSample
	}
	got := []bool{root(), root(), root()}
	if want := []bool{true, true, false}; !equal(got, want) {
		t.Errorf("three roots in one instant at 2/s: %v, want %v", got, want)
	}
	child := sdktrace.SamplingParameters{ParentContext: trace.ContextWithSpanContext(context.Background(), spanContext(true))}
	if s.ShouldSample(child).Decision != sdktrace.RecordAndSample {
		t.Error("a child of a sampled span was dropped by the cap")
	}
	now = now.Add(time.Second / 2)
	if !root() || root() {
		t.Error("half a second later: want one more root sampled, then none")
	}
	if root(trace.Link{SpanContext: spanContext(false)}) {
		t.Error("a root linked to an unsampled task was sampled")
	}
	for i := range 5 { // the bucket is empty: a sampled task's polls go on, outside the cap
		if !root(trace.Link{SpanContext: spanContext(true)}) {
			t.Fatalf("poll %d of a sampled task was dropped by the cap", i)
		}
	}
	unsampledChild := sdktrace.SamplingParameters{ParentContext: trace.ContextWithSpanContext(context.Background(), spanContext(false))}
	if s.ShouldSample(unsampledChild).Decision != sdktrace.Drop {
		t.Error("a child of an unsampled span was sampled")
	}
}

// TestSamplerRatio: ratio 0 samples no root, and no cap (0) leaves every root of ratio 1.
func TestSamplerRatio(t *testing.T) {
	none, all := NewSampler(0, 0, nil), NewSampler(1, 0, nil)
	for i := range 1000 {
		p := sdktrace.SamplingParameters{ParentContext: context.Background(), TraceID: trace.TraceID{byte(i), byte(i >> 8), 7}}
		if none.ShouldSample(p).Decision != sdktrace.Drop || all.ShouldSample(p).Decision != sdktrace.RecordAndSample {
			t.Fatalf("root %d: ratio 0 or ratio 1 without a cap decided otherwise", i)
		}
	}
}

func equal(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestMetaRoundTrip: the members AppendMeta writes read back (Remote) as the same span
// context, tracestate and sampled flag included; an invalid context writes nothing.
func TestMetaRoundTrip(t *testing.T) {
	ts, err := trace.ParseTraceState("vendor=a1,other=b2")
	if err != nil {
		t.Fatal(err)
	}
	sc := spanContext(true).WithTraceState(ts)
	got := string(AppendMeta(nil, sc))
	want := `"traceparent":"00-01020300000000000000000000000000-0405060000000000-01","tracestate":"vendor=a1,other=b2"`
	if got != want {
		t.Fatalf("AppendMeta = %s\nwant          %s", got, want)
	}
	back := Remote("00-01020300000000000000000000000000-0405060000000000-01", "vendor=a1,other=b2")
	if !back.IsRemote() || back.TraceID() != sc.TraceID() || back.SpanID() != sc.SpanID() || !back.IsSampled() || back.TraceState().String() != ts.String() {
		t.Errorf("Remote = %v, want %v", back, sc)
	}
	if b := AppendMeta(nil, trace.SpanContext{}); len(b) != 0 {
		t.Errorf("AppendMeta of no span context = %q", b)
	}
	if Remote("00-zz-01", "").IsValid() || Remote("", "").IsValid() {
		t.Error("Remote of a malformed or missing traceparent is valid")
	}
	// W3C lets a tracestate value hold a quote and a backslash: they are escaped, and the
	// members stay valid JSON that reads back as the same tracestate.
	odd, err := trace.ParseTraceState(`vendor=a"b\c`)
	if err != nil {
		t.Fatal(err)
	}
	members := AppendMeta(nil, spanContext(true).WithTraceState(odd))
	var m struct{ Tracestate string }
	if err := json.Unmarshal(append(append([]byte("{"), members...), '}'), &m); err != nil || m.Tracestate != odd.String() {
		t.Errorf("AppendMeta with tracestate %s = %s: %v, read back %q", odd, members, err, m.Tracestate)
	}
}

// TestConfigured: off without an endpoint or an OTLP variable, or with OTEL_SDK_DISABLED;
// a Start then installs nothing.
func TestConfigured(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	t.Setenv("OTEL_SDK_DISABLED", "")
	if Configured("") {
		t.Error("Configured with nothing set")
	}
	if p, err := Start(context.Background(), Options{}); p != nil || err != nil || p.Tracer() != nil {
		t.Errorf("Start with nothing set = %v, %v; want nil, nil", p, err)
	}
	if !Configured("http://127.0.0.1:4318") {
		t.Error("not Configured with an endpoint")
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
	if !Configured("") {
		t.Error("not Configured with OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	t.Setenv("OTEL_SDK_DISABLED", "true")
	if Configured("http://127.0.0.1:4318") {
		t.Error("Configured with OTEL_SDK_DISABLED=true")
	}
	if CheckEndpoint("127.0.0.1:4318") == nil || CheckEndpoint("http://127.0.0.1:4318/") != nil {
		t.Error("CheckEndpoint: want a URL with a scheme")
	}
}
