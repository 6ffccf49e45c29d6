package mockserver

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tasksim/tasksim/internal/mcp"
)

// The /metrics endpoint: the server's figures (docs/METRICS.md#server) in the Prometheus text
// format, so a dashboard can watch a mock server while a real client fleet runs against it.
//
// Every server has its own prometheus.Registry (no global registry, STYLE habit 5): two
// servers in one process never share or collide. The counters and gauges are read from
// Stats at scrape time by one Collector, so the request path pays nothing for them; only
// cleanup_lag_seconds and downstream_wait_seconds are live Histograms, observed at each
// purge and each downstream slot grant (no allocation).
//
// Access: /metrics is an operator endpoint, not MCP. It needs no session and no bearer
// token (its figures are server-wide, not a tenant's, and a Prometheus scraper has neither),
// but the Origin check of the MCP endpoint (H10) applies: a request carrying a foreign
// Origin comes from a browser page elsewhere and gets 403. Scrapers and curl send no
// Origin. Only GET and HEAD are served. Rejections of /metrics are not counted in
// Stats.Rejections, which are the MCP endpoint's.
//
// Families, all prefixed tasksim_mock_ (names are stable):
//
//	requests_total{era,method,outcome}  counter  JSON-RPC requests by protocol era (legacy:
//	                                         2025-11-25 and older; modern: 2026-07-28), method
//	                                         (the op's metric name, e.g. tasks_get,
//	                                         server_discover, tasks_update,
//	                                         subscriptions_listen) and outcome (ok, rpc_error,
//	                                         http_error); see requests.go
//	notifications_sent_total{era,method}  counter  notifications sent: tasks_status (legacy
//	                                         notifications/tasks/status queued for a GET
//	                                         stream, modern notifications/tasks on a listen
//	                                         stream) and subscriptions_acknowledged (modern)
//	subscriptions                   gauge    open subscriptions/listen streams (listen.go)
//	subscriptions_refused_total     counter  listens answered 429: max_subscriptions were open
//	http_rejections_total{code}     counter  HTTP rejections of /mcp by status ("other" for
//	                                         a status without its own slot)
//	tasks_created_total             counter  tasks ever created
//	retained_tasks                  gauge    task records held by the store
//	expired_tasks_total             counter  tasks deleted because their ttl ran out
//	orphaned_tasks_total            counter  terminal tasks deleted before their result was fetched
//	cleanup_lag_max_seconds         gauge    largest expiry -> deletion delay seen
//	cleanup_lag_seconds             histogram  expiry -> deletion delay of each purge
//	sessions                        gauge    live MCP sessions
//	domain_effects_total            counter  domain effects recorded in the ledger
//	duplicate_effects_total         counter  second effects for one idempotency key
//	effects_after_cancel_total      counter  effects applied after their task was cancelled
//	executor_queue_depth            gauge    tasks waiting for an executor worker
//	refusals_total{cause}           counter  creates refused because the server was full, by
//	                                         cause: max_tasks, max_tasks_per_tenant, executor
//	rate_limited_total              counter  requests answered 429 by a rate limit
//	downstream_in_flight            gauge    operations holding a downstream slot
//	downstream_queue_depth          gauge    operations waiting for a downstream slot
//	downstream_rejections_total     counter  operations rejected: the downstream queue was full
//	downstream_failures_total       counter  operations the downstream failed
//	downstream_wait_seconds         histogram  time an operation waited for a downstream slot
//	faults_total{kind}              counter  injected faults that took effect, by kind (the
//	                                         scenario names: http_5xx, reset, ...; faults.go)
//	lost_tasks_total                counter  tasks forgotten by a restart (restart_loses_tasks)
//	ledger_keys                     gauge    idempotency keys the ledger holds (ledger.go)
//	ledger_keys_forgotten_total     counter  keys forgotten after the ledger window
//	ledger_window_seconds           gauge    the ledger window in effect
//	expiry_queue                    gauge    tasks awaiting their expiry in the reaper's heap
//	                                         (deleted early ones included, until their ttl)
//	elicitations_pending            gauge    elicitations sent and not yet answered
//	idempotent_replays_total{outcome}  counter  creates repeating an idempotency key: answered
//	                                         with the key's task (task) or refused because it
//	                                         no longer exists (expired); idempotency.go
//
// The registry also holds client_golang's Go collector (go_memstats_*, go_goroutines, and
// the runtime's /gc/ metrics: go_gc_heap_live_bytes is the heap the last collection marked
// live, the figure a soak watches, where go_memstats_heap_alloc_bytes also counts the
// garbage not yet collected) and process collector (process_resident_memory_bytes, ...):
// what the server's memory costs, beside the sizes of its per-task structures above.
const promPrefix = "tasksim_mock_"

