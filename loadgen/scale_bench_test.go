package loadgen_test

// The load generator against an external target: a separate `tasksim serve` process, built
// by the benchmark, on 127.0.0.1. This process is the load generator alone, so its peak RSS
// is one shard's. Run it with:
//
//	go test -run '^$' -bench HundredThousandClients -benchtime 1x -timeout 30m ./loadgen/
//
// TASKSIM_BENCH_CLIENTS=N runs it with N clients instead (to profile at a smaller scale),
// TASKSIM_BENCH_PROTOCOL=2025-11-25 pins the clients' era (default: detected, 2026-07-28
// against tasksim serve), and TASKSIM_BENCH_HEAPPROFILE=FILE writes a heap profile of this
// process at the end of the load phase, after a collection: what every idle client holds
// (go tool pprof FILE).

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/internal/gcpolicy"
	"github.com/tasksim/tasksim/internal/looplimit"
	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/loadgen"
	tsmetrics "github.com/tasksim/tasksim/metrics"
)

// externalRun is one bounded closed-model run against a `tasksim serve` process of its own,
// with the settings `tasksim run --target` gives it but for MaxConns and the sources, which
// it sets, and no cleanup probes (they would wait for expiries beyond the run).
type externalRun struct {
	Clients      int
	TaskMs       int           // duration_ms of each task
	PollInterval time.Duration // the server's advertised pollInterval (serve --poll-interval)
	Duration     time.Duration // load phase, the ramp included
	Ramp         time.Duration
	Grace        time.Duration
	MaxConns     int          // requests in flight at once, and so connections at most
	Sources      []netip.Addr // local source addresses; nil = the system's choice
	Protocol     string       // the era pinned (client.Target.Protocol); "" = detected
}

// externalResult is what an externalRun measured.
type externalResult struct {
	loopbackResult
	serverHWM     int64  // the serve process's VmHWM, bytes; -1 if unreadable
	liveHeap      uint64 // this process's live heap after the last collection of the load phase
	peakLive      uint64 // the largest live heap seen, sampled once a second
	peakGoroutine int
	era           string
	loopReqS      float64 // looplimit's ceiling, req/s, measured just before the run
}

// buildTasksim builds the tasksim binary into a temporary directory, or skips saying why.
func buildTasksim(tb testing.TB) string {
	tb.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		tb.Skip("the go command is not on PATH: cannot build tasksim serve for an external target")
	}
	bin := filepath.Join(tb.TempDir(), "tasksim")
	cmd := exec.Command(gobin, "build", "-o", bin, "../cmd/tasksim")
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go build ../cmd/tasksim: %v\n%s", err, out)
	}
	return bin
}

// serveProc is a running `tasksim serve`.
type serveProc struct {
	url string
	cmd *exec.Cmd
}

// startServe starts bin serve on 127.0.0.1:0 with args and waits for its URL (its first
// stdout line); it is stopped (SIGTERM, then killed) at the end of the test.
func startServe(tb testing.TB, bin string, args ...string) *serveProc {
	tb.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &lockedWriter{w: &stderr}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("tasksim serve: %v", err)
	}
	p := &serveProc{cmd: cmd}
	tb.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		tb.Fatalf("tasksim serve printed no URL: %v; stderr: %s", err, stderr.String())
	}
	p.url = strings.TrimSpace(line)
	if !strings.HasPrefix(p.url, "http://127.0.0.1:") {
		tb.Fatalf("tasksim serve printed %q, want http://127.0.0.1:PORT/mcp", p.url)
	}
	go func() { _, _ = bufio.NewReader(out).WriteTo(discard{}) }() // never block its stdout
	return p
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }

type lockedWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// procStatusOf reads a "kB" field of /proc/PID/status in bytes; -1 if it cannot.
func procStatusOf(pid int, field string) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return -1
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return -1
			}
			return n << 10
		}
	}
	return -1
}

// liveHeap reads the live heap as of the last collection (runtime/metrics).
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// loopCeiling measures looplimit's requests a second over about d, for the ratio.
func loopCeiling(tb testing.TB, d time.Duration) float64 {
	ll := newLoopLimit(tb)
	if _, err := looplimit.Round(4*looplimit.Conc, ll.Do); err != nil { // warm the pool
		tb.Fatalf("looplimit: %v", err)
	}
	var n int
	var took time.Duration
	for took < d {
		const round = 8 * looplimit.Conc
		t, err := looplimit.Round(round, ll.Do)
		if err != nil {
			tb.Fatalf("looplimit: %v", err)
		}
		n, took = n+round, took+t
	}
	ll.Close()
	return float64(n) / took.Seconds()
}

