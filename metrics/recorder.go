package metrics

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tasksim/tasksim/internal/mcp"
)

// Recorder is the sharded recorder of one run. Workers record into their own Shard; one
// collector goroutine, owned by the caller, calls Flush once per window (a second) and
// Total at the end. Gauges are set on the Recorder itself.
//
// Memory is allocated up front by NewRecorder and never grows: each shard holds two
// tallies (the one being recorded and the one being flushed), ShardBytes in all, about
// 5 MiB; the run totals hold one more tally. Each Flush allocates fresh histograms for
// the Window it returns, only for the histograms that received values.
type Recorder struct {
	shards   []Shard
	gauges   [NumGauges]atomic.Int64 // level now
	gaugeMax [NumGauges]atomic.Int64 // highest level since the last Flush

	mu    sync.Mutex // serializes Flush and Total; recording never takes it
	last  time.Time  // end of the last window (the run's start before the first)
	total *Snapshot  // merged windows, but for the histograms (nil): totalCounts holds them
	// totalCounts holds the counts of each histogram over the merged windows, summed as
	// countSums sums a window's; Total makes histograms of them.
	totalCounts [NumHists]*hdrhistogram.Snapshot
}

// Shard is one worker's share of the recorder. Recording into a shard never contends with
// another shard and never allocates.
//
// A shard is safe for concurrent use: many goroutines (virtual clients) may record into the
// same shard. They serialize on the shard's mutex, held for one histogram increment; the
// only other party that takes it is Flush, for the swap of two pointers. Give each worker
// its own shard and the mutex is uncontended.
type Shard struct {
	mu    sync.Mutex
	cur   *tally // receives records; guarded by mu
	spare *tally // the flushed tally, empty; touched only by Flush (under Recorder.mu)
	// Shards sit side by side in Recorder.shards: 128 bytes apart, the hot fields above of
	// two shards never share a cache line.
	_ [128 - 24]byte
}

// tally is everything a shard records during one window.
type tally struct {
	hists        [NumHists]*hdrhistogram.Histogram
	clamped      [NumHists]int64
	counters     [NumCounters]int64
	requests     [mcp.NumOps][NumOutcomes]int64
	rpcCodes     [mcp.NumOps][NumRPCCodes]int64
	httpStatuses [mcp.NumOps][NumHTTPStatuses]int64
	live         Live // the histograms and the request durations in fixed buckets (buckets.go)
}

func newTally() *tally {
	t := new(tally)
	for h := range NumHists {
		t.hists[h] = NewHistogram(h)
	}
	return t
}

// ShardBytes is the memory one shard holds: two tallies, each NumHists histograms (14
// durations of 184 KiB, 2 counts of 88 KiB) and the counter tables, about 5.4 MiB
// (5,697,088 bytes, histogram headers aside; the live buckets, buckets.go, 25 KiB of it). The run totals hold one tally more per
// Recorder.
func ShardBytes() int {
	n := int(unsafe.Sizeof(tally{}))
	for h := range NumHists {
		n += histogramBytes(h)
	}
	return 2 * n
}

// NewRecorder returns a recorder with shards shards (at least 1) whose first window starts
// at start. Size shards by workers (GOMAXPROCS, or the load generator's worker count),
// never by virtual client: each costs ShardBytes.
func NewRecorder(shards int, start time.Time) *Recorder {
	shards = max(shards, 1)
	r := &Recorder{shards: make([]Shard, shards), last: start, total: &Snapshot{Start: start, End: start}}
	for h := range NumHists {
		r.totalCounts[h] = NewHistogram(h).Export()
	}
	for i := range r.shards {
		r.shards[i].cur = newTally()
		r.shards[i].spare = newTally()
	}
	return r
}

// Shards returns the number of shards.
func (r *Recorder) Shards() int { return len(r.shards) }

// Shard returns shard i, i in [0, Shards()).
func (r *Recorder) Shard(i int) *Shard { return &r.shards[i] }

// Record records v into h. A value below 0 is recorded as 0 and one above h.Highest() as
// h.Highest(); either is counted in the window's Clamped[h]. It never allocates.
func (s *Shard) Record(h Hist, v int64) {
	if h >= NumHists {
		panic("metrics: Record with an unknown Hist")
	}
	s.mu.Lock()
	s.cur.record(h, v)
	s.mu.Unlock()
}

// RecordDuration records d, rounded to the microsecond, into the duration histogram h.
func (s *Shard) RecordDuration(h Hist, d time.Duration) {
	s.Record(h, micros(d))
}

// RecordPollAmplification records one task's poll amplification, polls sent / advised polls, into
// PollAmplification (in milli-units, rounded), and adds polls and advised to AmplificationPolls and
// AmplificationAdvised, whose ratio is the fleet figure (Snapshot.FleetPollAmplification). advised
// below 1 counts as 1, as docs/METRICS.md#poll_amplification defines advised = max(1, ceil(time to
// terminal / advertised pollInterval)).
func (s *Shard) RecordPollAmplification(polls, advised int64) {
	advised = max(advised, 1)
	polls = max(polls, 0)
	v := int64(math.MaxInt64) // clamped to CountMax by record
	if polls <= (math.MaxInt64-advised/2)/1000 {
		v = (polls*1000 + advised/2) / advised
	}
	s.mu.Lock()
	t := s.cur
	t.record(PollAmplification, v)
	t.counters[AmplificationPolls] += polls
	t.counters[AmplificationAdvised] += advised
	s.mu.Unlock()
}

