package results

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The directories a comparison is read from and written into, checked as `tasksim compare`,
// `run --baseline` and an A/B run check them, so that every caller refuses the same
// mistakes with the same words before Compare reads anything.

// CompareInputError is a comparison that cannot be made from what it was given: a
// directory that is not a run, not an A/B run, or runs that are not comparable. The
// command line exits 2.
type CompareInputError struct{ Err error }

func (e *CompareInputError) Error() string { return e.Err.Error() }
func (e *CompareInputError) Unwrap() error { return e.Err }

func compareInputf(format string, args ...any) error {
	return &CompareInputError{fmt.Errorf(format, args...)}
}

// CompareDirs resolves a comparison's directories from its arguments: BASELINE CANDIDATE,
// or the one directory of an A/B run, whose two sides they then are.
func CompareDirs(args []string) (base, cand string, err error) {
	switch len(args) {
	case 1:
		b, c := filepath.Join(args[0], ABBaseline), filepath.Join(args[0], ABCanary)
		if !isDir(b) || !isDir(c) {
			return "", "", compareInputf("%s is not an A/B run (no %s/ and %s/ in it): give BASELINE CANDIDATE", args[0], ABBaseline, ABCanary)
		}
		return b, c, nil
	case 2:
		return args[0], args[1], nil
	}
	return "", "", compareInputf("want BASELINE CANDIDATE, two run directories, got %d arguments (see 'tasksim compare --help')", len(args))
}

// RefuseComparisonIn refuses a directory that holds a comparison already: another
// comparison's verdict is not replaced unless the caller was told to (--force).
func RefuseComparisonIn(dir string) error {
	for _, f := range []string{CompareJSONFile, CompareHTMLFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return compareInputf("--out %s already holds a comparison (%s): choose another --out, or --force to replace it", dir, f)
		}
	}
	return nil
}

// RemoveComparison removes the compare.json and compare.html an earlier run left in dir, so
// that a run replacing it (--force) that ends before its comparison leaves no stale verdict.
func RemoveComparison(dir string) error {
	for _, f := range []string{CompareJSONFile, CompareHTMLFile} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// CompareRuns is Compare after checking that both directories hold a run; every problem
// with its input is a *CompareInputError.
func CompareRuns(base, cand string, opts CompareOptions) (*Comparison, error) {
	for _, d := range []string{base, cand} {
		if !isDir(d) {
			return nil, compareInputf("%s: no such directory", d)
		}
		if _, err := os.Stat(filepath.Join(d, SummaryJSONFile)); err != nil {
			return nil, compareInputf("%s is not a run directory: it holds no %s (%v)", d, SummaryJSONFile, unwrapPath(err))
		}
	}
	c, err := Compare(base, cand, opts)
	if err != nil {
		return nil, &CompareInputError{err}
	}
	return c, nil
}

// AllowFields is a list of --allow fields without the spaces around them ('clients, tool').
func AllowFields(allow []string) []string {
	out := make([]string, 0, len(allow))
	for _, a := range allow {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// Reason is the comparison's verdict in one line, "" for a pass: the count of failures and
// the first, or the first reason it is inconclusive.
func (c *Comparison) Reason() string {
	switch c.Verdict {
	case CompareVerdictPass:
		return ""
	case CompareVerdictFail:
		return fmt.Sprintf("fail: %s (listed above), the first: %s", plural(len(c.Failures), "failure"), c.Failures[0])
	}
	if len(c.Inconclusive) == 0 {
		return ""
	}
	return "inconclusive: " + c.Inconclusive[0]
}

func isDir(d string) bool {
	st, err := os.Stat(d)
	return err == nil && st.IsDir()
}

// unwrapPath drops the *PathError around err: the message names the path itself.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
