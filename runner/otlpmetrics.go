package runner

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/internal/telemetry"
	"github.com/tasksim/tasksim/metrics"
)

// The run's live figures over OTLP (Options.OTLPEndpoint, docs/METRICS.md#otlp-metrics):
// the same totals the Prometheus endpoint serves (livemetrics.go), read at each export by
// the SDK's periodic reader through Produce, so that nothing is recorded twice and nothing
// on the request path. Each family is the Prometheus one under its OpenTelemetry name
// (an OTLP-to-Prometheus conversion gives back the endpoint's names):
//
//	mcp.client.operation.duration       histogram, s  mcp.method.name, mcp.protocol.version, error.type, gen_ai.tool.name
//	tasksim.client.requests             counter       mcp.method.name, tasksim.outcome
//	tasksim.client.<histogram>          histogram     task_e2e, polls_per_task, detection_lag, ... (s for durations)
//	tasksim.client.<counter>            counter       tasks_created, tasks_completed, backpressure_signals, ...
//	tasksim.client.in_flight            gauge
//	tasksim.client.poll_interval        gauge, s
//
// every point with tasksim.shard; cumulative from the run's start.

// Produce implements sdkmetric.Producer: the totals up to the last closed window.
func (m *liveMetrics) Produce(context.Context) ([]metricdata.ScopeMetrics, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	shard := attribute.String("tasksim.shard", m.shard)
	var out []metricdata.Metrics
	var durations []metricdata.HistogramDataPoint[float64]
	var requests []metricdata.DataPoint[int64]
	for op := range mcp.NumOps {
		method := attribute.String(telemetry.AttrMethod, m.method(op))
		for o := range metrics.NumOutcomes {
			if n := m.requests[op][o].shown; n > 0 {
				requests = append(requests, metricdata.DataPoint[int64]{StartTime: m.start, Time: now, Value: n,
					Attributes: attribute.NewSet(shard, method, attribute.String("tasksim.outcome", metrics.Outcome(o).Name()))})
			}
			b := &m.live.Durations[op][o]
			if b.Total() == 0 {
				continue
			}
			errType, tool := m.durationLabels(op, metrics.Outcome(o))
			set := attribute.NewSet(shard, method, attribute.String(telemetry.AttrProtocol, m.protocol),
				attribute.String(telemetry.AttrErrorType, errType), attribute.String(telemetry.AttrToolName, tool))
			durations = append(durations, m.histogramPoint(set, b, metrics.DurationBounds, 1e-6, now))
		}
	}
	out = append(out,
		metricdata.Metrics{Name: "mcp.client.operation.duration", Unit: "s", Description: "Duration of MCP requests, send to reply.",
			Data: metricdata.Histogram[float64]{DataPoints: durations, Temporality: metricdata.CumulativeTemporality}},
		metricdata.Metrics{Name: "tasksim.client.requests", Description: "MCP requests sent, by method and outcome, replied or not.",
			Data: metricdata.Sum[int64]{DataPoints: requests, Temporality: metricdata.CumulativeTemporality, IsMonotonic: true}})
	out = append(out, m.taskFigures(shard, now)...)
	return []metricdata.ScopeMetrics{{Scope: instrumentation.Scope{Name: "github.com/tasksim/tasksim/runner", Version: Version}, Metrics: out}}, nil
}

// taskFigures are the task histograms, the counters and the gauges, as Produce exports
// them; the caller holds m.mu.
func (m *liveMetrics) taskFigures(shard attribute.KeyValue, now time.Time) []metricdata.Metrics {
	set := attribute.NewSet(shard)
	var out []metricdata.Metrics
	for h, d := range m.hists {
		if d == nil {
			continue
		}
		name, unit, scale := metrics.Hist(h).Name(), "", metrics.Hist(h).Scale()
		if metrics.Hist(h).Unit() == "ms" {
			unit, scale = "s", 1e-6
		}
		pt := m.histogramPoint(set, &m.live.Hists[h], metrics.Hist(h).Bounds(), scale, now)
		out = append(out, metricdata.Metrics{Name: "tasksim.client." + name, Unit: unit, Description: "The run's " + name + " (docs/METRICS.md#histograms).",
			Data: metricdata.Histogram[float64]{DataPoints: []metricdata.HistogramDataPoint[float64]{pt}, Temporality: metricdata.CumulativeTemporality}})
	}
	for c, d := range m.countersDesc {
		if d == nil {
			continue
		}
		name := metrics.Counter(c).Name()
		out = append(out, metricdata.Metrics{Name: "tasksim.client." + name, Description: "The run's " + name + " counter (docs/METRICS.md).",
			Data: metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true,
				DataPoints: []metricdata.DataPoint[int64]{{Attributes: set, StartTime: m.start, Time: now, Value: m.counters[c].shown}}}})
	}
	return append(out,
		metricdata.Metrics{Name: "tasksim.client.in_flight", Description: "Tasks in flight in the load generator.",
			Data: metricdata.Gauge[int64]{DataPoints: []metricdata.DataPoint[int64]{{Attributes: set, Time: now, Value: m.inFlight}}}},
		metricdata.Metrics{Name: "tasksim.client.poll_interval", Unit: "s", Description: "The interval the clients poll at.",
			Data: metricdata.Gauge[float64]{DataPoints: []metricdata.DataPoint[float64]{{Attributes: set, Time: now, Value: m.interval.Seconds()}}}})
}

// histogramPoint is b as a cumulative OTLP histogram point: its count in each of bounds'
// buckets and the one above them, the sum scaled from the recorded unit by scale.
func (m *liveMetrics) histogramPoint(set attribute.Set, b *metrics.Buckets, bounds []float64, scale float64, now time.Time) metricdata.HistogramDataPoint[float64] {
	counts := make([]uint64, len(bounds)+1)
	var n uint64
	for i := range counts {
		counts[i] = uint64(b.Counts[i])
		n += counts[i]
	}
	return metricdata.HistogramDataPoint[float64]{Attributes: set, StartTime: m.start, Time: now, Count: n,
		Bounds: bounds, BucketCounts: counts, Sum: float64(b.Sum) * scale}
}

var _ sdkmetric.Producer = (*liveMetrics)(nil)
