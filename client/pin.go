package client

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"go.yaml.in/yaml/v3"
)

// A pin is a manifest approved at one moment (`tasksim probe --pin FILE`), to be checked on
// every later promotion (`probe --expect FILE`, a run's `expect_manifest`): a change of the
// protocol, the server, its capability leaves, its tools, or the pollInterval and ttl it
// grants is drift, and fails the compatibility gate with a diff. The file is YAML, flat and
// meant to be read and edited by hand:
//
//	tasksim_pin: 1
//	pinned_at: 2026-12-01T10:00:00Z
//	target: https://mcp.example.com/mcp
//	fields:
//	  protocol_version: "2026-07-28"
//	  server.version: 1.4.2
//	  tools.deploy.task_support: required
//	  tools.deploy.input_schema: sha256:9f2c...
//	  poll_interval_ms: 1000
//	allow:
//	  server.version: any                      # may change freely
//	  poll_interval_ms: {min: 500, max: 2000}  # may move within a range
//	  tools.*.input_schema: any                # globs match field names (path.Match)
//
// The fields are those of pinFields; docs/ARCHITECTURE.md#pin says what each means.

// pinVersion is the version of the pin file format this build reads and writes.
const pinVersion = 1

// Pin is a pin file: the fields pinned, and the changes allowed.
type Pin struct {
	PinnedAt time.Time
	Target   string
	// Fields maps a field name (pinFields) to its pinned value, as text.
	Fields map[string]string
	// Allow maps a field name or glob to the change it allows.
	Allow map[string]Allowance
}

// Allowance is a change a pin allows: any value (Any), or a number within [Min, Max].
type Allowance struct {
	Any      bool
	Min, Max int64
}

func (a Allowance) String() string {
	if a.Any {
		return "any"
	}
	return fmt.Sprintf("%d..%d", a.Min, a.Max)
}

// allows reports whether now is a change a allows.
func (a Allowance) allows(now string) bool {
	if a.Any {
		return true
	}
	v, err := strconv.ParseInt(now, 10, 64)
	return err == nil && v >= a.Min && v <= a.Max
}

// Drift is one difference between a pin and the manifest now: the field, its pinned value
// and its value now ("absent" where either has none; "not observed" where the manifest
// could not say, e.g. no task was created to see the pollInterval).
type Drift struct {
	Field  string `json:"field"`
	Pinned string `json:"pinned"`
	Now    string `json:"now"`
}

func (d Drift) String() string { return fmt.Sprintf("%s: pinned %s, now %s", d.Field, d.Pinned, d.Now) }

// Values of fields that are not plain values.
const (
	PinAbsent      = "absent"       // the field does not exist (a tool not listed)
	PinNotObserved = "not observed" // the manifest could not see it (no task created)
	PinNone        = "none"         // the server declared none (no pollInterval, no inputSchema)
	PinUnlimited   = "unlimited"    // ttl null
)

// taskFields are the fields a manifest has only when a task was created; a pin without
// them does not check them, a manifest without them cannot be checked against a pin that
// has them.
var taskFields = []string{"poll_interval_ms", "ttl_ms"}

// pinFields returns the fields of m that a pin holds: the protocol version and era, the
// server's name and version, the tasks capability leaves and whether sessions are issued
// (2025-11-25) or the Tasks extension (2026-07-28), each tool's taskSupport ("none" where
// the tool declares none, as every tool of 2026-07-28) and a hash of its inputSchema, and,
// when a task was seen, the pollInterval and ttl it was granted.
func pinFields(m *Manifest) map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := map[string]string{
		"protocol_version": m.ProtocolVersion,
		"era":              m.Era,
		"server.name":      m.Server.Name,
		"server.version":   m.Server.Version,
	}
	// Each era's own leaves: 2026-07-28 declares Tasks as an extension and has no sessions
	// (E37); an era change shows in protocol_version and era, and in these as absent.
	if m.Era == ProtocolModern {
		f["extensions.tasks"] = strconv.FormatBool(m.Tasks.Extension)
	} else {
		f["capabilities.tasks"] = strconv.FormatBool(m.Tasks.Declared)
		f["capabilities.tasks.list"] = strconv.FormatBool(m.Tasks.List)
		f["capabilities.tasks.cancel"] = strconv.FormatBool(m.Tasks.Cancel)
		f["capabilities.tasks.requests.tools.call"] = strconv.FormatBool(m.Tasks.ToolsCall)
		f["sessions"] = strconv.FormatBool(m.Session.IDIssued)
	}
	for _, t := range m.Tools {
		f["tools."+t.Name+".task_support"] = cmp.Or(t.TaskSupport, PinNone)
		f["tools."+t.Name+".input_schema"] = schemaHash(t.schema)
	}
	if m.seen {
		f["poll_interval_ms"] = PinNone
		if m.PollIntervalMs != nil {
			f["poll_interval_ms"] = strconv.FormatInt(*m.PollIntervalMs, 10)
		}
		f["ttl_ms"] = PinUnlimited
		if m.TTLMs != nil {
			f["ttl_ms"] = strconv.FormatInt(*m.TTLMs, 10)
		}
	}
	return f
}

