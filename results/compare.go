package results

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/scenarios"
)

// `tasksim compare`: a candidate run judged against a baseline run (docs/METRICS.md#compare).

// The files of a comparison, beside the runs' or in --out.
const (
	CompareJSONFile = "compare.json"
	CompareHTMLFile = "compare.html"
)

// Comparison verdicts.
const (
	CompareVerdictPass = "pass" // no regression, nothing failing, both runs whole and trusted: exit 0
	CompareVerdictFail = "fail" // a regression, or a gate or threshold the candidate fails: exit 99
	// CompareVerdictInconclusive: nothing regressed, but the comparison cannot vouch for the
	// candidate (a run interrupted, untrusted or in error, no latency judged): exit 99.
	CompareVerdictInconclusive = "inconclusive"
)

// Metric verdicts.
const (
	MetricPass          = "pass"            // within budget (or better)
	MetricRegression    = "regression"      // worse beyond budget, and beyond the noise of both runs
	MetricWithinNoise   = "within_noise"    // worse beyond budget, but the runs' noise allows no change
	MetricTooFewSamples = "too_few_samples" // a run has too few samples to judge it
	MetricNoData        = "no_data"         // measured in one run only
	MetricShown         = "shown"           // budget off: shown, not judged
)

// Comparison is compare.json: a candidate run against a baseline run, documented field by
// field in docs/METRICS.md#comparejson. Like summary.json its key names and order are a
// contract: keys may be added, none renamed.
type Comparison struct {
	TasksimVersion string     `json:"tasksim_version"`
	Baseline       CompareRun `json:"baseline"`
	Candidate      CompareRun `json:"candidate"`
	// Differences are the configuration fields in which the runs differ, every one allowed
	// (a difference not allowed refuses the comparison); never null.
	Differences []Difference `json:"differences"`
	// Metrics are the figures compared, in table order: only those one run measured at least.
	Metrics []MetricChange `json:"metrics"`
	// Gates, Thresholds and Contract compare pass/fail verdicts: the gates in summary order,
	// the candidate's thresholds (then those only the baseline had), the contract cases by id.
	Gates      []VerdictChange `json:"gates"`
	Thresholds []VerdictChange `json:"thresholds"`
	Contract   []VerdictChange `json:"contract"`
	// ManifestDrift lists the capability manifest's fields that changed; listed, not judged
	// (a canary's server version differs by design).
	ManifestDrift []Difference `json:"manifest_drift"`
	// Failures say why the verdict is fail, one line each, in table order; NotJudged what
	// could not be judged and why; Inconclusive why a comparison without failures is not a
	// pass. Never null.
	Failures     []string `json:"failures"`
	NotJudged    []string `json:"not_judged"`
	Inconclusive []string `json:"inconclusive"`
	Verdict      string   `json:"verdict"`
}

// CompareRun identifies one of the two runs.
type CompareRun struct {
	Dir         string    `json:"dir"`
	Scenario    string    `json:"scenario"`
	Target      string    `json:"target"`
	Protocol    string    `json:"protocol"`
	Seed        uint64    `json:"seed"`
	StartedAt   time.Time `json:"started_at"`
	DurationS   float64   `json:"duration_s"`
	Verdict     string    `json:"verdict"` // the run's own verdict
	Trustworthy bool      `json:"trustworthy"`
	TrustNote   string    `json:"trust_note"`
	Interrupted bool      `json:"interrupted"`
	// Partial says the run is a merge with shards missing (merge.partial).
	Partial bool `json:"partial"`
	// LateByS is how late a side of an A/B run started its load after the common start
	// (shard.late_by_s); 0 otherwise.
	LateByS float64 `json:"late_by_s"`
}

// MetricChange is one metric of both runs.
type MetricChange struct {
	Metric    string    `json:"metric"`
	Unit      string    `json:"unit"`
	Baseline  *Estimate `json:"baseline"`  // null: not measured
	Candidate *Estimate `json:"candidate"` // null: not measured
	Change    *Change   `json:"change"`    // null: not both measured
	Budget    string    `json:"budget"`    // Budget.String
	Source    string    `json:"budget_source"`
	Verdict   string    `json:"verdict"` // Metric*
	Note      string    `json:"note,omitempty"`
}