// cleanupLagBuckets are the upper bounds of cleanup_lag_seconds, in seconds: from a lookup
// that finds a task just expired (~0) to a sweep many reaper intervals late.
var cleanupLagBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300}

// downstreamWaitBuckets are the upper bounds of downstream_wait_seconds, in seconds.
var downstreamWaitBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// exporter serves /metrics for one Server.
type exporter struct {
	srv            *Server
	cleanupLag     prometheus.Histogram
	downstreamWait prometheus.Histogram
	handler        http.Handler
	reg            *prometheus.Registry // what handler serves, and Server.Gatherer gives

	requests, rejections, created, retained, expired, orphaned,
	lagMax, sessions, effects, duplicates, afterCancel,
	execQueue, refusals, rateLimited,
	downInFlight, downQueue, downRejections, downFailures,
	faults, lost, replays,
	notes, subs, subsRefused,
	ledgerKeys, ledgerForgotten, ledgerWindow, expiryQueue, elicitations *prometheus.Desc
}

var _ http.Handler = (*exporter)(nil)
var _ prometheus.Collector = (*statsCollector)(nil)

// newExporter builds the private registry of s and the handler that serves it.
func newExporter(s *Server) *exporter {
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(promPrefix+name, help, labels, nil)
	}
	e := &exporter{
		srv: s,
		cleanupLag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    promPrefix + "cleanup_lag_seconds",
			Help:    "Delay from a task's expiry (createdAt + ttl) to the deletion of its record, observed at each purge.",
			Buckets: cleanupLagBuckets,
		}),
		requests:   desc("requests_total", "JSON-RPC requests answered by the MCP endpoint, by protocol era (legacy, modern), method and outcome (ok, rpc_error, http_error).", "era", "method", "outcome"),
		rejections: desc("http_rejections_total", "HTTP rejections of the MCP endpoint, by status code.", "code"),
		created:    desc("tasks_created_total", "Tasks ever created."),
		retained:   desc("retained_tasks", "Task records held by the server."),
		expired:    desc("expired_tasks_total", "Tasks deleted because their ttl ran out."),
		orphaned:   desc("orphaned_tasks_total", "Terminal tasks deleted before anyone fetched their result."),
		lagMax:     desc("cleanup_lag_max_seconds", "Largest delay seen from a task's expiry to the deletion of its record."),
		sessions:   desc("sessions", "Live MCP sessions."),
		effects:    desc("domain_effects_total", "Domain effects recorded in the ledger."),
		duplicates: desc("duplicate_effects_total", "Second effects for one idempotency key (a hard gate)."),

		afterCancel:     desc("effects_after_cancel_total", "Domain effects applied after their task was cancelled."),
		execQueue:       desc("executor_queue_depth", "Tasks waiting for an executor worker."),
		refusals:        desc("refusals_total", "Creates refused because the server was full, by cause.", "cause"),
		rateLimited:     desc("rate_limited_total", "Requests answered 429 by a rate limit."),
		downInFlight:    desc("downstream_in_flight", "Operations holding a downstream slot."),
		downQueue:       desc("downstream_queue_depth", "Operations waiting for a downstream slot."),
		downRejections:  desc("downstream_rejections_total", "Downstream operations rejected because the downstream queue was full."),
		downFailures:    desc("downstream_failures_total", "Downstream operations that failed."),
		faults:          desc("faults_total", "Injected server faults that took effect, by kind.", "kind"),
		lost:            desc("lost_tasks_total", "Tasks forgotten by an injected restart that loses tasks."),
		notes:           desc("notifications_sent_total", "Notifications sent, by protocol era and method (tasks_status, subscriptions_acknowledged).", "era", "method"),
		subs:            desc("subscriptions", "Open subscriptions/listen streams."),
		subsRefused:     desc("subscriptions_refused_total", "subscriptions/listen requests answered 429 because max_subscriptions streams were open."),
		replays:         desc("idempotent_replays_total", "Task creates repeating an idempotency key, by outcome: task (answered with the key's task) or expired (refused: that task no longer exists).", "outcome"),
		ledgerKeys:      desc("ledger_keys", "Idempotency keys held by the domain ledger."),
		ledgerForgotten: desc("ledger_keys_forgotten_total", "Idempotency keys the ledger forgot after its window."),
		ledgerWindow:    desc("ledger_window_seconds", "The ledger window in effect: how long a key is remembered after its last use."),
		expiryQueue:     desc("expiry_queue", "Tasks awaiting their expiry in the reaper's queue."),
		elicitations:    desc("elicitations_pending", "Elicitations sent and not yet answered."),
		downstreamWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    promPrefix + "downstream_wait_seconds",
			Help:    "Time a downstream operation waited for a slot, observed when it got one.",
			Buckets: downstreamWaitBuckets,
		}),
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(e.cleanupLag, e.downstreamWait, (*statsCollector)(e),
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsGC)),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	e.handler, e.reg = promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), reg
	return e
}

