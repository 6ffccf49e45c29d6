package results

import (
	"strconv"
	"time"

	"github.com/tasksim/tasksim/scenarios"
)

// SourceSLO marks a default SLO (ThresholdResult.Source): one of the thresholds every run is
// judged by after its own, relative to what the target advertised (docs/METRICS.md#default-slos).
// A scenario overrides or switches off each one in its slo section.
const SourceSLO = "slo"

// The default SLOs, with P the poll interval the clients were advised (SLOInterval):
//
//	detection_lag.p99           <= max(2*P + 250ms, 1s)    a poll every P sees the end within P,
//	                                                       plus one slow reply
//	latency_tasks_get.p99       <= min(max(P, 500ms), 5s)  a status read answers within the
//	                                                       interval it advises
//	tasks.unknown               == 0                       every task's outcome was learned
//	requests.setup_errors_rate  <= 1%                      initialize / server/discover
//
// All but tasks.unknown pass without data (no task was seen ending, no handshake: the
// evidence threshold tasks.done > 0 judges whether the target worked). The two latency SLOs
// read P; without a P (the clients do not follow the advice, or none
// was advertised and the clients have no interval) they are not applied, and say why.
const (
	sloLagFloor   = time.Second
	sloLagSlack   = 250 * time.Millisecond
	sloGetFloor   = 500 * time.Millisecond
	sloGetCeiling = 5 * time.Second
	sloSetupRate  = 1.0 // percent
)

// The metrics the default SLOs read, in SLO order.
const (
	sloLagMetric     = "detection_lag.p99"
	sloGetMetric     = "latency_tasks_get.p99"
	sloUnknownMetric = "tasks.unknown"
	sloSetupMetric   = "requests.setup_errors_rate"
)

// SLOMetrics are the window metrics of the default SLOs whose limit is known only at the end
// of a run (the advertised interval is learned from the first task): WindowTally.Defer keeps
// their window values until then.
var SLOMetrics = []string{sloLagMetric, sloGetMetric}

// SLOInterval is the P of the default SLOs: where it came from and its value.
type SLOInterval struct {
	// P is the interval; 0 = unknown.
	P time.Duration
	// From says where P came from, for the dry run and the summary's note: "advertised by
	// the target", "the embedded server's server.poll_interval", "the clients' own
	// client.poll.interval (policy fixed)"...
	From string
	// Known says P is known now; false in a dry run against a target ("from the advertised
	// interval": learned from the run's first task).
	Known bool
	// LagSkip, when not "", is why detection lag is not judged against P: the clients wait
	// by a policy of their own (client.poll.policy exponential...), not every P.
	LagSkip string
}

// SLO is one default SLO resolved for a run: the threshold it is judged by, or why it is not.
type SLO struct {
	Key     string              // the scenario key under slo: (detection_lag, tasks_get, ...)
	Formula string              // the default formula, or "set by the scenario"
	Th      scenarios.Threshold // the threshold, Expr "" when Skip says why not
	Skip    string              // why it is not judged: "off in the scenario", "no interval"...
	Note    string              // what the limit was computed from, for the summary
}

// DefaultSLOs resolves the default SLOs of cfg (the scenario's slo section) for a run whose
// clients were advised p; ths are the scenario's thresholds: a default over a metric the
// scenario judges itself is superseded by it. When p is not known the latency SLOs carry
// their formula with an empty Th (a dry run prints them as "from the advertised interval").
func DefaultSLOs(cfg scenarios.SLO, p SLOInterval, ths []scenarios.Threshold) []SLO {
	own := map[string]bool{}
	for _, th := range ths {
		if t, err := ParseThreshold(th.Expr); err == nil {
			own[t.Metric] = true
		}
	}
	ms := func(d time.Duration) string {
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', -1, 64) + "ms"
	}
	lag := func(p time.Duration) time.Duration { return max(2*p+sloLagSlack, sloLagFloor) }
	get := func(p time.Duration) time.Duration { return min(max(p, sloGetFloor), sloGetCeiling) }
	out := []SLO{
		{Key: scenarios.SLODetectionLag, Formula: "detection_lag.p99 <= max(2*P + 250ms, 1s)"},
		{Key: scenarios.SLOTasksGet, Formula: "latency_tasks_get.p99 <= min(max(P, 500ms), 5s)"},
		{Key: scenarios.SLOUnknownTasks, Formula: "tasks.unknown == 0"},
		{Key: scenarios.SLOSetupErrors, Formula: "requests.setup_errors_rate <= 1%"},
	}
	metricOf := [...]string{sloLagMetric, sloGetMetric, sloUnknownMetric, sloSetupMetric}
	for i := range out {
		s, lim := &out[i], cfg.Limit(out[i].Key)
		switch {
		case lim.Off:
			s.Skip = "off in the scenario (slo." + s.Key + ": off)"
			continue
		case own[metricOf[i]]:
			s.Skip = "superseded by the scenario's own threshold on " + metricOf[i]
			continue
		case lim.Value != "":
			op := " <= "
			s.Formula, s.Th.Expr, s.Note = "set by the scenario (slo."+s.Key+")", metricOf[i]+op+lim.Value, "slo."+s.Key+" in the scenario"
			continue
		}
		switch i {
		case 0, 1:
			if i == 0 && p.LagSkip != "" {
				s.Skip = p.LagSkip
				continue
			}
			if !p.Known {
				s.Note = "P from the advertised interval (learned from the run's first task)"
				if p.From != "" {
					s.Note = "P " + p.From
				}
				continue
			}
			if p.P <= 0 {
				s.Skip = "no poll interval to judge it by: " + p.From
				continue
			}
			f := lag
			if i == 1 {
				f = get
			}
			s.Th.Expr = metricOf[i] + " <= " + ms(f(p.P))
			s.Note = "P = " + ms(p.P) + ", " + p.From
		case 2:
			s.Th.Expr = sloUnknownMetric + " == 0"
		case 3:
			s.Th.Expr = sloSetupMetric + " <= " + strconv.FormatFloat(sloSetupRate, 'f', -1, 64) + "%"
		}
	}
	return out
}

// judgedSLOs returns the thresholds of the SLOs that are judged, in order, and their notes.
func judgedSLOs(slos []SLO) ([]scenarios.Threshold, []string) {
	var ths []scenarios.Threshold
	var notes []string
	for _, s := range slos {
		if s.Skip == "" && s.Th.Expr != "" {
			th := s.Th
			if t, err := ParseThreshold(th.Expr); err == nil && t.Metric != sloUnknownMetric {
				// No detection, no tasks/get (synchronous calls, expired tasks) or no setup
				// request (an era without a handshake) is nothing to judge; tasks.done > 0
				// still asks that the target did work.
				th.OnNoData = scenarios.NoDataPass
			}
			ths = append(ths, th)
			notes = append(notes, s.Note)
		}
	}
	return ths, notes
}

// slosOf returns the default SLOs a summary's thresholds were judged by, as judged (a
// merge judges the whole by its first shard's).
func slosOf(results []ThresholdResult) []SLO {
	var out []SLO
	for _, r := range results {
		if r.Source == SourceSLO {
			out = append(out, SLO{Th: scenarios.Threshold{Expr: r.Expr}, Note: r.Note})
		}
	}
	return out
}
