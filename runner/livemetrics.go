package runner

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

// The run's live metrics (Options.MetricsListen, `tasksim run --metrics-listen`): the load
// generator's figures in the Prometheus text format while the run goes on, so an SRE sees
// the run beside the dashboards of the server under test (docs/METRICS.md#live).
//
// Nothing is recorded for them on the request path: every reply is counted once, in the
// recorder (metrics.Shard.Reply, under the lock it takes anyway, into fixed buckets beside
// the HDR histograms: metrics/buckets.go), whatever era's client.Conn sent it; the
// collector adds each second's window here, and a scrape reads the running totals. So a
// scrape sees the run up to the last closed window (at most a second old).
//
// Families (names after the OpenTelemetry MCP semantic conventions where they have one):
//
//	mcp_client_operation_duration_seconds{mcp_method_name,mcp_protocol_version,error_type,gen_ai_tool_name}
//	    histogram  send -> reply of every request that got a reply: a JSON-RPC one, or an
//	               HTTP error status alone (metrics.Shard.StatusReply); error_type is the
//	               outcome the reply was counted with (rpc_error, expected, backpressure,
//	               http_error), "" for a result; gen_ai_tool_name on tools/call. A cut or a
//	               transport failure has no duration here.
//	tasksim_client_requests_total{mcp_method_name,outcome}  counter  every request, replied or not
//	tasksim_client_<histogram>  histogram  the task figures: task_e2e_seconds, polls_per_task,
//	               poll_amplification, detection_lag_seconds, result_lag_seconds,
//	               schedule_lag_seconds, cleanup_lag_seconds, cancel_latency_seconds
//	tasksim_client_<counter>_total  counter  every client-side counter (tasks_created,
//	               tasks_completed, ..., backpressure_signals, tasks_unknown, ...)
//	tasksim_client_in_flight  gauge  tasks in flight
//	tasksim_client_poll_interval_seconds  gauge  the interval the clients poll at: the target's
//	               advertised pollInterval (as the probe saw it) or the client's own, what
//	               detection lag is compared with
//
// Every series carries tasksim_shard, the shard's index ("0" for a whole run), so a merged
// fleet's scrapes add up; the registry is the run's own (STYLE habit 5).
type liveMetrics struct {
	url   string       // http://ADDR/metrics; "" when not served (listen)
	srv   *http.Server // nil when not served
	shard string       // the shard's index, the tasksim_shard of every series
	start time.Time    // the start of the cumulative OTLP series (otlpmetrics.go)

	dialect  mcp.Dialect
	tool     string
	protocol string
	interval time.Duration // the poll interval the clients follow (advisedInterval)

	mu       sync.Mutex
	live     metrics.Live
	requests [mcp.NumOps][metrics.NumOutcomes]monotonic
	counters [metrics.NumCounters]monotonic
	inFlight int64

	duration, requestsDesc, inFlightDesc, intervalDesc *prometheus.Desc
	hists                                              [metrics.NumHists]*prometheus.Desc
	countersDesc                                       [metrics.NumCounters]*prometheus.Desc
}

// newLiveMetrics returns the running totals of a run's live figures, served by nothing yet
// (listen: the Prometheus endpoint; otlpmetrics.go: the OTLP export).
func newLiveMetrics(shard int, tool, protocol string, d mcp.Dialect, interval time.Duration) *liveMetrics {
	m := &liveMetrics{dialect: d, tool: tool, protocol: protocol, interval: interval, shard: strconv.Itoa(shard)}
	m.describe(prometheus.Labels{"tasksim_shard": m.shard})
	return m
}

// listen listens on addr (an address without a host, ":9090", is 127.0.0.1's) and serves
// /metrics; close stops it.
func (m *liveMetrics) listen(addr string) error {
	if host, port, err := net.SplitHostPort(addr); err == nil && host == "" {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return &UsageError{fmt.Errorf("--metrics-listen %s: %w", addr, err)}
	}
	m.url = "http://" + ln.Addr().String() + "/metrics"
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	m.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = m.srv.Serve(ln) }()
	return nil
}

// describe makes the families' descriptions, each with the constant labels cl.
func (m *liveMetrics) describe(cl prometheus.Labels) {
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, cl)
	}
	m.duration = desc("mcp_client_operation_duration_seconds",
		"Duration of MCP requests, send to reply, by method, protocol version and error type (\"\" for a result).",
		"mcp_method_name", "mcp_protocol_version", "error_type", "gen_ai_tool_name")
	m.requestsDesc = desc("tasksim_client_requests_total", "MCP requests sent, by method and outcome, replied or not.", "mcp_method_name", "outcome")
	m.inFlightDesc = desc("tasksim_client_in_flight", "Tasks in flight in the load generator.")
	m.intervalDesc = desc("tasksim_client_poll_interval_seconds", "The interval the clients poll at: the target's advertised pollInterval, or the client's own.")
	for h := range metrics.NumHists {
		if _, op := metrics.Hist(h).Op(); op || metrics.Hist(h) == metrics.DownstreamWait {
			continue // request durations are mcp_client_operation_duration_seconds; the downstream is the server's
		}
		name := "tasksim_client_" + metrics.Hist(h).Name()
		if metrics.Hist(h).Unit() == "ms" {
			name += "_seconds"
		}
		m.hists[h] = desc(name, "The run's "+metrics.Hist(h).Name()+" (docs/METRICS.md#histograms).")
	}
	for c := range metrics.NumCounters {
		if !metrics.Counter(c).ServerSide() {
			m.countersDesc[c] = desc("tasksim_client_"+metrics.Counter(c).Name()+"_total", "The run's "+metrics.Counter(c).Name()+" counter (docs/METRICS.md).")
		}
	}
}

