package runner

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/scenarios"
)

// otlpReceiver is an OTLP/HTTP receiver on 127.0.0.1: it decodes every protobuf
// ExportTraceServiceRequest and ExportMetricsServiceRequest posted to it and keeps their
// spans and metric names.
type otlpReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	spans   []*tracepb.Span
	metrics map[string]bool
	bad     []string
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	rc := &otlpReceiver{metrics: map[string]bool{}}
	rc.Server = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *otlpReceiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	switch r.URL.Path {
	case "/v1/traces":
		var req coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			rc.bad = append(rc.bad, "traces: "+err.Error())
		}
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				rc.spans = append(rc.spans, ss.GetSpans()...)
			}
		}
	case "/v1/metrics":
		var req colmetrics.ExportMetricsServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			rc.bad = append(rc.bad, "metrics: "+err.Error())
		}
		for _, rm := range req.GetResourceMetrics() {
			for _, sm := range rm.GetScopeMetrics() {
				for _, m := range sm.GetMetrics() {
					rc.metrics[m.GetName()] = true
				}
			}
		}
	default:
		rc.bad = append(rc.bad, "unexpected path "+r.URL.Path)
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
}

// attrs returns a span's attributes as strings by key.
func attrs(s *tracepb.Span) map[string]string {
	m := map[string]string{}
	for _, kv := range s.GetAttributes() {
		v := kv.GetValue()
		switch {
		case v.GetStringValue() != "":
			m[kv.GetKey()] = v.GetStringValue()
		case v.GetBoolValue():
			m[kv.GetKey()] = "true"
		default:
			m[kv.GetKey()] = v.String()
		}
	}
	return m
}

// metaRecorder is a handler in front of the mock server that notes whether the requests
// of the load (tools/call, tasks/*: the probe before it is not traced) carry a trace
// context in their params._meta.
type metaRecorder struct {
	next             http.Handler
	mu               sync.Mutex
	requests, traced int
}

func (m *metaRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"method":"tools/call"`)) || bytes.Contains(body, []byte(`"method":"tasks/`)) { // the load's requests
			m.mu.Lock()
			m.requests++
			if bytes.Contains(body, []byte(`"traceparent":"00-`)) {
				m.traced++
			}
			m.mu.Unlock()
		}
	}
	m.next.ServeHTTP(w, r)
}

// tracedRun runs a short smoke scenario in era proto against a standalone mock server
// behind a metaRecorder, both exporting to rc when rc is non-nil (tel's sampling).
func tracedRun(t *testing.T, proto string, rc *otlpReceiver, tel Telemetry) *metaRecorder {
	t.Helper()
	sc := shortSmoke(t)
	sc.Protocol = proto
	cfg, err := ServeConfig(scenarios.Default(), mockserver.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if rc != nil {
		tel.Endpoint = rc.URL
	}
	var served ServeMetrics
	serveTel, err := tel.StartServe(context.Background(), &served, func(line string) { t.Errorf("serve: %s", line) })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Tracer = serveTel.Tracer()
	srv, err := mockserver.NewUnstartedServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	served.Set(srv.Gatherer())
	rec := &metaRecorder{next: srv.Handler()}
	front := httptest.NewServer(rec)
	defer front.Close()
	defer srv.Close()
	sc.Target = front.URL + "/mcp"
	notes := func(line string) {
		if strings.Contains(line, "failed") {
			t.Errorf("note: %s", line)
		}
	}
	if _, err := Run(context.Background(), sc, Options{Dir: t.TempDir(), Telemetry: tel, Notes: notes}); err != nil {
		t.Fatal(err)
	}
	serveTel.Shutdown(context.Background())
	return rec
}

// TestTraces: with --otlp-endpoint, a run against `tasksim serve` exports, in both eras,
// a client span per request named and attributed after the OpenTelemetry MCP conventions,
// each task as a span from create to terminal with its id and status, every poll linked to
// its task, and the server's spans as children of the client spans whose trace context
// params._meta carried; and every request carries that context. The run's metrics and
// the server's (its /metrics) are exported too.
func TestTraces(t *testing.T) {
	for _, proto := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(proto, func(t *testing.T) {
			rc := newOTLPReceiver(t)
			rec := tracedRun(t, proto, rc, Telemetry{SampleRatio: 1})
			rc.mu.Lock()
			defer rc.mu.Unlock()
			if len(rc.bad) > 0 {
				t.Fatalf("receiver: %q", rc.bad)
			}
			if rec.requests == 0 || rec.traced != rec.requests {
				t.Errorf("%d of %d requests carried a traceparent in params._meta, want all", rec.traced, rec.requests)
			}
			checkSpans(t, proto, rc.spans)
			for _, name := range []string{"mcp.client.operation.duration", "tasksim.client.requests", "tasksim.client.tasks_created", "tasksim.client.task_e2e", "tasksim.client.in_flight"} {
				if !rc.metrics[name] {
					t.Errorf("metric %s was not exported over OTLP", name)
				}
			}
			// serve's own /metrics, through the Prometheus bridge, under their Prometheus names
			for _, name := range []string{"tasksim_mock_tasks_created_total", "tasksim_mock_requests_total", "tasksim_mock_cleanup_lag_seconds", "go_goroutines"} {
				if !rc.metrics[name] {
					var got []string
					for n := range rc.metrics {
						got = append(got, n)
					}
					slices.Sort(got)
					t.Errorf("serve's metric %s was not exported over OTLP; got %q", name, got)
				}
			}
		})
	}
}

