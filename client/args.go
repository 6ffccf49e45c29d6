package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
)

// MinimalArgs builds the smallest arguments a tool's inputSchema (a JSON Schema object)
// accepts: every required property and nothing else, each with a plain value of its type,
// so that a probe can call a tool of a server it knows nothing about. It fails, saying
// which property and why, where no value can be chosen without knowing the tool: a
// required property without a type, a oneOf/anyOf/allOf, a string with a pattern or a
// format, a schema false.
//
//	type       value
//	string     "tasksim" (padded or cut to minLength/maxLength)
//	integer    the smallest integer the minimum and exclusiveMinimum allow (on multipleOf's
//	           grid), else 1, then lowered to what maximum and exclusiveMaximum allow;
//	           refused beyond ±2^53
//	number     as integer, a fraction where the bounds are
//	boolean    false
//	array      [] (minItems items of its items schema, null without one, when minItems > 0)
//	object     its own minimal arguments
//	null       null
//
// const, then enum (its first value), then default are taken as written. A schema true
// (or {}) is any value: null. Draft-04 boolean exclusiveMinimum/exclusiveMaximum are read
// as the bound of minimum/maximum being excluded.
func MinimalArgs(schema json.RawMessage) (map[string]any, error) {
	switch string(bytes.TrimSpace(schema)) {
	case "", "{}", "true":
		return map[string]any{}, nil // no schema, or any object: nothing is required
	}
	b := argBuilder{}
	v, err := b.value("arguments", schema, 0)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("inputSchema is not an object schema")
	}
	return m, nil
}

// jsonSchema holds the keywords MinimalArgs reads.
type jsonSchema struct {
	Type             json.RawMessage            `json:"type"`
	Properties       map[string]json.RawMessage `json:"properties"`
	Required         []string                   `json:"required"`
	Enum             []json.RawMessage          `json:"enum"`
	Const            json.RawMessage            `json:"const"`
	Default          json.RawMessage            `json:"default"`
	Items            json.RawMessage            `json:"items"`
	MinItems         int                        `json:"minItems"`
	MinLength        *int                       `json:"minLength"`
	MultipleOf       *float64                   `json:"multipleOf"`
	MaxLength        *int                       `json:"maxLength"`
	Minimum          *float64                   `json:"minimum"`
	Maximum          *float64                   `json:"maximum"`
	ExclusiveMinimum json.RawMessage            `json:"exclusiveMinimum"` // a number, or (draft 4) a boolean
	ExclusiveMaximum json.RawMessage            `json:"exclusiveMaximum"`
	Pattern          string                     `json:"pattern"`
	Format           string                     `json:"format"`
	OneOf            []json.RawMessage          `json:"oneOf"`
	AnyOf            []json.RawMessage          `json:"anyOf"`
	AllOf            []json.RawMessage          `json:"allOf"`
}

// Bounds on what a schema, outside input, can make MinimalArgs build.
const (
	maxSchemaDepth = 16   // nested objects and arrays
	maxMinItems    = 64   // minItems of an array
	maxMinLength   = 4096 // minLength of a string
	maxValues      = 4096 // values in all (nested minItems multiply)
)

// argBuilder builds one MinimalArgs value, counting the values it makes.
type argBuilder struct{ values int }

// value builds the minimal value of the schema raw at path.
func (b *argBuilder) value(path string, raw json.RawMessage, depth int) (any, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("%s: schema nested deeper than %d levels", path, maxSchemaDepth)
	}
	if b.values++; b.values > maxValues {
		return nil, fmt.Errorf("%s: the schema asks for more than %d values", path, maxValues)
	}
	switch string(bytes.TrimSpace(raw)) {
	case "true", "{}":
		return nil, nil // any value will do
	case "false":
		return nil, fmt.Errorf("%s: the schema false accepts no value", path)
	}
	var s jsonSchema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%s: schema is not a JSON object: %v", path, err)
	}
	switch {
	case len(s.Const) > 0:
		return s.Const, nil
	case len(s.Enum) > 0:
		return s.Enum[0], nil
	case len(s.Default) > 0:
		return s.Default, nil
	case len(s.OneOf)+len(s.AnyOf)+len(s.AllOf) > 0:
		return nil, fmt.Errorf("%s: a oneOf, anyOf or allOf schema needs a value chosen by hand", path)
	}
	typ, err := schemaType(s.Type, len(s.Properties) > 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	switch typ {
	case "object":
		return b.object(path, &s, depth)
	case "string":
		return minimalString(path, &s)
	case "integer", "number":
		return minimalNumber(path, &s, typ == "integer")
	case "boolean":
		return false, nil
	case "null":
		return nil, nil
	case "array":
		return b.array(path, &s, depth)
	}
	return nil, fmt.Errorf("%s: type %q is not a JSON Schema type", path, typ)
}

