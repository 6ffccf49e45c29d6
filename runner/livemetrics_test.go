package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/scenarios"
)

// scrapeObserver scrapes the run's live endpoint once, at the end of the second window of
// the load: while the run goes on.
type scrapeObserver struct {
	mu      sync.Mutex
	url     string
	windows int
	body    []byte
	err     error
}

func (o *scrapeObserver) Phase(Phase) {}

func (o *scrapeObserver) Window(Progress) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.windows++; o.windows != 2 || o.url == "" {
		return
	}
	resp, err := http.Get(o.url)
	if err != nil {
		o.err = err
		return
	}
	defer resp.Body.Close()
	o.body, o.err = io.ReadAll(resp.Body)
}

// scrapedRun runs the smoke scenario in era proto, short and small, with sets applied
// (path=value, as --set), its live endpoint on loopback and scraped once while it runs
// (scrapeObserver): the run's summary, the observer holding the scrape, and the run's error.
func scrapedRun(t *testing.T, proto string, sets ...string) (*results.Summary, *scrapeObserver, error) {
	t.Helper()
	sc, err := scenarios.Load("smoke")
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range append([]string{"duration=3s", "grace=3s", "workload.clients=4", `args={"duration_ms":200}`}, sets...) {
		path, value, _ := strings.Cut(kv, "=")
		if err := sc.Set(path, value); err != nil {
			t.Fatal(err)
		}
	}
	sc.Protocol = proto
	obs := &scrapeObserver{}
	notes := func(line string) {
		if u, ok := strings.CutPrefix(line, "metrics: "); ok {
			obs.mu.Lock()
			obs.url = u
			obs.mu.Unlock()
		}
	}
	sum, err := Run(context.Background(), sc, Options{Dir: t.TempDir(), MetricsListen: "127.0.0.1:0", Observer: obs, Notes: notes})
	return sum, obs, err
}

// TestLiveMetrics: `run --metrics-listen` serves the load generator's figures while the run
// goes on, promlint-clean, in the names of docs/METRICS.md#live, in both eras: request
// durations by method as mcp_client_operation_duration_seconds, the task figures, the shard.
func TestLiveMetrics(t *testing.T) {
	for _, proto := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(proto, func(t *testing.T) {
			_, obs, err := scrapedRun(t, proto)
			if err != nil {
				t.Fatal(err)
			}
			obs.mu.Lock()
			defer obs.mu.Unlock()
			if !strings.HasPrefix(obs.url, "http://127.0.0.1:") || obs.err != nil || obs.body == nil {
				t.Fatalf("metrics URL %q, scrape: %v", obs.url, obs.err)
			}
			problems, err := promlint.New(bytes.NewReader(obs.body)).Lint()
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range problems {
				t.Errorf("promlint: %s: %s", p.Metric, p.Text)
			}
			parser := expfmt.NewTextParser(model.UTF8Validation)
			fams, err := parser.TextToMetricFamilies(bytes.NewReader(obs.body))
			if err != nil {
				t.Fatalf("exposition: %v\n%s", err, obs.body)
			}
			dur := fams["mcp_client_operation_duration_seconds"]
			var gets, created uint64
			for _, m := range dur.GetMetric() {
				l := labelsOf(m)
				if l["mcp_method_name"] == "tasks/get" && l["error_type"] == "" && l["mcp_protocol_version"] == proto && l["tasksim_shard"] == "0" {
					gets += m.GetHistogram().GetSampleCount()
				}
			}
			if f := fams["tasksim_client_tasks_created_total"]; f != nil {
				created = uint64(f.GetMetric()[0].GetCounter().GetValue())
			}
			if gets == 0 || created == 0 {
				t.Errorf("after two seconds: %d tasks/get durations, %d tasks created; want some of both:\n%s", gets, created, obs.body)
			}
			checkDashboard(t, fams)
			for _, name := range []string{"tasksim_client_requests_total", "tasksim_client_task_e2e_seconds", "tasksim_client_polls_per_task",
				"tasksim_client_detection_lag_seconds", "tasksim_client_schedule_lag_seconds", "tasksim_client_in_flight"} {
				if fams[name] == nil {
					t.Errorf("%s is missing", name)
				}
			}
		})
	}
}

