package mcptest

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Version is the protocol revision of the embedded schema.
const Version = "2025-11-25"

// schemaJSON is the official schema.json of Version, unmodified (docs/RULES.md#schema gives its
// sha256; TestEmbeddedSchemaIsTheOfficialCopy checks it).
//
//go:embed testdata/schema-2025-11-25.json
var schemaJSON []byte

// schemaURL names the embedded document inside the validator; validator output quotes it,
// e.g. 'urn:mcp:schema-2025-11-25#/$defs/Task'.
const schemaURL = "urn:mcp:schema-" + Version

// Output limits: validator output for an anyOf can run to hundreds of lines, and the
// offending text can be a large result.
const (
	maxDetailBytes   = 2000 // validator output kept per failed definition
	maxInstanceBytes = 300  // start of the checked text quoted in an error
)

// Schema is the compiled official schema: every definition under $defs, compiled once.
// Its methods are safe for concurrent use.
type Schema struct {
	defs map[string]*jsonschema.Schema
}

// New compiles the embedded schema. Tests normally use the package-level functions, which
// share one Schema compiled on first use; New is for a test that wants its own.
func New() (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return nil, fmt.Errorf("mcptest: reading embedded schema: %w", err)
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("mcptest: embedded schema is not a JSON object")
	}
	defs, ok := root["$defs"].(map[string]any)
	if !ok {
		return nil, errors.New(`mcptest: embedded schema has no "$defs" object`)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("mcptest: adding embedded schema: %w", err)
	}
	s := &Schema{defs: make(map[string]*jsonschema.Schema, len(defs))}
	for name := range defs {
		sch, err := c.Compile(schemaURL + "#/$defs/" + name)
		if err != nil {
			return nil, fmt.Errorf("mcptest: compiling #/$defs/%s: %w", name, err)
		}
		s.defs[name] = sch
	}
	return s, nil
}

// shared is the Schema behind the package-level functions, compiled on first use.
var shared = sync.OnceValues(New)

// Defs returns the names of all definitions, sorted.
func (s *Schema) Defs() []string {
	names := make([]string, 0, len(s.defs))
	for name := range s.defs {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Validate checks that raw is one JSON value matching #/$defs/<def>, e.g. "GetTaskResult".
// A mismatch is a *SchemaError; an unknown def is a plain error (a bug in the test).
func Validate(def string, raw []byte) error {
	s, err := shared()
	if err != nil {
		return err
	}
	return s.Validate(def, raw)
}

// Validate checks that raw is one JSON value matching #/$defs/<def>. A leading "#/$defs/"
// on def is allowed.
func (s *Schema) Validate(def string, raw []byte) error {
	def = strings.TrimPrefix(def, "#/$defs/")
	if _, ok := s.defs[def]; !ok {
		return fmt.Errorf("mcptest: schema %s has no definition %q", Version, def)
	}
	v, err := parse(def, raw)
	if err != nil {
		return err
	}
	return s.check(def, "", v, raw)
}

// parse reads raw as exactly one JSON value, numbers kept exact. A syntax error is reported
// against def, the definition the caller wanted matched.
func parse(def string, raw []byte) (any, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, &SchemaError{Def: def, Err: fmt.Errorf("not a single JSON value: %w", err), Instance: excerpt(raw)}
	}
	return v, nil
}

// check validates the parsed value v, found at JSON pointer at within raw, against def,
// which must exist.
func (s *Schema) check(def, at string, v any, raw []byte) error {
	sch, ok := s.defs[def]
	if !ok {
		return fmt.Errorf("mcptest: schema %s has no definition %q", Version, def)
	}
	if err := sch.Validate(v); err != nil {
		return &SchemaError{Def: def, At: at, Err: err, Instance: excerpt(raw)}
	}
	return nil
}

// SchemaError reports JSON text that the schema rejects, or that breaks one of the JSON-RPC
// 2.0 rules checked on top of the schema (see the package comment).
type SchemaError struct {
	// Def is the definition under #/$defs that failed, e.g. "GetTaskResult"; "" when a
	// JSON-RPC 2.0 rule failed instead.
	Def string
	// At is the JSON pointer of the checked value within the text: "" for the whole text,
	// "/result" for a reply's result.
	At string
	// Err says why: the validator's *jsonschema.ValidationError, a JSON syntax error, or the
	// rule broken.
	Err error
	// Instance is the start of the checked text (at most 300 bytes), for the failure report.
	Instance string
}

// Error names the definition (or rule) and quotes the validator's output, cut to about
// 2000 bytes, and the start of the offending text.
func (e *SchemaError) Error() string {
	var b strings.Builder
	b.WriteString("mcptest: ")
	if e.At == "" {
		b.WriteString("JSON text")
	} else {
		fmt.Fprintf(&b, "value at %q", e.At)
	}
	if e.Def == "" {
		b.WriteString(" breaks a JSON-RPC 2.0 rule: ")
	} else {
		fmt.Fprintf(&b, " does not match #/$defs/%s of schema %s: ", e.Def, Version)
	}
	b.WriteString(truncate(e.Err.Error(), maxDetailBytes))
	b.WriteString("\n  in: ")
	b.WriteString(e.Instance)
	return b.String()
}

// Unwrap returns Err, so errors.As finds a *jsonschema.ValidationError.
func (e *SchemaError) Unwrap() error { return e.Err }

// truncate cuts s to at most max bytes, at a line end when one is near, and says how much
// was cut.
func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if nl := strings.LastIndexByte(s[:cut], '\n'); nl > max/2 {
		cut = nl
	}
	rest := s[cut:]
	return fmt.Sprintf("%s\n  ... (%d more lines, %d bytes cut)", s[:cut], strings.Count(rest, "\n")+1, len(rest))
}

// excerpt returns the start of raw for an error message.
func excerpt(raw []byte) string {
	s := strings.TrimSpace(string(raw))
	if len(s) <= maxInstanceBytes {
		return s
	}
	cut := maxInstanceBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes more)", s[:cut], len(s)-cut)
}
