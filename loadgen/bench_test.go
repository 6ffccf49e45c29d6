package loadgen_test

// Benchmarks of the load generator at scale, against the embedded mock server over real
// loopback (mockserver.NewServer on 127.0.0.1:0), client and server in this one process. They
// run only with -bench, never under plain `go test`:
//
//	go test -run '^$' -bench TenThousandClients -benchtime 1x ./loadgen/
//	go test -run '^$' -bench PollThroughputVsLoopLimit -benchtime 3s -count 3 ./loadgen/
//
// Figures from a shared 2-core machine mean something only as reported by one run; quote
// them with the machine's load next to them (/proc/loadavg before the run, and the
// others_cpu_util the run reports: what other processes took meanwhile).

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/gcpolicy"
	"github.com/tasksim/tasksim/internal/looplimit"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/loadgen"
	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/mockserver"
)

// loopbackRun is one bounded closed-model run against a fresh embedded mock server, with the
// settings `tasksim run` gives it (loadgen.DefaultRamp, loadgen.DefaultMaxConns,
// client.NewHTTPClient sized at twice the clients, the collector set up by gcpolicy).
type loopbackRun struct {
	Clients      int
	TaskMs       int           // duration_ms of each task
	PollInterval time.Duration // the server's advertised pollInterval
	Duration     time.Duration // load phase
	Grace        time.Duration
}

// loopbackResult is what a loopbackRun measured.
type loopbackResult struct {
	snap                   *metrics.Snapshot
	wall                   time.Duration // engine.Run, from start to the last session closed
	rssBefore, hwm, rssEnd int64         // bytes, /proc/self/status; -1 where unreadable
	server                 mockserver.Stats
	peakFDs                int // most open file descriptors seen, sampled once a second
	windows                []string
	cpu                    time.Duration // process CPU time (user + system) over the run; 0 if unknown
	others                 time.Duration // CPU time the rest of the machine used meanwhile
	gc                     gcpolicy.Policy
	allocBytes             uint64 // heap bytes allocated over the run, both sides
	gcCycles               uint32 // garbage collections completed over the run
}

// restoreGC sets the collector back to p.
func restoreGC(p gcpolicy.Policy) {
	debug.SetGCPercent(p.GOGC)
	if p.MemoryLimit == 0 {
		debug.SetMemoryLimit(math.MaxInt64)
	} else {
		debug.SetMemoryLimit(p.MemoryLimit)
	}
}

// windowFigures is one second of the run for the log: requests, schedule_lag p99 and max.
func windowFigures(w *metrics.Window) string {
	var n int64
	for m := range mcp.NumOps {
		n += w.RequestCount(m)
	}
	lag := w.Summary(metrics.ScheduleLag)
	return fmt.Sprintf("%d/%.0f/%.0f", n, lag.P99, lag.Max)
}

// errors counts every request that did not end OutcomeOK, all methods together.
func (r *loopbackResult) errors() int64 {
	var n int64
	for m := range mcp.NumOps {
		n += r.snap.ErrorCount(m)
	}
	return n
}

// requests counts every request sent, all methods together.
func (r *loopbackResult) requests() int64 {
	var n int64
	for m := range mcp.NumOps {
		n += r.snap.RequestCount(m)
	}
	return n
}

