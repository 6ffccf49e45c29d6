package results

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tasksim/tasksim/scenarios"
)

// Threshold is a parsed threshold expression,
//
//	<metric> <op> <number>[unit]        op: < <= > >= == !=
//
// where <metric> is one of
//
//	<hist>.<stat>             a histogram (latency_tasks_get, task_e2e, ...), stat one of
//	                          min p50 p90 p99 p999 max mean count; in the histogram's unit
//	                          (ms, count, ratio), count in count
//	poll_amplification.fleet  sum(polls) / sum(advised polls), ratio
//	status_reads_per_task     (tasks/get + tasks/list) / tasks created, ratio
//	polls_per_second          tasks/get sent per second, per_s
//	tasks.<outcome>           outcome count (created completed failed cancelled expired
//	                          result_lost unknown dropped), count
//	tasks.<outcome>_rate      100 * outcome / created, %; dropped_rate is
//	                          100 * dropped / (created + dropped), the share of arrivals.
//	                          In a window: 100 * outcome / tasks that ended in the window
//	                          (windowRateBase), so that it stays a share
//	tasks.settled             tasks and synchronous calls that reached a known outcome
//	                          (completed failed cancelled expired result_lost), count
//	tasks.done                of them, those that ended without failing (completed
//	                          cancelled expired), count
//	requests.count            requests sent, count
//	requests.errors           requests whose outcome is an error (metrics.Outcome.IsError:
//	                          not ok, stopped, backpressure, expected or injected), count
//	requests.errors_rate      100 * requests.errors / requests.count, %
//	requests.setup_errors     initialize and server/discover requests in error, count
//	requests.setup_errors_rate 100 * requests.setup_errors / those requests sent, %
//	<counter>                 a metrics.Counter by name (invalid_transitions, polls, ...), count
//	<gauge>.last, <gauge>.max a metrics.Gauge (retained_tasks, ...): level at the end, highest
//	                          level; count
//
// A metric with nothing to measure in the run (an empty histogram, a rate of nothing, a
// counter or gauge the target cannot report) has no data: the threshold fails unless the
// scenario wrote on_no_data: pass for it.
//
// and the unit fits the metric: a duration needs us, ms, s or m (minutes), converted to
// ms; a % figure needs %; counts, ratios and per_s take a plain number. A bare 0 fits any.
type Threshold struct {
	Expr   string  // the expression, spaces around it trimmed
	Metric string  // the left side, e.g. "latency_tasks_get.p99"
	Op     Op      // the comparison
	Limit  float64 // the right side in Unit: a duration in ms, a rate in % (1% = 1)
	Unit   string  // the metric's unit: "ms", "count", "ratio", "per_s" or "%"
	src    source  // what the metric reads
}

// Op is a threshold comparison: value Op limit must hold for the threshold to pass.
type Op uint8

// The comparisons.
const (
	OpLT Op = iota + 1 // <
	OpLE               // <=
	OpGT               // >
	OpGE               // >=
	OpEQ               // ==
	OpNE               // !=
)

var opNames = [...]string{OpLT: "<", OpLE: "<=", OpGT: ">", OpGE: ">=", OpEQ: "==", OpNE: "!="}

// String returns the operator as written ("<=").
func (o Op) String() string {
	if o >= OpLT && o <= OpNE {
		return opNames[o]
	}
	return "op(" + strconv.Itoa(int(o)) + ")"
}

// holds reports whether v o limit.
func (o Op) holds(v, limit float64) bool {
	switch o {
	case OpLT:
		return v < limit
	case OpLE:
		return v <= limit
	case OpGT:
		return v > limit
	case OpGE:
		return v >= limit
	case OpEQ:
		return v == limit
	case OpNE:
		return v != limit
	}
	return false
}

// msPer returns the milliseconds in one unit of a duration unit (us, µs, ms, s, m).
func msPer(unit string) (float64, bool) {
	switch unit {
	case "us", "µs":
		return 0.001, true
	case "ms":
		return 1, true
	case "s":
		return 1000, true
	case "m":
		return 60_000, true
	}
	return 0, false
}

// ParseThreshold parses one threshold expression (see Threshold). Its errors name the
// expression and what is wrong with it; an unknown metric is reported with the closest
// known names.
func ParseThreshold(expr string) (Threshold, error) {
	t, err := parseThreshold(strings.TrimSpace(expr))
	if err != nil {
		return Threshold{}, fmt.Errorf("threshold %q: %w", expr, err)
	}
	return t, nil
}

