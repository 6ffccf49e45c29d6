package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/tasksim/tasksim/results"
)

// column reads one column of timeseries.csv in dir as numbers (an empty cell reads as 0).
func column(t *testing.T, dir, name string) []float64 {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, results.TimeseriesFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("timeseries.csv: %d rows, %v", len(rows), err)
	}
	i := slices.Index(rows[0], name)
	if i < 0 {
		t.Fatalf("timeseries.csv has no column %q", name)
	}
	var out []float64
	for _, r := range rows[1:] {
		v, _ := strconv.ParseFloat(r[i], 64)
		out = append(out, v)
	}
	return out
}