// schemaHash is "sha256:" and the hex SHA-256 of the schema in canonical form (RFC 8785:
// keys sorted, no spaces), so that a relisting in another order is no change; "none"
// without a schema.
func schemaHash(schema []byte) string {
	if len(bytes.TrimSpace(schema)) == 0 {
		return PinNone
	}
	v := jsontext.Value(slices.Clone(schema))
	if err := v.Canonicalize(); err != nil {
		v = jsontext.Value(schema) // not valid JSON: hash what was listed
	}
	sum := sha256.Sum256(v)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// NewPin is the pin of m, taken at now, allowing no change.
func NewPin(m *Manifest, now time.Time) *Pin {
	return &Pin{PinnedAt: now.UTC().Truncate(time.Second), Target: m.Target, Fields: pinFields(m)}
}

// Check compares m with the pin: every pinned field whose value now differs and is not an
// allowed change, every field now that the pin lacks (a new tool), in field order. A pin
// field of a task (pollInterval, ttl) that m could not observe is drift, "not observed":
// nothing passes on missing evidence.
func (p *Pin) Check(m *Manifest) []Drift {
	now := pinFields(m)
	var out []Drift
	for _, f := range unionKeys(p.Fields, now) {
		pinned, inPin := p.Fields[f]
		cur, inNow := now[f]
		switch {
		case !inPin && slices.Contains(taskFields, f):
			continue // not pinned: the pin was taken without a task
		case !inNow && slices.Contains(taskFields, f):
			cur = PinNotObserved
		case !inPin:
			pinned = PinAbsent
		case !inNow:
			cur = PinAbsent
		}
		if pinned == cur || (cur != PinNotObserved && p.allows(f, cur)) {
			continue
		}
		out = append(out, Drift{Field: f, Pinned: pinned, Now: cur})
	}
	return out
}

// allows reports whether the pin allows field to change to now.
func (p *Pin) allows(field, now string) bool {
	if a, ok := p.Allow[field]; ok {
		return a.allows(now)
	}
	for _, pat := range sortedKeys(p.Allow) {
		if ok, _ := path.Match(pat, field); ok && p.Allow[pat].allows(now) {
			return true
		}
	}
	return false
}

func unionKeys(a, b map[string]string) []string {
	keys := sortedKeys(a)
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, compareFields)
	return keys
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareFields)
	return keys
}

// fieldOrder is the order fields are written and compared in: the protocol, the server,
// capabilities, sessions, the tools, what a task was granted.
var fieldOrder = []string{"protocol_version", "era", "server.", "capabilities.", "extensions.", "sessions", "tools.", "poll_interval_ms", "ttl_ms"}

func compareFields(a, b string) int {
	rank := func(f string) int {
		for i, p := range fieldOrder {
			if f == p || (strings.HasSuffix(p, ".") && strings.HasPrefix(f, p)) {
				return i
			}
		}
		return len(fieldOrder)
	}
	return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a, b))
}

// Marshal writes the pin file: a comment saying what it is and how to allow a change, then
// its fields in order.
func (p *Pin) Marshal() []byte {
	var b bytes.Buffer
	b.WriteString("# tasksim manifest pin: written by `tasksim probe --pin`, checked by `tasksim probe --expect`\n")
	b.WriteString("# and by a run whose scenario says `expect_manifest: FILE` (docs/ARCHITECTURE.md#pin).\n")
	b.WriteString("# Any change of a field below is drift, unless `allow` lets it change:\n")
	b.WriteString("#   allow: {server.version: any, poll_interval_ms: {min: 500, max: 2000}, tools.*.input_schema: any}\n")
	fmt.Fprintf(&b, "tasksim_pin: %d\n", pinVersion)
	fmt.Fprintf(&b, "pinned_at: %s\n", p.PinnedAt.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "target: %s\n", yamlScalar(p.Target))
	b.WriteString("fields:\n")
	for _, f := range sortedKeys(p.Fields) {
		fmt.Fprintf(&b, "  %s: %s\n", yamlScalar(f), yamlScalar(p.Fields[f]))
	}
	if len(p.Allow) == 0 {
		b.WriteString("allow: {}\n")
		return b.Bytes()
	}
	b.WriteString("allow:\n")
	for _, f := range sortedKeys(p.Allow) {
		a := p.Allow[f]
		v := "any"
		if !a.Any {
			v = fmt.Sprintf("{min: %d, max: %d}", a.Min, a.Max)
		}
		fmt.Fprintf(&b, "  %s: %s\n", yamlScalar(f), v)
	}
	return b.Bytes()
}

