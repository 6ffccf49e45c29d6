package metrics_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tasksim/tasksim/metrics"
)

// TestMergeOfShardsIsExact is the property a merge of sharded runs rests on: N recorders,
// each having seen a random part of one stream of values (in several windows), merged,
// equal exactly one recorder that saw every value: the counts, every percentile, min, max
// and mean of every histogram, over the run and window by window. Exact, not within a
// tolerance: every recorder's histograms of one Hist have the same geometry.
func TestMergeOfShardsIsExact(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const windows = 4
	hists := []metrics.Hist{metrics.LatencyTasksGet, metrics.TaskE2E, metrics.PollsPerTask,
		metrics.PollAmplification, metrics.DetectionLag, metrics.ScheduleLag}
	for _, n := range []int{1, 2, 3, 7} {
		rng := rand.New(rand.NewPCG(uint64(n), 42))
		one := metrics.NewRecorder(2, start)
		parts := make([]*metrics.Recorder, n)
		for i := range parts {
			parts[i] = metrics.NewRecorder(1+i%3, start)
		}
		oneWin := make([]metrics.Window, 0, windows)
		partWin := make([][]metrics.Window, windows)
		for w := range windows {
			for range 5000 {
				h := hists[rng.IntN(len(hists))]
				var v int64
				switch rng.IntN(3) { // small, middling and huge values, some out of range
				case 0:
					v = rng.Int64N(1000)
				case 1:
					v = rng.Int64N(10_000_000)
				default:
					v = rng.Int64N(2 * metrics.HourUS)
				}
				p := rng.IntN(n)
				one.Shard(rng.IntN(2)).Record(h, v)
				parts[p].Shard(rng.IntN(parts[p].Shards())).Record(h, v)
			}
			at := start.Add(time.Duration(w+1) * time.Second)
			oneWin = append(oneWin, one.Flush(at))
			for _, r := range parts {
				partWin[w] = append(partWin[w], r.Flush(at))
			}
		}
		for _, h := range hists {
			want := one.Total().Hists[h]
			got := metrics.NewHistogram(h)
			for _, r := range parts {
				if dropped := got.Merge(r.Total().Hists[h]); dropped != 0 {
					t.Fatalf("N=%d %s: merge dropped %d values", n, h.Name(), dropped)
				}
			}
			sameHist(t, n, h, "run", got, want)
			for w := range windows {
				got := metrics.NewHistogram(h)
				for _, pw := range partWin[w] {
					if pw.Hists[h] != nil {
						got.Merge(pw.Hists[h])
					}
				}
				want := oneWin[w].Hists[h]
				if want == nil {
					want = metrics.NewHistogram(h)
				}
				sameHist(t, n, h, fmt.Sprint("window ", w), got, want)
			}
		}
	}
}

// sameHist fails unless got and want hold the same counts in the same buckets, and so the
// same Stat and every percentile from 0 to 100 in steps of 0.1, and 99.9.
func sameHist(t *testing.T, n int, h metrics.Hist, where string, got, want *hdrhistogram.Histogram) {
	t.Helper()
	if got.TotalCount() == 0 {
		t.Fatalf("N=%d %s %s: no values", n, h.Name(), where)
	}
	if !got.Equals(want) {
		t.Errorf("N=%d %s %s: merged histogram differs from the single recorder's", n, h.Name(), where)
	}
	if g, w := metrics.Summarize(h, got), metrics.Summarize(h, want); g != w {
		t.Errorf("N=%d %s %s: merged %+v, single %+v", n, h.Name(), where, g, w)
	}
	for q := 0.0; q <= 100; q += 0.1 {
		if g, w := got.ValueAtQuantile(q), want.ValueAtQuantile(q); g != w {
			t.Errorf("N=%d %s %s: p%.1f merged %d, single %d", n, h.Name(), where, q, g, w)
			return
		}
	}
	if got.Min() != want.Min() || got.Max() != want.Max() || got.TotalCount() != want.TotalCount() {
		t.Errorf("N=%d %s %s: min/max/count merged %d/%d/%d, single %d/%d/%d", n, h.Name(), where,
			got.Min(), got.Max(), got.TotalCount(), want.Min(), want.Max(), want.TotalCount())
	}
}
