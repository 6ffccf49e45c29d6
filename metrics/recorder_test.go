package metrics_test

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

var t0 = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// sec returns t0 + n seconds: the collector's injected clock.
func sec(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }

func TestRecordingAllocatesNothing(t *testing.T) {
	r := metrics.NewRecorder(2, t0)
	s := r.Shard(1)
	v := int64(0)
	cases := map[string]func(){
		"Record": func() { v += 997; s.Record(metrics.LatencyTasksGet, v%metrics.HourUS) },
		"RecordClamped": func() {
			s.Record(metrics.PollsPerTask, math.MaxInt64)
			s.Record(metrics.TaskE2E, -1)
		},
		"RecordDuration": func() { s.RecordDuration(metrics.TaskE2E, 1234567*time.Microsecond) },
		"RecordPollAmplification": func() {
			s.RecordPollAmplification(7, 3)
		},
		"Add":     func() { s.Add(metrics.Polls, 1) },
		"Request": func() { s.Request(mcp.OpTasksGet, metrics.OutcomeRPCError, -32602, 200) },
		"Reply": func() {
			s.Reply(mcp.OpToolsCall, metrics.OutcomeHTTPError, 0, 503, 3*time.Millisecond)
		},
		"SetGauge": func() { r.SetGauge(metrics.RetainedTasks, 42) },
		"AddGauge": func() { r.AddGauge(metrics.InFlight, 1) },
	}
	for name, f := range cases {
		if n := testing.AllocsPerRun(1000, f); n != 0 {
			t.Errorf("%s: %v allocs per call, want 0", name, n)
		}
	}
}

func TestClamping(t *testing.T) {
	r := metrics.NewRecorder(1, t0)
	s := r.Shard(0)
	s.Record(metrics.TaskE2E, -5)                                   // clamped to 0
	s.Record(metrics.TaskE2E, 0)                                    // in range
	s.Record(metrics.TaskE2E, metrics.HourUS)                       // in range: the highest
	s.Record(metrics.TaskE2E, metrics.HourUS+1)                     // clamped
	s.RecordDuration(metrics.TaskE2E, math.MaxInt64)                // clamped
	s.RecordDuration(metrics.TaskE2E, -time.Second)                 // clamped
	s.Record(metrics.PollsPerTask, metrics.CountMax*10)             // clamped
	s.RecordPollAmplification(math.MaxInt64, 1)                     // clamped
	s.RecordPollAmplification(2000, 1)                              // 2000.0 > 1000.0: clamped
	s.RecordPollAmplification(3, 2)                                 // 1.5: in range
	s.Reply(mcp.OpTasksGet, metrics.OutcomeOK, 0, 200, 2*time.Hour) // clamped

	w := r.Flush(sec(1))
	want := map[metrics.Hist]struct{ count, clamped int64 }{
		metrics.TaskE2E:           {6, 4},
		metrics.PollsPerTask:      {1, 1},
		metrics.PollAmplification: {3, 2},
		metrics.LatencyTasksGet:   {1, 1},
	}
	for h := range metrics.NumHists {
		var n int64
		if w.Hists[h] != nil {
			n = w.Hists[h].TotalCount()
		}
		if n != want[h].count || w.Clamped[h] != want[h].clamped {
			t.Errorf("%s: count %d clamped %d, want %d and %d", h, n, w.Clamped[h], want[h].count, want[h].clamped)
		}
	}
	e2e := w.Hists[metrics.TaskE2E]
	if lo, hi := e2e.Min(), e2e.Max(); lo != 0 || !e2e.ValuesAreEquivalent(hi, metrics.HourUS) {
		t.Errorf("task_e2e range [%d, %d], want [0, ~%d]", lo, hi, metrics.HourUS)
	}
	if got := w.Hists[metrics.PollAmplification].Max(); !w.Hists[metrics.PollAmplification].ValuesAreEquivalent(got, metrics.CountMax) {
		t.Errorf("poll_amplification max %d, want ~%d", got, metrics.CountMax)
	}
	if tot := r.Total(); tot.Clamped != w.Clamped {
		t.Errorf("total clamped %v, window %v", tot.Clamped, w.Clamped)
	}
}

