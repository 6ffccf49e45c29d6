package mockserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/scenarios"
)

// scrape GETs /metrics through handler h, checks the exposition lints clean, and returns
// its families by name.
func scrape(t testing.TB, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: HTTP %d: %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("GET /metrics: Content-Type %q, want the text format 0.0.4", ct)
	}
	body := rec.Body.Bytes()
	return parseExposition(t, body)
}

func parseExposition(t testing.TB, body []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("exposition does not parse: %v\n%s", err, body)
	}
	problems, err := promlint.New(bytes.NewReader(body)).Lint()
	if err != nil {
		t.Fatalf("promlint: %v", err)
	}
	for _, pr := range problems {
		t.Errorf("promlint: %s: %s", pr.Metric, pr.Text)
	}
	return fams
}

// series flattens the counters and gauges of fams into "name{k=v,...}" -> value, labels in
// exposition order.
func series(fams map[string]*dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			key := name
			if len(ls) > 0 {
				key += "{" + strings.Join(ls, ",") + "}"
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[key] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[key] = m.GetGauge().GetValue()
			}
		}
	}
	return out
}

// rawPost is a POST to /mcp with a JSON body and the given headers, outside any session.
func rawPost(body string, headers ...string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return req
}

// TestMetricsExposition drives a server through tasks, replies, rejections and one purge in
// virtual time, then checks every family of /metrics value by value.
func TestMetricsExposition(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// NonIdempotent (known-bad) lets B repeat A's key: a duplicate effect and a fault.
		h := newHarness(t, mockserver.Config{DefaultTTL: 1500 * time.Millisecond, ReaperInterval: time.Second,
			Faults: scenarios.ServerFaults{NonIdempotent: true}})
		t0 := time.Now() // the reaper ticks at t0+1s, t0+2s, ...
		c := h.connect() // initialize ok; notifications/initialized is not a request

		// A: default ttl 1.5 s, completes at 100 ms, never fetched: expired and orphaned at 2 s.
		a := c.createTask("work", map[string]any{"duration_ms": 100, "idempotency_key": "k1"})
		// B: same key (a duplicate effect: non_idempotent), ttl 60 s, fetched as JSON.
		b := c.call("tools/call", map[string]any{"name": "work", "task": map[string]any{"ttl": 60000},
			"arguments": map[string]any{"duration_ms": 100, "idempotency_key": "k1"}})
		var bt mcp.CreateTaskResult
		if b.Err != nil || json.Unmarshal(b.Result, &bt) != nil {
			t.Fatalf("create B: %s", b.Raw)
		}
		// C: ttl 60 s, 300 ms of work; tasks/result opens an SSE stream whose last event is the reply.
		ct := c.call("tools/call", map[string]any{"name": "work", "task": map[string]any{"ttl": 60000},
			"arguments": map[string]any{"duration_ms": 300}})
		var ctk mcp.CreateTaskResult
		if ct.Err != nil || json.Unmarshal(ct.Result, &ctk) != nil {
			t.Fatalf("create C: %s", ct.Raw)
		}
		stream := c.start("tasks/result", map[string]any{"taskId": ctk.Task.TaskID})

		if _, e := c.get(a.TaskID); e != nil { // tasks_get ok
			t.Fatalf("tasks/get A: %v", e)
		}
		if _, e := c.get("no-such-task"); e == nil { // tasks_get rpc_error
			t.Fatal("tasks/get of an unknown id succeeded")
		}
		get := `{"jsonrpc":"2.0","id":9,"method":"tasks/get","params":{"taskId":"x"}}`
		for _, r := range []struct {
			req  *http.Request
			want int
		}{
			{rawPost(get, "Content-Type", "text/plain"), http.StatusUnsupportedMediaType},                // unknown http_error
			{rawPost(get, "Origin", "http://evil.example"), http.StatusForbidden},                        // unknown http_error
			{rawPost(get), http.StatusBadRequest},                                                        // tasks_get http_error: no session
			{rawPost(get, "Mcp-Session-Id", "gone"), http.StatusNotFound},                                // tasks_get http_error: unknown session
			{httptest.NewRequest(http.MethodDelete, "http://127.0.0.1/mcp", nil), http.StatusBadRequest}, // not JSON-RPC: status only
		} {
			if resp := h.do(r.req); resp.Status != r.want {
				t.Fatalf("%s %s: HTTP %d, want %d", r.req.Method, r.req.Header, resp.Status, r.want)
			}
		}

		time.Sleep(200 * time.Millisecond)
		synctest.Wait()
		if r := c.call("tasks/result", map[string]any{"taskId": bt.Task.TaskID}); r.Err != nil { // tasks_result ok, JSON
			t.Fatalf("tasks/result B: %s", r.Raw)
		}
		data, ok := stream.nextEvent() // tasks_result ok, on the stream
		if !ok {
			t.Fatal("tasks/result C: stream ended without a reply")
		}
		if r, final := c.readStreamed("tasks/result", data); !final || r.Err != nil {
			t.Fatalf("tasks/result C: %s", data)
		}
		stream.all()

		time.Sleep(time.Until(t0.Add(2 * time.Second)))
		synctest.Wait() // A expired at 1.5 s and was swept at 2 s: a lag of 500 ms

		fams := scrape(t, h.srv.Handler())
		got := series(fams)
		want := map[string]float64{
			"tasksim_mock_requests_total{era=legacy,method=initialize,outcome=ok}":        1,
			"tasksim_mock_requests_total{era=legacy,method=tools_call,outcome=ok}":        3,
			"tasksim_mock_requests_total{era=legacy,method=tasks_get,outcome=ok}":         1,
			"tasksim_mock_requests_total{era=legacy,method=tasks_get,outcome=rpc_error}":  1,
			"tasksim_mock_requests_total{era=legacy,method=tasks_get,outcome=http_error}": 2,
			"tasksim_mock_requests_total{era=legacy,method=tasks_result,outcome=ok}":      2,
			"tasksim_mock_requests_total{era=legacy,method=unknown,outcome=http_error}":   2,
			"tasksim_mock_http_rejections_total{code=400}":                                2,
			"tasksim_mock_http_rejections_total{code=403}":                                1,
			"tasksim_mock_http_rejections_total{code=404}":                                1,
			"tasksim_mock_http_rejections_total{code=415}":                                1,
			"tasksim_mock_tasks_created_total":                                            3,
			"tasksim_mock_retained_tasks":                                                 2,
			"tasksim_mock_expired_tasks_total":                                            1,
			"tasksim_mock_orphaned_tasks_total":                                           1,
			"tasksim_mock_cleanup_lag_max_seconds":                                        0.5,
			"tasksim_mock_sessions":                                                       1,
			"tasksim_mock_domain_effects_total":                                           3,
			"tasksim_mock_duplicate_effects_total":                                        1,
			// Backpressure and downstream are off: their families are there, at zero.
			"tasksim_mock_effects_after_cancel_total":                 0,
			"tasksim_mock_executor_queue_depth":                       0,
			"tasksim_mock_refusals_total{cause=max_tasks}":            0,
			"tasksim_mock_refusals_total{cause=max_tasks_per_tenant}": 0,
			"tasksim_mock_refusals_total{cause=executor}":             0,
			"tasksim_mock_rate_limited_total":                         0,
			"tasksim_mock_downstream_in_flight":                       0,
			"tasksim_mock_downstream_queue_depth":                     0,
			"tasksim_mock_downstream_rejections_total":                0,
			"tasksim_mock_downstream_failures_total":                  0,
			// Faults: only non_idempotent took effect; every kind has its series.
			"tasksim_mock_faults_total{kind=non_idempotent}":         1,
			"tasksim_mock_faults_total{kind=http_5xx}":               0,
			"tasksim_mock_faults_total{kind=restart}":                0,
			"tasksim_mock_lost_tasks_total":                          0,
			"tasksim_mock_idempotent_replays_total{outcome=task}":    0,
			"tasksim_mock_idempotent_replays_total{outcome=expired}": 0,
			// Per-task structures: k1's entry (A left the store at 2 s; its window is the
			// largest ttl granted, B's 60 s), B and C awaiting expiry, no input pending.
			"tasksim_mock_ledger_keys":                 1,
			"tasksim_mock_ledger_keys_forgotten_total": 0,
			"tasksim_mock_ledger_window_seconds":       60,
			"tasksim_mock_expiry_queue":                2,
			"tasksim_mock_elicitations_pending":        0,
		}
		// The Go runtime's and the process's memory figures (client_golang's collectors).
		for _, name := range []string{"go_gc_heap_live_bytes", "go_memstats_heap_alloc_bytes", "go_goroutines", "process_resident_memory_bytes"} {
			if _, ok := fams[name]; !ok {
				t.Errorf("%s is missing", name)
			}
		}
		for k, v := range want {
			if g, ok := got[k]; !ok || g != v {
				t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
			}
		}
		// Every other requests_total and http_rejections_total series is zero, and the
		// served methods all have their series.
		for k, v := range got {
			if _, listed := want[k]; !listed && v != 0 &&
				(strings.HasPrefix(k, "tasksim_mock_requests_total") || strings.HasPrefix(k, "tasksim_mock_http_rejections_total")) {
				t.Errorf("%s = %v, want 0", k, v)
			}
		}
		for _, m := range []string{"unknown", "initialize", "ping", "tools_list", "tools_call", "tasks_get", "tasks_result", "tasks_list", "tasks_cancel"} {
			for _, o := range []string{"ok", "rpc_error", "http_error"} {
				if _, ok := got["tasksim_mock_requests_total{era=legacy,method="+m+",outcome="+o+"}"]; !ok {
					t.Errorf("requests_total{era=legacy,method=%s,outcome=%s} is missing", m, o)
				}
			}
		}
		for _, code := range []string{"400", "401", "403", "404", "405", "406", "413", "415", "429", "other"} {
			if _, ok := got["tasksim_mock_http_rejections_total{code="+code+"}"]; !ok {
				t.Errorf("http_rejections_total{code=%s} is missing", code)
			}
		}

		hist := fams["tasksim_mock_cleanup_lag_seconds"]
		if hist == nil || hist.GetType() != dto.MetricType_HISTOGRAM || len(hist.GetMetric()) != 1 {
			t.Fatalf("cleanup_lag_seconds: %v, want one histogram", hist)
		}
		hm := hist.GetMetric()[0].GetHistogram()
		if hm.GetSampleCount() != 1 || hm.GetSampleSum() != 0.5 {
			t.Errorf("cleanup_lag_seconds count %d sum %v, want 1 and 0.5", hm.GetSampleCount(), hm.GetSampleSum())
		}
		for _, bk := range hm.GetBucket() {
			want := uint64(0)
			if bk.GetUpperBound() >= 0.5 {
				want = 1
			}
			if bk.GetCumulativeCount() != want {
				t.Errorf("cleanup_lag_seconds{le=%v} = %d, want %d", bk.GetUpperBound(), bk.GetCumulativeCount(), want)
			}
		}

		// Stats has the same figures: the collector reads nothing else.
		st := h.srv.Stats()
		if n := st.Requests[mcp.OpTasksGet][mockserver.OutcomeHTTPError]; n != 2 {
			t.Errorf("Stats.Requests[tasks_get][http_error] = %d, want 2", n)
		}
		if n := st.Requests.Total(mcp.OpTasksGet); n != 4 {
			t.Errorf("Stats.Requests.Total(tasks_get) = %d, want 4", n)
		}
		if n := st.Rejections.Of(http.StatusBadRequest); n != 2 {
			t.Errorf("Stats.Rejections.Of(400) = %d, want 2", n)
		}
	})
}

