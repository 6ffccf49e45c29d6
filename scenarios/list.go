package scenarios

import (
	"fmt"
	"io"
)

// WriteBuiltins writes the built-in scenarios as `tasksim scenarios` lists them: one a line,
// its name, padded to the longest, then its description.
func WriteBuiltins(w io.Writer) error {
	list := Builtins()
	width := 0
	for _, in := range list {
		width = max(width, len(in.Name))
	}
	for _, in := range list {
		if _, err := fmt.Fprintf(w, "%-*s  %s\n", width, in.Name, in.Description); err != nil {
			return err
		}
	}
	return nil
}