// run starts a mock server, probes it as `tasksim run` does, and runs the engine with the
// HTTP client and engine settings that cmd/tasksim derives for the same workload.
func (lr loopbackRun) run(tb testing.TB) *loopbackResult {
	tb.Helper()
	before := gcpolicy.Current()
	gc := before // a test keeps the test binary's collector
	if _, ok := tb.(*testing.B); ok {
		gc = gcpolicy.Apply()
		tb.Cleanup(func() { gc.Stop(); restoreGC(before) }) // later benchmarks of the process measure as before
	}
	runtime.GC()
	debug.FreeOSMemory()
	res := &loopbackResult{rssBefore: procStatus("VmRSS"), gc: gc}
	resetPeakRSS()

	shards := max(8, 2*runtime.GOMAXPROCS(0)) // as cmd/tasksim
	rec := metrics.NewRecorder(shards, time.Now())
	srv, err := mockserver.NewServer(mockserver.Config{PollInterval: lr.PollInterval, Metrics: rec.Shard(0)})
	if err != nil {
		tb.Fatalf("mock server: %v", err)
	}
	defer srv.Close()
	hc := client.NewHTTPClient(2 * lr.Clients) // as cmd/tasksim: twice the pool
	defer hc.CloseIdleConnections()
	target := &client.Target{
		URL:        srv.URL,
		Client:     hc,
		ClientInfo: mcp.Implementation{Name: "tasksim-bench", Version: "1"},
	}
	ctx := context.Background()
	m, err := client.Probe(ctx, target, "work_task")
	if err != nil {
		tb.Fatalf("probe: %v", err)
	}
	if err := m.Decide(client.FallbackRefuse); err != nil {
		tb.Fatalf("decide: %v", err)
	}
	cfg := loadgen.Config{
		Tool:     "work_task",
		Args:     map[string]any{"duration_ms": lr.TaskMs},
		Clients:  lr.Clients,
		Duration: lr.Duration,
		Grace:    lr.Grace,
		Ramp:     loadgen.DefaultRamp(lr.Clients, lr.Duration),
		MaxConns: loadgen.DefaultMaxConns,
		Poll:     loadgen.PollPolicy{Kind: loadgen.PollServer, Interval: lr.PollInterval},
		Seed:     1,
		Shards:   shards,
	}
	eng, err := loadgen.New(cfg, target, m, rec)
	if err != nil {
		tb.Fatal(err)
	}
	res.measure(tb, ctx, eng, rec, nil)
	res.server = srv.Stats()
	return res
}

// measure runs eng to its end beside a collector as cmd/tasksim has (one window of rec a
// second; everySecond, when given, runs after each), and records in res what the run
// cost: its wall time, allocations and collections, this process's CPU time and the rest
// of the machine's (another process serving the run is among the others), the windows
// and the most file descriptors open, the RSS at the end and its high-water mark, and the
// run's totals.
func (res *loopbackResult) measure(tb testing.TB, ctx context.Context, eng *loadgen.Engine, rec *metrics.Recorder, everySecond func()) {
	tb.Helper()
	start := time.Now()
	cpuBefore, busyBefore := cpuTime(), machineBusy()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	allocBefore, gcBefore := ms.TotalAlloc, ms.NumGC
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case now := <-tick.C:
				w := rec.Flush(now)
				res.windows = append(res.windows, windowFigures(&w))
				res.peakFDs = max(res.peakFDs, openFDs())
				if everySecond != nil {
					everySecond()
				}
			case <-quit:
				return
			}
		}
	})
	if err := eng.Run(ctx); err != nil {
		tb.Fatal(err)
	}
	res.wall = time.Since(start)
	runtime.ReadMemStats(&ms)
	res.allocBytes, res.gcCycles = ms.TotalAlloc-allocBefore, ms.NumGC-gcBefore
	if c := cpuTime(); c >= 0 && cpuBefore >= 0 {
		res.cpu = c - cpuBefore
		if b := machineBusy(); b >= 0 && busyBefore >= 0 {
			res.others = max(0, b-busyBefore-res.cpu)
		}
	}
	close(quit)
	wg.Wait()
	rec.Flush(time.Now())
	res.rssEnd = procStatus("VmRSS")
	res.hwm = max(procStatus("VmHWM"), res.rssEnd) // RSS may grow between the two reads
	res.snap = rec.Total()
}

// procStatus reads a "kB" field of /proc/self/status in bytes; -1 if it cannot.
func procStatus(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), field+":")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return -1
		}
		return n << 10
	}
	return -1
}

// openFDs counts the process's open file descriptors; -1 if it cannot.
func openFDs() int {
	d, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(d)
}

