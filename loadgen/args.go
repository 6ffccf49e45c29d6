package loadgen

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// MinimalArgs builds the smallest arguments a tool's inputSchema (a JSON Schema object)
// accepts: every required property and nothing else, each with a plain value of its type,
// so that a probe can call a tool of a server it knows nothing about. It fails, saying
// which property and why, where no value can be chosen without knowing the tool: a
// required property without a type, a oneOf/anyOf/allOf, a pattern or a format.
//
//	type       value
//	string     "tasksim" (cut or padded to minLength/maxLength)
//	integer    minimum, else exclusiveMinimum+1, else 1 (clamped to maximum)
//	number     as integer
//	boolean    false
//	array      [] (minItems items of its items schema, when minItems > 0)
//	object     its own minimal arguments
//	null       null
//
// enum and const take their first value, default is taken as is.
func MinimalArgs(schema json.RawMessage) (map[string]any, error) {
	if len(schema) == 0 {
		return map[string]any{}, nil
	}
	nodes := 0
	v, err := minimalValue("arguments", schema, 0, &nodes)
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
	Enum             []any                      `json:"enum"`
	Const            *json.RawMessage           `json:"const"`
	Default          *json.RawMessage           `json:"default"`
	Items            json.RawMessage            `json:"items"`
	MinItems         int                        `json:"minItems"`
	MinLength        *int                       `json:"minLength"`
	MaxLength        *int                       `json:"maxLength"`
	Minimum          *float64                   `json:"minimum"`
	ExclusiveMinimum *float64                   `json:"exclusiveMinimum"`
	Maximum          *float64                   `json:"maximum"`
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

func minimalValue(path string, raw json.RawMessage, depth int, nodes *int) (any, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("%s: schema nested deeper than %d levels", path, maxSchemaDepth)
	}
	if *nodes++; *nodes > maxValues {
		return nil, fmt.Errorf("%s: the schema asks for more than %d values", path, maxValues)
	}
	var s jsonSchema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%s: schema is not a JSON object: %v", path, err)
	}
	switch {
	case s.Const != nil:
		return json.RawMessage(*s.Const), nil
	case len(s.Enum) > 0:
		return s.Enum[0], nil
	case s.Default != nil:
		return json.RawMessage(*s.Default), nil
	case len(s.OneOf)+len(s.AnyOf)+len(s.AllOf) > 0:
		return nil, fmt.Errorf("%s: a oneOf, anyOf or allOf schema needs a value chosen by hand", path)
	case s.Pattern != "" || s.Format != "":
		return nil, fmt.Errorf("%s: a string with a pattern or format needs a value chosen by hand", path)
	}
	typ, err := schemaType(s.Type, len(s.Properties) > 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	switch typ {
	case "object":
		out := map[string]any{}
		for _, name := range slices.Sorted(slices.Values(s.Required)) {
			p, ok := s.Properties[name]
			if !ok {
				return nil, fmt.Errorf("%s.%s: required, but has no schema", path, name)
			}
			v, err := minimalValue(path+"."+name, p, depth+1, nodes)
			if err != nil {
				return nil, err
			}
			out[name] = v
		}
		return out, nil
	case "string":
		if s.MinLength != nil && *s.MinLength > maxMinLength {
			return nil, fmt.Errorf("%s: minLength %d is more than tasksim makes up (%d)", path, *s.MinLength, maxMinLength)
		}
		v := "tasksim"
		if s.MinLength != nil && len(v) < *s.MinLength {
			v += strings.Repeat("x", *s.MinLength-len(v))
		}
		if s.MaxLength != nil && len(v) > *s.MaxLength {
			v = v[:max(0, *s.MaxLength)]
		}
		return v, nil
	case "integer", "number":
		n := 1.0
		switch {
		case s.Minimum != nil:
			n = *s.Minimum
		case s.ExclusiveMinimum != nil:
			n = *s.ExclusiveMinimum + 1
		}
		if s.Maximum != nil && n > *s.Maximum {
			n = *s.Maximum
		}
		if typ == "integer" {
			return int64(n), nil
		}
		return n, nil
	case "boolean":
		return false, nil
	case "null":
		return nil, nil
	case "array":
		if s.MinItems > maxMinItems {
			return nil, fmt.Errorf("%s: minItems %d is more than tasksim makes up (%d)", path, s.MinItems, maxMinItems)
		}
		items := make([]any, 0, max(0, s.MinItems))
		for i := range s.MinItems {
			v, err := minimalValue(fmt.Sprintf("%s[%d]", path, i), s.Items, depth+1, nodes)
			if err != nil {
				return nil, err
			}
			items = append(items, v)
		}
		return items, nil
	}
	return nil, fmt.Errorf("%s: type %q is not a JSON Schema type", path, typ)
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