// run builds and starts the server, probes it as `tasksim run --target` does, and runs the
// engine against it.
func (xr externalRun) run(tb testing.TB, bin string) *externalResult {
	tb.Helper()
	srv := startServe(tb, bin, "--poll-interval", xr.PollInterval.String())
	res := &externalResult{}
	res.loopReqS = loopCeiling(tb, 2*time.Second)

	before := gcpolicy.Current()
	res.gc = gcpolicy.Apply() // as the tasksim binary sets its collector
	tb.Cleanup(func() { res.gc.Stop(); restoreGC(before) })
	runtime.GC()
	debug.FreeOSMemory()
	res.rssBefore = procStatus("VmRSS")
	resetPeakRSS()

	shards := max(8, 2*runtime.GOMAXPROCS(0)) // as cmd/tasksim
	rec := tsmetrics.NewRecorder(shards, time.Now())
	hc := client.NewHTTPClientWith(client.ClientOptions{IdleConns: 2 * xr.Clients, SourceAddrs: xr.Sources})
	defer hc.CloseIdleConnections()
	target := &client.Target{
		URL:        srv.url,
		Client:     hc,
		ClientInfo: mcp.Implementation{Name: "tasksim-bench", Version: "1"},
		Protocol:   xr.Protocol,
	}
	if err := loadgen.CheckSourceAddrs(srv.url, xr.Sources, loadgen.InterfaceAddrs()); err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	m, err := client.ProbeWith(ctx, target, client.ProbeOptions{Tool: "work_task", Legacy: xr.Protocol == client.ProtocolLegacy})
	if err != nil {
		tb.Fatalf("probe: %v", err)
	}
	if err := m.Decide(client.FallbackRefuse); err != nil {
		tb.Fatalf("decide: %v", err)
	}
	res.era = m.Era
	cfg := loadgen.Config{
		Tool:     "work_task",
		Args:     map[string]any{"duration_ms": xr.TaskMs},
		Clients:  xr.Clients,
		Duration: xr.Duration,
		Grace:    xr.Grace,
		Ramp:     xr.Ramp,
		MaxConns: xr.MaxConns,
		Poll:     loadgen.PollPolicy{Kind: loadgen.PollServer, Interval: xr.PollInterval},
		Seed:     1,
		Shards:   shards,
	}
	eng, err := loadgen.New(cfg, target, m, rec)
	if err != nil {
		tb.Fatal(err)
	}
	// At the load phase's last second: the live heap clients hold (and, when asked, a heap
	// profile), before the drain releases them.
	profile := os.Getenv("TASKSIM_BENCH_HEAPPROFILE")
	loadEndDone := make(chan struct{})
	atLoadEnd := time.AfterFunc(xr.Duration-time.Second, func() {
		defer close(loadEndDone)
		if profile != "" {
			runtime.GC()
			if f, err := os.Create(profile); err == nil {
				_ = pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
			}
		}
		res.liveHeap = liveHeap()
	})
	res.loopbackResult.measure(tb, ctx, eng, rec, func() {
		res.peakLive = max(res.peakLive, liveHeap())
		res.peakGoroutine = max(res.peakGoroutine, runtime.NumGoroutine())
	})
	if !atLoadEnd.Stop() {
		<-loadEndDone // it ran: res.liveHeap is written
	}
	res.serverHWM = procStatusOf(srv.cmd.Process.Pid, "VmHWM")
	return res
}

// The targets of one shard against an external target.
const (
	shardMaxRSS    = 1 << 30 // the load generator's peak RSS
	shardMaxLagP99 = 50.0    // schedule_lag p99, ms
)

