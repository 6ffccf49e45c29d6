package scenarios

import (
	"strconv"
	"strings"
)

// Error is one problem with a scenario, located where the offending value came from. Parse
// and Set return their problems as an errors.Join of *Error in document order; Validate in
// schema order (the order of the Scenario fields).
type Error struct {
	Source string // file name, "builtin:NAME", "--set" or another flag; "" = built in code
	Line   int    // 1-based line in Source; 0 = unknown or not a file
	Column int    // 1-based column; 0 = unknown
	Path   string // field path, like "workload.clients" or "workload.stages[1].target"; "" = the document
	Msg    string // what is wrong, like "must be > 0, got 0"
}

// Error formats e as "SOURCE:LINE:COL: PATH: MSG", leaving out the parts that are unknown.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Source != "" {
		b.WriteString(e.Source)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
			if e.Column > 0 {
				b.WriteString(":" + strconv.Itoa(e.Column))
			}
		}
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// origin is where a field's value came from.
type origin struct {
	line, col int    // position of its key (or sequence item) in the file
	setBy     string // set afterwards by Set ("--set") or SetFrom: the file position no longer applies
}

// locate returns where the value at path came from: the source and position recorded for
// path or, failing that, for its nearest ancestor ("workload.stages[0].target",
// "workload.stages[0]", "workload.stages", "workload").
func (s *Scenario) locate(path string) (source string, line, col int) {
	for p := path; p != ""; p = parentPath(p) {
		if o, ok := s.origins[p]; ok {
			if o.setBy != "" {
				return o.setBy, 0, 0
			}
			return s.Source, o.line, o.col
		}
	}
	return s.Source, 0, 0
}

// Where returns "SOURCE:LINE:COL" for the value at a field path (see Error.Path), as precise
// as known: "SOURCE" alone when the field was not written in the file, "--set" (or the flag
// that set it) when it was overridden. Other packages use it to locate problems they find,
// e.g. in thresholds[2].
func (s *Scenario) Where(path string) string {
	e := Error{}
	e.Source, e.Line, e.Column = s.locate(path)
	return strings.TrimSuffix(e.Error(), ": ")
}

// parentPath strips the last element of a field path: "a.b[2]" -> "a.b", "a.b" -> "a".
func parentPath(p string) string {
	if strings.HasSuffix(p, "]") {
		if i := strings.LastIndexByte(p, '['); i >= 0 {
			return p[:i]
		}
	}
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[:i]
	}
	return ""
}

// joinPath appends a field name to a path.
func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// indexPath appends a sequence index to a path.
func indexPath(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}
