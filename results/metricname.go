package results

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tasksim/tasksim/metrics"
)

// This file resolves the metric of a threshold expression (the left side, see Threshold)
// to what it reads, and names the closest known metrics when it cannot.

// kind is what a threshold's metric reads.
type kind uint8

const (
	kindStat           kind = iota + 1 // a statistic of hist
	kindCounter                        // counter, a count
	kindRate                           // 100 * counter / tasks created (+ dropped for dropped)
	kindRequests                       // requests sent (errors: Outcome.IsError), a count
	kindErrorsRate                     // 100 * requests in error / requests
	kindFleetAmp                       // fleet poll amplification
	kindStatusReads                    // status reads per task created
	kindPollsPerSecond                 // polls per second
	kindGauge                          // a gauge's last (or max) level
	kindSettled                        // tasks and synchronous calls that reached a known outcome
	kindDone                           // tasks and synchronous calls that ended without failing
	kindSetup                          // initialize and server/discover in error, a count
	kindSetupRate                      // 100 * of them in error / of them sent
)

// source is what a threshold's metric reads, resolved from its name.
type source struct {
	kind    kind
	hist    metrics.Hist
	stat    stat
	counter metrics.Counter
	gauge   metrics.Gauge
	max     bool // kindGauge: the highest level, not the last
	errors  bool // kindRequests: errors, not all requests
}

// stat is a statistic of a histogram.
type stat uint8

const (
	statMin stat = iota
	statP50
	statP90
	statP99
	statP999
	statMax
	statMean
	statCount
)

var statNames = [...]string{"min", "p50", "p90", "p99", "p999", "max", "mean", "count"}

// of returns the statistic from st.
func (k stat) of(st metrics.Stat) float64 {
	switch k {
	case statMin:
		return st.Min
	case statP50:
		return st.P50
	case statP90:
		return st.P90
	case statP99:
		return st.P99
	case statP999:
		return st.P999
	case statMax:
		return st.Max
	case statMean:
		return st.Mean
	}
	return float64(st.Count)
}

// windowStat returns statistic k of h over window w, as k.of(w.Summary(h)) does, and the
// number of values. A percentile or the count asks the histogram that alone: the per-second
// rows and window thresholds need one figure, and a Summary walks every bucket for its
// mean.
func windowStat(w *metrics.Window, h metrics.Hist, k stat) (v float64, count int64) {
	switch k {
	case statP50:
		return w.Percentile(h, 50) // the percentiles as Summarize reads them
	case statP90:
		return w.Percentile(h, 90)
	case statP99:
		return w.Percentile(h, 99)
	case statP999:
		return w.Percentile(h, 99.9)
	case statCount:
		_, n := w.Percentile(h, 0)
		return float64(n), n
	}
	st := w.Summary(h)
	return k.of(st), st.Count
}

// resolve finds what the metric name reads and the unit it is reported in.
func resolve(name string) (source, string, error) {
	base, sub, dotted := strings.Cut(name, ".")
	if h, ok := metrics.ParseHist(base); ok {
		if !dotted {
			return source{}, "", fmt.Errorf("%s is a histogram: name a statistic, like %s.p99 (one of %s)",
				base, base, strings.Join(histStats(h), ", "))
		}
		if h == metrics.PollAmplification && sub == "fleet" {
			return source{kind: kindFleetAmp}, "ratio", nil
		}
		k := slices.Index(statNames[:], sub)
		if k < 0 {
			return source{}, "", fmt.Errorf("unknown statistic %q of %s (want one of %s)",
				sub, base, strings.Join(histStats(h), ", "))
		}
		unit := h.Unit()
		if stat(k) == statCount {
			unit = "count"
		}
		return source{kind: kindStat, hist: h, stat: stat(k)}, unit, nil
	}
	if g, ok := parseGauge(base); ok {
		if sub != "last" && sub != "max" {
			return source{}, "", fmt.Errorf("%s is a gauge: write %s.last (level at the end) or %s.max (highest level)",
				base, base, base)
		}
		return source{kind: kindGauge, gauge: g, max: sub == "max"}, "count", nil
	}
	switch base {
	case "tasks":
		return resolveTasks(name, sub)
	case "requests":
		switch sub {
		case "count":
			return source{kind: kindRequests}, "count", nil
		case "errors":
			return source{kind: kindRequests, errors: true}, "count", nil
		case "errors_rate":
			return source{kind: kindErrorsRate}, "%", nil
		case "setup_errors":
			return source{kind: kindSetup}, "count", nil
		case "setup_errors_rate":
			return source{kind: kindSetupRate}, "%", nil
		}
		return source{}, "", fmt.Errorf("unknown metric %q (want requests.count, requests.errors, requests.errors_rate, requests.setup_errors or requests.setup_errors_rate)", name)
	}
	if dotted {
		if c, ok := parseCounter(base); ok {
			return source{}, "", fmt.Errorf("%s is a counter: write it without .%s", c, sub)
		}
	} else {
		switch name {
		case "status_reads_per_task":
			return source{kind: kindStatusReads}, "ratio", nil
		case "polls_per_second":
			return source{kind: kindPollsPerSecond}, "per_s", nil
		}
		if c, ok := parseCounter(name); ok {
			return source{kind: kindCounter, counter: c}, "count", nil
		}
	}
	return source{}, "", unknownMetric(name, base)
}

