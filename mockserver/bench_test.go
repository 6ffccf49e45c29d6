package mockserver_test

// Throughput of tasks/get over loopback, held against the machine's loopback ceiling (the target:
// at least 0.5 of it, docs/CONTRIBUTING.md#performance). The ceiling is internal/looplimit: the same server,
// reply bytes, request bytes and transport settings, so that no file outside the module is read at
// test time.
//
// Only ratios measured in one run mean anything on a shared 2-core machine; the figure to
// quote is the "ratio" metric of BenchmarkTasksGetVsLoopLimit:
//
//	go test -run '^$' -bench TasksGetVsLoopLimit -benchtime 3s -count 3 ./mockserver/

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/looplimit"
	"github.com/tasksim/tasksim/mockserver"
)

// startLoopLimit starts looplimit's server on 127.0.0.1:0 and returns its URL.
func startLoopLimit(tb testing.TB) string {
	tb.Helper()
	url, stop, err := looplimit.Start()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(stop)
	return url
}

// poller is looplimit's client. Both servers are driven by the same client code with bodies
// of the same length; the mock server also gets the two session headers it requires, and its
// reply is 2 bytes longer ("ttl": 3600000 against 60000). Everything else that differs is
// the server's cost.
type poller struct{ *looplimit.Client }

func newPoller(tb testing.TB, url string, body []byte, header http.Header) *poller {
	c := looplimit.NewClient(url, body, header)
	tb.Cleanup(c.Close)
	return &poller{c}
}

// run sends n requests from min(n, looplimit.Conc) workers and returns the wall time.
func (p *poller) run(n int) (time.Duration, error) { return looplimit.Round(n, p.Do) }

// warm opens the whole connection pool, so that dialing is not timed.
func (p *poller) warm(tb testing.TB) {
	tb.Helper()
	if _, err := p.run(4 * loopConc); err != nil {
		tb.Fatalf("warm-up: %v", err)
	}
}

// loopConc is the number of concurrent requesters, looplimit's default -c.
const loopConc = looplimit.Conc

// startMock starts a mock server on 127.0.0.1:0, opens one initialized session and creates
// one task that stays working for the whole benchmark. It returns the URL, the session's
// headers and the tasks/get body for that task (the same length as loopBody).
func startMock(tb testing.TB) (url string, header http.Header, body []byte) {
	tb.Helper()
	return startMockWith(tb, mockserver.Config{})
}

