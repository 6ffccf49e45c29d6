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
// files (summary.json, timeseries.csv, histograms.hlog, events.csv), or, for a sweep
// directory (one holding sweep.json), DIR/sweep.html from sweep.json. Rendering is
// deterministic, so a saved run or sweep re-renders to the page it wrote.
func runReport(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("report", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: tasksim report DIR")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "Re-renders DIR/"+results.ReportFile+" from the files of the run directory DIR:")
		fmt.Fprintln(stderr, results.SummaryJSONFile+" (required), "+results.TimeseriesFile+", "+results.HistogramLogFile+
			" and "+results.EventsFile+" (each optional: its part of the report then says \"not recorded\").")
		fmt.Fprintln(stderr, "For a sweep directory DIR (one holding "+sweepJSONFile+"), re-renders DIR/"+sweepHTMLFile+" from it.")
	}
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return usagef("want one run directory, got %d arguments", fs.NArg())
	}
	dir := fs.Arg(0)
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("run directory %s: %w", dir, unwrapPath(err))
	}
	if !st.IsDir() {
		return fmt.Errorf("run directory %s: not a directory", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, sweepJSONFile)); err == nil {
		if err := writeSweepReport(dir); err != nil {
			return err
		}
		fmt.Fprintln(stdout, filepath.Join(dir, sweepHTMLFile))
		return nil
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