// cpuTime is the process's CPU time so far, user and system, all threads (proc(5),
// /proc/self/stat fields 14 and 15, in USER_HZ = 100 ticks a second); -1 if it cannot.
func cpuTime() time.Duration {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return -1
	}
	i := bytes.LastIndexByte(b, ')') // the command name before it may hold anything
	if i < 0 {
		return -1
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3 (state)
	if len(f) < 13 {
		return -1
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// machineBusy is the CPU time all processors of the machine have spent busy (neither idle
// nor waiting for I/O) since boot, from the first line of /proc/stat; -1 if it cannot.
func machineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return -1
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 6 || f[0] != "cpu" {
		return -1
	}
	var busy int64
	for i, v := range f[1:] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return -1
		}
		if i != 3 && i != 4 && i < 8 { // idle, iowait; guest time is already in user
			busy += n
		}
	}
	return time.Duration(busy) * 10 * time.Millisecond
}

// resetPeakRSS sets VmHWM back to the current RSS (proc(5), clear_refs "5"), so that the peak
// read after a run belongs to that run and not to an earlier benchmark of the process. If
// the kernel refuses, VmHWM stays the process's peak: an overestimate, never an underestimate.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

const mib = 1 << 20

// BenchmarkTenThousandClients: 10,000 closed-model clients run 5 s tasks against the embedded
// server advertising a 2 s pollInterval, over real loopback, for a 20 s load phase (the
// clients start over the default 5 s ramp) and up to 10 s of drain; one bounded run per b.N
// (run it with -benchtime 1x). The targets: no request fails, schedule_lag p99 <= 50 ms,
// whole-process peak RSS <= 1 GiB.
//
// Reported: tasks_completed, errors (requests of any method not ending ok), tasks_unknown,
// schedule_lag_p99_ms and its max (a poll is sent when it gets a request slot, so a wait
// for one counts), task_e2e_p99_ms, tasks_get_p99_ms (sent -> reply), req/s (every request
// over the run's wall time, ramp and drain included), peak_fds (sampled once a second),
// cpu_util (this process's CPU time over wall time, as a share of all processors),
// others_cpu_util (the same for everything else on the machine meanwhile), peak_rss_MiB
// (VmHWM over the run, client and server), end_rss_MiB (VmRSS after it) and bytes/client
// ((VmHWM - VmRSS before the run) / clients: both sides of one virtual client),
// alloc_B/req (heap bytes allocated by the whole process per request) and gc_cycles (the
// garbage collections of the run: the events the schedule can least afford, see
// executor.go). The log adds the per-second request counts and schedule lag, where a
// collection shows (GODEBUG=gctrace=1 says when each ran).
func BenchmarkTenThousandClients(b *testing.B) {
	lr := loopbackRun{Clients: 10_000, TaskMs: 5000, PollInterval: 2 * time.Second,
		Duration: 20 * time.Second, Grace: 10 * time.Second}
	for range b.N {
		res := lr.run(b)
		reportLoopback(b, lr, res)
	}
}

func reportLoopback(b *testing.B, lr loopbackRun, res *loopbackResult) {
	s := res.snap
	b.ReportMetric(float64(s.Counters[metrics.TasksCompleted]), "tasks_completed")
	b.ReportMetric(float64(res.errors()), "errors")
	b.ReportMetric(float64(s.Counters[metrics.TasksUnknown]), "tasks_unknown")
	lag := s.Summary(metrics.ScheduleLag)
	b.ReportMetric(lag.P99, "schedule_lag_p99_ms")
	b.ReportMetric(lag.Max, "schedule_lag_max_ms")
	b.ReportMetric(s.Summary(metrics.TaskE2E).P99, "task_e2e_p99_ms")
	b.ReportMetric(s.Summary(metrics.LatencyTasksGet).P99, "tasks_get_p99_ms")
	b.ReportMetric(float64(res.requests())/res.wall.Seconds(), "req/s")
	b.ReportMetric(float64(res.peakFDs), "peak_fds")
	b.ReportMetric(float64(res.allocBytes)/float64(max(res.requests(), 1)), "alloc_B/req")
	b.ReportMetric(float64(res.gcCycles), "gc_cycles")
	if res.cpu > 0 {
		ncpu := float64(runtime.NumCPU())
		b.ReportMetric(res.cpu.Seconds()/res.wall.Seconds()/ncpu, "cpu_util")
		b.ReportMetric(res.others.Seconds()/res.wall.Seconds()/ncpu, "others_cpu_util")
	}
	if res.hwm > 0 && res.rssBefore > 0 {
		b.ReportMetric(float64(res.hwm)/mib, "peak_rss_MiB")
		b.ReportMetric(float64(res.rssEnd)/mib, "end_rss_MiB")
		b.ReportMetric(float64(res.hwm-res.rssBefore)/float64(lr.Clients), "bytes/client")
	}
	b.Logf("%d clients: %d tasks created, %d completed, %d unknown; %d requests, %d errors %s; "+
		"schedule_lag %+v; task_e2e %+v; tasks/get %+v; server %+v",
		lr.Clients, s.Counters[metrics.TasksCreated], s.Counters[metrics.TasksCompleted],
		s.Counters[metrics.TasksUnknown], res.requests(), res.errors(), errorBreakdown(s),
		s.Summary(metrics.ScheduleLag), s.Summary(metrics.TaskE2E),
		s.Summary(metrics.LatencyTasksGet), res.server)
	b.Logf("runtime: %+v", res.gc)
	b.Logf("per second, requests/schedule_lag p99 ms/max ms: %s", strings.Join(res.windows, " "))
}

