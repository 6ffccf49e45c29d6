package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/sweep"
)

// reportHelp is report's help, formatted with the files it reads and writes.
const reportHelp = `Usage: tasksim report DIR

Re-renders DIR/%s from the files of the run directory DIR: %s (required),
%s, %s and %s (each optional: its part of the report then
says "not recorded"); for a directory of the contract suite alone (%s and no
%s), from %s. For a sweep directory DIR (one holding %s), re-renders
DIR/%s from it. Rendering is deterministic: the files a run, suite or sweep wrote
give the page it wrote, byte for byte. Prints the page's path.

Exit codes: 0 written, 1 DIR or its files cannot be read or written, 2 usage.
`

// runReport is `tasksim report DIR`: sweep.Rerender renders the saved directory's page again
// (reportHelp says from what); this parses and prints the page's path.
func runReport(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("report", pflag.ContinueOnError)
	setHelp(fs, fmt.Sprintf(reportHelp, results.ReportFile, results.SummaryJSONFile, results.TimeseriesFile, results.HistogramLogFile, results.EventsFile,
		results.ContractFile, results.SummaryJSONFile, results.ContractFile, sweep.JSONFile, sweep.HTMLFile))
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("want one run or sweep directory, got %d arguments (see 'tasksim report --help')", fs.NArg())
	}
	page, err := sweep.Rerender(fs.Arg(0))
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, page)
	return nil
}