// VerdictChange is a gate, a threshold or a contract case in both runs: Baseline and
// Candidate are "pass", "fail", "not_evaluated" (a gate), "no_data" (a threshold) or
// "skip" (a case), "" when the run has none; Verdict is "pass", "regression" (passed, now
// fails), "failing" (fails in the candidate), "fixed", or "not_evaluated" (the candidate
// did not judge it: the comparison is inconclusive when the baseline did, and unaffected
// when neither did).
type VerdictChange struct {
	Name      string `json:"name"`
	Baseline  string `json:"baseline"`
	Candidate string `json:"candidate"`
	Verdict   string `json:"verdict"`
}

// CompareOptions are the command line's: budget expressions (--budget) and the fields
// allowed to differ (--allow), on top of the candidate's compare section.
type CompareOptions struct {
	Budgets []string
	Allow   []string
}

// compareSide is one run as read from its directory.
type compareSide struct {
	dir   string
	sum   *Summary
	hists map[metrics.Hist]*hdrhistogram.Histogram // nil: histograms.hlog unreadable
	// sections are the histograms of the run's time sections (batch means, readSections);
	// intervals is the number of intervals its log holds.
	sections  []map[metrics.Hist]*hdrhistogram.Histogram
	intervals int
	note      string // why hists is nil
}

// sectionsOf are h's histograms in each time section (nil where a section has none).
func (s *compareSide) sectionsOf(h metrics.Hist) []*hdrhistogram.Histogram {
	out := make([]*hdrhistogram.Histogram, len(s.sections))
	for i, m := range s.sections {
		out[i] = m[h]
	}
	return out
}

func readSide(dir string) (*compareSide, error) {
	s, err := ReadSummary(dir)
	if err != nil {
		return nil, err
	}
	side := &compareSide{dir: dir, sum: s}
	if side.hists, err = ReadHistogramLogTotals(dir); err != nil {
		side.note = fmt.Sprintf("%s: %v", filepath.Join(dir, HistogramLogFile), err)
	} else if _, _, side.intervals, err = HistogramLogSpan(dir); err != nil {
		side.hists, side.note = nil, fmt.Sprintf("%s: %v", filepath.Join(dir, HistogramLogFile), err)
	}
	return side, nil
}

// readSections reads the time sections of both runs, as many in each (at most Sections,
// and no more than either run has intervals, so that section i of one run and of the
// other stand for the same part of their schedules).
func readSections(b, c *compareSide) {
	n := min(Sections, b.intervals, c.intervals)
	for _, side := range []*compareSide{b, c} {
		if side.hists == nil || n < 1 {
			continue
		}
		sections, err := ReadHistogramLogSections(side.dir, n)
		if err != nil {
			side.hists, side.note = nil, fmt.Sprintf("%s: %v", filepath.Join(side.dir, HistogramLogFile), err)
			continue
		}
		side.sections = sections
	}
}