// TestMetricsTwoServers: every server has its own registry, so two servers in one process
// neither collide nor share figures, and /metrics is served on the listener of /mcp.
func TestMetricsTwoServers(t *testing.T) {
	var urls []string
	var srvs []*mockserver.Server
	for range 2 {
		srv, err := mockserver.NewServer(mockserver.Config{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Close)
		srvs = append(srvs, srv)
		urls = append(urls, strings.TrimSuffix(srv.URL, "/mcp")+"/metrics")
	}
	// Three rejections on the first server only.
	for range 3 {
		srvs[0].Handler().ServeHTTP(httptest.NewRecorder(), rawPost(`{}`, "Content-Type", "text/plain"))
	}
	for i, u := range urls {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: HTTP %d %v", u, resp.StatusCode, err)
		}
		got := series(parseExposition(t, body))
		want := float64(3 * (1 - i))
		if g := got["tasksim_mock_http_rejections_total{code=415}"]; g != want {
			t.Errorf("server %d: http_rejections_total{code=415} = %v, want %v", i, g, want)
		}
		if g := got["tasksim_mock_requests_total{era=legacy,method=unknown,outcome=http_error}"]; g != want {
			t.Errorf("server %d: requests_total{unknown,http_error} = %v, want %v", i, g, want)
		}
	}
}