// errorBreakdown lists the non-ok outcomes by method, for the log.
func errorBreakdown(s *metrics.Snapshot) string {
	var sb strings.Builder
	for m := range mcp.NumOps {
		for o := metrics.OutcomeRPCError; o < metrics.NumOutcomes; o++ {
			if n := s.Requests[m][o]; n > 0 {
				fmt.Fprintf(&sb, "[%s %s: %d]", m, o, n)
			}
		}
	}
	return sb.String()
}

// TestLoopbackRunPlumbing checks the benchmark's plumbing once, at a small scale (not its
// speed): tasks run to completion over loopback without a failed request, and the RSS
// readings make sense.
func TestLoopbackRunPlumbing(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time run over loopback")
	}
	lr := loopbackRun{Clients: 20, TaskMs: 200, PollInterval: 100 * time.Millisecond,
		Duration: time.Second, Grace: 10 * time.Second}
	res := lr.run(t)
	if n := res.snap.Counters[metrics.TasksCompleted]; n < int64(lr.Clients) {
		t.Errorf("%d tasks completed, want >= %d (one per client)", n, lr.Clients)
	}
	if n := res.errors(); n != 0 {
		t.Errorf("%d failed requests, want 0: %s", n, errorBreakdown(res.snap))
	}
	if n := res.snap.Counters[metrics.TasksUnknown]; n != 0 {
		t.Errorf("%d tasks unknown, want 0", n)
	}
	if res.rssBefore >= 0 && (res.rssBefore <= 0 || res.rssEnd <= 0) {
		t.Errorf("VmRSS before %d, after %d: want both > 0", res.rssBefore, res.rssEnd)
	}
}

// --- tasks/get throughput against the loopback ceiling ---

// loopConc is the number of concurrent requesters, looplimit's default -c.
const loopConc = looplimit.Conc

// requester sends one request; a round runs it from loopConc workers.
type requester interface {
	do() error
}

// loopLimit is looplimit's client against looplimit's server (the in-repo replica).
type loopLimit struct{ *looplimit.Client }

func newLoopLimit(tb testing.TB) *loopLimit {
	url, stop, err := looplimit.Start()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(stop)
	c := looplimit.NewClient(url, looplimit.Body(), nil)
	tb.Cleanup(c.Close)
	return &loopLimit{c}
}

func (p *loopLimit) do() error { return p.Do() }

// tasksimPoll is tasksim's poll: client.Session.Call("tasks/get") on one working task of a
// real mock server, through the HTTP client client.NewHTTPClient builds, with a per-request
// timeout context as a virtual client has. Each worker has a session of its own.
type tasksimPoll struct {
	sessions chan *client.Session // one per worker, taken for a request
	params   []byte
}

func newTasksimPoll(tb testing.TB) *tasksimPoll { return newTasksimPollIn(tb, client.ProtocolLegacy) }

// newTasksimPollIn is newTasksimPoll in the era of version: in 2026-07-28 each worker has a
// stateless requester (the virtual clients' own), and every request carries the envelope and
// the Mcp-Method and Mcp-Name headers.
func newTasksimPollIn(tb testing.TB, version string) *tasksimPoll {
	return newTasksimPollWith(tb, version, nil)
}

