package main

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"strings"
	"text/template"

	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/conform"
	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/sweep"
)

// The help of every command is a text file, help/NAME.txt, read as prose and reviewed as
// prose, executed as a template with helpData: what a text names (a file, a grace, a
// case) comes from the constant that decides it, so the help cannot drift from the code.
// Each text ends with "Flags:" where the command has flags; setHelp prints them after it.

//go:embed help/*.txt
var helpFiles embed.FS

// helpTexts are the parsed help/*.txt; "file" formats one row of run's table of files.
var helpTexts = template.Must(template.New("help").Funcs(template.FuncMap{
	"join": strings.Join,
	"file": func(name, what string) string { return fmt.Sprintf("  %-16s %s", name, what) },
}).ParseFS(helpFiles, "help/*.txt"))

// helpData is what the help texts name.
type helpData struct {
	SummaryJSON, SummaryCSV, Timeseries, HistogramLog, Events, Report, Contract string
	SweepJSON, SweepCSV, SweepHTML, CompareJSON, CompareHTML                    string
	ShutdownGrace                                                               string
	MinTail                                                                     int
	LegacyCases, ModernCases                                                    []conform.Case
	Commands                                                                    []struct{ Name, Summary string }
}

// helpText is the help of the command name (help/NAME.txt; "tasksim" is tasksim's own).
// A text that does not execute is a bug of this package, which its help tests catch.
func helpText(name string) string {
	d := helpData{
		SummaryJSON: results.SummaryJSONFile, SummaryCSV: results.SummaryCSVFile, Timeseries: results.TimeseriesFile,
		HistogramLog: results.HistogramLogFile, Events: results.EventsFile, Report: results.ReportFile,
		Contract: results.ContractFile, SweepJSON: sweep.JSONFile, SweepCSV: sweep.CSVFile, SweepHTML: sweep.HTMLFile,
		CompareJSON: results.CompareJSONFile, CompareHTML: results.CompareHTMLFile,
		ShutdownGrace: shutdownGrace.String(), MinTail: results.MinTail,
	}
	if name == "conform" {
		d.LegacyCases, d.ModernCases = conform.Cases(), conform.ModernCases()
	}
	if name == "tasksim" {
		for _, c := range commands(process{}) {
			d.Commands = append(d.Commands, struct{ Name, Summary string }{c.name, c.summary})
		}
	}
	var b strings.Builder
	if err := helpTexts.ExecuteTemplate(&b, name+".txt", d); err != nil {
		panic(fmt.Sprintf("help/%s.txt: %v", name, err))
	}
	return b.String()
}

// helpRequest is a command's answer to -h or --help: its help text, which main prints on
// stdout with exit code 0. Requested help is the command's output, not a diagnostic, so it
// goes where output goes (`tasksim run --help | less` works); usage errors go to stderr.
// It unwraps to pflag.ErrHelp.
type helpRequest struct{ text string }

func (helpRequest) Error() string { return "help requested" }
func (helpRequest) Unwrap() error { return pflag.ErrHelp }

// parseFlags parses a command's arguments with fs. fs.Usage writes the command's help to
// fs.Output(); -h or --help then returns a helpRequest holding it. Any other problem is a
// usage error that names the command's --help.
func parseFlags(fs *pflag.FlagSet, args []string) error {
	var help bytes.Buffer
	fs.SetOutput(&help)
	err := fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, pflag.ErrHelp):
		return helpRequest{help.String()}
	}
	return usagef("%v (see 'tasksim %s --help')", err, fs.Name())
}

// setHelp makes the command's help text (helpText of fs's name), then fs's flags, the help
// of fs's command: the text is its usage line, what it does, its exit codes and the heading
// of its flags.
func setHelp(fs *pflag.FlagSet) {
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), helpText(fs.Name()))
		fs.PrintDefaults()
	}
}

// noFlags parses the arguments of a command that takes no flags, so that -h and --help
// give its help like every other command's.
func noFlags(name string, args []string) ([]string, error) {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	setHelp(fs)
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	return fs.Args(), nil
}

// noArgs is noFlags for a command that takes no arguments either.
func noArgs(name string, args []string) error {
	args, err := noFlags(name, args)
	if err == nil && len(args) > 0 {
		return usagef("%s takes no arguments", name)
	}
	return err
}
