package scenarios

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

// library holds the shipped scenarios, one NAME.yaml each, so `tasksim run NAME` works
// anywhere. It is read-only.
//
//go:embed library/*.yaml
var library embed.FS

// Info describes a built-in scenario.
type Info struct {
	Name        string // the name given to Load, e.g. "baseline"
	Description string // its description line
}

// Builtins lists the shipped scenarios, sorted by name.
func Builtins() []Info {
	names := builtinNames()
	out := make([]Info, 0, len(names))
	for _, name := range names {
		info := Info{Name: name}
		if s, err := loadBuiltin(name); err != nil {
			info.Description = "(invalid: " + err.Error() + ")" // kept out by TestBuiltins
		} else {
			info.Description = s.Description
		}
		out = append(out, info)
	}
	return out
}

// Load reads a scenario without validating it. nameOrPath is a file when such a file exists,
// when it ends in .yaml or .yml, or when it contains a path separator; otherwise it is the name
// of a built-in scenario. An unknown name is an error listing the built-ins.
func Load(nameOrPath string) (*Scenario, error) {
	st, statErr := os.Stat(nameOrPath)
	isFile := statErr == nil && !st.IsDir()
	ext := strings.ToLower(path.Ext(nameOrPath))
	if isFile || ext == ".yaml" || ext == ".yml" || strings.ContainsRune(nameOrPath, os.PathSeparator) ||
		strings.ContainsRune(nameOrPath, '/') {
		if statErr == nil && st.IsDir() {
			return nil, fmt.Errorf("scenario %s is a directory, not a file", nameOrPath)
		}
		if isFile && st.Size() > maxFileBytes {
			return nil, &Error{Source: nameOrPath, Msg: fmt.Sprintf("file is %d bytes, more than the limit of %d", st.Size(), maxFileBytes)}
		}
		data, err := os.ReadFile(nameOrPath)
		if err != nil {
			return nil, fmt.Errorf("read scenario: %w", err)
		}
		return Parse(nameOrPath, data)
	}
	s, err := loadBuiltin(nameOrPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("unknown scenario %q: no such file, and the built-ins are %s",
			nameOrPath, strings.Join(builtinNames(), ", "))
	}
	return s, err
}

// loadBuiltin parses library/NAME.yaml as source "builtin:NAME".
func loadBuiltin(name string) (*Scenario, error) {
	if !validName(name) {
		return nil, fs.ErrNotExist
	}
	data, err := library.ReadFile("library/" + name + ".yaml")
	if err != nil {
		return nil, err
	}
	return Parse("builtin:"+name, data)
}

// builtinNames lists the built-in scenario names, sorted.
func builtinNames() []string {
	entries, _ := library.ReadDir("library") // cannot fail: the directory is embedded
	var names []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}