// newTasksimPollWith is newTasksimPollIn with its requests traced by tracer (nil: not
// traced, client.Target.Tracer).
func newTasksimPollWith(tb testing.TB, version string, tracer trace.Tracer) *tasksimPoll {
	tb.Helper()
	modern := version == client.ProtocolModern
	cfg := mockserver.Config{}
	if modern {
		cfg.Protocols = mockserver.ProtocolsModern
	}
	srv, err := mockserver.NewServer(cfg)
	if err != nil {
		tb.Fatalf("NewServer: %v", err)
	}
	tb.Cleanup(srv.Close)
	hc := client.NewHTTPClient(loopConc)
	tb.Cleanup(hc.CloseIdleConnections)
	target := &client.Target{URL: srv.URL, Client: hc, ClientInfo: mcp.Implementation{Name: "tasksim-bench", Version: "1"}, Tracer: tracer}
	ctx := context.Background()
	p := &tasksimPoll{sessions: make(chan *client.Session, loopConc)}
	for range loopConc {
		var s *client.Session
		var err error
		if modern {
			s, err = statelessSession(target)
		} else {
			s, err = target.Connect(ctx, mcp.ClientCapabilities{})
		}
		if err != nil {
			tb.Fatalf("connect: %v", err)
		}
		tb.Cleanup(func() { _ = s.Close(context.Background()) })
		p.sessions <- s
	}
	s := <-p.sessions
	defer func() { p.sessions <- s }()
	// One day of work and one hour of ttl: the task stays working and stored for longer than
	// any benchmark runs. Tasks are not bound to sessions without tokens, so every session
	// may poll it. (In 2026-07-28 the server sets the ttl, and work becomes a task because
	// the request declares the extension.)
	call := `{"name":"work","arguments":{"duration_ms":86400000},"task":{"ttl":3600000}}`
	var dialect mcp.Dialect = mcp.V20251125{}
	if modern {
		call, dialect = `{"name":"work","arguments":{"duration_ms":86400000}}`, mcp.V20260728{}
	}
	rep, err := s.Call(ctx, mcp.MethodToolsCall, []byte(call), nil)
	if err != nil || rep.Err != nil {
		tb.Fatalf("tools/call: %v %v", err, rep.Err)
	}
	task, _, perr := dialect.ParseCallReply(rep.Result)
	if perr != nil || task == nil {
		tb.Fatalf("tools/call: no task in %s", rep.Result)
	}
	p.params = []byte(`{"taskId":"` + task.TaskID + `"}`)
	return p
}

// statelessSession is the requester of a run's virtual clients in 2026-07-28 on t: the
// envelope declares the Tasks extension and form elicitation, as a run that creates tasks
// does (Engine.speakModern).
func statelessSession(t *client.Target) (*client.Session, error) {
	caps := mcp.ModernClientCapabilities{Elicitation: &mcp.ElicitationCapability{Form: mcp.On()}}
	caps.DeclareTasks()
	env, err := t.NewEnvelope(client.ProtocolModern, caps)
	if err != nil {
		return nil, err
	}
	return t.Stateless(env), nil
}

func (p *tasksimPoll) do() error {
	s := <-p.sessions
	defer func() { p.sessions <- s }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := s.Call(ctx, mcp.MethodTasksGet, p.params, nil)
	if err != nil {
		return err
	}
	if rep.Err != nil {
		return rep.Err
	}
	return nil
}

// round sends n requests from min(n, loopConc) workers and returns the wall time they took.
func round(r requester, n int) (time.Duration, error) { return looplimit.Round(n, r.do) }

