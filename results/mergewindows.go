package results

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

// mergedWindows is what mergeWindows made of the shards' seconds.
type mergedWindows struct {
	origin   time.Time // the earliest shard's start: second 0 starts here
	end      time.Time // the last merged second's end
	windows  int       // seconds merged
	hists    [metrics.NumHists]*hdrhistogram.Histogram
	gaugeMax [metrics.NumGauges]int64 // the highest merged second's high, per gauge
	tally    *WindowTally
}

// shardSecond is one shard's window, as its timeseries.csv row and histograms.hlog lines
// hold it.
type shardSecond struct {
	endMs  int64 // ms since the epoch
	row    map[string]float64
	hlines []hlogLine
}

// hlogLine is one tagged line of histograms.hlog.
type hlogLine struct {
	hist    metrics.Hist
	endMs   int64 // ms since the epoch
	payload []byte
}

// mergeWindows merges the shards' windows second by second (see merge.go): it writes the
// merged timeseries.csv and histograms.hlog into out and feeds every merged second to the
// thresholds of ri. One second's histograms are held at a time.
func mergeWindows(runs []shardRun, out string, ri RunInfo) (*mergedWindows, error) {
	m := &mergedWindows{tally: NewWindowTally(ri.Thresholds, ri.ErrorBudget).Defer(SLOMetrics...)}
	if ri.Target != "" && ri.Target != "embedded" {
		m.tally.WithoutServerSide()
	}
	m.origin = runs[0].sum.StartedAt
	for _, r := range runs[1:] {
		if r.sum.StartedAt.Before(m.origin) {
			m.origin = r.sum.StartedAt
		}
	}
	m.origin = time.UnixMilli(m.origin.UnixMilli()).UTC() // the logs count in ms
	m.end = m.origin
	buckets := map[int][][]*shardSecond{} // second -> per shard -> windows
	last := -1
	for k, r := range runs {
		secs, err := readShardSeconds(r.dir, r.sum.StartedAt)
		if err != nil {
			return nil, err
		}
		for _, sec := range secs {
			b := max(int(math.Round(float64(sec.endMs-m.origin.UnixMilli())/1000))-1, 0)
			if buckets[b] == nil {
				buckets[b] = make([][]*shardSecond, len(runs))
			}
			buckets[b][k] = append(buckets[b][k], sec)
			last = max(last, b)
			if e := time.UnixMilli(sec.endMs); e.After(m.end) {
				m.end = e
			}
		}
	}
	ts, err := NewTimeseries(out, m.origin)
	if err != nil {
		return nil, err
	}
	defer ts.Close()
	if ri.Target != "" && ri.Target != "embedded" {
		ts.OmitServerGauges()
	}
	f, err := os.Create(filepath.Join(out, HistogramLogFile))
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	defer f.Close()
	bw := bufio.NewWriter(f)
	hl := metrics.NewLogWriter(bw, m.origin)
	for h := range metrics.NumHists {
		m.hists[h] = metrics.NewHistogram(h)
	}
	for b := 0; b <= last; b++ {
		w, err := m.window(b, buckets[b])
		if err != nil {
			return nil, err
		}
		m.tally.Add(&w)
		m.windows++
		for g := range metrics.NumGauges {
			m.gaugeMax[g] = max(m.gaugeMax[g], w.GaugeMax[g])
		}
		for h, hh := range w.Hists {
			if hh != nil {
				m.hists[h].Merge(hh)
			}
		}
		if err := ts.Add(w); err != nil {
			return nil, err
		}
		if err := hl.Write(w); err != nil {
			return nil, err
		}
	}
	if err := bw.Flush(); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	return m, ts.Close()
}

// window is merged second b: the nominal second [origin+b s, origin+b+1 s), its end cut
// to the last shard window's end when that is earlier (the run's last, short window).
func (m *mergedWindows) window(b int, shards [][]*shardSecond) (metrics.Window, error) {
	w := metrics.Window{Start: m.origin.Add(time.Duration(b) * time.Second), End: m.origin.Add(time.Duration(b+1) * time.Second)}
	if w.End.After(m.end) {
		w.End = m.end
	}
	for _, secs := range shards {
		var levels, highs [metrics.NumGauges]int64
		for _, sec := range secs {
			addRow(&w, sec.row, &levels, &highs)
			for _, l := range sec.hlines {
				hh, err := hdrhistogram.Decode(l.payload)
				if err != nil {
					return w, fmt.Errorf("results: %s: %s: %w", HistogramLogFile, l.hist.Name(), err)
				}
				if w.Hists[l.hist] == nil {
					w.Hists[l.hist] = metrics.NewHistogram(l.hist)
				}
				w.Hists[l.hist].Merge(hh) // the recorder's geometry: exact
			}
		}
		for g := range metrics.NumGauges {
			w.Gauges[g] += levels[g]
			w.GaugeMax[g] += highs[g]
		}
	}
	return w, nil
}

// rowCounters are the timeseries.csv columns that are a window's counter increments.
var rowCounters = []struct {
	col string
	c   metrics.Counter
}{
	{"created", metrics.TasksCreated}, {"completed", metrics.TasksCompleted}, {"failed", metrics.TasksFailed},
	{"cancelled", metrics.TasksCancelled}, {"expired", metrics.TasksExpired}, {"unknown", metrics.TasksUnknown},
	{"dropped", metrics.TasksDropped}, {"polls", metrics.Polls}, {"backpressure_signals", metrics.BackpressureSignals},
	{"reconnects", metrics.Reconnects}, {"invalid_transitions", metrics.InvalidTransitions},
	{"orphaned_tasks", metrics.OrphanedTasks}, {"results_lost", metrics.ResultsLost},
	{"amplification_polls", metrics.AmplificationPolls}, {"amplification_advised", metrics.AmplificationAdvised},
	{"lost", metrics.TasksLost},
}