// object builds every required property of s, in name order.
func (b *argBuilder) object(path string, s *jsonSchema, depth int) (any, error) {
	out := map[string]any{}
	for _, name := range slices.Sorted(slices.Values(s.Required)) {
		p, ok := s.Properties[name]
		if !ok {
			return nil, fmt.Errorf("%s.%s: required, but has no schema", path, name)
		}
		v, err := b.value(path+"."+name, p, depth+1)
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

// array builds minItems items of s's items schema.
func (b *argBuilder) array(path string, s *jsonSchema, depth int) (any, error) {
	if s.MinItems > maxMinItems {
		return nil, fmt.Errorf("%s: minItems %d is more than tasksim makes up (%d)", path, s.MinItems, maxMinItems)
	}
	itemSchema := s.Items
	if len(itemSchema) == 0 {
		itemSchema = json.RawMessage("true") // no items schema: any value
	}
	items := make([]any, 0, max(0, s.MinItems))
	for i := range s.MinItems {
		v, err := b.value(fmt.Sprintf("%s[%d]", path, i), itemSchema, depth+1)
		if err != nil {
			return nil, err
		}
		items = append(items, v)
	}
	return items, nil
}

func minimalString(path string, s *jsonSchema) (any, error) {
	switch {
	case s.Pattern != "" || s.Format != "":
		return nil, fmt.Errorf("%s: a string with a pattern or format needs a value chosen by hand", path)
	case s.MinLength != nil && *s.MinLength > maxMinLength:
		return nil, fmt.Errorf("%s: minLength %d is more than tasksim makes up (%d)", path, *s.MinLength, maxMinLength)
	case s.MinLength != nil && s.MaxLength != nil && *s.MinLength > *s.MaxLength:
		return nil, fmt.Errorf("%s: minLength %d is above maxLength %d: no string fits", path, *s.MinLength, *s.MaxLength)
	}
	v := "tasksim"
	if s.MinLength != nil && len(v) < *s.MinLength {
		v += strings.Repeat("x", *s.MinLength-len(v))
	}
	if s.MaxLength != nil && len(v) > *s.MaxLength {
		v = v[:max(0, *s.MaxLength)]
	}
	return v, nil
}

// minimalNumber is the smallest value the lower bounds allow (1 without any), lowered to
// what the upper bounds allow; an integer is rounded inward, a multipleOf rounded up to.
// Both a minimum and an exclusiveMinimum apply (the stricter wins), and so on the other
// side. Beyond ±2^53 (where float64 holds no more integers) it refuses.
func minimalNumber(path string, s *jsonSchema, integer bool) (any, error) {
	lo, loOpen, hasLo := bound(s.Minimum, s.ExclusiveMinimum, true)
	hi, hiOpen, hasHi := bound(s.Maximum, s.ExclusiveMaximum, false)
	const exact = 1 << 53
	if hasLo && math.Abs(lo) > exact || hasHi && math.Abs(hi) > exact {
		return nil, fmt.Errorf("%s: bounds beyond ±2^53 need a value chosen by hand", path)
	}
	step := 0.0 // the grid values must sit on: multipleOf, and 1 for an integer
	if integer {
		step = 1
	}
	if m := s.MultipleOf; m != nil && *m > 0 {
		step = *m
		if integer && step != math.Trunc(step) {
			return nil, fmt.Errorf("%s: an integer multipleOf %v needs a value chosen by hand", path, step)
		}
	}
	n := 1.0
	switch {
	case hasLo && step > 0:
		n = math.Ceil(lo/step) * step
		if loOpen && n == lo {
			n += step
		}
	case hasLo && loOpen:
		n = lo + 1
		if hasHi && n >= hi {
			n = (lo + hi) / 2
		}
	case hasLo:
		n = lo
	case step > 0:
		n = step
	}
	if hasHi && (n > hi || hiOpen && n >= hi) {
		switch {
		case step > 0:
			n = math.Floor(hi/step) * step
			if hiOpen && n == hi {
				n -= step
			}
		case hiOpen:
			n = hi - 1
			if hasLo && n <= lo {
				n = (lo + hi) / 2
			}
		default:
			n = hi
		}
	}
	if hasLo && (n < lo || loOpen && n <= lo) {
		return nil, fmt.Errorf("%s: no %s between the schema's bounds", path, map[bool]string{true: "integer", false: "number"}[integer])
	}
	if integer {
		return int64(n), nil
	}
	return n, nil
}

// bound reads one side's bound, the stricter of the inclusive keyword and the exclusive
// one (a number since draft 6; a boolean in draft 4, making the inclusive one exclusive).
// low says which side: the stricter lower bound is the larger.
func bound(inclusive *float64, exclusive json.RawMessage, low bool) (v float64, open, ok bool) {
	var x float64
	if json.Unmarshal(exclusive, &x) == nil { // draft 6 and later: a number
		if inclusive == nil || low && x >= *inclusive || !low && x <= *inclusive {
			return x, true, true
		}
		return *inclusive, false, true
	}
	if inclusive == nil {
		return 0, false, false
	}
	var draft4 bool
	_ = json.Unmarshal(exclusive, &draft4)
	return *inclusive, draft4, true
}

// schemaType reads a schema's type: a name, or a list of which the first that is not
// "null" is taken. A schema without a type is an object when it has properties.
func schemaType(raw json.RawMessage, hasProps bool) (string, error) {
	if len(raw) == 0 {
		if hasProps {
			return "object", nil
		}
		return "", fmt.Errorf("no type: a value must be chosen by hand")
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil || len(many) == 0 {
		return "", fmt.Errorf("type %s is neither a name nor a list of names", raw)
	}
	for _, t := range many {
		if t != "null" {
			return t, nil
		}
	}
	return "null", nil
}