// TestMetricsAccess: /metrics needs no session and no token, serves GET and HEAD only, and
// keeps the Origin check of the MCP endpoint (H10).
func TestMetricsAccess(t *testing.T) {
	srv, err := mockserver.NewHandlerServer(mockserver.Config{Tokens: map[string]string{"secret": "acme"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	for _, c := range []struct {
		method, origin string
		want           int
	}{
		{http.MethodGet, "", http.StatusOK},
		{http.MethodHead, "", http.StatusOK},
		{http.MethodGet, "http://localhost:3000", http.StatusOK},
		{http.MethodGet, "http://evil.example", http.StatusForbidden},
		{http.MethodPost, "", http.StatusMethodNotAllowed},
	} {
		req := httptest.NewRequest(c.method, "http://127.0.0.1/metrics", nil)
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Errorf("%s /metrics Origin %q: HTTP %d, want %d", c.method, c.origin, rec.Code, c.want)
		}
	}
	if st := srv.Stats(); st.Rejections != (mockserver.Rejections{}) {
		t.Errorf("rejections of /metrics were counted as the MCP endpoint's: %v", st.Rejections)
	}
}

// TestRejectionSlots: every listed status has its own slot, in Each's order, and any other
// status shares the last one.
func TestRejectionSlots(t *testing.T) {
	var codes []int
	var r mockserver.Rejections
	r.Each(func(code int, _ uint64) { codes = append(codes, code) })
	want := []int{400, 401, 403, 404, 405, 406, 413, 415, 429, 0}
	if !slices.Equal(codes, want) {
		t.Fatalf("Each codes %v, want %v", codes, want)
	}
	for i := range r {
		r[i] = uint64(i + 1)
	}
	for i, c := range want[:len(want)-1] {
		if n := r.Of(c); n != uint64(i+1) {
			t.Errorf("Of(%d) = %d, want %d", c, n, i+1)
		}
	}
	if n := r.Of(http.StatusServiceUnavailable); n != uint64(len(want)) {
		t.Errorf("Of(503) = %d, want the other slot %d", n, len(want))
	}
	if s := fmt.Sprint(mockserver.OutcomeOK, mockserver.OutcomeRPCError, mockserver.OutcomeHTTPError); s != "ok rpc_error http_error" {
		t.Errorf("outcome names %q", s)
	}
}

// TestMetricsBackpressure: 429s (a full executor with refuse_429, a get rate limit) are
// counted as http_error requests and 429 rejections, and the downstream families follow
// the downstream model, with downstream_wait_seconds observed as each operation gets a slot.
func TestMetricsBackpressure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, mockserver.Config{
			Backpressure: mockserver.Backpressure{Workers: 2, Queue: 0, WhenFull: "refuse_429", GetRatePerClient: 1, Burst: 1},
			Downstream:   mockserver.Downstream{Capacity: 1, ServiceTime: scenarios.Dist{Kind: scenarios.DistFixed, Value: scenarios.Duration(time.Second)}},
		})
		t0 := time.Now()
		c := h.connect()
		a := c.createTask("work", map[string]any{"duration_ms": 100})
		c.createTask("work", map[string]any{"duration_ms": 100})
		if r := c.start("tools/call", map[string]any{"name": "work", "task": map[string]any{},
			"arguments": map[string]any{"duration_ms": 100}}); r.Status != http.StatusTooManyRequests {
			t.Fatalf("third create with 2 workers and no queue: HTTP %d, want 429", r.Status)
		}
		c.get(a.TaskID) // takes the one token
		if r := c.start("tasks/get", map[string]any{"taskId": a.TaskID}); r.Status != http.StatusTooManyRequests {
			t.Fatalf("second tasks/get within a second at 1/s: HTTP %d, want 429", r.Status)
		}
		// At 100 ms both operations reach the downstream: one runs, one waits until 1.1 s.
		time.Sleep(time.Until(t0.Add(500 * time.Millisecond)))
		synctest.Wait()
		got := series(scrape(t, h.srv.Handler()))
		for k, v := range map[string]float64{
			"tasksim_mock_requests_total{era=legacy,method=tools_call,outcome=ok}":         2,
			"tasksim_mock_requests_total{era=legacy,method=tools_call,outcome=http_error}": 1,
			"tasksim_mock_requests_total{era=legacy,method=tasks_get,outcome=ok}":          1,
			"tasksim_mock_requests_total{era=legacy,method=tasks_get,outcome=http_error}":  1,
			"tasksim_mock_http_rejections_total{code=429}":                                 2,
			"tasksim_mock_refusals_total{cause=executor}":                                  1,
			"tasksim_mock_rate_limited_total":                                              1,
			"tasksim_mock_downstream_in_flight":                                            1,
			"tasksim_mock_downstream_queue_depth":                                          1,
		} {
			if g, ok := got[k]; !ok || g != v {
				t.Errorf("at 0.5 s: %s = %v (present %v), want %v", k, g, ok, v)
			}
		}
		time.Sleep(time.Until(t0.Add(3 * time.Second)))
		synctest.Wait()
		fams := scrape(t, h.srv.Handler())
		got = series(fams)
		for k, v := range map[string]float64{
			"tasksim_mock_downstream_in_flight":      0,
			"tasksim_mock_downstream_queue_depth":    0,
			"tasksim_mock_domain_effects_total":      2,
			"tasksim_mock_downstream_failures_total": 0,
		} {
			if g, ok := got[k]; !ok || g != v {
				t.Errorf("at 3 s: %s = %v (present %v), want %v", k, g, ok, v)
			}
		}
		hist := fams["tasksim_mock_downstream_wait_seconds"]
		if hist == nil || len(hist.GetMetric()) != 1 {
			t.Fatalf("downstream_wait_seconds: %v, want one histogram", hist)
		}
		hm := hist.GetMetric()[0].GetHistogram()
		if hm.GetSampleCount() != 2 || hm.GetSampleSum() != 1 {
			t.Errorf("downstream_wait_seconds count %d sum %v, want 2 and 1 (0 s and 1 s)", hm.GetSampleCount(), hm.GetSampleSum())
		}
	})
}

