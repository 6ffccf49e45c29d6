package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

// This file merges the run directories of the shards of one scenario (`tasksim run --shard
// I/N`) into the result of the whole: `tasksim merge`. What is exact and what is not:
//
//	histograms      exact: every interval of every shard's histograms.hlog, merged into the
//	                second it ends in (counted from the earliest shard's start); the run's
//	                histograms are the merge of those seconds
//	counts          exact: counters, task outcomes, requests by method, outcome, JSON-RPC
//	                code and HTTP status are the sums of the shards' summary.json; the
//	                per-second counts the sums of the shards' timeseries.csv rows
//	gauges          a second's level is the sum of the shards' levels at their window's
//	                end; a second's high is the sum of the shards' highs, an upper bound
//	                (the shards need not peak at the same instant); the run's high is the
//	                highest such second, its last level the sum of the shards' last
//	per second      the shards' windows are put in the second whose end is nearest their
//	                end; two windows of one shard in one second (the short last window)
//	                add up
//	gates           judged again on the merged figures, from what each shard's gate
//	                evidence holds (summed counts, concatenated samples)
//	thresholds      judged again on the merged run and each merged second, as a run does
//	errors          the kinds summed by (method, outcome, code, status), first message kept
//	events          the shards' kept events in time order, the earliest
//	                metrics.DefaultEventLimit of them (as a run keeps its first), the
//	                others counted in more_not_kept
//	server, client  per shard (server) or summed (client counts)

// MergeOptions says how MergeRuns merges.
type MergeOptions struct {
	// AllowMissing merges a partial set of shards (some indexes absent) instead of
	// refusing it; the summary's merge block then says which are missing. false = refuse.
	AllowMissing bool
}

// MergeInfo is summary.json's "merge": which shard runs the summary adds up.
type MergeInfo struct {
	Count   int           `json:"count"`   // the shards of the whole scenario
	Merged  []MergedShard `json:"merged"`  // the shards merged, by index
	Missing []int         `json:"missing"` // the indexes not merged; [] when none
	// Partial says the merge lacks shards (--allow-missing): its figures are those of
	// part of the scenario, and so is its verdict.
	Partial bool `json:"partial"`
	// Note says, in words, what a reader must know: a partial merge, shards started late.
	Note string `json:"note,omitempty"`
	// FailedAsPartial is the verdict's one reason when nothing the shards measured failed
	// but shards are missing: a partial merge is never a pass. "" = the verdict has other
	// reasons (its gates and thresholds), or the merge is whole.
	FailedAsPartial string `json:"failed_as_partial,omitempty"`
}

// MergedShard is one shard a merge read.
type MergedShard struct {
	Index   int     `json:"index"`
	Dir     string  `json:"dir"`
	Verdict string  `json:"verdict"`   // the shard's own verdict
	LateByS float64 `json:"late_by_s"` // the shard's late start (ShardInfo.LateByS)
}

// MismatchError is a set of shard directories that do not belong together, or not all of
// them: Field names what differs ("scenario_hash", "protocol", "target", "count", "index",
// "shard"; "out" for an output directory that is one of the shards', CheckMergeDirs).
type MismatchError struct {
	Field string
	Msg   string
}

func (e *MismatchError) Error() string { return e.Msg }

// shardRun is one shard's directory, read.
type shardRun struct {
	dir string
	sum *Summary
}

// MergeRuns reads the run directories dirs, each a shard of one scenario, checks that they
// belong together (a *MismatchError when not), and writes the whole run's summary.json,
// summary.csv, timeseries.csv, histograms.hlog, events.csv (when a shard has one) and
// report.html into out. The summary is judged as a run's is: its ExitCode is the merge's.
func MergeRuns(dirs []string, out string, opts MergeOptions) (*Summary, error) {
	runs := make([]shardRun, 0, len(dirs))
	for _, d := range dirs {
		s, err := ReadSummary(d)
		if err != nil {
			return nil, err
		}
		runs = append(runs, shardRun{dir: d, sum: s})
	}
	info, err := checkShards(runs, opts)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(runs, func(a, b shardRun) int { return a.sum.Shard.Index - b.sum.Shard.Index })
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	ri := mergedRunInfo(runs)
	m, err := mergeWindows(runs, out, ri)
	if err != nil {
		return nil, err
	}
	total := mergedTotal(runs, m)
	ri.Windows = m.tally
	ri.StartedAt, ri.Duration = m.origin, mergedDuration(runs, m.origin)
	if err := mergeEvents(runs, out, m.origin); err != nil {
		return nil, err
	}
	s := Build(ri, total, nil)
	s.Aborted = ri.Aborted
	s.Merge = info
	if info.Partial && s.Verdict == VerdictPass {
		// Part of the scenario passing is no evidence that the whole does: never a pass
		// (exit 99), as an interrupted run is never one.
		s.Verdict = VerdictFail
		info.FailedAsPartial = fmt.Sprintf("partial merge: %d of %d shards merged, shard %s missing; what they measured passed, but part of the scenario passing is no pass",
			len(info.Merged), info.Count, intList(info.Missing))
	}
	r, err := RenderRun(out, s)
	if err != nil {
		return nil, err
	}
	if err := r.Write(out); err != nil { // summary.json last, as a run writes it
		return nil, err
	}
	return s, nil
}