// rowGauges are the gauges whose level timeseries.csv holds, by column.
var rowGauges = []struct {
	col string
	g   metrics.Gauge
}{
	{"in_flight", metrics.InFlight}, {"retained_tasks", metrics.RetainedTasks},
	{"downstream_in_flight", metrics.DownstreamInFlight}, {"downstream_queue_depth", metrics.DownstreamQueueDepth},
	{"sessions", metrics.Sessions},
}

// addRow adds one shard window's row to w. Levels are the shard's last level in the
// second, highs its highest (the level where the file has no *_max column). Requests are
// carried as their three sums, which is all a second is judged by: requests, errors and
// status reads (tasks/get + tasks/list); the split by method within a second is not in the
// file, so the status reads sit under tasks/get, the errors under tools/call as transport
// errors, and the rest under tools/call as ok.
func addRow(w *metrics.Window, row map[string]float64, levels, highs *[metrics.NumGauges]int64) {
	n := func(col string) int64 {
		v, ok := row[col]
		if !ok || math.IsNaN(v) {
			return 0
		}
		return int64(v)
	}
	for _, rc := range rowCounters {
		w.Counters[rc.c] += n(rc.col)
	}
	requests, errs, reads := n("requests"), n("errors"), n("status_reads")
	w.Requests[mcp.OpTasksGet][metrics.OutcomeOK] += reads
	w.Requests[mcp.OpToolsCall][metrics.OutcomeTransport] += errs
	w.Requests[mcp.OpToolsCall][metrics.OutcomeOK] += requests - reads - errs
	for _, rg := range rowGauges {
		lv := n(rg.col)
		levels[rg.g] = lv
		hi := lv
		if _, ok := row[rg.col+"_max"]; ok {
			hi = n(rg.col + "_max")
		}
		highs[rg.g] = max(highs[rg.g], hi)
	}
}

// readShardSeconds reads a shard's timeseries.csv and histograms.hlog into its windows, in
// order; each hlog line joins the window whose end is nearest its own.
func readShardSeconds(dir string, started time.Time) ([]*shardSecond, error) {
	ts, err := readTimeseries(dir)
	if err != nil {
		return nil, err
	}
	startMs := started.UnixMilli()
	secs := make([]*shardSecond, ts.rows)
	for i := range ts.rows {
		row := make(map[string]float64, len(ts.cols))
		for name, col := range ts.cols {
			row[name] = col[i]
		}
		secs[i] = &shardSecond{endMs: startMs + int64(math.Round(row["t_s"]*1000)), row: row}
	}
	lines, err := readHlogLines(dir)
	if err != nil {
		return nil, err
	}
	if len(lines) > 0 && len(secs) == 0 {
		return nil, fmt.Errorf("results: %s: histograms but no row in %s", dir, TimeseriesFile)
	}
	for _, l := range lines {
		i := sort.Search(len(secs), func(i int) bool { return secs[i].endMs >= l.endMs })
		if i == len(secs) || (i > 0 && l.endMs-secs[i-1].endMs < secs[i].endMs-l.endMs) {
			i--
		}
		secs[i].hlines = append(secs[i].hlines, l)
	}
	return secs, nil
}

// readHlogLines reads the tagged lines of a run's histograms.hlog (metrics.LogWriter),
// their ends in ms since the epoch from the header's BaseTime.
func readHlogLines(dir string) ([]hlogLine, error) {
	path := filepath.Join(dir, HistogramLogFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	var out []hlogLine
	baseMs := int64(-1)
	for line := 1; sc.Scan(); line++ {
		text := sc.Bytes()
		if rest, ok := bytes.CutPrefix(text, []byte("#[BaseTime: ")); ok {
			secs, _, _ := bytes.Cut(rest, []byte(" "))
			if baseMs, err = parseMs(string(secs)); err != nil {
				return nil, fmt.Errorf("results: %s:%d: BaseTime: %w", path, line, err)
			}
			continue
		}
		if !bytes.HasPrefix(text, []byte("Tag=")) {
			continue
		}
		fields := bytes.SplitN(text[len("Tag="):], []byte(","), 5)
		if len(fields) != 5 || baseMs < 0 {
			return nil, fmt.Errorf("results: %s:%d: want a BaseTime header, then Tag=NAME,start,length,max,histogram", path, line)
		}
		h, ok := metrics.ParseHist(string(fields[0]))
		if !ok {
			continue
		}
		start, err1 := parseMs(string(fields[1]))
		length, err2 := parseMs(string(fields[2]))
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("results: %s:%d: bad start or length", path, line)
		}
		out = append(out, hlogLine{hist: h, endMs: baseMs + start + length, payload: bytes.Clone(fields[4])})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("results: %s: %w", path, err)
	}
	return out, nil
}

// parseMs reads seconds with up to three decimals ("1767603600.250") as ms.
func parseMs(s string) (int64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, err
	}
	return int64(math.Round(v * 1000)), nil
}
