package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Result is sweep.json: the grid, every cell's figures and verdict, and the sweep's
// answer (the recommended cell for each client count, and the capacity). The printed answer,
// sweep.csv and sweep.html are rendered from it alone, so `tasksim report SWEEPDIR`
// re-renders sweep.html from a saved sweep. Slices and maps are never null.
type Result struct {
	TasksimVersion string   `json:"tasksim_version"`
	Scenario       string   `json:"scenario"` // the scenario NAME or FILE, as given
	Vary           []Vary   `json:"vary"`     // the --vary dimensions, in the order given
	SLOs           []string `json:"slos"`     // the --slo expressions every recommended cell meets
	// Interrupted says a signal (Ctrl-C, SIGTERM) stopped the sweep in cell InterruptedIn:
	// a partial sweep recommends nothing and reports no capacity.
	Interrupted   bool   `json:"interrupted"`
	InterruptedIn string `json:"interrupted_in,omitempty"`
	// Recommended holds one pick per client count that has a qualifying cell, in increasing
	// client count; a single pick when clients are not varied.
	Recommended []Pick `json:"recommended"`
	// NoRecommendation says why Recommended is empty; "" when it is not.
	NoRecommendation string `json:"no_recommendation,omitempty"`
	// Indistinguishable says, per client count, why it has no recommendation although cells
	// qualified: the cheapest differ by less than the noise of the run; absent when none.
	Indistinguishable []string `json:"indistinguishable,omitempty"`
	// Capacity is, with --vary clients, the largest client count the server carried; null
	// when clients are not varied, or with NoCapacity saying why.
	Capacity   *Capacity `json:"capacity"`
	NoCapacity string    `json:"no_capacity,omitempty"`
	Cells      []Cell    `json:"cells"` // in grid order, the last --vary varying fastest
	ExitCode   int       `json:"exit_code"`
}

// Vary is one --vary: a name and its values, in the order given. The name is an alias
// (poll_interval, clients, rate, duration) or a scenario path, as for --set.
type Vary struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// Pick is the recommended cell of one client count.
type Pick struct {
	Clients      int               `json:"clients"`                 // virtual clients the cell started
	PollInterval string            `json:"poll_interval,omitempty"` // its --vary poll_interval value; "" when not varied
	Cell         string            `json:"cell"`                    // its run directory in the sweep's, "cell-03"
	Values       map[string]string `json:"values"`                  // every varied value of the cell, by --vary name
	RequestRate  float64           `json:"request_rate"`            // requests per second the server served
	RunnerUp     string            `json:"runner_up,omitempty"`     // the qualifying cell with the next lowest rate
	// Warning is the cell's trust note when its load generator fell behind its schedule.
	Warning string `json:"warning,omitempty"`
}

// Capacity is the largest client count below the first count that has no qualifying
// cell (any value of the other --vary dimensions may be the one that qualifies there).
type Capacity struct {
	Clients      int               `json:"clients"`                 // virtual clients
	Cell         string            `json:"cell"`                    // the recommended cell at that count
	PollInterval string            `json:"poll_interval,omitempty"` // its --vary poll_interval value, as in Pick
	Values       map[string]string `json:"values"`                  // its varied values, by --vary name
	// LimitFound says a larger count was tried and failed (FirstFailure); false when every
	// count tried qualified: the server carries at least Clients, the limit is further up.
	LimitFound   bool     `json:"limit_found"`
	FirstFailure *Failure `json:"first_failure,omitempty"`
	// Contiguous is false when a count above FirstFailure qualified again (PassedAbove): the
	// capacity stays below the first failure, since a fleet growing to those counts passes
	// through it.
	Contiguous  bool   `json:"contiguous"`
	PassedAbove []int  `json:"passed_above"`
	Warning     string `json:"warning,omitempty"` // the trust note of Cell, as in Pick
}

// Failure is a client count with no qualifying cell.
type Failure struct {
	Clients int    `json:"clients"`
	Why     string `json:"why"`
}

// Roles of a cell in the answer.
const (
	RoleRecommended = "recommended"
	RoleRunnerUp    = "runner-up"
	RoleLost        = "lost"
	// RoleIndistinguishable is a qualifying cell of a client count whose cheapest cells are
	// indistinguishable: their request rates differ by less than the noise (rank.go).
	RoleIndistinguishable = "indistinguishable"
)

// Cell is one cell of the grid: its values, what its run measured, and its part in
// the answer.
type Cell struct {
	Index   int               `json:"index"`
	Cell    string            `json:"cell"`    // its run directory in the sweep's, "cell-03"
	Values  map[string]string `json:"values"`  // by --vary name
	Clients int               `json:"clients"` // virtual clients its scenario starts
	Run     bool              `json:"run"`     // false: the sweep stopped before it
	// ExitCode is its run's exit code (99 a gate or threshold failed, 130 interrupted).
	ExitCode int `json:"exit_code"`
	// Error says why the cell has no figures; "" when it has.
	Error       string   `json:"error,omitempty"`
	Verdict     string   `json:"verdict"`     // its run's verdict; "" without figures
	Protocol    string   `json:"protocol"`    // the protocol version its run spoke; "" without figures
	Failed      []string `json:"failed"`      // the gates and thresholds of the run that failed
	Interrupted bool     `json:"interrupted"` // its run stopped before its end
	Trustworthy bool     `json:"trustworthy"`
	TrustNote   string   `json:"trust_note,omitempty"`
	SLOFails    []string `json:"slo_fails"` // the --slo it missed, each with its value
	// Qualifies says it may be recommended: its run ended whole and passed (exit 0, verdict
	// pass) and it met every --slo.
	Qualifies bool     `json:"qualifies"`
	Figures   *Figures `json:"figures"` // null without a result
	Role      string   `json:"role"`    // recommended, runner-up or lost
	Why       string   `json:"why"`     // why it was not recommended; "" when it was
}