// BenchmarkHundredThousandClients: one load generator (this process) holds 100,000
// closed-model clients against a `tasksim serve` process advertising a 20 s pollInterval,
// over loopback: 100 s tasks, so each client polls five or six times a task (~5,000 polls a
// second once all run), the clients starting over a 60 s ramp in a 120 s load phase, then
// up to 130 s of drain (a task created at the end of the load phase takes 100 s, and its
// terminal status may be seen one poll later). At most 8,000 requests are in flight (and so connections held: the process
// has 20,000 file descriptors, and the server needs one per connection too), dialed from
// 127.0.0.1-127.0.0.4 round robin. One bounded run per b.N (-benchtime 1x). Targets: peak
// RSS of this process <= 1 GiB, schedule_lag p99 <= 50 ms, no failed request.
//
// Reported beside BenchmarkTenThousandClients' figures (here bytes/client is the load
// generator's alone): live_heap_B/client (the live heap at the end of the load phase, per
// client), server_rss_MiB (the serve process's VmHWM), peak_goroutines, and load_ratio: the
// run's req/s over looplimit's req/s measured just before it (the share of the loopback
// ceiling the load needed; the ceiling is measured with both cores to itself).
func BenchmarkHundredThousandClients(b *testing.B) {
	xr := externalRun{Clients: 100_000, TaskMs: 100_000, PollInterval: 20 * time.Second,
		Duration: 120 * time.Second, Ramp: 60 * time.Second, Grace: 130 * time.Second,
		MaxConns: 8000, Sources: loopbackSources(4)}
	if s := os.Getenv("TASKSIM_BENCH_CLIENTS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("TASKSIM_BENCH_CLIENTS=%q: want a count > 0", s)
		}
		xr.Clients = n
	}
	xr.Protocol = os.Getenv("TASKSIM_BENCH_PROTOCOL")
	bin := buildTasksim(b)
	for range b.N {
		res := xr.run(b, bin)
		reportExternal(b, xr, res)
	}
}

// loopbackSources is 127.0.0.1 up to 127.0.0.n.
func loopbackSources(n int) []netip.Addr {
	out := make([]netip.Addr, n)
	for i := range out {
		out[i] = netip.AddrFrom4([4]byte{127, 0, 0, byte(i + 1)})
	}
	return out
}

func reportExternal(b *testing.B, xr externalRun, res *externalResult) {
	lr := loopbackRun{Clients: xr.Clients}
	reportLoopback(b, lr, &res.loopbackResult)
	b.ReportMetric(float64(res.liveHeap)/float64(xr.Clients), "live_heap_B/client")
	b.ReportMetric(float64(res.peakGoroutine), "peak_goroutines")
	if res.serverHWM > 0 {
		b.ReportMetric(float64(res.serverHWM)/mib, "server_rss_MiB")
	}
	reqS := float64(res.requests()) / res.wall.Seconds()
	if res.loopReqS > 0 {
		b.ReportMetric(reqS/res.loopReqS, "load_ratio")
		b.ReportMetric(res.loopReqS, "looplimit_req/s")
	}
	b.Logf("era %s; sources %v; max conns %d; live heap %d MiB at the load phase's end, peak %d MiB; "+
		"peak RSS %d MiB (before the run %d MiB), %.0f B/client; server peak RSS %d MiB; %.0f req/s, looplimit %.0f req/s; peak fds %d; gc cycles %d; "+
		"cpu_util %.2f, others_cpu_util %.2f (the server among the others)",
		res.era, xr.Sources, xr.MaxConns, res.liveHeap/mib, res.peakLive/mib, res.hwm/mib, res.rssBefore/mib,
		float64(res.hwm-res.rssBefore)/float64(xr.Clients), res.serverHWM/mib, reqS, res.loopReqS, res.peakFDs, res.gcCycles,
		res.cpu.Seconds()/res.wall.Seconds()/float64(runtime.NumCPU()), res.others.Seconds()/res.wall.Seconds()/float64(runtime.NumCPU()))
	var problems []error
	if res.hwm > shardMaxRSS {
		problems = append(problems, fmt.Errorf("peak RSS %d MiB > %d MiB", res.hwm/mib, shardMaxRSS/mib))
	}
	if lag := res.snap.Summary(tsmetrics.ScheduleLag); lag.P99 > shardMaxLagP99 {
		problems = append(problems, fmt.Errorf("schedule_lag p99 %.1f ms > %.0f ms", lag.P99, shardMaxLagP99))
	}
	if n := res.errors(); n != 0 {
		problems = append(problems, fmt.Errorf("%d failed requests: %s", n, errorBreakdown(res.snap)))
	}
	if n := res.snap.Counters[tsmetrics.TasksUnknown]; n != 0 {
		problems = append(problems, fmt.Errorf("%d tasks unknown", n))
	}
	if err := errors.Join(problems...); err != nil {
		b.Errorf("%d clients against tasksim serve: targets missed:\n%v", xr.Clients, err)
	}
}
