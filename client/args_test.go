package client_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/client"
)

// TestMinimalArgs: every required property and nothing else, each with a plain value of its
// type; what cannot be chosen without knowing the tool is refused, naming the property.
func TestMinimalArgs(t *testing.T) {
	cases := []struct {
		name, schema, want, err string
	}{
		{name: "no schema", schema: ``, want: `{}`},
		{name: "no required property", schema: `{"type":"object","properties":{"a":{"type":"string"}}}`, want: `{}`},
		{name: "server-everything's research tool", schema: `{"type":"object","properties":{"topic":{"type":"string","description":"The research topic"},"ambiguous":{"type":"boolean","default":false}},"required":["topic"]}`,
			want: `{"topic":"tasksim"}`},
		{name: "every type", schema: `{"type":"object","required":["s","i","n","b","a","o","z"],"properties":{
			"s":{"type":"string"},"i":{"type":"integer"},"n":{"type":"number"},"b":{"type":"boolean"},
			"a":{"type":"array","items":{"type":"string"}},"o":{"type":"object","required":["x"],"properties":{"x":{"type":"integer","minimum":5}}},
			"z":{"type":"null"}}}`,
			want: `{"a":[],"b":false,"i":1,"n":1,"o":{"x":5},"s":"tasksim","z":null}`},
		{name: "bounds", schema: `{"type":"object","required":["short","long","lo","hi","items"],"properties":{
			"short":{"type":"string","maxLength":3},"long":{"type":"string","minLength":10},
			"lo":{"type":"integer","exclusiveMinimum":0},"hi":{"type":"number","maximum":0.5},
			"items":{"type":"array","minItems":2,"items":{"type":"boolean"}}}}`,
			want: `{"hi":0.5,"items":[false,false],"lo":1,"long":"tasksimxxx","short":"tas"}`},
		{name: "enum, const and default", schema: `{"type":"object","required":["e","c","d"],"properties":{
			"e":{"type":"string","enum":["fast","slow"]},"c":{"const":7},"d":{"type":"integer","default":42}}}`,
			want: `{"c":7,"d":42,"e":"fast"}`},
		{name: "nullable type list", schema: `{"type":"object","required":["x"],"properties":{"x":{"type":["null","integer"]}}}`, want: `{"x":1}`},
		{name: "properties without type", schema: `{"required":["x"],"properties":{"x":{"type":"boolean"}}}`, want: `{"x":false}`},
		{name: "oneOf", schema: `{"type":"object","required":["x"],"properties":{"x":{"oneOf":[{"type":"string"},{"type":"integer"}]}}}`,
			err: "arguments.x: a oneOf, anyOf or allOf schema needs a value chosen by hand"},
		{name: "pattern", schema: `{"type":"object","required":["id"],"properties":{"id":{"type":"string","pattern":"^[0-9]+$"}}}`,
			err: "arguments.id: a string with a pattern or format"},
		{name: "required without schema", schema: `{"type":"object","required":["x"],"properties":{}}`, err: "arguments.x: required, but has no schema"},
		{name: "no type", schema: `{"type":"object","required":["x"],"properties":{"x":{"description":"?"}}}`, err: "arguments.x: no type"},
		{name: "integer with a format", schema: `{"type":"object","required":["n"],"properties":{"n":{"type":"integer","format":"int32"}}}`, want: `{"n":1}`},
		{name: "integer bounds round inward", schema: `{"type":"object","required":["a","b","c"],"properties":{
			"a":{"type":"integer","minimum":0.5},"b":{"type":"integer","exclusiveMaximum":1},"c":{"type":"integer","minimum":3,"exclusiveMinimum":true}}}`,
			want: `{"a":1,"b":0,"c":4}`},
		{name: "number between exclusive bounds", schema: `{"type":"object","required":["x"],"properties":{"x":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1}}}`,
			want: `{"x":0.5}`},
		{name: "no integer fits", schema: `{"type":"object","required":["x"],"properties":{"x":{"type":"integer","minimum":1.2,"maximum":1.8}}}`,
			err: "arguments.x: no integer between the schema's bounds"},
		{name: "large enum values kept exactly", schema: `{"type":"object","required":["id"],"properties":{"id":{"enum":[9007199254740993]}}}`,
			want: `{"id":9007199254740993}`},
		{name: "boolean schemas", schema: `{"type":"object","required":["any"],"properties":{"any":true}}`, want: `{"any":null}`},
		{name: "schema false", schema: `{"type":"object","required":["no"],"properties":{"no":false}}`, err: "arguments.no: the schema false accepts no value"},
		{name: "any object", schema: `{}`, want: `{}`},
		{name: "both lower bounds apply", schema: `{"type":"object","required":["a","b"],"properties":{
			"a":{"type":"integer","minimum":10,"exclusiveMinimum":0},"b":{"type":"integer","minimum":0,"exclusiveMinimum":10}}}`,
			want: `{"a":10,"b":11}`},
		{name: "both upper bounds apply", schema: `{"type":"object","required":["a"],"properties":{"a":{"type":"integer","maximum":5,"exclusiveMaximum":0}}}`,
			want: `{"a":-1}`},
		{name: "multipleOf", schema: `{"type":"object","required":["a","b"],"properties":{
			"a":{"type":"integer","multipleOf":5},"b":{"type":"number","minimum":7,"multipleOf":2.5}}}`,
			want: `{"a":5,"b":7.5}`},
		{name: "bounds beyond 2^53", schema: `{"type":"object","required":["a"],"properties":{"a":{"type":"integer","minimum":1e20}}}`,
			err: "arguments.a: bounds beyond ±2^53"},
		{name: "items without a schema", schema: `{"type":"object","required":["a"],"properties":{"a":{"type":"array","minItems":2}}}`,
			want: `{"a":[null,null]}`},
		{name: "minLength above maxLength", schema: `{"type":"object","required":["s"],"properties":{"s":{"type":"string","minLength":10,"maxLength":3}}}`,
			err: "arguments.s: minLength 10 is above maxLength 3"},
		{name: "not an object schema", schema: `{"type":"string"}`, err: "inputSchema is not an object schema"},
		{name: "not JSON", schema: `[1,2]`, err: "arguments: schema is not a JSON object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := client.MinimalArgs(json.RawMessage(tc.schema))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want it to contain %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(got)
			if string(b) != tc.want {
				t.Errorf("MinimalArgs = %s, want %s", b, tc.want)
			}
		})
	}
}

// FuzzMinimalArgs: any schema is refused or answered, never a panic or a hang.
func FuzzMinimalArgs(f *testing.F) {
	f.Add(`{"type":"object","required":["a"],"properties":{"a":{"type":"array","minItems":3,"items":{"type":"object","required":["b"],"properties":{"b":{"type":"string"}}}}}}`)
	f.Fuzz(func(t *testing.T, schema string) {
		_, _ = client.MinimalArgs(json.RawMessage(schema))
	})
}

// TestMinimalArgsIsBounded: nested minItems multiply; the values built are bounded.
func TestMinimalArgsIsBounded(t *testing.T) {
	schema := `{"type":"array","minItems":64,"items":{"type":"boolean"}}`
	for range 4 {
		schema = `{"type":"array","minItems":64,"items":` + schema + `}`
	}
	_, err := client.MinimalArgs(json.RawMessage(`{"type":"object","required":["a"],"properties":{"a":` + schema + `}}`))
	if err == nil || !strings.Contains(err.Error(), "more than 4096 values") {
		t.Errorf("error %v, want the bound named", err)
	}
}
