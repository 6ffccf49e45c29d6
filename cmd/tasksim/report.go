package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/sweep"
)

// runReport is `tasksim report DIR`: sweep.Rerender renders the saved directory's page again
// (reportHelp says from what); this parses and prints the page's path.
func runReport(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("report", pflag.ContinueOnError)
	setHelp(fs)
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