// Compare judges the run in candidate against the run in baseline, both directories of a
// run (or of a merge). A problem with the directories or the budgets is an error; runs
// that differ where nothing allows it are a *NotComparableError.
func Compare(baseline, candidate string, opts CompareOptions) (*Comparison, error) {
	if SameDir(baseline, candidate) {
		return nil, fmt.Errorf("%s and %s are one directory: a run compared with itself shows no change", baseline, candidate)
	}
	b, err := readSide(baseline)
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	c, err := readSide(candidate)
	if err != nil {
		return nil, fmt.Errorf("candidate: %w", err)
	}
	var sc scenarios.Compare
	if c.sum.Config != nil {
		sc = c.sum.Config.Compare
	}
	for _, a := range opts.Allow {
		if err := checkAllow(a); err != nil {
			return nil, fmt.Errorf("--allow: %w", err)
		}
	}
	budgets, err := budgetsFor(opts.Budgets, sc, max(pollIntervalMS(b.sum), pollIntervalMS(c.sum)))
	if err != nil {
		return nil, err
	}
	allow := slices.Concat(opts.Allow, sc.Allow)
	diffs := differences(b.sum, c.sum, allow)
	var refused []Difference
	for _, d := range diffs {
		if !d.Allowed {
			refused = append(refused, d)
		}
	}
	if len(refused) > 0 {
		return nil, &NotComparableError{Differences: refused}
	}
	cmp := &Comparison{
		TasksimVersion: c.sum.TasksimVersion, Baseline: runRef(b), Candidate: runRef(c),
		Differences: orEmpty(diffs), ManifestDrift: orEmpty(manifestDrift(b.sum.Manifest, c.sum.Manifest)),
		Failures: []string{}, NotJudged: []string{}, Inconclusive: []string{},
	}
	readSections(b, c)
	for _, side := range []*compareSide{b, c} {
		if side.note != "" {
			cmp.NotJudged = append(cmp.NotJudged, "latencies: "+side.note)
		}
	}
	cmp.Metrics = compareAll(b, c, budgets)
	cmp.NotJudged = append(cmp.NotJudged, unmeasuredBudgets(budgets, cmp.Metrics)...)
	for _, m := range cmp.Metrics {
		if !m.Baseline.finite() || !m.Candidate.finite() || !m.Change.finite() {
			return nil, fmt.Errorf("%s: a figure that is not a number (summary.json of %s or %s is damaged)", m.Metric, baseline, candidate)
		}
	}
	cmp.Gates = gateChanges(b.sum, c.sum)
	cmp.Thresholds = thresholdChanges(b.sum, c.sum)
	cmp.Contract = caseChanges(b.sum.Contract, c.sum.Contract)
	cmp.judge()
	return cmp, nil
}

// unmeasuredBudgets names the budgets the command line or the scenario set on metrics that
// neither run measured: asked for, and judged nowhere.
func unmeasuredBudgets(budgets map[string]Budget, rows []MetricChange) []string {
	var out []string
	for _, name := range sortedKeys(budgets) {
		if bud := budgets[name]; bud.Source != BudgetDefault && !bud.Off && !slices.ContainsFunc(rows, func(m MetricChange) bool { return m.Metric == name }) {
			out = append(out, fmt.Sprintf("%s: budgeted by %s, measured by neither run", name, budgetPlace(bud.Source)))
		}
	}
	return out
}

// SameDir says whether a and b name one directory, as far as can be told even before
// either exists: symbolic links followed where they resolve, then made absolute.
func SameDir(a, b string) bool {
	abs := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		p, _ = filepath.Abs(p)
		return p
	}
	return abs(a) == abs(b)
}

// pollIntervalMS is the poll interval the run's clients were advised, in ms: the
// manifest's, or the one a shard block recorded; 0 = unknown.
func pollIntervalMS(s *Summary) float64 {
	if m := s.Manifest; m != nil && m.PollIntervalMs != nil {
		return float64(*m.PollIntervalMs)
	}
	if s.Shard != nil {
		return s.Shard.PollIntervalMS
	}
	return 0
}

func runRef(s *compareSide) CompareRun {
	x := s.sum
	r := CompareRun{Dir: s.dir, Scenario: x.Scenario, Target: x.Target, Protocol: x.Protocol, Seed: x.Seed,
		StartedAt: x.StartedAt, DurationS: x.DurationS, Verdict: x.Verdict, Trustworthy: x.Trustworthy,
		TrustNote: x.TrustNote, Interrupted: x.Interrupted, Partial: x.Merge != nil && x.Merge.Partial}
	if x.Shard != nil && x.Shard.ABSide != "" { // the sides of an A/B run start together
		r.LateByS = x.Shard.LateByS
	}
	return r
}

func orEmpty[T any](x []T) []T {
	if x == nil {
		return []T{}
	}
	return x
}

// ExitCode is the comparison's exit code: 0 pass, 99 otherwise.
func (c *Comparison) ExitCode() int {
	if c.Verdict == CompareVerdictPass {
		return 0
	}
	return ExitGateFailed
}

