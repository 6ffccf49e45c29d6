package metrics_test

import (
	"math/rand/v2"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

// Windows partition the data exactly: per histogram and counter, the windows sum to the
// total, and merged they equal it bucket for bucket.
func TestWindowsPartition(t *testing.T) {
	const shards, windowCount = 3, 10
	rng := rand.New(rand.NewPCG(1, 2))
	r := metrics.NewRecorder(shards, t0)
	var recorded [metrics.NumHists]int64
	var added [metrics.NumCounters]int64
	var windows []metrics.Window
	for n := 1; n <= windowCount; n++ {
		for range rng.IntN(500) { // some windows stay empty
			h := metrics.Hist(rng.IntN(int(metrics.NumHists)))
			c := metrics.Counter(rng.IntN(int(metrics.NumCounters)))
			s := r.Shard(rng.IntN(shards))
			// up to 50 ms: a merge walks every bucket up to the highest value, slow under
			// -race (TestMergeAcrossShards covers the whole range)
			s.Record(h, rng.Int64N(50_000))
			s.Add(c, 3)
			recorded[h]++
			added[c] += 3
		}
		w := r.Flush(sec(n))
		if !w.Start.Equal(sec(n-1)) || !w.End.Equal(sec(n)) {
			t.Fatalf("window %d is [%v, %v)", n, w.Start, w.End)
		}
		windows = append(windows, w)
	}
	tot := r.Total()
	if tot.Windows != windowCount || !tot.Start.Equal(t0) || !tot.End.Equal(sec(windowCount)) {
		t.Errorf("total: %d windows [%v, %v]", tot.Windows, tot.Start, tot.End)
	}
	for h := range metrics.NumHists {
		merged := metrics.NewHistogram(h)
		var sum int64
		for _, w := range windows {
			if hh := w.Hists[h]; hh != nil {
				if hh.TotalCount() == 0 {
					t.Errorf("%s: a window holds an empty histogram, want nil", h)
				}
				sum += hh.TotalCount()
				merged.Merge(hh)
			}
		}
		if sum != recorded[h] || tot.Hists[h].TotalCount() != recorded[h] {
			t.Errorf("%s: windows hold %d values, total %d, recorded %d", h, sum, tot.Hists[h].TotalCount(), recorded[h])
		}
		if !merged.Equals(tot.Hists[h]) {
			t.Errorf("%s: merged windows differ from the total", h)
		}
	}
	for c := range metrics.NumCounters {
		var sum int64
		for _, w := range windows {
			sum += w.Counters[c]
		}
		if sum != added[c] || tot.Counters[c] != added[c] {
			t.Errorf("%s: windows sum to %d, total %d, added %d", c, sum, tot.Counters[c], added[c])
		}
	}
}

// Spreading values over shards and merging gives exactly the histogram of all the values.
func TestMergeAcrossShards(t *testing.T) {
	const shards = 8
	rng := rand.New(rand.NewPCG(3, 4))
	r := metrics.NewRecorder(shards, t0)
	want := metrics.NewHistogram(metrics.LatencyToolsCall)
	for i := range 100_000 {
		// log-uniform over 1 us .. 1 h, the shape of latencies
		v := int64(1 << rng.IntN(32))
		v += rng.Int64N(v)
		v = min(v, metrics.HourUS)
		r.Shard(i%shards).Record(metrics.LatencyToolsCall, v)
		if err := want.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	w := r.Flush(sec(1))
	if !w.Hists[metrics.LatencyToolsCall].Equals(want) {
		t.Error("window merged from 8 shards differs from one histogram fed the same values")
	}
	if !r.Total().Hists[metrics.LatencyToolsCall].Equals(want) {
		t.Error("total differs from one histogram fed the same values")
	}
}

// A window's histograms carry their tag and interval; Total is a copy the run cannot change.
func TestWindowOwnership(t *testing.T) {
	r := metrics.NewRecorder(1, t0)
	s := r.Shard(0)
	s.RecordDuration(metrics.ResultLag, 5*time.Millisecond)
	w1 := r.Flush(sec(1))
	snap := r.Total()
	s.RecordDuration(metrics.ResultLag, 7*time.Millisecond)
	w2 := r.Flush(sec(2))

	h1 := w1.Hists[metrics.ResultLag]
	if h1.Tag() != "result_lag" || h1.StartTimeMs() != t0.UnixMilli() || h1.EndTimeMs() != sec(1).UnixMilli() {
		t.Errorf("window histogram tag %q, interval [%d, %d]", h1.Tag(), h1.StartTimeMs(), h1.EndTimeMs())
	}
	if h1.TotalCount() != 1 || w2.Hists[metrics.ResultLag].TotalCount() != 1 || h1 == w2.Hists[metrics.ResultLag] {
		t.Error("a later Flush changed or reused an earlier window's histogram")
	}
	if snap.Hists[metrics.ResultLag].TotalCount() != 1 || snap.Windows != 1 {
		t.Error("a later Flush changed an earlier Total")
	}
	if got := r.Total().Hists[metrics.ResultLag].TotalCount(); got != 2 {
		t.Errorf("total holds %d values, want 2", got)
	}
	if w3 := r.Flush(sec(3)); w3.Hists != [metrics.NumHists]*hdrhistogram.Histogram{} {
		t.Error("an empty window holds histograms")
	}
}

// A window's histograms and the run total, summed count array by count array, are the
// histograms that recording every value into one would give: the same counts, tag and
// encoding (the bytes of histograms.hlog), over the whole range of each Hist.
func TestFlushSumsAsRecording(t *testing.T) {
	const shards = 4
	rng := rand.New(rand.NewPCG(7, 8))
	r := metrics.NewRecorder(shards, t0)
	var direct, total [metrics.NumHists]*hdrhistogram.Histogram
	for h := range metrics.NumHists {
		total[h] = metrics.NewHistogram(h)
	}
	for n := 1; n <= 3; n++ {
		for h := range metrics.NumHists {
			direct[h] = metrics.NewHistogram(h)
		}
		for range 2000 {
			h := metrics.Hist(rng.IntN(int(metrics.NumHists - 1))) // the last stays empty
			v := rng.Int64N(h.Highest() + 1)
			r.Shard(rng.IntN(shards)).Record(h, v)
			direct[h].RecordValue(v)
			total[h].RecordValue(v)
		}
		w := r.Flush(sec(n))
		for h := range metrics.NumHists {
			if direct[h].TotalCount() == 0 {
				if w.Hists[h] != nil {
					t.Fatalf("window %d: %s holds a histogram with nothing recorded", n, h)
				}
				continue
			}
			direct[h].SetStartTimeMs(sec(n - 1).UnixMilli())
			direct[h].SetEndTimeMs(sec(n).UnixMilli())
			sameHistogram(t, h.Name(), w.Hists[h], direct[h])
		}
	}
	tot := r.Total()
	for h := range metrics.NumHists {
		sameHistogram(t, "total "+h.Name(), tot.Hists[h], total[h])
	}
}

// sameHistogram fails unless got and want hold the same counts, tag, times and encoding.
func sameHistogram(t *testing.T, what string, got, want *hdrhistogram.Histogram) {
	t.Helper()
	if !got.Equals(want) || got.Tag() != want.Tag() || got.StartTimeMs() != want.StartTimeMs() || got.EndTimeMs() != want.EndTimeMs() {
		t.Fatalf("%s: got %d values tagged %q (%d-%d), want %d tagged %q (%d-%d)", what,
			got.TotalCount(), got.Tag(), got.StartTimeMs(), got.EndTimeMs(), want.TotalCount(), want.Tag(), want.StartTimeMs(), want.EndTimeMs())
	}
	gb, err1 := got.EncodeV2()
	wb, err2 := want.EncodeV2()
	if err1 != nil || err2 != nil || string(gb) != string(wb) {
		t.Fatalf("%s: encodings differ (%v, %v)", what, err1, err2)
	}
}

// TotalCounts is Total but for the histograms.
func TestTotalCounts(t *testing.T) {
	r := metrics.NewRecorder(2, t0)
	r.Shard(1).Reply(mcp.OpTasksGet, metrics.OutcomeOK, 0, 200, time.Millisecond)
	r.Shard(0).Add(metrics.Polls, 3)
	r.Flush(sec(1))
	got, want := r.TotalCounts(), r.Total()
	for h := range metrics.NumHists {
		if got.Hists[h] != nil {
			t.Fatalf("TotalCounts holds a histogram of %s", metrics.Hist(h))
		}
	}
	want.Hists = got.Hists
	if *got != *want {
		t.Fatalf("TotalCounts %+v, Total %+v", got, want)
	}
}