// yamlScalar writes s as a YAML scalar that reads back as the string s.
func yamlScalar(s string) string {
	var n yaml.Node
	n.SetString(s)
	out, err := yaml.Marshal(&n)
	if err != nil {
		return strconv.Quote(s)
	}
	return strings.TrimSuffix(string(out), "\n")
}

// pinFile is the YAML of a pin file, as read.
type pinFile struct {
	Version  *int                 `yaml:"tasksim_pin"`
	PinnedAt string               `yaml:"pinned_at"`
	Target   string               `yaml:"target"`
	Fields   map[string]yaml.Node `yaml:"fields"`
	Allow    map[string]yaml.Node `yaml:"allow"`
}

// ReadPin reads the pin file at name. Every problem is reported at once, each with the file,
// line and what is wrong.
func ReadPin(name string) (*Pin, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("pin: %w", err)
	}
	return parsePin(name, data)
}

// parsePin parses the pin file data, named name in its errors.
func parsePin(name string, data []byte) (*Pin, error) {
	var pf pinFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&pf); err != nil {
		return nil, fmt.Errorf("%s: not a pin file: %v", name, err)
	}
	var errs []error
	add := func(line int, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(format, args...)))
	}
	p := &Pin{Target: pf.Target, Fields: map[string]string{}, Allow: map[string]Allowance{}}
	switch {
	case pf.Version == nil:
		add(1, "tasksim_pin: missing (this build reads version %d)", pinVersion)
	case *pf.Version != pinVersion:
		add(1, "tasksim_pin: version %d, this build reads version %d", *pf.Version, pinVersion)
	}
	if pf.PinnedAt != "" {
		var err error
		if p.PinnedAt, err = time.Parse(time.RFC3339, pf.PinnedAt); err != nil {
			add(1, "pinned_at: %q is not an RFC 3339 time", pf.PinnedAt)
		}
	}
	if len(pf.Fields) == 0 {
		add(1, "fields: none pinned")
	}
	for f, n := range pf.Fields {
		if n.Kind != yaml.ScalarNode {
			add(n.Line, "fields.%s: want a scalar value, got a %s", f, kindName(n.Kind))
			continue
		}
		if !knownPinField(f) {
			add(n.Line, "fields.%s: not a pinned field (%s)", f, strings.Join(fieldOrder, ", "))
			continue
		}
		p.Fields[f] = n.Value
	}
	for f, n := range pf.Allow {
		a, err := allowance(n)
		if err != nil {
			add(n.Line, "allow.%s: %v", f, err)
			continue
		}
		if _, err := path.Match(f, ""); err != nil {
			add(n.Line, "allow.%s: bad pattern: %v", f, err)
			continue
		}
		if !strings.ContainsAny(f, "*?[") && !knownPinField(f) {
			add(n.Line, "allow.%s: not a pinned field (a typo would let nothing change)", f)
			continue
		}
		p.Allow[f] = a
	}
	if len(errs) > 0 {
		slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
		return nil, errors.Join(errs...)
	}
	return p, nil
}

// knownPinField reports whether f is a field pinFields can produce.
func knownPinField(f string) bool {
	switch f {
	case "protocol_version", "era", "server.name", "server.version", "capabilities.tasks",
		"capabilities.tasks.list", "capabilities.tasks.cancel", "capabilities.tasks.requests.tools.call",
		"extensions.tasks", "sessions", "poll_interval_ms", "ttl_ms":
		return true
	}
	rest, ok := strings.CutPrefix(f, "tools.")
	if !ok {
		return false
	}
	i := strings.LastIndexByte(rest, '.')
	return i > 0 && (rest[i+1:] == "task_support" || rest[i+1:] == "input_schema")
}

// allowance reads an allow entry: `any`, or `{min: N, max: N}`.
func allowance(n yaml.Node) (Allowance, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Value == "any" {
			return Allowance{Any: true}, nil
		}
		return Allowance{}, fmt.Errorf("want any or {min: N, max: N}, got %q", n.Value)
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i].Value; k != "min" && k != "max" {
				return Allowance{}, fmt.Errorf("%s: unknown key in a range (valid: min, max)", k)
			}
		}
		var r struct {
			Min *int64 `yaml:"min"`
			Max *int64 `yaml:"max"`
		}
		if err := n.Decode(&r); err != nil {
			return Allowance{}, fmt.Errorf("want {min: N, max: N}: %v", err)
		}
		if r.Min == nil || r.Max == nil {
			return Allowance{}, errors.New("a range needs both min and max")
		}
		if *r.Min > *r.Max {
			return Allowance{}, fmt.Errorf("min %d > max %d", *r.Min, *r.Max)
		}
		return Allowance{Min: *r.Min, Max: *r.Max}, nil
	}
	return Allowance{}, fmt.Errorf("want any or {min: N, max: N}, got a %s", kindName(n.Kind))
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	case yaml.AliasNode:
		return "alias"
	}
	return "scalar"
}