// Gatherer is the server's own metrics registry, what /metrics serves: for an exporter of
// another kind (`tasksim serve --otlp-endpoint`, through the OpenTelemetry Prometheus bridge).
func (s *Server) Gatherer() prometheus.Gatherer { return s.prom.reg }

// observeCleanupLag records one purge's expiry -> deletion delay. It allocates nothing; a
// nil exporter (a Server built without newServer, in internal tests) records nothing.
func (e *exporter) observeCleanupLag(d time.Duration) {
	if e != nil {
		e.cleanupLag.Observe(d.Seconds())
	}
}

// observeDownstreamWait records how long one operation waited for a downstream slot. It
// allocates nothing; a nil exporter records nothing.
func (e *exporter) observeDownstreamWait(d time.Duration) {
	if e != nil {
		e.downstreamWait.Observe(d.Seconds())
	}
}

// ServeHTTP serves the exposition; see the access rules above.
func (e *exporter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if origin := r.Header.Get("Origin"); !e.srv.originAllowed(origin) {
		http.Error(w, "origin "+origin+" is not allowed (H10)", http.StatusForbidden)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method "+r.Method+" is not allowed on /metrics", http.StatusMethodNotAllowed)
		return
	}
	e.handler.ServeHTTP(w, r)
}

// statsCollector is the exporter seen as a prometheus.Collector of Stats.
type statsCollector exporter

// Describe implements prometheus.Collector.
func (c *statsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.requests, c.rejections, c.created, c.retained,
		c.expired, c.orphaned, c.lagMax, c.sessions, c.effects, c.duplicates, c.afterCancel,
		c.execQueue, c.refusals, c.rateLimited, c.downInFlight, c.downQueue, c.downRejections,
		c.downFailures, c.faults, c.lost, c.replays, c.notes, c.subs, c.subsRefused,
		c.ledgerKeys, c.ledgerForgotten, c.ledgerWindow, c.expiryQueue, c.elicitations} {
		ch <- d
	}
}

