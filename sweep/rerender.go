package sweep

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tasksim/tasksim/results"
)

// Rerender renders again the page of the saved directory dir, from its files alone, and
// returns the page's path, as `tasksim report DIR` does: sweep.html for a sweep's
// directory (one holding sweep.json), else report.html for a run's or a contract suite's
// (results.WriteReport). It is here because this package knows both kinds of directory;
// rendering is deterministic, so the page is the one the run or sweep wrote.
func Rerender(dir string) (string, error) {
	st, err := os.Stat(dir)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the message names the path itself
		}
		return "", fmt.Errorf("run directory %s: %w", dir, err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("run directory %s: not a directory", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, JSONFile)); err == nil {
		return filepath.Join(dir, HTMLFile), WriteReport(dir)
	}
	return filepath.Join(dir, results.ReportFile), results.WriteReport(dir)
}