// BenchmarkPollThroughputVsLoopLimit holds tasksim's tasks/get poll (client and embedded
// server in one process, over loopback) against the loopback ceiling measured in the same
// run, looplimit's plain net/http POST loop, at looplimit's concurrency of 256.
//
// b.N requests go to each side, in pairs of back-to-back rounds of about pairRound requests
// per side, the order alternating (ABBA) so that neither side always runs first. Each pair
// yields looplimit time / tasksim time for the same number of requests; ratio is the median
// over pairs, so that a burst of load from other processes, which lands in a few rounds,
// does not move it. req/s and looplimit-req/s are over all rounds; allocs/req and
// looplimit-allocs/req count client and server together.
func BenchmarkPollThroughputVsLoopLimit(b *testing.B) {
	sides := [2]requester{newTasksimPoll(b), newLoopLimit(b)} // 0 tasksim, 1 looplimit
	names := [2]string{"tasksim", "looplimit"}
	for i, s := range sides { // open the connection pools: dialing is not timed
		if _, err := round(s, 4*loopConc); err != nil {
			b.Fatalf("%s warm-up: %v", names[i], err)
		}
	}
	looplimit.Compare(b, sides[0].do, sides[1].do)
}

// BenchmarkPollThroughputErasVsLoopLimit is BenchmarkPollThroughputVsLoopLimit in each era,
// each against looplimit measured beside it: the ratio of 2026-07-28 must not fall below the
// ratio of 2025-11-25 by more than 10% (docs/CONTRIBUTING.md#performance).
func BenchmarkPollThroughputErasVsLoopLimit(b *testing.B) {
	for _, version := range []string{client.ProtocolLegacy, client.ProtocolModern} {
		b.Run(version, func(b *testing.B) {
			sides := [2]requester{newTasksimPollIn(b, version), newLoopLimit(b)}
			for i, s := range sides {
				if _, err := round(s, 4*loopConc); err != nil {
					b.Fatalf("side %d warm-up: %v", i, err)
				}
			}
			looplimit.Compare(b, sides[0].do, sides[1].do)
		})
	}
}

// TestPollThroughputPlumbing checks the throughput benchmark's plumbing once (not its speed):
// the sessions open, the task is found, and both sides answer every request.
func TestPollThroughputPlumbing(t *testing.T) {
	for _, r := range []requester{newTasksimPoll(t), newTasksimPollIn(t, client.ProtocolModern), newLoopLimit(t)} {
		if _, err := round(r, 2*loopConc); err != nil {
			t.Fatal(err)
		}
	}
}

// --- Ramp and MaxConns, in virtual time ---

// tap wraps the mock server's handler: it holds each tasks/get for getDelay (virtual time),
// notes when each initialize arrives, and tracks how many requests are in the handler at
// once (tasks/result aside: it takes no request slot).
type tap struct {
	h        http.Handler
	getDelay time.Duration

	mu                 sync.Mutex
	inFlight, maxSlots int
	inits              []time.Time
}

