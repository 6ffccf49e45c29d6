package schema

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

// Version is the protocol revision of the schema behind New, Validate, ValidateReply and
// ValidateMessage.
const Version = "2025-11-25"

// Version2026 is the protocol revision of the core schema behind New2026 and Validate2026.
const Version2026 = "2026-07-28"

// ExtTasks names the schema of the Tasks extension io.modelcontextprotocol/tasks, behind
// NewExt and ValidateExt, in errors ("of schema ext-tasks").
const ExtTasks = "ext-tasks"

// The official schema.json files, unmodified (docs/RULES.md#sources gives their sha256;
// TestEmbeddedSchemaIsTheOfficialCopy checks them).
var (
	//go:embed official/schema-2025-11-25.json
	schemaJSON []byte
	//go:embed official/schema-2026-07-28.json
	schema2026JSON []byte
	//go:embed official/ext-tasks-schema.json
	extJSON []byte
)

// schemaURL names an embedded document inside the validator; validator output quotes it,
// e.g. 'urn:mcp:schema-2025-11-25#/$defs/Task' or 'urn:mcp:schema-ext-tasks#/$defs/Task'.
func schemaURL(name string) string { return "urn:mcp:schema-" + name }

// Output limits: validator output for an anyOf can run to hundreds of lines, and the
// offending text can be a large result.
const (
	maxDetailBytes   = 2000 // validator output kept per failed definition
	maxInstanceBytes = 300  // start of the checked text quoted in an error
)

// Schema is one compiled official schema: every definition under $defs, compiled once.
// Its methods are safe for concurrent use.
type Schema struct {
	name string // Version, Version2026 or ExtTasks
	defs map[string]*jsonschema.Schema
}

// New compiles the embedded 2025-11-25 schema. Callers normally use the package-level
// functions, which share one Schema compiled on first use; New is for a caller that wants its
// own.
func New() (*Schema, error) { return compile(Version, schemaJSON) }

// New2026 compiles the embedded core schema of 2026-07-28, as New does 2025-11-25's.
func New2026() (*Schema, error) { return compile(Version2026, schema2026JSON) }

// NewExt compiles the embedded schema of the Tasks extension (ExtTasks). It is
// self-contained: the core definitions it uses (Result, Error, InputRequests, ...) are
// copies, JSON-equal to those of the 2026-07-28 schema.
func NewExt() (*Schema, error) { return compile(ExtTasks, extJSON) }

// Name returns the schema's name: Version, Version2026 or ExtTasks.
func (s *Schema) Name() string { return s.name }

// compile compiles every definition of the embedded document text under name.
func compile(name string, text []byte) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("schema: reading embedded schema: %w", err)
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("schema: embedded schema is not a JSON object")
	}
	defs, ok := root["$defs"].(map[string]any)
	if !ok {
		return nil, errors.New(`schema: embedded schema has no "$defs" object`)
	}
	c := jsonschema.NewCompiler()
	url := schemaURL(name)
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("schema: adding embedded schema %s: %w", name, err)
	}
	s := &Schema{name: name, defs: make(map[string]*jsonschema.Schema, len(defs))}
	for def := range defs {
		sch, err := c.Compile(url + "#/$defs/" + def)
		if err != nil {
			return nil, fmt.Errorf("schema: compiling #/$defs/%s of schema %s: %w", def, name, err)
		}
		s.defs[def] = sch
	}
	return s, nil
}

// The Schemas behind the package-level functions, each compiled on first use.
var (
	shared     = sync.OnceValues(New)
	shared2026 = sync.OnceValues(New2026)
	sharedExt  = sync.OnceValues(NewExt)
)

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
// A mismatch is a *Error; an unknown def is a plain error (a bug in the test).
func Validate(def string, raw []byte) error {
	s, err := shared()
	if err != nil {
		return err
	}
	return s.Validate(def, raw)
}

// Validate2026 is Validate against the core schema of 2026-07-28, e.g. "DiscoverResult" or
// "UnsupportedProtocolVersionError".
func Validate2026(def string, raw []byte) error {
	s, err := shared2026()
	if err != nil {
		return err
	}
	return s.Validate(def, raw)
}

// ValidateExt is Validate against the schema of the Tasks extension, e.g. "CreateTaskResult"
// or "GetTaskResult" (the extension's, not 2025-11-25's).
func ValidateExt(def string, raw []byte) error {
	s, err := sharedExt()
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
		return fmt.Errorf("schema: schema %s has no definition %q", s.name, def)
	}
	v, err := s.parse(def, raw)
	if err != nil {
		return err
	}
	return s.check(def, "", v, raw)
}

// parse reads raw as exactly one JSON value, numbers kept exact. A syntax error is reported
// against def of s, the definition the caller wanted matched.
func (s *Schema) parse(def string, raw []byte) (any, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, &Error{Schema: s.name, Def: def, Err: fmt.Errorf("not a single JSON value: %w", err), Instance: excerpt(raw)}
	}
	return v, nil
}

// check validates the parsed value v, found at JSON pointer at within raw, against def,
// which must exist.
func (s *Schema) check(def, at string, v any, raw []byte) error {
	sch, ok := s.defs[def]
	if !ok {
		return fmt.Errorf("schema: schema %s has no definition %q", s.name, def)
	}
	if err := sch.Validate(v); err != nil {
		return &Error{Schema: s.name, Def: def, At: at, Err: err, Instance: excerpt(raw)}
	}
	return nil
}

// Error reports JSON text that the schema rejects, or that breaks one of the JSON-RPC
// 2.0 rules checked on top of the schema (see the package comment).
type Error struct {
	// Schema names the schema Def belongs to: Version, Version2026 or ExtTasks; "" when a
	// rule failed instead.
	Schema string
	// Rule is the id in docs/RULES.md of the protocol rule broken, e.g. "E13", when a rule of
	// 2026-07-28 that the schemas cannot express failed (see ValidateReply2026); "" for a
	// failed definition or a JSON-RPC 2.0 rule.
	Rule string
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
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("schema: ")
	if e.At == "" {
		b.WriteString("JSON text")
	} else {
		fmt.Fprintf(&b, "value at %q", e.At)
	}
	switch {
	case e.Def == "" && e.Rule != "":
		fmt.Fprintf(&b, " breaks rule %s (docs/RULES.md#%s): ", e.Rule, strings.ToLower(e.Rule))
	case e.Def == "":
		b.WriteString(" breaks a JSON-RPC 2.0 rule: ")
	default:
		fmt.Fprintf(&b, " does not match #/$defs/%s of schema %s: ", e.Def, e.Schema)
	}
	b.WriteString(truncate(e.Err.Error(), maxDetailBytes))
	b.WriteString("\n  in: ")
	b.WriteString(e.Instance)
	return b.String()
}

// Unwrap returns Err, so errors.As finds a *jsonschema.ValidationError.
func (e *Error) Unwrap() error { return e.Err }

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
