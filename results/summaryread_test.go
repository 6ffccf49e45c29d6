package results

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// oddRunDir holds a summary as an older tasksim wrote it (no fleet, input or errors block, a
// task outcome null, a threshold without no_data or worst_window) with task outcomes a newer
// one might add, some of them not counts.
const oddRunDir = "testdata/report/odd"

// TestReadOddSummary checks that what the odd summary lacks, or holds as null, reads as
// absent in the typed Summary, and that the unknown task outcomes that are not whole numbers
// are skipped rather than refused.
func TestReadOddSummary(t *testing.T) {
	s, err := ReadSummary(oddRunDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range s.Tasks.outcomes() {
		names = append(names, o.name)
	}
	// cancelled is null; fraction (1.5), label, nested and nothing are not whole numbers.
	if want := []string{"created", "completed", "failed", "expired", "unknown", "dropped", "paused"}; !slices.Equal(names, want) {
		t.Errorf("outcomes %v, want %v", names, want)
	}
	if amp, reads, pps := s.Fleet.Measured(); amp || reads || pps {
		t.Errorf("fleet absent, but measured: %v %v %v", amp, reads, pps)
	}
	if s.Input != nil {
		t.Errorf("input absent, but read as %+v", *s.Input)
	}
	th := s.Thresholds
	if !th[0].NoData || th[1].NoData || th[1].WorstWindow != -1 || th[2].WorstWindow != -1 {
		t.Errorf("thresholds: %+v", th)
	}
}

// TestReportOddSummary renders the odd summary: absent figures say no data, the input comes
// from the counters, and the page and the text summary say nothing of what is not there.
func TestReportOddSummary(t *testing.T) {
	s, err := ReadSummary(oddRunDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RenderReport(oddRunDir); err != nil {
		t.Fatal(err)
	}
	p := buildPage(s, nil, nil, nil)
	for _, f := range p.Fleet {
		if f.V != "no data" {
			t.Errorf("fleet fact %s = %q, want no data", f.K, f.V)
		}
	}
	if n := len(p.Outcomes); n != 7 || p.Outcomes[6].Name != "paused" || p.Outcomes[6].Count != "2" || p.Outcomes[6].Share != "25%" {
		t.Errorf("outcomes: %+v", p.Outcomes)
	}
	if r := p.Thresholds; r[0].Value != "no data" || r[1].Windows != "whole run only" || r[2].Windows != "whole run only" {
		t.Errorf("thresholds: %+v", r)
	}
	if len(p.Input.Facts) != 2 || p.Input.Facts[0].K != "elicitations_received" {
		t.Errorf("input from the counters: %+v", p.Input)
	}
	if p.Errors != nil {
		t.Errorf("errors absent, but shown: %+v", p.Errors)
	}
	var b bytes.Buffer
	if err := WriteText(&b, s, ""); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"polls per second -", "FAIL task_e2e.p99 < 2s: no data",
		"latency_tools_call.p99 < 100ms: 140ms (2 of 3 windows failed)\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}

// TestReadSummaryMistypedOutcome: a task outcome this version knows must be a number, as it
// always had to; only the outcomes it does not know are read tolerantly.
func TestReadSummaryMistypedOutcome(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(oddRunDir, SummaryJSONFile))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	b = bytes.Replace(b, []byte(`"created": 8`), []byte(`"created": "8"`), 1)
	if err := os.WriteFile(filepath.Join(dir, SummaryJSONFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSummary(dir); err == nil || !strings.Contains(err.Error(), "created") {
		t.Errorf("a string for tasks.created read without error: %v", err)
	}
}