// TestMetricsModern: the modern era's requests are series of their own era, under the ops
// of its methods (server_discover, tasks_update, subscriptions_listen); notifications sent
// and open listens have their families; each era has zero series only for its own methods.
func TestMetricsModern(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := listenServer(t, mockserver.Config{})
		mc := h.modern()
		mc.ok("server/discover", nil)
		tk := mc.create("work", map[string]any{"duration_ms": 1000})
		mc.ok("tasks/update", map[string]any{"taskId": tk.TaskID, "inputResponses": map[string]any{}})
		mc.wantError("tasks/result", map[string]any{"taskId": tk.TaskID}, mcp.CodeMethodNotFound)
		ls := mc.listenTasks(tk.TaskID)
		ls.ack()
		ls.task()
		h.connect().get(tk.TaskID)
		got := series(scrape(t, h.srv.Handler()))
		for k, v := range map[string]float64{
			"tasksim_mock_requests_total{era=modern,method=server_discover,outcome=ok}":           1,
			"tasksim_mock_requests_total{era=modern,method=tools_call,outcome=ok}":                1,
			"tasksim_mock_requests_total{era=modern,method=tasks_update,outcome=ok}":              1,
			"tasksim_mock_requests_total{era=modern,method=unknown,outcome=http_error}":           1, // tasks/result: 404
			"tasksim_mock_requests_total{era=modern,method=subscriptions_listen,outcome=ok}":      0, // still open
			"tasksim_mock_requests_total{era=modern,method=tasks_get,outcome=ok}":                 1, // E62: ls.task compares with a tasks/get
			"tasksim_mock_requests_total{era=legacy,method=tasks_get,outcome=ok}":                 1,
			"tasksim_mock_requests_total{era=legacy,method=initialize,outcome=ok}":                1,
			"tasksim_mock_notifications_sent_total{era=modern,method=tasks_status}":               1,
			"tasksim_mock_notifications_sent_total{era=modern,method=subscriptions_acknowledged}": 1,
			"tasksim_mock_notifications_sent_total{era=legacy,method=tasks_status}":               0,
			"tasksim_mock_subscriptions":               1,
			"tasksim_mock_subscriptions_refused_total": 0,
		} {
			if g, ok := got[k]; !ok || g != v {
				t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
			}
		}
		for _, absent := range []string{"era=legacy,method=server_discover", "era=modern,method=initialize", "era=modern,method=tasks_result"} {
			if _, ok := got["tasksim_mock_requests_total{"+absent+",outcome=ok}"]; ok {
				t.Errorf("requests_total{%s} exists: that era has no such method", absent)
			}
		}
		ls.cancel()
	})
}
