package results

import (
	"fmt"
	"os"
)

// WriteContractFiles writes the outputs of a contract suite run on its own (`tasksim
// conform`): conform.json and report.html into dir, created if needed, and JUnit XML to
// the file junit unless it is "". One call, so that every caller of the suite leaves the
// same files a CI job expects.
func WriteContractFiles(dir, junit string, res *Contract) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	if err := WriteContract(dir, res); err != nil {
		return err
	}
	if err := WriteContractReport(dir, res); err != nil {
		return err
	}
	if junit == "" {
		return nil
	}
	f, err := os.Create(junit)
	if err != nil {
		return fmt.Errorf("--junit: %w", err)
	}
	if err := WriteJUnit(f, res); err != nil {
		f.Close()
		return fmt.Errorf("--junit %s: %w", junit, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--junit %s: %w", junit, err)
	}
	return nil
}