// judge fills Failures, NotJudged, Inconclusive and the verdict from the rows. In doubt it
// is not a pass: what the baseline showed and the candidate does not (a gate, a contract
// case, a metric), a change beyond its budget that the runs' noise cannot resolve, a run
// that is not whole, trusted and passing on its own, all make the comparison inconclusive.
func (c *Comparison) judge() {
	c.judgeMetrics()
	c.judgeRows()
	c.judgeRun("baseline", c.Baseline)
	c.judgeRun("candidate", c.Candidate)
	if c.Candidate.Verdict == VerdictFail {
		c.Failures = append(c.Failures, "the candidate run fails on its own: its verdict is fail (see its summary)")
	}
	switch {
	case len(c.Failures) > 0:
		c.Verdict = CompareVerdictFail
	case len(c.Inconclusive) > 0:
		c.Verdict = CompareVerdictInconclusive
	default:
		c.Verdict = CompareVerdictPass
	}
}

// judgeMetrics reads the metric rows: regressions fail, changes beyond the budget that the
// noise cannot resolve and metrics the candidate lost are inconclusive, and at least one
// latency must have been judged.
func (c *Comparison) judgeMetrics() {
	judged := 0
	for _, m := range c.Metrics {
		switch m.Verdict {
		case MetricRegression:
			c.Failures = append(c.Failures, m.Metric+": "+m.Note)
		case MetricWithinNoise:
			c.Inconclusive = append(c.Inconclusive, m.Metric+": "+m.Note)
		case MetricNoData:
			if m.Candidate == nil {
				c.Inconclusive = append(c.Inconclusive, m.Metric+": measured in the baseline, not in the candidate")
			} else {
				c.NotJudged = append(c.NotJudged, m.Metric+": "+m.Note)
			}
		case MetricTooFewSamples:
			c.NotJudged = append(c.NotJudged, m.Metric+": "+m.Note)
		}
		if m.Unit == "ms" && (m.Verdict == MetricPass || m.Verdict == MetricRegression) {
			judged++
		}
	}
	if judged == 0 {
		c.Inconclusive = append(c.Inconclusive, "no latency could be judged: see not_judged")
	}
}

// rowSet is the gates, the thresholds or the contract cases of a comparison.
type rowSet struct {
	what string // "gate", "threshold", "contract case"
	rows []VerdictChange
}

func (c *Comparison) rowSets() []rowSet {
	return []rowSet{{"gate", c.Gates}, {"threshold", c.Thresholds}, {"contract case", c.Contract}}
}

// unjudged reports whether neither run judged the row: a gate not evaluated, a case
// skipped or a threshold without data in both, or absent from the baseline.
func (v VerdictChange) unjudged() bool {
	return v.Verdict == "not_evaluated" && v.Baseline != "pass" && v.Baseline != "fail"
}

// shown reports whether the text and the page list the row: neither a plain pass nor
// judged in neither run (compare.json has every row).
func (v VerdictChange) shown() bool {
	return v.Verdict != "pass" && !v.unjudged()
}

// judgeRows reads the gates, thresholds and contract cases.
func (c *Comparison) judgeRows() {
	for _, set := range c.rowSets() {
		for _, r := range set.rows {
			if r.unjudged() {
				continue // judged in neither run: nothing was lost
			}
			switch r.Verdict {
			case "regression":
				c.Failures = append(c.Failures, fmt.Sprintf("%s %s: passed in the baseline, fails in the candidate", set.what, r.Name))
			case "failing":
				was := "as in the baseline"
				if r.Baseline != "fail" {
					was = "in the baseline: " + cmp.Or(r.Baseline, "absent")
				}
				c.Failures = append(c.Failures, fmt.Sprintf("%s %s: fails in the candidate (%s)", set.what, r.Name, was))
			case "not_evaluated":
				c.Inconclusive = append(c.Inconclusive, fmt.Sprintf("%s %s: %s in the baseline, not evaluated in the candidate", set.what, r.Name, r.Baseline))
			}
		}
	}
}