func TestPollAmplification(t *testing.T) {
	r := metrics.NewRecorder(2, t0)
	r.Shard(0).RecordPollAmplification(10, 5) // 2.0
	r.Shard(1).RecordPollAmplification(1, 0)  // advised counts as 1: 1.0
	r.Shard(1).RecordPollAmplification(2, 3)  // 0.667
	r.Flush(sec(1))
	tot := r.Total()
	if got := tot.Counters[metrics.AmplificationPolls]; got != 13 {
		t.Errorf("amplification_polls = %d, want 13", got)
	}
	if got := tot.Counters[metrics.AmplificationAdvised]; got != 9 {
		t.Errorf("amplification_advised = %d, want 9", got)
	}
	if got := tot.FleetPollAmplification(); got != 13.0/9 {
		t.Errorf("FleetPollAmplification() = %v, want %v", got, 13.0/9)
	}
	st := tot.Summary(metrics.PollAmplification)
	if st.Unit != "ratio" || st.Count != 3 || !near(st.Min, 0.667) || !near(st.P50, 1) || !near(st.Max, 2) {
		t.Errorf("poll_amplification summary %+v", st)
	}
}

func TestRequestTables(t *testing.T) {
	r := metrics.NewRecorder(2, t0)
	a, b := r.Shard(0), r.Shard(1)
	a.Request(mcp.OpTasksGet, metrics.OutcomeOK, 0, 200)
	a.Request(mcp.OpTasksGet, metrics.OutcomeRPCError, -32602, 200)
	b.Request(mcp.OpTasksGet, metrics.OutcomeRPCError, -32099, 0)   // other code
	b.Request(mcp.OpTasksGet, metrics.OutcomeHTTPError, 0, 429)     // status counted
	b.Request(mcp.OpTasksGet, metrics.OutcomeRPCError, -32600, 400) // both counted
	b.Request(mcp.OpTasksList, metrics.OutcomeHTTPError, 0, 302)    // unexpected: other
	b.Request(mcp.OpDelete, metrics.OutcomeTransport, 0, 0)
	b.Reply(mcp.OpToolsList, metrics.OutcomeProtocol, 0, 200, time.Millisecond) // no latency hist
	b.Reply(mcp.OpTasksCancel, metrics.OutcomeOK, 0, 200, 1500*time.Microsecond)
	a.Add(metrics.TasksCreated, 2)

	w := r.Flush(sec(1))
	get := mcp.OpTasksGet
	if got := w.Requests[get]; got != [metrics.NumOutcomes]int64{1, 3, 1, 0, 0} {
		t.Errorf("tasks/get outcomes %v", got)
	}
	if w.RequestCount(get) != 5 || w.ErrorCount(get) != 4 {
		t.Errorf("tasks/get count %d errors %d", w.RequestCount(get), w.ErrorCount(get))
	}
	var codes [metrics.NumRPCCodes]int64
	codes[metrics.RPCCodeSlot(-32602)] = 1
	codes[metrics.RPCCodeSlot(-32600)] = 1
	codes[metrics.NumRPCCodes-1] = 1
	if w.RPCCodes[get] != codes {
		t.Errorf("tasks/get codes %v, want %v", w.RPCCodes[get], codes)
	}
	var statuses [metrics.NumHTTPStatuses]int64
	statuses[metrics.HTTPStatusSlot(429)] = 1
	statuses[metrics.HTTPStatusSlot(400)] = 1
	if w.HTTPStatuses[get] != statuses {
		t.Errorf("tasks/get statuses %v, want %v", w.HTTPStatuses[get], statuses)
	}
	if got := w.HTTPStatuses[mcp.OpTasksList][metrics.NumHTTPStatuses-1]; got != 1 {
		t.Errorf("tasks/list other statuses = %d, want 1", got)
	}
	if w.Requests[mcp.OpDelete][metrics.OutcomeTransport] != 1 || w.Requests[mcp.OpToolsList][metrics.OutcomeProtocol] != 1 {
		t.Errorf("DELETE %v, tools/list %v", w.Requests[mcp.OpDelete], w.Requests[mcp.OpToolsList])
	}
	if st := w.Summary(metrics.LatencyTasksCancel); st.Count != 1 || !near(st.Max, 1.5) {
		t.Errorf("latency_tasks_cancel %+v", st)
	}
	tot := r.Total()
	if tot.RequestCount(get) != 5 || tot.ErrorCount(get) != 4 || tot.RPCCodes != w.RPCCodes || tot.HTTPStatuses != w.HTTPStatuses {
		t.Errorf("total requests differ from the only window")
	}
	// (5 tasks/get + 1 tasks/list) / 2 tasks created
	if got := tot.StatusReadsPerTask(); got != 3 {
		t.Errorf("StatusReadsPerTask() = %v, want 3", got)
	}
}