// checkSpans checks the spans of a traced run in era proto.
func checkSpans(t *testing.T, proto string, spans []*tracepb.Span) {
	t.Helper()
	byID := map[string]*tracepb.Span{}
	for _, s := range spans {
		byID[hex.EncodeToString(s.GetSpanId())] = s
	}
	var creates, polls, tasks, servers, serverChildren, probes int
	for _, s := range spans {
		a := attrs(s)
		parent := byID[hex.EncodeToString(s.GetParentSpanId())]
		switch {
		case s.GetKind() == tracepb.Span_SPAN_KIND_CLIENT && s.GetName() == "tools/list":
			probes++ // the probe's, before the load: traced too
		case s.GetKind() == tracepb.Span_SPAN_KIND_CLIENT && s.GetName() == "tools/call work_task":
			creates++
			if a["mcp.method.name"] != "tools/call" || a["gen_ai.tool.name"] != "work_task" || a["jsonrpc.request.id"] == "" || a["mcp.protocol.version"] != proto {
				t.Errorf("create span attributes %v", a)
			}
			if proto == "2025-11-25" && a["mcp.session.id"] == "" {
				t.Errorf("a 2025-11-25 create span has no mcp.session.id: %v", a)
			}
			if parent == nil || !strings.HasPrefix(parent.GetName(), "task ") {
				t.Errorf("create span's parent is %v, want the task span", parent.GetName())
			}
		case s.GetKind() == tracepb.Span_SPAN_KIND_CLIENT && s.GetName() == "tasks/get":
			polls++
			if len(s.GetLinks()) != 1 || byID[hex.EncodeToString(s.GetLinks()[0].GetSpanId())].GetName() != "task work_task" {
				t.Errorf("poll span links %v, want one, to its task span", s.GetLinks())
			}
			if len(s.GetParentSpanId()) != 0 {
				t.Errorf("poll span has a parent; want the root of its own trace, linked to its task")
			}
		case s.GetName() == "task work_task":
			tasks++
			if a["mcp.task.id"] == "" || a["mcp.task.status"] != "completed" {
				t.Errorf("task span attributes %v, want mcp.task.id and mcp.task.status completed", a)
			}
		case s.GetKind() == tracepb.Span_SPAN_KIND_SERVER:
			servers++
			if parent != nil && parent.GetKind() == tracepb.Span_SPAN_KIND_CLIENT && bytes.Equal(parent.GetTraceId(), s.GetTraceId()) &&
				a["mcp.method.name"] == attrs(parent)["mcp.method.name"] && a["jsonrpc.request.id"] == attrs(parent)["jsonrpc.request.id"] {
				serverChildren++
			} else if m := a["mcp.method.name"]; m == "tools/call" || strings.HasPrefix(m, "tasks/") { // the probe's are roots
				t.Errorf("server span %q (%v) is no child of the client span of its request", s.GetName(), a)
			}
		}
	}
	if creates == 0 || polls == 0 || tasks == 0 || servers == 0 || serverChildren == 0 || probes == 0 {
		t.Errorf("spans: %d creates, %d polls, %d tasks, %d server spans (%d children of client spans), %d tools/list of the probe; want some of each (%d spans)",
			creates, polls, tasks, servers, serverChildren, probes, len(spans))
	}
}