func (t *tap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body []byte
	if r.Body != nil { // a DELETE through HandlerTransport has none
		body, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	slotted := !bytes.Contains(body, []byte(`"method":"tasks/result"`))
	t.mu.Lock()
	if slotted {
		t.inFlight++
		t.maxSlots = max(t.maxSlots, t.inFlight)
	}
	if bytes.Contains(body, []byte(`"method":"initialize"`)) {
		t.inits = append(t.inits, time.Now())
	}
	t.mu.Unlock()
	if bytes.Contains(body, []byte(`"method":"tasks/get"`)) {
		time.Sleep(t.getDelay)
	}
	if !slotted {
		t.h.ServeHTTP(w, r)
		return
	}
	// A request is in flight until its reply starts: from then on the client may read it
	// whole and hand its slot to another request before this handler returns.
	tw := &replyStart{ResponseWriter: w, done: func() {
		t.mu.Lock()
		t.inFlight--
		t.mu.Unlock()
	}}
	t.h.ServeHTTP(tw, r)
	tw.start()
}

// replyStart calls done once, when the reply starts (or the handler returns without one).
type replyStart struct {
	http.ResponseWriter
	done    func()
	started bool
}

func (w *replyStart) start() {
	if !w.started {
		w.started = true
		w.done()
	}
}

func (w *replyStart) WriteHeader(code int) { w.start(); w.ResponseWriter.WriteHeader(code) }

func (w *replyStart) Write(b []byte) (int, error) { w.start(); return w.ResponseWriter.Write(b) }

func (w *replyStart) Flush() {
	w.start()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// runTapped runs cfg against the mock server behind tp, in a synctest bubble, and returns
// the run's totals and when the engine started.
func runTapped(t *testing.T, tp *tap, cfg loadgen.Config) (*metrics.Snapshot, time.Time) {
	t.Helper()
	srv, err := mockserver.NewHandlerServer(mockserver.Config{PollInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	tp.h = srv.Handler()
	target := &client.Target{URL: "http://embedded.test/mcp", Client: &http.Client{Transport: client.HandlerTransport(tp)}}
	m, err := client.Probe(context.Background(), target, cfg.Tool)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Decide(client.FallbackRefuse); err != nil {
		t.Fatal(err)
	}
	tp.mu.Lock()
	tp.inits, tp.maxSlots = nil, 0 // the probe's session is not the run's
	tp.mu.Unlock()
	rec := metrics.NewRecorder(1, time.Now())
	eng, err := loadgen.New(cfg, target, m, rec)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := eng.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec.Flush(time.Now())
	return rec.Total(), start
}

// TestRampSpreadsClientStarts: with a 1 s ramp, client i of 10 initializes at i*100 ms.
func TestRampSpreadsClientStarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tp := &tap{}
		snap, start := runTapped(t, tp, loadgen.Config{
			Tool: "work_task", Args: map[string]any{"duration_ms": 500},
			Clients: 10, Ramp: time.Second, Duration: 3 * time.Second, Grace: 5 * time.Second,
		})
		if len(tp.inits) != 10 {
			t.Fatalf("%d sessions initialized, want 10", len(tp.inits))
		}
		slices.SortFunc(tp.inits, func(a, b time.Time) int { return a.Compare(b) })
		for i, at := range tp.inits {
			if want := time.Duration(i) * 100 * time.Millisecond; at.Sub(start) != want {
				t.Errorf("session %d initialized at %v, want %v", i, at.Sub(start), want)
			}
		}
		if n := snap.Counters[metrics.TasksUnknown] + snap.Counters[metrics.TasksFailed]; n != 0 {
			t.Errorf("%d tasks unknown or failed, want 0", n)
		}
	})
}

// TestMaxConnsBoundsRequestsAndCountsTheWait: two clients poll at the same instants and
// tasks/get takes 400 ms. With MaxConns 1 at most one request is in flight, and the poll
// that waits for the slot reports the 400 ms as schedule lag, not as tasks/get latency.
// Without MaxConns both polls go out at once, on time.
func TestMaxConnsBoundsRequestsAndCountsTheWait(t *testing.T) {
	const delay = 400 * time.Millisecond
	for _, tc := range []struct {
		maxConns, wantSlots int
		wantLag             time.Duration
	}{
		{maxConns: 1, wantSlots: 1, wantLag: delay},
		{maxConns: 0, wantSlots: 2, wantLag: 0},
	} {
		synctest.Test(t, func(t *testing.T) {
			tp := &tap{getDelay: delay}
			snap, _ := runTapped(t, tp, loadgen.Config{
				Tool: "work_task", Args: map[string]any{"duration_ms": 2000},
				Clients: 2, MaxConns: tc.maxConns, Duration: 100 * time.Millisecond, Grace: 10 * time.Second,
				Poll: loadgen.PollPolicy{Kind: loadgen.PollServer},
			})
			if tp.maxSlots != tc.wantSlots {
				t.Errorf("MaxConns %d: %d requests in flight at most, want %d", tc.maxConns, tp.maxSlots, tc.wantSlots)
			}
			lag := snap.Summary(metrics.ScheduleLag)
			if got := time.Duration(lag.Max * float64(time.Millisecond)); got < tc.wantLag || got > tc.wantLag*1001/1000 {
				t.Errorf("MaxConns %d: schedule_lag max %v, want %v", tc.maxConns, got, tc.wantLag)
			}
			get := snap.Summary(metrics.LatencyTasksGet)
			if got := time.Duration(get.Max * float64(time.Millisecond)); got < delay || got > delay*1001/1000 {
				t.Errorf("MaxConns %d: tasks/get latency max %v, want %v (the slot wait excluded)", tc.maxConns, got, delay)
			}
			if n := snap.Counters[metrics.TasksCompleted]; n != 2 {
				t.Errorf("MaxConns %d: %d tasks completed, want 2", tc.maxConns, n)
			}
		})
	}
}
