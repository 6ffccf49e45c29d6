package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// WriteComparison writes compare.json and compare.html into dir (created if needed).
func WriteComparison(dir string, c *Comparison) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		return fmt.Errorf("results: encoding the comparison: %w", err)
	}
	if err := writeAtomic(dir, CompareJSONFile, buf.Bytes()); err != nil {
		return err
	}
	page, err := RenderComparison(c)
	if err != nil {
		return err
	}
	return writeAtomic(dir, CompareHTMLFile, page)
}

// ReadComparison reads compare.json from dir.
func ReadComparison(dir string) (*Comparison, error) {
	b, err := os.ReadFile(filepath.Join(dir, CompareJSONFile))
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	c := new(Comparison)
	if err := json.Unmarshal(b, c); err != nil {
		return nil, fmt.Errorf("results: %s: %w", filepath.Join(dir, CompareJSONFile), err)
	}
	return c, nil
}