// checkShards refuses shards that do not belong together: without a shard block, of
// another scenario hash, protocol, target or shard count, an index twice, or (without
// AllowMissing) an index missing. It returns the merge block.
func checkShards(runs []shardRun, opts MergeOptions) (*MergeInfo, error) {
	if len(runs) == 0 {
		return nil, &MismatchError{Field: "shard", Msg: "no shard directory given"}
	}
	for _, r := range runs {
		if r.sum.Shard == nil {
			return nil, &MismatchError{Field: "shard", Msg: fmt.Sprintf("%s: summary.json has no shard block: not a run of `tasksim run --shard I/N`", r.dir)}
		}
	}
	if err := sameShardFields(runs); err != nil {
		return nil, err
	}
	first := runs[0]
	count := first.sum.Shard.Count
	seen := map[int]string{}
	info := &MergeInfo{Count: count, Missing: []int{}}
	for _, r := range runs {
		sh := r.sum.Shard
		if prev, dup := seen[sh.Index]; dup {
			return nil, &MismatchError{Field: "index", Msg: fmt.Sprintf("shard index %d of %d twice: %s and %s", sh.Index, count, prev, r.dir)}
		}
		if sh.Index >= 0 && sh.Index < count && !first.sum.Shard.owns(sh.Index) {
			return nil, &MismatchError{Field: "index", Msg: fmt.Sprintf("%s: shard index %d of %d is not a shard of the %s side of an A/B run (the canary's are even, the baseline's odd)", r.dir, sh.Index, count, first.sum.Shard.ABSide)}
		}
		if sh.Index < 0 || sh.Index >= count {
			return nil, &MismatchError{Field: "index", Msg: fmt.Sprintf("%s: shard index %d out of 0..%d", r.dir, sh.Index, count-1)}
		}
		seen[sh.Index] = r.dir
		info.Merged = append(info.Merged, MergedShard{Index: sh.Index, Dir: filepath.Clean(r.dir), Verdict: r.sum.Verdict, LateByS: sh.LateByS})
	}
	sort.Slice(info.Merged, func(i, j int) bool { return info.Merged[i].Index < info.Merged[j].Index })
	for i := range count {
		if _, ok := seen[i]; !ok && first.sum.Shard.owns(i) {
			info.Missing = append(info.Missing, i)
		}
	}
	var notes []string
	if len(info.Missing) > 0 {
		if !opts.AllowMissing {
			return nil, &MismatchError{Field: "index", Msg: fmt.Sprintf("shard index %s of %d missing (--allow-missing merges a partial set)", intList(info.Missing), count)}
		}
		info.Partial = true
		owned := 0
		for i := range count {
			if first.sum.Shard.owns(i) {
				owned++
			}
		}
		notes = append(notes, fmt.Sprintf("partial merge: shard %s of %d missing; the figures and the verdict cover %d of %d shards",
			intList(info.Missing), count, len(info.Merged), owned))
	}
	for _, m := range info.Merged {
		if m.LateByS > 1 {
			notes = append(notes, fmt.Sprintf("shard %d started %ss late", m.Index, num(m.LateByS)))
		}
	}
	info.Note = strings.Join(notes, "; ")
	return info, nil
}

// sameShardFields refuses shards that disagree on what the run was (scenario hash, protocol,
// target, shard count, A/B side), naming every difference against the first shard at once;
// the error's field is the first one that differs.
func sameShardFields(runs []shardRun) error {
	first := runs[0]
	fields := []struct {
		name string
		of   func(*ShardInfo) string
	}{
		{"scenario_hash", func(s *ShardInfo) string { return s.ScenarioHash }},
		{"protocol", func(s *ShardInfo) string { return s.Protocol }},
		{"target", func(s *ShardInfo) string { return s.Target }},
		{"count", func(s *ShardInfo) string { return strconv.Itoa(s.Count) }},
		{"ab_side", func(s *ShardInfo) string { return s.ABSide }},
	}
	var problems []string
	var field string
	for _, f := range fields {
		for _, r := range runs[1:] {
			if a, b := f.of(first.sum.Shard), f.of(r.sum.Shard); a != b {
				problems = append(problems, fmt.Sprintf("%s differs: %s has %q, %s has %q", f.name, first.dir, a, r.dir, b))
				if field == "" {
					field = f.name
				}
			}
		}
	}
	if len(problems) > 0 {
		return &MismatchError{Field: field, Msg: "shards do not belong together: " + strings.Join(problems, "; ")}
	}
	return nil
}

