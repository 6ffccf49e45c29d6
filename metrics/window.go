package metrics

import (
	"math"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tasksim/tasksim/internal/mcp"
)

// Window is what every shard recorded during one interval [Start, End), merged. Windows
// partition the run: every recorded value and count lands in exactly one window, and the
// windows sum to the run's Total.
type Window struct {
	Start, End time.Time
	// Hists holds a histogram per Hist that received values in the window and nil for
	// the others. Each is fresh, owned by the Window (keep it as long as needed), tagged
	// with its Hist's name and stamped with Start and End (ms since the epoch).
	Hists [NumHists]*hdrhistogram.Histogram
	// Clamped counts, per Hist, the values recorded out of range (Shard.Record).
	Clamped [NumHists]int64
	// Counters holds the window's increments.
	Counters [NumCounters]int64
	// Gauges holds the levels at End; GaugeMax the highest level held during the window.
	Gauges   [NumGauges]int64
	GaugeMax [NumGauges]int64
	// Requests counts requests per mcp.Op and outcome; RPCCodes the JSON-RPC error codes
	// of OutcomeRPCError replies, by RPCCodeSlot; HTTPStatuses the HTTP error statuses,
	// by HTTPStatusSlot.
	Requests     [mcp.NumOps][NumOutcomes]int64
	RPCCodes     [mcp.NumOps][NumRPCCodes]int64
	HTTPStatuses [mcp.NumOps][NumHTTPStatuses]int64
	// Live holds the window's histograms and request durations (by method and outcome) in
	// fixed buckets (buckets.go): for live exposition, not for the figures of record.
	Live Live
}

// Snapshot is the run so far: every flushed window merged.
type Snapshot struct {
	// Start is the run's start (NewRecorder), End the End of the last window.
	Start, End time.Time
	// Windows is the number of windows merged.
	Windows int
	// Hists holds a histogram per Hist; Total never leaves one nil (Summary accepts nil).
	Hists        [NumHists]*hdrhistogram.Histogram
	Clamped      [NumHists]int64
	Counters     [NumCounters]int64
	Gauges       [NumGauges]int64 // levels at End
	GaugeMax     [NumGauges]int64 // highest levels over the run
	Requests     [mcp.NumOps][NumOutcomes]int64
	RPCCodes     [mcp.NumOps][NumRPCCodes]int64
	HTTPStatuses [mcp.NumOps][NumHTTPStatuses]int64
}

// Flush closes the current window of every shard at now and returns the window, merged;
// it also adds the window to the run totals. Call it from one collector goroutine, once
// per interval, with the times of an injected clock; records made while it runs land in
// this window or the next, never both. Each shard is held only to swap its tally for the
// empty spare, so recording is never blocked by the merge.
func (r *Recorder) Flush(now time.Time) Window {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := Window{Start: r.last, End: now}
	r.last = now
	var sums countSums
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		t := s.cur
		s.cur, s.spare = s.spare, t
		s.mu.Unlock()
		w.drain(t, &sums) // t is now the spare: no recorder can reach it
	}
	for h := range NumHists {
		w.Hists[h] = sums.histogram(Hist(h))
		if sums[h] != nil {
			addInto(r.totalCounts[h].Counts, sums[h].Counts)
		}
	}
	for g := range NumGauges {
		// A SetGauge racing with this lands in one window or both, never in neither.
		top := r.gaugeMax[g].Swap(math.MinInt64)
		level := r.gauges[g].Load()
		raise(&r.gaugeMax[g], level)
		w.Gauges[g] = level
		w.GaugeMax[g] = max(top, level)
	}
	for _, hh := range w.Hists {
		if hh != nil {
			hh.SetStartTimeMs(w.Start.UnixMilli())
			hh.SetEndTimeMs(w.End.UnixMilli())
		}
	}
	r.total.add(&w)
	return w
}

// drain moves t's values into w (its histograms' counts into sums) and leaves t empty.
func (w *Window) drain(t *tally, sums *countSums) {
	for h, src := range t.hists {
		if src.TotalCount() == 0 {
			continue
		}
		sums.add(Hist(h), src)
		src.Reset()
	}
	move(w.Clamped[:], t.clamped[:])
	move(w.Counters[:], t.counters[:])
	w.Live.moveFrom(&t.live)
	for m := range mcp.NumOps {
		move(w.Requests[m][:], t.requests[m][:])
		move(w.RPCCodes[m][:], t.rpcCodes[m][:])
		move(w.HTTPStatuses[m][:], t.httpStatuses[m][:])
	}
}

// countSums adds histograms of one geometry bucket by bucket, for Flush. hdrhistogram's
// Merge walks every bucket up to the highest value recorded and works out each bucket's
// value range on the way (most of a flush's instructions, and more the longer the tail);
// the histograms merged here share their geometry, so adding their count arrays gives the
// same counts, total and encoding in a few instructions per bucket.
type countSums [NumHists]*hdrhistogram.Snapshot

// add adds src's counts into the sum for h.
func (s *countSums) add(h Hist, src *hdrhistogram.Histogram) {
	if s[h] == nil {
		s[h] = src.Export() // a copy: the sum starts from it
		return
	}
	addCounts(s[h].Counts, src)
}

// addCounts adds src's counts into dst, a count array of src's geometry.
func addCounts(dst []int64, src *hdrhistogram.Histogram) { addInto(dst, src.Export().Counts) }

// addInto adds the counts src into dst, of the same length.
func addInto(dst, src []int64) {
	for i, c := range src {
		dst[i] += c
	}
}

// histogram returns the sum for h as a fresh histogram tagged with h's name; nil when
// nothing was added.
func (s *countSums) histogram(h Hist) *hdrhistogram.Histogram {
	if s[h] == nil {
		return nil
	}
	hh := hdrhistogram.Import(s[h])
	hh.SetTag(h.Name())
	return hh
}

// move adds src into dst and zeroes src.
func move(dst, src []int64) {
	for i, v := range src {
		dst[i] += v
		src[i] = 0
	}
}

// sum adds src into dst.
func sum(dst, src []int64) {
	for i, v := range src {
		dst[i] += v
	}
}

// add merges window w into s, but for its histograms, which the Recorder keeps as count
// arrays (Recorder.totalCounts).
func (s *Snapshot) add(w *Window) {
	s.End = w.End
	s.Windows++
	sum(s.Clamped[:], w.Clamped[:])
	sum(s.Counters[:], w.Counters[:])
	for m := range mcp.NumOps {
		sum(s.Requests[m][:], w.Requests[m][:])
		sum(s.RPCCodes[m][:], w.RPCCodes[m][:])
		sum(s.HTTPStatuses[m][:], w.HTTPStatuses[m][:])
	}
	s.Gauges = w.Gauges
	for g := range NumGauges {
		s.GaugeMax[g] = max(s.GaugeMax[g], w.GaugeMax[g])
	}
}

// TotalCounts is Total without the histograms (its Hists are all nil), for what reads the
// run's counts as it goes, every second (the progress of runner.Observer): Total makes a
// histogram of every Hist's counts, 16 walks of 11,000 to 23,000 buckets.
func (r *Recorder) TotalCounts() *Snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := *r.total
	return &c
}

// Total returns the run so far: every window flushed, merged. It is a deep copy, safe to
// keep while the run goes on; values recorded since the last Flush are not in it, so call
// Flush once more at the end of the run first.
func (r *Recorder) Total() *Snapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := *r.total
	for h := range NumHists {
		hh := hdrhistogram.Import(r.totalCounts[h])
		hh.SetTag(Hist(h).Name())
		c.Hists[h] = hh
	}
	return &c
}