// resolveTasks resolves tasks.<outcome>, tasks.<outcome>_rate, tasks.settled and
// tasks.done.
func resolveTasks(name, sub string) (source, string, error) {
	switch sub {
	case "settled":
		return source{kind: kindSettled}, "count", nil
	case "done":
		return source{kind: kindDone}, "count", nil
	}
	outcome, rate := strings.CutSuffix(sub, "_rate")
	for _, oc := range outcomeCounters {
		if oc.name == outcome {
			if rate {
				return source{kind: kindRate, counter: oc.c}, "%", nil
			}
			return source{kind: kindCounter, counter: oc.c}, "count", nil
		}
	}
	want := []string{"tasks.settled", "tasks.done"}
	for _, oc := range outcomeCounters {
		want = append(want, "tasks."+oc.name, "tasks."+oc.name+"_rate")
	}
	msg := fmt.Sprintf("unknown metric %q", name)
	if close := closest(name, want); len(close) > 0 {
		return source{}, "", fmt.Errorf("%s (did you mean %s?)", msg, strings.Join(close, ", "))
	}
	return source{}, "", fmt.Errorf("%s (want tasks.<outcome> or tasks.<outcome>_rate, outcome one of created, completed, failed, cancelled, expired, lost, result_lost, unknown, dropped; or tasks.settled, tasks.done)", msg)
}

// histStats lists the statistics of h, as error messages offer them.
func histStats(h metrics.Hist) []string {
	s := slices.Clone(statNames[:])
	if h == metrics.PollAmplification {
		s = append(s, "fleet")
	}
	return s
}

func parseGauge(name string) (metrics.Gauge, bool) {
	for g := range metrics.NumGauges {
		if g.Name() == name {
			return g, true
		}
	}
	return 0, false
}

func parseCounter(name string) (metrics.Counter, bool) {
	for c := range metrics.NumCounters {
		if c.Name() == name {
			return c, true
		}
	}
	return 0, false
}

// unknownMetric is the error for a metric name nothing matched, with the closest names.
func unknownMetric(name, base string) error {
	var names []string
	for h := range metrics.NumHists {
		names = append(names, h.Name())
	}
	for c := range metrics.NumCounters {
		names = append(names, c.Name())
	}
	for g := range metrics.NumGauges {
		names = append(names, g.Name())
	}
	names = append(names, "tasks", "requests", "status_reads_per_task", "polls_per_second")
	msg := fmt.Sprintf("unknown metric %q", name)
	if close := closest(base, names); len(close) > 0 {
		return fmt.Errorf("%s (did you mean %s?)", msg, strings.Join(close, ", "))
	}
	return fmt.Errorf("%s (want a histogram statistic like latency_tasks_get.p99, tasks.<outcome>[_rate], requests.errors_rate, poll_amplification.fleet, status_reads_per_task, polls_per_second, a counter or <gauge>.max)", msg)
}

// closest returns up to 3 of names within edit distance max(2, len(name)/4) of name,
// nearest first.
func closest(name string, names []string) []string {
	type cand struct {
		name string
		d    int
	}
	limit := max(2, len(name)/4)
	var cs []cand
	for _, n := range names {
		if d := editDistance(name, n); d <= limit {
			cs = append(cs, cand{n, d})
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return a.d - b.d })
	var out []string
	for _, c := range cs[:min(3, len(cs))] {
		out = append(out, c.name)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