// Add adds n (>= 0) to counter c.
func (s *Shard) Add(c Counter, n int64) {
	if c >= NumCounters {
		panic("metrics: Add to an unknown Counter")
	}
	s.mu.Lock()
	s.cur.counters[c] += n
	s.mu.Unlock()
}

// Request counts one request of op that ended with outcome o. A non-zero rpcCode
// (an error object arrived: OutcomeRPCError, or a refusal counted OutcomeBackpressure or
// OutcomeExpected) is counted in the RPCCodes table; an httpStatus of 400 or more (or any
// status with OutcomeHTTPError) in the HTTPStatuses table. Pass 0 for what is unknown.
func (s *Shard) Request(op mcp.Op, o Outcome, rpcCode int, httpStatus int) {
	if op >= mcp.NumOps || o >= NumOutcomes {
		panic("metrics: Request with an unknown Op or Outcome")
	}
	s.mu.Lock()
	s.cur.request(op, o, rpcCode, httpStatus)
	s.mu.Unlock()
}

// Reclassify moves one request of op counted with outcome from to outcome to: a reply
// counted OutcomeOK when it arrived whose result then proved malformed is OutcomeProtocol.
// Its latency stays recorded: a reply did arrive.
func (s *Shard) Reclassify(op mcp.Op, from, to Outcome) {
	if op >= mcp.NumOps || from >= NumOutcomes || to >= NumOutcomes {
		panic("metrics: Reclassify with an unknown Op or Outcome")
	}
	s.mu.Lock()
	s.cur.requests[op][from]--
	s.cur.requests[op][to]++
	s.mu.Unlock()
}

// Reply is Request and, when op has a latency histogram (LatencyOf), RecordDuration of its
// send -> reply time d, under one lock.
func (s *Shard) Reply(op mcp.Op, o Outcome, rpcCode int, httpStatus int, d time.Duration) {
	if op >= mcp.NumOps || o >= NumOutcomes {
		panic("metrics: Reply with an unknown Op or Outcome")
	}
	h, timed := LatencyOf(op)
	s.mu.Lock()
	t := s.cur
	t.request(op, o, rpcCode, httpStatus)
	us := micros(d)
	if timed {
		t.record(h, us)
	}
	t.live.Durations[op][o].add(durationBounds, us)
	s.mu.Unlock()
}

// StatusReply is Request of a request answered by an HTTP status without a JSON-RPC reply
// (a 503, a 429, a 404 for a gone session), and its send -> reply time d in the live
// durations only (Live.Durations, the endpoint's mcp_client_operation_duration_seconds with
// its outcome as error_type): the latency histograms hold JSON-RPC replies alone, so that a
// server failing fast does not look faster.
func (s *Shard) StatusReply(op mcp.Op, o Outcome, rpcCode int, httpStatus int, d time.Duration) {
	if op >= mcp.NumOps || o >= NumOutcomes {
		panic("metrics: StatusReply with an unknown Op or Outcome")
	}
	s.mu.Lock()
	t := s.cur
	t.request(op, o, rpcCode, httpStatus)
	t.live.Durations[op][o].add(durationBounds, micros(d))
	s.mu.Unlock()
}

// record records v into h, clamped to [0, h.Highest()]; the caller holds the shard's mutex.
func (t *tally) record(h Hist, v int64) {
	if hi := h.Highest(); v < 0 || v > hi {
		v = min(max(v, 0), hi)
		t.clamped[h]++
	}
	_ = t.hists[h].RecordValue(v) // in range: cannot fail
	t.live.Hists[h].add(recordedBounds[h], v)
}

// request counts one request into t; the caller holds the shard's mutex.
func (t *tally) request(op mcp.Op, o Outcome, rpcCode, httpStatus int) {
	t.requests[op][o]++
	if o == OutcomeRPCError || rpcCode != 0 {
		t.rpcCodes[op][RPCCodeSlot(rpcCode)]++
	}
	if httpStatus >= 400 || o == OutcomeHTTPError {
		t.httpStatuses[op][HTTPStatusSlot(httpStatus)]++
	}
}

// micros returns d in microseconds, rounded (saturating at the extremes of Duration).
func micros(d time.Duration) int64 { return int64(d.Round(time.Microsecond) / time.Microsecond) }

// SetGauge sets gauge g to v. It is atomic and may be called from any goroutine.
func (r *Recorder) SetGauge(g Gauge, v int64) {
	r.gauges[g].Store(v)
	raise(&r.gaugeMax[g], v)
}

// AddGauge adds delta to gauge g and returns the new level, for levels kept as up/down
// counts (InFlight). It is atomic; all shards share the gauge's cache line.
func (r *Recorder) AddGauge(g Gauge, delta int64) int64 {
	v := r.gauges[g].Add(delta)
	raise(&r.gaugeMax[g], v)
	return v
}

// raise sets m to v if v is higher.
func raise(m *atomic.Int64, v int64) {
	for {
		old := m.Load()
		if v <= old || m.CompareAndSwap(old, v) {
			return
		}
	}
}