// Figures are what a cell measured: the columns of sweep.csv after the varied values.
type Figures struct {
	RequestRate float64 `json:"request_rate"` // requests sent per second of the run, every method
	// RequestRateNoise is the run's own noise on RequestRate, one standard deviation in
	// req/s: sqrt(requests) / duration_s, the spread of a count of N independent events
	// (docs/METRICS.md#sweep_noise). 0 = unknown (a sweep.json written before it).
	RequestRateNoise    float64 `json:"request_rate_noise"`
	PollsPerTaskMean    float64 `json:"polls_per_task_mean"` // tasks/get per task
	PollAmplification   float64 `json:"poll_amplification"`  // fleet: polls sent / polls advised
	DetectionLagP50     float64 `json:"detection_lag_p50"`   // ms
	DetectionLagP99     float64 `json:"detection_lag_p99"`   // ms
	TaskE2EP99          float64 `json:"task_e2e_p99"`        // ms
	Errors              int64   `json:"errors"`              // requests that failed (metrics.Outcome.IsError)
	BackpressureSignals int64   `json:"backpressure_signals"`
	// CreatesPushedBack counts the creates the server refused as backpressure (tools/call
	// requests of outcome backpressure: 429, 503 with Retry-After, a capacity refusal): a
	// cell with any did not have its clients carried, whatever its verdict. Refusals of
	// other kinds (a 404 of a session a fault dropped, bad arguments) are not counted here.
	CreatesPushedBack int64 `json:"creates_pushed_back"`
	TasksCompleted    int64 `json:"tasks_completed"`
}

// Files of a sweep directory, beside one run directory per cell (cell-00, ...).
const (
	JSONFile = "sweep.json" // the Result, from which the others are rendered
	CSVFile  = "sweep.csv"  // one row per cell (WriteCSV)
	HTMLFile = "sweep.html" // the page (WriteHTML)
)

// cellName is the run directory of the cell at index i.
func cellName(i int) string { return fmt.Sprintf("cell-%02d", i) }

// label names a cell by its values: "poll_interval=1s clients=500".
func (r *Result) label(c *Cell) string {
	parts := make([]string, len(r.Vary))
	for i, v := range r.Vary {
		parts[i] = v.Name + "=" + c.Values[v.Name]
	}
	return strings.Join(parts, " ")
}

// clientsVar is the index in Vary of the dimension that sets the client count (clients, or
// its path workload.clients), -1 when clients are not varied.
func (r *Result) clientsVar() int {
	return slices.IndexFunc(r.Vary, func(v Vary) bool { return SetsClients(v.Name) })
}

// SetsClients reports whether the dimension name sets the client count: the alias clients
// or its scenario path workload.clients. A plan varies at most one of them.
func SetsClients(name string) bool { return name == "clients" || name == "workload.clients" }

// cell returns the cell named name, nil if there is none.
func (r *Result) cell(name string) *Cell {
	for i := range r.Cells {
		if r.Cells[i].Cell == name {
			return &r.Cells[i]
		}
	}
	return nil
}

// WriteJSON writes r as dir/sweep.json, indented; HTML escaping is off, so that SLO
// expressions keep their < and >.
func WriteJSON(dir string, r *Result) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, JSONFile), b.Bytes(), 0o644)
}

// ReadJSON reads dir/sweep.json (see ParseJSON).
func ReadJSON(dir string) (*Result, error) {
	path := filepath.Join(dir, JSONFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r, err := ParseJSON(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// ParseJSON decodes a sweep.json and checks what rendering relies on.
func ParseJSON(b []byte) (*Result, error) {
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	if err := r.check(); err != nil {
		return nil, err
	}
	return &r, nil
}

// check reports every way r breaks the shape the sweep writes that rendering relies on: at
// least one dimension, each with values; every cell holding one of the values of each
// dimension; figures for every recommended cell and runner-up; the first failure of a
// capacity whose limit was found.
func (r *Result) check() error {
	var errs []error
	if len(r.Vary) == 0 {
		errs = append(errs, errors.New("vary: no dimension"))
	}
	for i, v := range r.Vary {
		if len(v.Values) == 0 {
			errs = append(errs, fmt.Errorf("vary[%d] %s: no values", i, v.Name))
		}
	}
	for i := range r.Cells {
		c := &r.Cells[i]
		for _, v := range r.Vary {
			if !slices.Contains(v.Values, c.Values[v.Name]) {
				errs = append(errs, fmt.Errorf("cells[%d]: %s=%q is not one of its values", i, v.Name, c.Values[v.Name]))
			}
		}
		if c.Figures == nil && (c.Role == RoleRecommended || c.Role == RoleRunnerUp) {
			errs = append(errs, fmt.Errorf("cells[%d]: %s without figures", i, c.Role))
		}
	}
	if c := r.Capacity; c != nil && c.LimitFound && c.FirstFailure == nil {
		errs = append(errs, errors.New("capacity: limit_found without first_failure"))
	}
	return errors.Join(errs...)
}
