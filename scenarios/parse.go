package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Limits on what Parse accepts, so a hostile file cannot exhaust memory or time.
const (
	maxFileBytes = 1 << 20 // a scenario file is at most 1 MiB
	maxSteps     = 100_000 // nodes and keys visited while decoding, aliases expanded
	maxProblems  = 50      // problems reported before the rest are summarised
	maxFound     = 1000    // problems found before decoding stops
)

// Parse decodes a scenario from YAML data, strictly: an unknown field, a duplicate key or a
// value of the wrong type is an error located at SOURCE:LINE:COL with its field path. name
// becomes Scenario.Source. Parse starts from Default, so fields left out keep their defaults.
// It does not Validate. All decoding problems are returned at once (errors.Join of *Error).
func Parse(name string, data []byte) (*Scenario, error) {
	fail := func(line, col int, format string, args ...any) (*Scenario, error) {
		return nil, &Error{Source: name, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
	}
	if len(data) > maxFileBytes {
		return fail(0, 0, "file is %d bytes, more than the limit of %d", len(data), maxFileBytes)
	}
	if line, col, msg := checkText(data); msg != "" {
		return fail(line, col, "%s", msg)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return fail(1, 1, "empty scenario: it needs at least name and duration")
		}
		return nil, syntaxError(name, data, err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return fail(extra.Line, extra.Column, "more than one YAML document: a scenario file holds one")
	case !errors.Is(err, io.EOF):
		return nil, syntaxError(name, data, err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return fail(root.Line, root.Column, "a scenario is a mapping (name: ..., duration: ...), got %s", describe(root))
	}
	s := Default()
	s.Source = name
	d := &decoder{source: name, origins: map[string]origin{}}
	d.value(root, reflect.ValueOf(s).Elem(), "")
	if err := d.err(); err != nil {
		return nil, err
	}
	s.origins = d.origins
	return s, nil
}

// syntaxLine matches the position yaml puts in its syntax errors: "yaml: line 3: ...".
var syntaxLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): `)

// unknownAnchor matches yaml's error for an alias without an anchor, which has no position.
var unknownAnchor = regexp.MustCompile(`^unknown anchor '(.*)' referenced$`)

// parserProblems are the messages of yaml's parser (as opposed to its scanner). yaml reports
// their line 0-based (parserc.go does not add 1 as scannerc.go does), so they need one added:
// the result is the line of the problem or of the bracket or collection it is inside.
var parserProblems = []string{
	"did not find expected <stream-start>",
	"did not find expected <document start>",
	"found undefined tag handle",
	"did not find expected node content",
	"did not find expected '-' indicator",
	"did not find expected key",
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found duplicate %TAG directive",
}

// syntaxError converts a YAML syntax error into an *Error with a 1-based line. yaml leaves
// the line out when it is the first (0 in its counting), so a missing line is line 1.
func syntaxError(source string, data []byte, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line, col := 0, 0
	if m := syntaxLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	}
	if slices.Contains(parserProblems, msg) || line == 0 {
		line++
	}
	if m := unknownAnchor.FindStringSubmatch(msg); m != nil {
		if i := bytes.Index(data, []byte("*"+m[1])); i >= 0 {
			line = 1 + bytes.Count(data[:i], []byte("\n"))
			col = 1 + utf8.RuneCount(data[bytes.LastIndexByte(data[:i], '\n')+1:i])
		}
	}
	return &Error{Source: source, Line: line, Column: col, Msg: "invalid YAML: " + msg}
}

// checkText finds the first byte the YAML reader would reject (invalid UTF-8 or a control
// character), so that the error has a line and column; msg is "" when there is none.
func checkText(data []byte) (line, col int, msg string) {
	line, col = 1, 1
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			return line, col, "invalid UTF-8: a scenario file must be UTF-8 text"
		case !yamlPrintable(r):
			return line, col, fmt.Sprintf("control character %U is not allowed", r)
		}
		i += n
		col++
		if r == '\n' {
			line, col = line+1, 1
		}
	}
	return 0, 0, ""
}

// yamlPrintable is the character set the YAML 1.2 reader accepts (yaml's readerc.go).
func yamlPrintable(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' || (r >= 0x20 && r <= 0x7E) || r == 0x85 ||
		(r >= 0xA0 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
}