// startMockWith is startMock on a server configured by cfg.
func startMockWith(tb testing.TB, cfg mockserver.Config) (url string, header http.Header, body []byte) {
	tb.Helper()
	srv, err := mockserver.NewServer(cfg)
	if err != nil {
		tb.Fatalf("NewServer: %v", err)
	}
	tb.Cleanup(srv.Close)
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	post := func(h http.Header, body string, want int) (*http.Response, []byte) {
		tb.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader([]byte(body)))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range h {
			req.Header[k] = v
		}
		resp, err := c.Do(req)
		if err != nil {
			tb.Fatalf("POST %s: %v", body, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			tb.Fatalf("POST %s: HTTP %d, want %d: %s", body, resp.StatusCode, want, b)
		}
		return resp, b
	}
	resp, _ := post(nil, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`, http.StatusOK)
	header = http.Header{}
	header.Set("Mcp-Session-Id", resp.Header.Get("Mcp-Session-Id"))
	header.Set("Mcp-Protocol-Version", "2025-11-25")
	post(header, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, http.StatusAccepted)
	// One day of work and one hour of ttl (the default MaxTTL): the task stays working and
	// stored for longer than any benchmark runs.
	_, b := post(header, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","arguments":{"duration_ms":86400000},"task":{"ttl":3600000}}}`, http.StatusOK)
	var created struct {
		Result struct {
			Task struct {
				TaskID string `json:"taskId"`
			} `json:"task"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &created); err != nil || created.Result.Task.TaskID == "" {
		tb.Fatalf("tools/call: no task in %s", b)
	}
	body = []byte(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"` + created.Result.Task.TaskID + `"}}`)
	_, b = post(header, string(body), http.StatusOK)
	if !bytes.Contains(b, []byte(`"status":"working"`)) || bytes.Contains(b, []byte(`"error"`)) {
		tb.Fatalf("tasks/get: unexpected reply %s", b)
	}
	return srv.URL, header, body
}

// reportRate reports requests per second.
func reportRate(b *testing.B, n int, d time.Duration, unit string) {
	if d > 0 {
		b.ReportMetric(float64(n)/d.Seconds(), unit)
	}
}

// BenchmarkLoopLimit is the loopback ceiling: looplimit's server and client, one op = one
// round trip, req/s over the timed run.
func BenchmarkLoopLimit(b *testing.B) {
	p := newPoller(b, startLoopLimit(b), looplimit.Body(), nil)
	p.warm(b)
	b.ReportAllocs()
	b.ResetTimer()
	d, err := p.run(b.N)
	if err != nil {
		b.Fatal(err)
	}
	reportRate(b, b.N, d, "req/s")
}

// BenchmarkTasksGetLoopback polls tasks/get on one working task through the real server over
// loopback with looplimit's client. allocs/op counts the whole process: client and server.
func BenchmarkTasksGetLoopback(b *testing.B) {
	url, h, body := startMock(b)
	p := newPoller(b, url, body, h)
	p.warm(b)
	b.ReportAllocs()
	b.ResetTimer()
	d, err := p.run(b.N)
	if err != nil {
		b.Fatal(err)
	}
	reportRate(b, b.N, d, "req/s")
}

// BenchmarkTasksGetVsLoopLimit runs both of the above in one process and reports
// ratio = (tasks/get req/s) / (looplimit req/s), the figure docs/CONTRIBUTING.md#performance quotes.
//
// b.N requests go to each server, in pairs of back-to-back rounds of about pairRound requests
// per side, the order alternating (ABBA) so that neither side always runs first. Each pair
// yields ratio_p = looplimit time / tasks/get time for the same number of requests; ratio is
// the median over pairs, so that a burst of load from other processes, which lands in a few
// rounds, does not move it. req/s and looplimit-req/s are over all rounds; allocs/req and
// looplimit-allocs/req count client and server together. ns/op is the time of one request to
// each server.
func BenchmarkTasksGetVsLoopLimit(b *testing.B) {
	ll := newPoller(b, startLoopLimit(b), looplimit.Body(), nil)
	url, h, body := startMock(b)
	ours := newPoller(b, url, body, h)
	ll.warm(b)
	ours.warm(b)
	looplimit.Compare(b, ours.Do, ll.Do)
}

// modernGet returns the modern tasks/get of the task legacyBody reads (E38: a task is read in
// either era), as a client of the Tasks extension sends it: the _meta envelope declaring the
// extension, and the three headers (E24). Its body is longer than the legacy one: the
// envelope is the era's.
func modernGet(tb testing.TB, url string, legacyBody []byte) (header http.Header, body []byte) {
	tb.Helper()
	var req struct {
		Params struct {
			TaskID string `json:"taskId"`
		} `json:"params"`
	}
	if err := json.Unmarshal(legacyBody, &req); err != nil || req.Params.TaskID == "" {
		tb.Fatalf("no taskId in %s", legacyBody)
	}
	id := req.Params.TaskID
	body = []byte(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"` + id + `","_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`)
	header = http.Header{}
	header.Set("Mcp-Protocol-Version", "2026-07-28")
	header.Set("Mcp-Method", "tasks/get")
	header.Set("Mcp-Name", id)
	req2, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req2.Header = header.Clone()
	req2.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req2)
	if err != nil {
		tb.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(`"resultType":"complete","taskId":"`+id+`","status":"working"`)) {
		tb.Fatalf("modern tasks/get: HTTP %d %s", resp.StatusCode, b)
	}
	return header, body
}

// BenchmarkTasksGetErasVsLoopLimit polls one working task with tasks/get over loopback in
// both eras, on one server that answers both (tasksim serve's default), with looplimit's
// client. Each sub-benchmark is a looplimit.Compare in one run:
//
//	legacy: 2025-11-25 (session headers) against looplimit: ratio = legacy/looplimit
//	modern: 2026-07-28 with the Tasks extension against looplimit: ratio = modern/looplimit
//	modern_vs_legacy: modern against legacy (legacy-req/s, legacy-allocs/req): ratio =
//	  modern/legacy, the figure the era requirement (within 10%) is judged by
//
//	go test -run '^$' -bench TasksGetErasVsLoopLimit -benchtime 3s -count 3 ./mockserver/
func BenchmarkTasksGetErasVsLoopLimit(b *testing.B) {
	url, h, body := startMockWith(b, mockserver.Config{Protocols: mockserver.ProtocolsBoth})
	mh, mbody := modernGet(b, url, body)
	legacy, modern := newPoller(b, url, body, h), newPoller(b, url, mbody, mh)
	ll := newPoller(b, startLoopLimit(b), looplimit.Body(), nil)
	for _, p := range []*poller{legacy, modern, ll} {
		p.warm(b)
	}
	b.Run("legacy", func(b *testing.B) { looplimit.Compare(b, legacy.Do, ll.Do) })
	b.Run("modern", func(b *testing.B) { looplimit.Compare(b, modern.Do, ll.Do) })
	b.Run("modern_vs_legacy", func(b *testing.B) { looplimit.CompareWith(b, modern.Do, legacy.Do, "legacy") })
}

// TestPollerAgainstMock checks the benchmarks' plumbing once (not their speed): a session is
// opened, the task is found, and every server answers 200 to the poller, in both eras.
func TestPollerAgainstMock(t *testing.T) {
	url, h, body := startMock(t)
	if len(body) != len(looplimit.Body()) {
		t.Errorf("tasks/get body is %d bytes, looplimit's is %d", len(body), len(looplimit.Body()))
	}
	url2, h2, body2 := startMockWith(t, mockserver.Config{Protocols: mockserver.ProtocolsBoth})
	mh, mbody := modernGet(t, url2, body2)
	for _, p := range []*poller{newPoller(t, url, body, h), newPoller(t, startLoopLimit(t), looplimit.Body(), nil),
		newPoller(t, url2, body2, h2), newPoller(t, url2, mbody, mh)} {
		if _, err := p.run(2 * loopConc); err != nil {
			t.Fatal(err)
		}
	}
}
