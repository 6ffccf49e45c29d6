package results

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

// shardWindow is one window of a synthetic shard: it ends end after the shard's start and
// holds polls tasks/get replies of latency ms each.
type shardWindow struct {
	end   time.Duration
	polls int
	ms    int64
}

// writeShard writes the run directory of shard index of count, started at start (late by
// late after the common start), whose windows are ws: summary.json, timeseries.csv and
// histograms.hlog, as a run writes them.
func writeShard(t *testing.T, dir string, index, count int, start time.Time, late time.Duration, ws []shardWindow) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rec := metrics.NewRecorder(1, start)
	ts, err := NewTimeseries(dir, start)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, HistogramLogFile))
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	hl := metrics.NewLogWriter(bw, start)
	var windows []metrics.Window
	for _, w := range ws {
		sh := rec.Shard(0)
		for range w.polls {
			sh.Reply(mcp.OpTasksGet, metrics.OutcomeOK, 0, 200, ms(w.ms))
		}
		sh.Add(metrics.Polls, int64(w.polls))
		win := rec.Flush(start.Add(w.end))
		if err := ts.Add(win); err != nil {
			t.Fatal(err)
		}
		if err := hl.Write(win); err != nil {
			t.Fatal(err)
		}
		windows = append(windows, win)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ts.Close(); err != nil {
		t.Fatal(err)
	}
	budget := 5.0
	s := Build(RunInfo{Version: "0.1.0", Scenario: "misaligned", Seed: 1, Protocol: "2026-07-28",
		Target: "http://127.0.0.1:1/mcp", StartedAt: start, Duration: ws[len(ws)-1].end,
		ErrorBudget: &budget, DuplicateEffects: -1}, rec.Total(), windows)
	s.Shard = NewShardInfo(s, index, count, "sha256:misaligned", t0, late)
	if err := WriteSummary(dir, s); err != nil {
		t.Fatal(err)
	}
}

// TestMergeMisalignedShards: shards whose windows do not line up (one started 1.6 s late,
// its short last window 50 ms after its previous one) are merged by wall-clock second: each
// window goes to the second its end is nearest, two windows of one shard in one second add
// up, no value is lost or counted twice, the merged run spans both, and the late start is
// said.
func TestMergeMisalignedShards(t *testing.T) {
	root := t.TempDir()
	a, b, out := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "out")
	writeShard(t, a, 0, 2, t0, 0, []shardWindow{
		{time.Second, 10, 5}, {2 * time.Second, 10, 5}, {3 * time.Second, 10, 5}})
	late := 1600 * time.Millisecond
	writeShard(t, b, 1, 2, t0.Add(late), late, []shardWindow{
		{time.Second, 7, 50}, {2 * time.Second, 7, 50}, {3 * time.Second, 7, 50}, {3050 * time.Millisecond, 2, 500}})

	m, err := MergeRuns([]string{a, b}, out, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// a's windows end at 1, 2, 3 s; b's at 2.6, 3.6, 4.6 and 4.65 s, nearest to 3, 4, 5
	// and 5 s: seconds 0..4, b's last two in the last.
	want := []float64{10, 10, 10 + 7, 7, 7 + 2}
	got := column(t, out, "polls")
	if len(got) != len(want) {
		t.Fatalf("merged seconds: %v polls, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("second %d: %v polls, want %v (all: %v)", i, got[i], want[i], got)
		}
	}
	if n := m.Requests[mcp.MethodTasksGet].Count; n != 30+23 {
		t.Errorf("merged tasks/get %d, want 53", n)
	}
	st := m.Metrics[metrics.LatencyTasksGet.Name()]
	if st.Count != 53 || st.Min != 5 || st.Max < 499 || st.Max > 501 {
		t.Errorf("merged tasks/get latency %+v: 53 values from 5 ms to 500 ms", st)
	}
	hs, err := ReadHistogramLogTotals(out)
	if err != nil {
		t.Fatal(err)
	}
	if n := hs[metrics.LatencyTasksGet].TotalCount(); n != 53 {
		t.Errorf("merged histograms.hlog holds %d tasks/get latencies, want 53", n)
	}
	if m.DurationS != 4.65 {
		t.Errorf("merged duration %vs, want 4.65 (a's start to b's end)", m.DurationS)
	}
	if !m.StartedAt.Equal(t0) {
		t.Errorf("merged start %v, want the earliest shard's %v", m.StartedAt, t0)
	}
	if !strings.Contains(m.Merge.Note, "shard 1 started 1.6s late") {
		t.Errorf("merge note %q does not say shard 1 started late", m.Merge.Note)
	}
}

// column reads one column of dir's timeseries.csv.
func column(t *testing.T, dir, name string) []float64 {
	t.Helper()
	ts, err := readTimeseries(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ts.cols[name]
}

// TestMergeCapsEvents: the merged timeline keeps the earliest metrics.DefaultEventLimit
// events of its shards, as a run keeps its first, and counts the others with the shards'
// own uncounted ones in more_not_kept.
func TestMergeCapsEvents(t *testing.T) {
	root := t.TempDir()
	a, b, out := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "out")
	ws := []shardWindow{{time.Second, 1, 5}, {2 * time.Second, 1, 5}}
	writeShard(t, a, 0, 2, t0, 0, ws)
	writeShard(t, b, 1, 2, t0, 0, ws)
	per := metrics.DefaultEventLimit*3/5 + 1 // two shards hold more than one timeline
	for k, dir := range []string{a, b} {
		evs := make([]metrics.Event, per)
		for i := range evs {
			// interleaved in time: shard k's i-th event at 2i+k ms
			evs[i] = metrics.Event{At: t0.Add(ms(int64(2*i + k))), Source: "client", Kind: "crash"}
		}
		if err := WriteEvents(dir, t0, evs, 7); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := MergeRuns([]string{a, b}, out, MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	evs, err := ReadEvents(out)
	if err != nil {
		t.Fatal(err)
	}
	fl, err := readFaultEvents(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != metrics.DefaultEventLimit {
		t.Fatalf("merged timeline keeps %d events, want %d", len(evs), metrics.DefaultEventLimit)
	}
	if last := evs[len(evs)-1].At; last != t0.Add(ms(int64(metrics.DefaultEventLimit-1))) {
		t.Errorf("the last event kept is at %v: not the earliest kept", last.Sub(t0))
	}
	if want := int64(2*per-metrics.DefaultEventLimit) + 2*7; fl.moreNotKept != want {
		t.Errorf("more_not_kept %d, want %d", fl.moreNotKept, want)
	}
}