func TestGauges(t *testing.T) {
	r := metrics.NewRecorder(1, t0)
	r.SetGauge(metrics.RetainedTasks, 10)
	r.SetGauge(metrics.RetainedTasks, 30)
	r.SetGauge(metrics.RetainedTasks, 20)
	r.AddGauge(metrics.InFlight, 3)
	r.AddGauge(metrics.InFlight, -1)
	w1 := r.Flush(sec(1))
	w2 := r.Flush(sec(2)) // nothing set: the levels carry over
	r.SetGauge(metrics.RetainedTasks, 5)
	w3 := r.Flush(sec(3))

	check := func(name string, w metrics.Window, g metrics.Gauge, level, top int64) {
		t.Helper()
		if w.Gauges[g] != level || w.GaugeMax[g] != top {
			t.Errorf("%s %s: level %d max %d, want %d and %d", name, g, w.Gauges[g], w.GaugeMax[g], level, top)
		}
	}
	check("w1", w1, metrics.RetainedTasks, 20, 30)
	check("w1", w1, metrics.InFlight, 2, 3)
	check("w2", w2, metrics.RetainedTasks, 20, 20)
	check("w2", w2, metrics.InFlight, 2, 2)
	check("w3", w3, metrics.RetainedTasks, 5, 20)
	check("w1", w1, metrics.Sessions, 0, 0)
	tot := r.Total()
	if tot.Gauges[metrics.RetainedTasks] != 5 || tot.GaugeMax[metrics.RetainedTasks] != 30 || tot.GaugeMax[metrics.InFlight] != 3 {
		t.Errorf("total gauges %v max %v", tot.Gauges, tot.GaugeMax)
	}
}

// Many goroutines record into few shards while the collector flushes; run with -race. The
// windows must add up to exactly what was recorded, whatever the interleaving.
func TestConcurrentRecording(t *testing.T) {
	const (
		shards     = 3
		goroutines = 12
		perG       = 2000
	)
	r := metrics.NewRecorder(shards, t0)
	var half, wg sync.WaitGroup // half: every goroutine has recorded its first half
	secondHalf := make(chan struct{})
	for g := range goroutines {
		half.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := r.Shard(g % shards)
			for i := range perG {
				if i == perG/2 {
					half.Done()
					<-secondHalf
				}
				s.Record(metrics.LatencyTasksGet, int64(i+1))
				s.RecordDuration(metrics.TaskE2E, time.Duration(i)*time.Millisecond)
				s.Add(metrics.Polls, 1)
				s.Request(mcp.OpTasksGet, metrics.OutcomeOK, 0, 200)
				r.AddGauge(metrics.InFlight, 1)
				r.AddGauge(metrics.InFlight, -1)
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	// The first window closes on a known half; later ones race with the second half.
	half.Wait()
	first := r.Flush(sec(1))
	if got := first.Counters[metrics.Polls]; got != goroutines*perG/2 {
		t.Fatalf("first window: %d polls, want %d", got, goroutines*perG/2)
	}
	close(secondHalf)
	windows := []metrics.Window{first}
	for n := 2; ; n++ {
		select {
		case <-done:
			windows = append(windows, r.Flush(sec(n)))
			var hists, polls, reqs int64
			for _, w := range windows {
				if h := w.Hists[metrics.LatencyTasksGet]; h != nil {
					hists += h.TotalCount()
				}
				polls += w.Counters[metrics.Polls]
				reqs += w.RequestCount(mcp.OpTasksGet)
			}
			const want = goroutines * perG
			if hists != want || polls != want || reqs != want {
				t.Fatalf("windows sum to %d values, %d polls, %d requests; want %d each", hists, polls, reqs, want)
			}
			tot := r.Total()
			if tot.Hists[metrics.TaskE2E].TotalCount() != want || tot.Counters[metrics.Polls] != want || tot.Windows != len(windows) {
				t.Fatalf("total: %d values, %d polls, %d windows", tot.Hists[metrics.TaskE2E].TotalCount(), tot.Counters[metrics.Polls], tot.Windows)
			}
			if tot.Gauges[metrics.InFlight] != 0 || tot.GaugeMax[metrics.InFlight] < 1 || tot.GaugeMax[metrics.InFlight] > goroutines {
				t.Fatalf("in_flight level %d max %d", tot.Gauges[metrics.InFlight], tot.GaugeMax[metrics.InFlight])
			}
			return
		default:
			windows = append(windows, r.Flush(sec(n)))
		}
	}
}

// near reports whether a and b agree to 1e-9 (float scaling of exact HDR values).
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