// TestUntracedRequestsCarryNoTraceContext: with no endpoint, no request carries a trace
// context (nothing is added to the hot path's bytes), in either era.
func TestUntracedRequestsCarryNoTraceContext(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	for _, proto := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(proto, func(t *testing.T) {
			rec := tracedRun(t, proto, nil, Telemetry{SampleRatio: 1})
			if rec.requests == 0 || rec.traced != 0 {
				t.Errorf("%d of %d requests carried a traceparent with tracing off, want none", rec.traced, rec.requests)
			}
		})
	}
}

// stopObserver closes stop at the end of the load's first window.
type stopObserver struct {
	once sync.Once
	stop chan struct{}
}

func (o *stopObserver) Phase(Phase)     {}
func (o *stopObserver) Window(Progress) { o.once.Do(func() { close(o.stop) }) }

// TestTelemetryEndpointDown: an endpoint that refuses every export is one note, the run
// passes and its end is not held up.
func TestTelemetryEndpointDown(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	url := down.URL
	down.Close() // nothing listens there any more
	sc := shortSmoke(t)
	var mu sync.Mutex
	var failures []string
	notes := func(line string) {
		if strings.HasPrefix(line, "telemetry:") && strings.Contains(line, "failed") {
			mu.Lock()
			failures = append(failures, line)
			mu.Unlock()
		}
	}
	sum, err := Run(context.Background(), sc, Options{Dir: t.TempDir(), Telemetry: Telemetry{Endpoint: url, SampleRatio: 1}, Notes: notes})
	if err != nil || sum.Verdict != "pass" {
		t.Fatalf("run with its OTLP endpoint down: %v, verdict %q; want a pass", err, sum.Verdict)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(failures) != 1 || !strings.Contains(failures[0], url) {
		t.Errorf("notes of the failed exports: %q; want one, naming %s", failures, url)
	}
}

// TestTelemetryFlushedOnInterrupt: a run stopped early still exports its spans (the
// providers are shut down, and flushed, on every way out of Run).
func TestTelemetryFlushedOnInterrupt(t *testing.T) {
	rc := newOTLPReceiver(t)
	sc := shortSmoke(t)
	if err := sc.Set("duration", "30s"); err != nil {
		t.Fatal(err)
	}
	obs := &stopObserver{stop: make(chan struct{})}
	_, err := Run(context.Background(), sc, Options{Dir: t.TempDir(), Telemetry: Telemetry{Endpoint: rc.URL, SampleRatio: 1}, Observer: obs, Stop: obs.stop})
	if !errors.As(err, new(*InterruptedError)) {
		t.Fatalf("Run = %v, want an interruption", err)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.spans) == 0 || !rc.metrics["mcp.client.operation.duration"] {
		t.Errorf("after an interrupted run: %d spans, metrics %v; want the run's", len(rc.spans), rc.metrics)
	}
}

// shortSmoke is the smoke scenario cut to two seconds of two clients.
func shortSmoke(t *testing.T) *scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.Load("smoke")
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range []string{"duration=2s", "grace=3s", "workload.clients=2", `args={"duration_ms":300}`} {
		path, value, _ := strings.Cut(kv, "=")
		if err := sc.Set(path, value); err != nil {
			t.Fatal(err)
		}
	}
	return sc
}