// judgeRun says why run (the baseline or the candidate) cannot vouch for the comparison.
func (c *Comparison) judgeRun(name string, run CompareRun) {
	why := ""
	switch {
	case run.Verdict == VerdictError:
		why = "ended in an error: its figures are not a measurement"
	case run.Interrupted:
		why = "was interrupted: it is not whole"
	case run.Partial:
		why = "is a partial merge: shards are missing from it"
	case !run.Trustworthy:
		why = "is not trustworthy (its load generator fell behind its schedule): its latencies are the generator's as much as the server's"
	case strings.HasPrefix(run.TrustNote, "not checked"):
		why = "was not checked for trust (" + run.TrustNote + "): whether its load generator kept its schedule is unknown"
	case run.LateByS > 1:
		why = fmt.Sprintf("started its load %ss after the common start: the two sides did not run side by side", num(run.LateByS))
	case name == "baseline" && run.Verdict == VerdictFail:
		why = "fails on its own (verdict fail): it is no reference to be no worse than"
	}
	if why != "" {
		c.Inconclusive = append(c.Inconclusive, "the "+name+" run "+why)
	}
}

// gateChanges compares the gates, in summary order.
func gateChanges(b, c *Summary) []VerdictChange {
	bl, cl := b.Gates.list(), c.Gates.list()
	out := make([]VerdictChange, len(cl))
	for i := range cl {
		out[i] = verdictChange(cl[i].name, gateState(bl[i]), gateState(cl[i]))
	}
	return out
}

func gateState(g namedGate) string {
	switch {
	case !g.evaluated:
		return "not_evaluated"
	case g.pass:
		return "pass"
	}
	return "fail"
}

// verdictChange judges one pass/fail row.
func verdictChange(name, b, c string) VerdictChange {
	v := VerdictChange{Name: name, Baseline: b, Candidate: c}
	switch {
	case c == "fail" && b == "pass":
		v.Verdict = "regression"
	case c == "fail":
		v.Verdict = "failing"
	case b == "fail" && c == "pass":
		v.Verdict = "fixed"
	case c == "pass":
		v.Verdict = "pass"
	default: // inconclusive when the baseline judged it (judgeRows)
		v.Verdict = "not_evaluated"
	}
	return v
}

// thresholdChanges compares the thresholds by expression and source: the candidate's in
// order, then those only the baseline had.
func thresholdChanges(b, c *Summary) []VerdictChange {
	key := func(t ThresholdResult) string { return t.Source + ": " + t.Expr }
	state := func(t ThresholdResult) string {
		switch {
		case !t.Pass:
			return "fail" // no data without on_no_data: pass fails the run, and so here
		case t.NoData:
			return "no_data"
		}
		return "pass"
	}
	base := map[string]string{}
	for _, t := range b.Thresholds {
		base[key(t)] = state(t)
	}
	var out []VerdictChange
	seen := map[string]bool{}
	for _, t := range c.Thresholds {
		k := key(t)
		seen[k] = true
		out = append(out, verdictChange(k, base[k], state(t)))
	}
	for _, t := range b.Thresholds {
		if k := key(t); !seen[k] {
			out = append(out, verdictChange(k, state(t), ""))
		}
	}
	return orEmpty(out)
}

// caseChanges compares the contract cases by id; nil when neither run ran the suite.
func caseChanges(b, c *Contract) []VerdictChange {
	if b == nil && c == nil {
		return []VerdictChange{}
	}
	base := map[string]string{}
	if b != nil {
		for _, k := range b.Cases {
			base[k.ID] = string(k.Verdict)
		}
	}
	var out []VerdictChange
	if c != nil {
		for _, k := range c.Cases {
			out = append(out, verdictChange(k.ID, base[k.ID], string(k.Verdict)))
			delete(base, k.ID)
		}
	}
	for _, k := range sortedKeys(base) {
		out = append(out, verdictChange(k, base[k], ""))
	}
	return orEmpty(out)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// itoa64 formats a count.
func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
