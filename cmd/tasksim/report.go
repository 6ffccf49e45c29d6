package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/results"
)

// runReport is `tasksim report DIR`: it re-renders DIR/report.html from the run's saved
// files (summary.json, timeseries.csv, histograms.hlog, events.csv). Rendering is
// deterministic, so a saved run re-renders to the report the run wrote.
func runReport(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("report", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: tasksim report DIR

Re-renders DIR/%s from the files of the run directory DIR: %s (required),
%s, %s and %s (each optional: its part of the report then
says "not recorded"). Rendering is deterministic: the files a run wrote give the report it
wrote, byte for byte. Prints the report's path.

Exit codes: 0 written, 1 DIR or its files cannot be read or written, 2 usage.
`, results.ReportFile, results.SummaryJSONFile, results.TimeseriesFile, results.HistogramLogFile, results.EventsFile)
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("want one run directory, got %d arguments (see 'tasksim report --help')", fs.NArg())
	}
	dir := fs.Arg(0)
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("run directory %s: %w", dir, unwrapPath(err))
	}
	if !st.IsDir() {
		return fmt.Errorf("run directory %s: not a directory", dir)
	}
	if err := results.WriteReport(dir); err != nil {
		return err
	}
	fmt.Fprintln(stdout, filepath.Join(dir, results.ReportFile))
	return nil
}

// unwrapPath drops the *PathError around err: the message names the path itself.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
