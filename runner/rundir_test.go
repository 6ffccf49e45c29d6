package runner

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRunInDir: a directory holds a run when it holds its measurements or a summary with a
// verdict; an error summary alone (a run that measured nothing) is no run to keep.
func TestRunInDir(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"empty", nil, ""},
		{"an error summary alone", map[string]string{"summary.json": `{"verdict": "error"}`, "report.html": "<html>"}, ""},
		{"a summary with a verdict", map[string]string{"summary.json": `{"verdict": "pass"}`}, "summary.json"},
		{"an unreadable summary", map[string]string{"summary.json": `{"verdict"`}, "summary.json"},
		{"an interrupted run's measurements", map[string]string{"timeseries.csv": "t_s\n"}, "timeseries.csv"},
		{"a contract suite", map[string]string{"conform.json": "{}"}, "conform.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for f, text := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := RunInDir(dir); got != tc.want {
				t.Errorf("RunInDir = %q, want %q", got, tc.want)
			}
		})
	}
	if got := RunInDir(filepath.Join(t.TempDir(), "absent")); got != "" {
		t.Errorf("RunInDir of a missing directory = %q, want \"\"", got)
	}
}