// add adds one closed window to the running totals.
func (m *liveMetrics) add(w *metrics.Window) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.live.Add(&w.Live)
	for op := range w.Requests {
		for o, n := range w.Requests[op] {
			m.requests[op][o].add(n)
		}
	}
	for c, n := range w.Counters {
		m.counters[c].add(n)
	}
	m.inFlight = w.Gauges[metrics.InFlight]
}

// close stops serving.
func (m *liveMetrics) close() {
	if m == nil || m.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := m.srv.Shutdown(ctx); err != nil { // a scrape still being written: cut it
		_ = m.srv.Close()
	}
}

// Describe implements prometheus.Collector.
func (m *liveMetrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.duration
	ch <- m.requestsDesc
	ch <- m.inFlightDesc
	ch <- m.intervalDesc
	for _, d := range m.hists {
		if d != nil {
			ch <- d
		}
	}
	for _, d := range m.countersDesc {
		if d != nil {
			ch <- d
		}
	}
}

// durationLabels are error.type and gen_ai.tool.name of the durations of op counted with
// outcome o, as both exporters label them: the outcome's name but for a result (""), the
// run's tool on tools/call ("" elsewhere).
func (m *liveMetrics) durationLabels(op mcp.Op, o metrics.Outcome) (errType, tool string) {
	if o != metrics.OutcomeOK {
		errType = o.Name()
	}
	if op == mcp.OpToolsCall {
		tool = m.tool
	}
	return errType, tool
}

// Collect implements prometheus.Collector: the totals up to the last closed window.
func (m *liveMetrics) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for op := range mcp.NumOps {
		method := m.method(op)
		for o := range metrics.NumOutcomes {
			if n := m.requests[op][o].shown; n > 0 {
				ch <- prometheus.MustNewConstMetric(m.requestsDesc, prometheus.CounterValue, float64(n), method, metrics.Outcome(o).Name())
			}
			b := &m.live.Durations[op][o]
			if b.Total() == 0 {
				continue
			}
			errType, tool := m.durationLabels(op, metrics.Outcome(o))
			ch <- constHistogram(m.duration, b, metrics.DurationBounds, 1e-6, method, m.protocol, errType, tool)
		}
	}
	for h, d := range m.hists {
		if d != nil {
			scale := metrics.Hist(h).Scale()
			if metrics.Hist(h).Unit() == "ms" {
				scale = 1e-6 // seconds
			}
			ch <- constHistogram(d, &m.live.Hists[h], metrics.Hist(h).Bounds(), scale)
		}
	}
	for c, d := range m.countersDesc {
		if d != nil {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(m.counters[c].shown))
		}
	}
	ch <- prometheus.MustNewConstMetric(m.inFlightDesc, prometheus.GaugeValue, float64(m.inFlight))
	ch <- prometheus.MustNewConstMetric(m.intervalDesc, prometheus.GaugeValue, m.interval.Seconds())
}

// monotonic is a running total exported as a Prometheus counter, which must never go down:
// a window may subtract (metrics.Shard.Reclassify moves a request counted in an earlier
// window to another outcome), and a counter that fell would read as a reset to rate().
// shown is the total's highest value so far: a request reclassified after its window stays
// in the series it left until later rises of that series make up for it (summary.json has
// the exact counts).
type monotonic struct{ total, shown int64 }

func (c *monotonic) add(n int64) {
	c.total += n
	c.shown = max(c.shown, c.total)
}

// method is op's wire name in the run's dialect (op.Name where the dialect has none).
func (m *liveMetrics) method(op mcp.Op) string {
	if m.dialect != nil {
		if s := m.dialect.Method(op); s != "" {
			return s
		}
	}
	return op.Name()
}

// constHistogram is b as a Prometheus histogram: cumulative counts at bounds, the sum
// scaled from the recorded unit by scale.
func constHistogram(d *prometheus.Desc, b *metrics.Buckets, bounds []float64, scale float64, labels ...string) prometheus.Metric {
	cum := make(map[float64]uint64, len(bounds))
	var n uint64
	for i, le := range bounds {
		n += uint64(b.Counts[i])
		cum[le] = n
	}
	return prometheus.MustNewConstHistogram(d, uint64(b.Total()), float64(b.Sum)*scale, cum, labels...)
}