// TestLiveMetricsHTTPErrorDurations: a request answered by an HTTP error status alone (the
// embedded server's http_5xx fault, 500) has its duration in the live endpoint, with
// error_type http_error, in both eras, while the summary's latency histograms of record hold
// the JSON-RPC replies alone. The fault draws from a stream the seed fixes (mockserver
// faults.go), and the probe's few requests come first and in order: seed 3 lets every one
// of them through in both eras, so that the run gets to its load.
func TestLiveMetricsHTTPErrorDurations(t *testing.T) {
	for _, proto := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(proto, func(t *testing.T) {
			sum, obs, err := scrapedRun(t, proto, "faults.server.http_5xx={probability: 0.2}", "faults.server.status=500", "thresholds=[]", "seed=3")
			obs.mu.Lock()
			defer obs.mu.Unlock()
			if sum == nil || obs.err != nil || obs.body == nil {
				t.Fatalf("run: %v; scrape: %v (%d bytes)", err, obs.err, len(obs.body))
			}
			parser := expfmt.NewTextParser(model.UTF8Validation)
			fams, err := parser.TextToMetricFamilies(bytes.NewReader(obs.body))
			if err != nil {
				t.Fatal(err)
			}
			var statusOnly uint64
			for _, m := range fams["mcp_client_operation_duration_seconds"].GetMetric() {
				if labelsOf(m)["error_type"] == "http_error" {
					statusOnly += m.GetHistogram().GetSampleCount()
				}
			}
			if statusOnly == 0 {
				t.Errorf("no duration with error_type http_error after two seconds of 20%% HTTP 500s:\n%s", obs.body)
			}
			st, lat := sum.Requests["tasks/get"], sum.Metrics["latency_tasks_get"]
			if st.ByOutcome["http_error"] == 0 || lat.Count != st.Count-st.ByOutcome["http_error"] {
				t.Errorf("tasks/get: %+v, latency_tasks_get holds %d: want the requests but the 500s, which have no latency of record", st, lat.Count)
			}
		})
	}
}

// labelsOf returns m's labels by name.
func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// dashboardFile is the Grafana dashboard of a run (docs/METRICS.md#live).
const dashboardFile = "../deploy/grafana/tasksim-run.json"

// checkDashboard checks every query of the Grafana dashboard against a live scrape's
// families: each metric a selector names (name{...}, with _bucket, _sum and _count read as
// their histogram's) is exported, with every label the selector matches on, and so is the
// metric and label of the shard variable's label_values.
func checkDashboard(t *testing.T, fams map[string]*dto.MetricFamily) {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	has := func(name string, labels ...string) bool {
		f := fams[name]
		if f == nil {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if base, ok := strings.CutSuffix(name, suffix); ok && fams[base].GetType() == dto.MetricType_HISTOGRAM {
					f = fams[base]
				}
			}
		}
		if f == nil {
			return false
		}
		for _, l := range labels {
			if l == "le" {
				continue
			}
			found := false
			for _, m := range f.GetMetric() {
				_, ok := labelsOf(m)[l]
				found = found || ok
			}
			if !found {
				return false
			}
		}
		return true
	}
	selector := regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}`)
	matcher := regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)`)
	queries := 0
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			for _, m := range selector.FindAllStringSubmatch(tg.Expr, -1) {
				var labels []string
				for _, lm := range matcher.FindAllStringSubmatch(m[2], -1) {
					labels = append(labels, lm[1])
				}
				queries++
				if !has(m[1], labels...) {
					t.Errorf("panel %q: %s{%s}: not exported with those labels by a live run", p.Title, m[1], m[2])
				}
			}
		}
	}
	for _, v := range d.Templating.List {
		if m := regexp.MustCompile(`label_values\((\w+),\s*(\w+)\)`).FindStringSubmatch(v.Definition); m == nil || !has(m[1], m[2]) {
			t.Errorf("variable %q: not a label_values of an exported metric and label", v.Definition)
		}
	}
	if queries < 10 {
		t.Errorf("%s: %d metric selectors, want the panels' queries", dashboardFile, queries)
	}
}

// TestLiveCountersNeverFall: a window that subtracts (a request reclassified after the
// window that counted it) does not make an exported counter go down.
func TestLiveCountersNeverFall(t *testing.T) {
	var c monotonic
	for _, step := range []struct{ add, shown int64 }{{3, 3}, {-1, 3}, {0, 3}, {2, 4}, {1, 5}} {
		c.add(step.add)
		if c.shown != step.shown {
			t.Fatalf("after %+d: shown %d, want %d", step.add, c.shown, step.shown)
		}
	}
}