// servedOp reports whether the MCP endpoint answers op as a request in era e:
// requests_total always has their series (zero included) for the eras the server answers,
// so that rate() sees the first request. Other ops appear once counted (a POSTed
// notification rejected with an HTTP status).
func servedOp(e era, op mcp.Op) bool {
	switch op {
	case mcp.OpUnknown, mcp.OpToolsList, mcp.OpToolsCall, mcp.OpTasksGet, mcp.OpTasksCancel:
		return true
	case mcp.OpInitialize, mcp.OpPing, mcp.OpTasksResult, mcp.OpTasksList:
		return e == eraLegacy
	case mcp.OpServerDiscover, mcp.OpTasksUpdate, mcp.OpSubscriptionsListen:
		return e == eraModern
	}
	return false
}

// answers reports whether the server answers requests of era e (Config.Protocols).
func (s *Server) answers(e era) bool {
	if e == eraModern {
		return s.modern.on
	}
	return !s.modern.only
}

// Collect implements prometheus.Collector: one Stats snapshot per scrape.
func (c *statsCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.srv.Stats()
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	for e := era(0); e < numEras; e++ {
		zeros := c.srv.answers(e)
		for op := mcp.Op(0); op < mcp.NumOps; op++ {
			for o := Outcome(0); o < NumOutcomes; o++ {
				n := st.ModernRequests[op][o]
				if e == eraLegacy {
					n = st.Requests[op][o] - n
				}
				if n > 0 || (zeros && servedOp(e, op)) {
					counter(c.requests, n, e.String(), op.MetricName(), o.String())
				}
			}
		}
	}
	st.Notifications.Each(func(era, method string, n uint64) { counter(c.notes, n, era, method) })
	gauge(c.subs, float64(st.Subscriptions))
	counter(c.subsRefused, st.SubscriptionsRefused)
	st.Rejections.Each(func(code int, n uint64) {
		label := "other"
		if code != 0 {
			label = strconv.Itoa(code)
		}
		counter(c.rejections, n, label)
	})
	counter(c.created, st.TasksCreated)
	gauge(c.retained, float64(st.TasksLive))
	counter(c.expired, st.TasksExpired)
	counter(c.orphaned, st.OrphanedTasks)
	gauge(c.lagMax, st.MaxCleanupLag.Seconds())
	gauge(c.sessions, float64(st.Sessions))
	counter(c.effects, st.Effects)
	counter(c.duplicates, st.DuplicateEffects)
	gauge(c.ledgerKeys, float64(st.Ledger.Keys))
	counter(c.ledgerForgotten, st.Ledger.Forgotten)
	gauge(c.ledgerWindow, st.Ledger.Window.Seconds())
	gauge(c.expiryQueue, float64(st.ExpiryQueue))
	gauge(c.elicitations, float64(st.ElicitationsPending))
	counter(c.afterCancel, st.EffectsAfterCancel)
	gauge(c.execQueue, float64(st.QueueDepth))
	counter(c.refusals, st.Refusals.MaxTasks, "max_tasks")
	counter(c.refusals, st.Refusals.MaxTasksPerTenant, "max_tasks_per_tenant")
	counter(c.refusals, st.Refusals.Executor, "executor")
	counter(c.rateLimited, st.RateLimited)
	gauge(c.downInFlight, float64(st.DownstreamInFlight))
	gauge(c.downQueue, float64(st.DownstreamQueueDepth))
	counter(c.downRejections, st.DownstreamRejections)
	counter(c.downFailures, st.DownstreamFailures)
	st.Faults.Each(func(kind string, n uint64) { counter(c.faults, n, kind) })
	counter(c.lost, st.TasksLost)
	counter(c.replays, st.IdempotentReplays, "task")
	counter(c.replays, st.IdempotentExpired, "expired")
}