func parseThreshold(e string) (Threshold, error) {
	if e == "" {
		return Threshold{}, errors.New("empty expression")
	}
	i := strings.IndexAny(e, "<>=!")
	if i < 0 {
		return Threshold{}, errors.New("no comparison operator (want one of < <= > >= == !=)")
	}
	op, n := OpLT, 1
	switch two := e[i:min(i+2, len(e))]; {
	case two == "<=":
		op, n = OpLE, 2
	case two == ">=":
		op, n = OpGE, 2
	case two == "==":
		op, n = OpEQ, 2
	case two == "!=":
		op, n = OpNE, 2
	case e[i] == '<':
		op = OpLT
	case e[i] == '>':
		op = OpGT
	case e[i] == '=':
		return Threshold{}, errors.New(`"=" is not an operator: write ==`)
	default:
		return Threshold{}, errors.New(`"!" is not an operator: write !=`)
	}
	left, right := strings.TrimSpace(e[:i]), strings.TrimSpace(e[i+n:])
	if left == "" {
		return Threshold{}, fmt.Errorf("no metric before %s", op)
	}
	if right == "" {
		return Threshold{}, fmt.Errorf("no number after %s", op)
	}
	if strings.ContainsAny(right, "<>=!") {
		return Threshold{}, errors.New("more than one comparison operator")
	}
	src, unit, err := resolve(left)
	if err != nil {
		return Threshold{}, err
	}
	limit, err := parseLimit(left, unit, right)
	if err != nil {
		return Threshold{}, err
	}
	return Threshold{Expr: e, Metric: left, Op: op, Limit: limit, Unit: unit, src: src}, nil
}

// parseLimit parses the right side "<number>[unit]" into the metric's unit.
func parseLimit(metric, unit, right string) (float64, error) {
	j := numberEnd(right)
	num, u := right[:j], strings.TrimSpace(right[j:])
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		if errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("number %q is out of range", num)
		}
		return 0, fmt.Errorf("bad number %q (want a decimal number like 200, 1.5 or 2e3, then a unit if the metric has one)", right)
	}
	switch {
	case u == "" && v == 0:
		return 0, nil
	case unit == "ms":
		k, ok := msPer(u)
		if !ok {
			if u == "" {
				return 0, fmt.Errorf("%s is a duration: the number needs a unit (us, ms, s or m), like %sms", metric, num)
			}
			return 0, fmt.Errorf("bad unit %q for %s, a duration: want us, ms, s or m", u, metric)
		}
		ms := v * k
		if math.IsInf(ms, 0) {
			return 0, fmt.Errorf("number %q is out of range", num)
		}
		// Nanosecond precision: 1.1s is 1100 ms, not 1100.0000000000002.
		if ns := ms * 1e6; !math.IsInf(ns, 0) {
			ms = math.Round(ns) / 1e6
		}
		return ms, nil
	case unit == "%":
		if u != "%" {
			if u == "" {
				return 0, fmt.Errorf("%s is a percentage: write the number with %%, like %s%%", metric, num)
			}
			return 0, fmt.Errorf("bad unit %q for %s, a percentage: want %%", u, metric)
		}
		return v, nil
	}
	if u != "" {
		return 0, fmt.Errorf("bad unit %q for %s, a %s: write a plain number", u, metric, unitWord(unit))
	}
	return v, nil
}

// numberEnd returns the length of the decimal number at the start of s: sign, digits,
// point, exponent. An "e" counts as an exponent only when a digit follows it.
func numberEnd(s string) int {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && s[j] >= '0' && s[j] <= '9' {
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			i = j
		}
	}
	return i
}

// unitWord names a unit for error messages.
func unitWord(unit string) string {
	switch unit {
	case "count":
		return "count"
	case "ratio":
		return "ratio"
	case "per_s":
		return "rate per second"
	}
	return unit
}

// CheckThresholds parses every threshold of s and reports every bad one at once, each
// located by s.Where ("FILE:LINE:COL: thresholds[2]: threshold ...: what is wrong"), for
// `tasksim validate` and for `run` before anything starts.
func CheckThresholds(s *scenarios.Scenario) error {
	var errs []error
	for i, th := range s.Thresholds {
		if _, err := ParseThreshold(th.Expr); err != nil {
			path := "thresholds[" + strconv.Itoa(i) + "]"
			if where := s.Where(path); where != "" {
				path = where + ": " + path
			}
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
		}
	}
	return errors.Join(errs...)
}
