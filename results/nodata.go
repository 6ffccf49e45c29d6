package results

import (
	"bytes"
	"encoding/json"
)

// A figure a run has no data for is null in summary.json, never a stand-in number (0, -1)
// that a reader could take for a measurement. In Go the types keep plain numbers, so that
// code reading a Summary stays simple; each says how to tell a figure without data.

// fleetMeasured marks the Fleet figures with data. Its zero value marks none, so that a
// Fleet that nothing filled (a run that measured nothing, a summary without a fleet block)
// says no data rather than a measured 0.
type fleetMeasured struct{ amplification, statusReads, pollsPerSecond bool }

// fleetJSON is Fleet as summary.json holds it: the same keys, null for no data.
type fleetJSON struct {
	PollAmplification  *float64 `json:"poll_amplification"`
	StatusReadsPerTask *float64 `json:"status_reads_per_task"`
	PollsPerSecond     *float64 `json:"polls_per_second"`
}

// Measured reports which Fleet figures had data: poll_amplification,
// status_reads_per_task and polls_per_second.
func (f Fleet) Measured() (amplification, statusReads, pollsPerSecond bool) {
	return f.measured.amplification, f.measured.statusReads, f.measured.pollsPerSecond
}

// MarshalJSON writes a figure without data as null.
func (f Fleet) MarshalJSON() ([]byte, error) {
	return marshalPlain(fleetJSON{
		PollAmplification:  optFigure(f.PollAmplification, !f.measured.amplification),
		StatusReadsPerTask: optFigure(f.StatusReadsPerTask, !f.measured.statusReads),
		PollsPerSecond:     optFigure(f.PollsPerSecond, !f.measured.pollsPerSecond),
	})
}

// UnmarshalJSON reads a null or absent figure as one without data. (A summary without a
// fleet block at all leaves the zero Fleet: no data either.)
func (f *Fleet) UnmarshalJSON(b []byte) error {
	var j fleetJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*f = Fleet{}
	f.PollAmplification, f.measured.amplification = readFigure(j.PollAmplification)
	f.StatusReadsPerTask, f.measured.statusReads = readFigure(j.StatusReadsPerTask)
	f.PollsPerSecond, f.measured.pollsPerSecond = readFigure(j.PollsPerSecond)
	return nil
}

// thresholdJSON is ThresholdResult as summary.json holds it: the same keys in the same
// order (TestThresholdJSONKeys), value and worst_value null when there is none. Read back,
// a nil pointer is a key that was null or absent.
type thresholdJSON struct {
	Expr             string   `json:"expr"`
	Value            *float64 `json:"value"`
	Pass             bool     `json:"pass"`
	Unit             string   `json:"unit"`
	Source           string   `json:"source"`
	Note             string   `json:"note,omitempty"`
	NoData           bool     `json:"no_data"`
	OnNoData         string   `json:"on_no_data,omitempty"`
	WindowsEvaluated int      `json:"windows_evaluated"`
	WindowsFailed    int      `json:"windows_failed"`
	WorstWindow      *int     `json:"worst_window"`
	WorstValue       *float64 `json:"worst_value"`
	Error            string   `json:"error,omitempty"`
	AbortOnFail      bool     `json:"abort_on_fail,omitempty"`
}

// MarshalJSON writes value as null when the run had no data for the threshold (or its
// expression did not parse), and worst_value as null when no window was evaluated. Read
// back, a null is 0 and NoData, Error or WorstWindow -1 say why.
func (r ThresholdResult) MarshalJSON() ([]byte, error) {
	return marshalPlain(thresholdJSON{
		Expr: r.Expr, Value: optFigure(r.Value, r.NoData || r.Error != ""), Pass: r.Pass, Unit: r.Unit,
		Source: r.Source, Note: r.Note, NoData: r.NoData, OnNoData: r.OnNoData,
		WindowsEvaluated: r.WindowsEvaluated, WindowsFailed: r.WindowsFailed,
		WorstWindow: &r.WorstWindow, WorstValue: optFigure(r.WorstValue, r.WorstWindow < 0),
		Error: r.Error, AbortOnFail: r.AbortOnFail,
	})
}

// UnmarshalJSON reads what MarshalJSON writes, and an older or odd threshold the same way:
// a value null or absent without an error is no data (NoData, as an older summary wrote
// it without no_data), and a worst_window null or absent is no window evaluated (-1).
func (r *ThresholdResult) UnmarshalJSON(b []byte) error {
	var j thresholdJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	value, measured := readFigure(j.Value)
	worst, _ := readFigure(j.WorstValue)
	*r = ThresholdResult{
		Expr: j.Expr, Value: value, Pass: j.Pass, Unit: j.Unit, Source: j.Source, Note: j.Note,
		NoData: j.NoData || !measured && j.Error == "", OnNoData: j.OnNoData,
		WindowsEvaluated: j.WindowsEvaluated, WindowsFailed: j.WindowsFailed, WorstWindow: -1,
		WorstValue: worst, Error: j.Error, AbortOnFail: j.AbortOnFail,
	}
	if j.WorstWindow != nil {
		r.WorstWindow = *j.WorstWindow
	}
	return nil
}

// marshalPlain is json.Marshal without HTML escaping, as summary.json is written (a
// threshold expression keeps its < and >).
func marshalPlain(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// optFigure is v, or nil (null) when there is no data.
func optFigure(v float64, noData bool) *float64 {
	if noData {
		return nil
	}
	return &v
}

// readFigure reads a figure: nil (null or absent) is 0 without data.
func readFigure(p *float64) (v float64, measured bool) {
	if p == nil {
		return 0, false
	}
	return *p, true
}

// measuredFigure is v for a gate's evidence, or nil (null) when there is no data.
func measuredFigure(v float64, noData bool) *float64 {
	if noData {
		return nil
	}
	return &v
}

// knownCount is a count from the embedded server for the evidence: nil (null) when it is
// -1, unknown on an external target.
func knownCount(n int64) *int64 {
	if n < 0 {
		return nil
	}
	return &n
}

// ledgerNote says why a figure of the embedded server's domain ledger is null.
const ledgerNote = "not observable on an external target: the domain ledger is the embedded server's"
