package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// The manifest and its pin as `tasksim probe` writes them: the manifest as indented JSON
// without what only a run fills in, a pin file written over the one it replaces, and a
// pin's drift as a table.

// runOnlyKeys are the manifest's fields that say how a run calls its tool: a probe calls
// none, and would print them empty ("as_task": false beside the task it created).
var runOnlyKeys = []string{"tool", "tool_task_support", "as_task", "fallback", "fallback_interval_ms"}

// ProbeJSON is m as `tasksim probe` prints it: the JSON object summary.json holds as
// "manifest", in its order, indented by two spaces, without the fields only a run fills
// in (runOnlyKeys) and without a final newline.
func (m *Manifest) ProbeJSON() ([]byte, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return withoutKeys(b, runOnlyKeys...)
}

// withoutKeys returns the JSON object b without the top-level members named keys, in its
// order, indented by two spaces.
func withoutKeys(b []byte, keys ...string) ([]byte, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(b))
	var out bytes.Buffer
	enc := jsontext.NewEncoder(&out, jsontext.WithIndent("  "))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, fmt.Errorf("manifest: not a JSON object")
	}
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return nil, err
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		name := tok.String() // the token is void after the next read
		val, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		if slices.Contains(keys, name) {
			continue
		}
		if err := enc.WriteToken(jsontext.String(name)); err != nil {
			return nil, err
		}
		if err := enc.WriteValue(val); err != nil {
			return nil, err
		}
	}
	if err := enc.WriteToken(jsontext.EndObject); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}

// WritePin writes m, taken at now, as the pin file name, keeping the allow entries of the
// pin file it replaces, if any: a re-pin must not undo what a reviewer allowed. It returns
// how many it kept.
func WritePin(name string, m *Manifest, now time.Time) (kept int, err error) {
	pin := NewPin(m, now)
	if old, err := ReadPin(name); err == nil && len(old.Allow) > 0 {
		pin.Allow = old.Allow
	}
	if err := os.WriteFile(name, pin.Marshal(), 0o644); err != nil {
		return 0, err
	}
	return len(pin.Allow), nil
}

// WriteDriftTable writes drift as an aligned table, one drift a line: field, pinned value,
// value now.
func WriteDriftTable(w io.Writer, drift []Drift) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "drift\tfield\tpinned\tnow")
	for _, d := range drift {
		fmt.Fprintf(tw, "\t%s\t%s\t%s\n", d.Field, d.Pinned, d.Now)
	}
	return tw.Flush()
}