func intList(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// mergedDuration is the span from origin to the latest shard's end.
func mergedDuration(runs []shardRun, origin time.Time) time.Duration {
	var end time.Time
	for _, r := range runs {
		if e := r.sum.StartedAt.Add(time.Duration(r.sum.DurationS * float64(time.Second))); e.After(end) {
			end = e
		}
	}
	return max(end.Sub(origin), 0)
}

// mergedTotal is the whole run's snapshot: the shards' summed counts (summary.json) and the
// merged seconds' histograms and gauge highs.
func mergedTotal(runs []shardRun, m *mergedWindows) *metrics.Snapshot {
	t := &metrics.Snapshot{Start: m.origin, End: m.end, Windows: m.windows, Hists: m.hists}
	for _, r := range runs {
		s := r.sum
		for name, v := range s.Counters {
			if c, ok := counterByName(name); ok {
				t.Counters[c] += v
			}
		}
		for name, rs := range s.Requests {
			op, ok := opByName(name)
			if !ok {
				continue
			}
			for k, v := range rs.ByOutcome {
				if o, ok := outcomeByName(k); ok {
					t.Requests[op][o] += v
				}
			}
			for k, v := range rs.ByCode {
				if i, ok := labelSlot(k, metrics.NumRPCCodes, metrics.RPCCodeLabel); ok {
					t.RPCCodes[op][i] += v
				}
			}
			for k, v := range rs.ByStatus {
				if i, ok := labelSlot(k, metrics.NumHTTPStatuses, metrics.HTTPStatusLabel); ok {
					t.HTTPStatuses[op][i] += v
				}
			}
		}
		for name, v := range s.Clamped {
			if h, ok := metrics.ParseHist(name); ok {
				t.Clamped[h] += v
			}
		}
		for g := range metrics.NumGauges {
			lv := s.Gauges[g.Name()]
			t.Gauges[g] += lv.Last
			if m.windows == 0 {
				t.GaugeMax[g] += lv.Max
			}
		}
	}
	if m.windows > 0 {
		t.GaugeMax = m.gaugeMax
	}
	for h, hh := range t.Hists {
		if hh == nil {
			t.Hists[h] = metrics.NewHistogram(metrics.Hist(h))
		}
	}
	return t
}

func counterByName(name string) (metrics.Counter, bool) {
	for c := range metrics.NumCounters {
		if c.Name() == name {
			return c, true
		}
	}
	return 0, false
}

func opByName(name string) (mcp.Op, bool) {
	for op := range mcp.NumOps {
		if op.Name() == name {
			return op, true
		}
	}
	return 0, false
}

func outcomeByName(name string) (metrics.Outcome, bool) {
	for o := range metrics.NumOutcomes {
		if o.Name() == name {
			return o, true
		}
	}
	return 0, false
}

func labelSlot(label string, n int, of func(int) string) (int, bool) {
	for i := range n {
		if of(i) == label {
			return i, true
		}
	}
	return 0, false
}

// mergeEvents writes the shards' events.csv rows in time order, at most
// metrics.DefaultEventLimit of them (the shards' more_not_kept counts added up, with the
// rows beyond the limit); nothing when no shard has the file.
func mergeEvents(runs []shardRun, out string, origin time.Time) error {
	var all []metrics.Event
	var dropped int64
	found := false
	for _, r := range runs {
		if _, err := os.Stat(filepath.Join(r.dir, EventsFile)); errors.Is(err, os.ErrNotExist) {
			continue
		}
		found = true
		ev, err := ReadEvents(r.dir)
		if err != nil {
			return err
		}
		fl, err := readFaultEvents(r.dir)
		if err != nil {
			return err
		}
		all = append(all, ev...)
		dropped += fl.moreNotKept
	}
	if !found {
		return nil
	}
	slices.SortStableFunc(all, func(a, b metrics.Event) int { return a.At.Compare(b.At) })
	// As a run's timeline keeps its first events, the merge keeps the earliest: N shards'
	// timelines are not N times as long as one run's.
	if n := len(all) - metrics.DefaultEventLimit; n > 0 {
		all, dropped = all[:metrics.DefaultEventLimit], dropped+int64(n)
	}
	return WriteEvents(out, origin, all, dropped)
}
