package results

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/tasksim/tasksim/metrics"
)

// The files of a run directory that this package writes.
const (
	SummaryJSONFile = "summary.json"
	SummaryCSVFile  = "summary.csv"
	TimeseriesFile  = "timeseries.csv"
	// HistogramLogFile is the HdrHistogram interval log; cmd/tasksim writes it with
	// metrics.LogWriter, beside the files this package writes.
	HistogramLogFile = "histograms.hlog"
)

// summaryCSVHeader is the header of summary.csv: a contract.
var summaryCSVHeader = []string{"metric", "unit", "count", "min", "p50", "p90", "p99", "p999", "max", "mean"}

// WriteSummary writes summary.json (indented, keys in the order of the Summary fields,
// map keys sorted, trailing newline) and summary.csv into dir, creating dir if needed.
// Each file is written to a temporary file in dir and renamed into place, so an
// interrupted run leaves either the whole file or none.
//
// summary.csv has the header metric,unit,count,min,p50,p90,p99,p999,max,mean and
//   - one row per histogram in Summary.Metrics, in metrics.Hist order;
//   - one row per task outcome, "tasks.created" ... "tasks.dropped", unit "count", the
//     figure in the count column and the other columns empty;
//   - one row per fleet figure, "fleet.poll_amplification" and "fleet.status_reads_per_task"
//     (unit "ratio") and "fleet.polls_per_second" (unit "per_s"), the figure in the mean
//     column (each is a mean: per advised poll, per task, per second; empty when there was
//     nothing to compute it from) and the others empty.
func WriteSummary(dir string, s *Summary) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	js, err := summaryJSON(s)
	if err != nil {
		return err
	}
	if err := writeAtomic(dir, SummaryJSONFile, js); err != nil {
		return err
	}
	return writeAtomic(dir, SummaryCSVFile, summaryCSV(s))
}

// Rendered is what a run writes of its summary into its directory, in memory: summary.json,
// summary.csv and report.html (RenderRun), to be checked before anything is written (a run
// scans its outputs for planted secrets) and written once (Write).
type Rendered struct {
	JSON, CSV, Report []byte
}

// RenderRun renders s, the summary of the run in dir, as the files Write writes; the
// report reads the run's other files (timeseries.csv, histograms.hlog, events.csv) from dir.
func RenderRun(dir string, s *Summary) (*Rendered, error) {
	js, err := summaryJSON(s)
	if err != nil {
		return nil, err
	}
	// The page is rendered from the JSON, as `tasksim report` renders it from the file: the
	// same bytes either way.
	back := new(Summary)
	if err := json.Unmarshal(js, back); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	page, err := renderRunPage(dir, back)
	if err != nil {
		return nil, err
	}
	return &Rendered{JSON: js, CSV: summaryCSV(s), Report: page}, nil
}

// Write writes the rendered files into dir, each atomically, summary.json last: a reader
// that finds summary.json finds every file of the run written (a merge waiting for its
// shards, say).
func (r *Rendered) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	for _, f := range []struct {
		name string
		b    []byte
	}{{SummaryCSVFile, r.CSV}, {ReportFile, r.Report}, {SummaryJSONFile, r.JSON}} {
		if err := writeAtomic(dir, f.name, f.b); err != nil {
			return err
		}
	}
	return nil
}

// ReadSummary reads the summary.json of a run directory, for `tasksim report`. Keys it
// does not know are ignored (but a newer summary's task outcomes are kept: Tasks); what an
// older summary lacks, or holds as null, reads as absent (summaryread.go). A JSON file
// without a run's verdict (pass, fail or error) is refused: it is not a run's summary.
func ReadSummary(dir string) (*Summary, error) {
	b, err := os.ReadFile(filepath.Join(dir, SummaryJSONFile))
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	s := new(Summary)
	if err := json.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("results: %s: %w", filepath.Join(dir, SummaryJSONFile), err)
	}
	switch s.Verdict {
	case VerdictPass, VerdictFail, VerdictError:
	default: // "{}" decodes without error, and would be judged as a run that measured nothing
		return nil, fmt.Errorf("results: %s is not a run's summary: verdict %q, want pass, fail or error", filepath.Join(dir, SummaryJSONFile), s.Verdict)
	}
	return s, nil
}

// summaryJSON encodes s as summary.json holds it. HTML escaping is off: threshold
// expressions keep their < and >.
func summaryJSON(s *Summary) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil { // Encode ends with a newline
		return nil, fmt.Errorf("results: encoding the summary: %w", err)
	}
	return buf.Bytes(), nil
}

// summaryCSV renders summary.csv (see WriteSummary).
func summaryCSV(s *Summary) []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write(summaryCSVHeader)
	for _, name := range metricNames(s.Metrics) {
		st := s.Metrics[name]
		_ = w.Write([]string{name, st.Unit, strconv.FormatInt(st.Count, 10),
			num(st.Min), num(st.P50), num(st.P90), num(st.P99), num(st.P999), num(st.Max), num(st.Mean)})
	}
	for _, oc := range outcomeCounters {
		n := s.Counters[oc.c.Name()]
		_ = w.Write([]string{"tasks." + oc.name, "count", strconv.FormatInt(n, 10), "", "", "", "", "", "", ""})
	}
	amp, reads, pps := s.Fleet.Measured()
	for _, f := range []struct {
		name, unit string
		v          float64
		measured   bool
	}{
		{"fleet.poll_amplification", "ratio", s.Fleet.PollAmplification, amp},
		{"fleet.status_reads_per_task", "ratio", s.Fleet.StatusReadsPerTask, reads},
		{"fleet.polls_per_second", "per_s", s.Fleet.PollsPerSecond, pps},
	} {
		v := num(f.v)
		if !f.measured {
			v = "" // null in summary.json: nothing to compute it from
		}
		_ = w.Write([]string{f.name, f.unit, "", "", "", "", "", "", "", v})
	}
	w.Flush() // a bytes.Buffer does not fail
	return buf.Bytes()
}

// metricNames returns the keys of m: the known histograms in metrics.Hist order, then any
// other (from a summary written by another version) sorted.
func metricNames(m map[string]metrics.Stat) []string {
	var names, other []string
	for h := range metrics.NumHists {
		if _, ok := m[h.Name()]; ok {
			names = append(names, h.Name())
		}
	}
	for name := range m {
		if _, known := metrics.ParseHist(name); !known {
			other = append(other, name)
		}
	}
	slices.Sort(other)
	return append(names, other...)
}

// num formats a figure in as few digits as it takes (figures are rounded to 3 decimals).
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// writeAtomic writes data to dir/name through a temporary file in dir and a rename: the
// file is either whole or absent (or its previous version), never half written.
func writeAtomic(dir, name string, data []byte) error {
	f, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("results: writing %s: %w", name, err)
	}
	return nil
}
