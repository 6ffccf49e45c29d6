package scenarios

import (
	"encoding"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Set overrides one field, as `--set path=value` does. path names a field by its yaml names:
//
//	workload.clients=500            an integer, float or bool field: value is a YAML scalar
//	client.poll.policy=fixed        a string field (and headers.NAME, server.tokens.TENANT): value verbatim
//	server.poll_interval=2s         a duration, rate (workload.rate=50/s) or threshold: value as written in a file
//	args.duration_ms=100            one tool argument (the rest of the path is the key): a YAML value
//	workload.stages[1].target=80/s  a sequence item; index len(stages) appends one
//	client.cancel.delay=1s          a whole mapping, sequence or distribution: a YAML value, e.g.
//	                                client.cancel.delay={dist: uniform, min: 1s, max: 3s}
//	server.tools.work_task.input.rounds=2   a field inside a map item whose items have fields
//	                                (server.tools, server.latency): the key runs to the next "."
//	                                unless an existing key matches longer (a tool named "a.b")
//
// An unknown path is an error listing the valid paths near it. On error s is unchanged. Set
// does not Validate; after it, Where(path) and Validate's messages locate the field at "--set".
func (s *Scenario) Set(path, value string) error { return s.SetFrom("--set", path, value) }

// SetFrom is Set for a value that came from elsewhere than --set, e.g. a flag of its own
// ("--clients"): its errors, and Validate's about the field, name that source.
func (s *Scenario) SetFrom(source, path, value string) error {
	if source == "" {
		source = "--set" // an empty source would read as a position in the file
	}
	fail := func(format string, args ...any) error {
		return &Error{Source: source, Path: path, Msg: fmt.Sprintf(format, args...)}
	}
	v := reflect.ValueOf(s).Elem()
	var commits []func() // map insertions and slice appends, applied once the value decodes
	canon, rest := "", path
	if rest == "" {
		return fail("empty path (valid: %s)", strings.Join(fieldNames(v.Type()), ", "))
	}
	for rest != "" {
		if isLeaf(v.Type()) {
			return fail("%s is a single value: it has no %q", canon, strings.TrimPrefix(rest, "."))
		}
		switch v.Kind() {
		case reflect.Map:
			keyed, ok := strings.CutPrefix(rest, ".")
			if !ok || keyed == "" {
				return fail("%s is a mapping: name a key, like %s.KEY", canon, canon)
			}
			key, after := mapKey(v, keyed)
			elem, commit := mapItem(v, key)
			commits = append(commits, commit)
			v, canon, rest = elem, canon+"."+key, after
		case reflect.Slice:
			idx, after, ok := cutIndex(rest)
			if !ok {
				return fail("%s is a sequence: name an item, like %s[0]", canon, canon)
			}
			switch n := v.Len(); {
			case idx < n:
				v = v.Index(idx)
			case idx == n:
				sl, elem := v, reflect.New(v.Type().Elem()).Elem()
				commits = append(commits, func() { sl.Set(reflect.Append(sl, elem)) })
				v = elem
			default:
				return fail("index %d out of range: %s has %d items (index %d appends one)", idx, canon, n, n)
			}
			canon, rest = indexPath(canon, idx), after
		case reflect.Struct:
			if canon != "" {
				var ok bool
				if rest, ok = strings.CutPrefix(rest, "."); !ok {
					return fail("%s has fields: write %s.FIELD", canon, canon)
				}
			}
			name := rest
			if i := strings.IndexAny(rest, ".["); i >= 0 {
				name, rest = rest[:i], rest[i:]
			} else {
				rest = ""
			}
			i, ok := yamlFields(v.Type())[name]
			if !ok {
				return fail("unknown field %q%s", name, nearPaths(canon, name, v.Type()))
			}
			v, canon = v.Field(i), joinPath(canon, name)
		default:
			return fail("%s is a single value: it has no %q", canon, rest)
		}
	}
	if err := setLeaf(v, source, canon, value); err != nil {
		return err
	}
	for i := len(commits) - 1; i >= 0; i-- {
		commits[i]()
	}
	s.setOrigin(canon, source)
	return nil
}

// mapItem returns a settable copy of map m's item at key (its zero value when absent) and the
// commit that stores the copy back, making m first when it is nil: SetFrom runs the commit only
// once the value decodes, so that a failed Set leaves the map as it was.
func mapItem(m reflect.Value, key string) (reflect.Value, func()) {
	k := reflect.ValueOf(key).Convert(m.Type().Key())
	elem := reflect.New(m.Type().Elem()).Elem()
	if old := m.MapIndex(k); old.IsValid() {
		elem.Set(old)
	}
	return elem, func() {
		if m.IsNil() {
			m.Set(reflect.MakeMap(m.Type()))
		}
		m.SetMapIndex(k, elem)
	}
}

// setOrigin records that source set the field at canon, forgetting the origins of the
// fields inside it (their file lines or earlier --set values are overwritten with it), so that
// Where and Validate's messages point at what set the value now.
func (s *Scenario) setOrigin(canon, source string) {
	if s.origins == nil {
		s.origins = map[string]origin{}
	}
	for p := range s.origins {
		if p == canon || strings.HasPrefix(p, canon+".") || strings.HasPrefix(p, canon+"[") {
			delete(s.origins, p)
		}
	}
	s.origins[canon] = origin{setBy: source}
}

var textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()

// isLeaf reports whether values of t are set whole from text (Duration, Rate, Threshold).
func isLeaf(t reflect.Type) bool { return reflect.PointerTo(t).Implements(textUnmarshalerType) }

// setLeaf decodes value into v (addressable), leaving v unchanged on error.
func setLeaf(v reflect.Value, source, path, value string) error {
	fail := func(format string, args ...any) error {
		return &Error{Source: source, Path: path, Msg: fmt.Sprintf(format, args...)}
	}
	tmp := reflect.New(v.Type()).Elem()
	tmp.Set(v)
	switch {
	case isLeaf(v.Type()):
		if err := tmp.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(value)); err != nil {
			return fail("%v", err)
		}
	case v.Kind() == reflect.String:
		tmp.SetString(value)
	default:
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(value), &doc); err != nil {
			return fail("invalid value %q: %s", value, strings.TrimPrefix(err.Error(), "yaml: "))
		}
		if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
			return fail("a value is required")
		}
		d := &decoder{source: source}
		if v.Type() == anyType {
			d.anyValue(doc.Content[0], tmp, path)
		} else {
			d.value(doc.Content[0], tmp, path)
		}
		if len(d.errs) > 0 {
			return d.err()
		}
	}
	v.Set(tmp)
	return nil
}

// mapKey splits the rest of a path below map m, without its leading ".", into the map key
// and what follows. The key is the whole rest, except for maps whose items have fields
// (ToolProfile, Dist): there it is the longest existing key followed by "." or the end, else
// the text up to the first ".".
func mapKey(m reflect.Value, rest string) (key, after string) {
	et := m.Type().Elem()
	if et.Kind() != reflect.Struct || isLeaf(et) {
		return rest, ""
	}
	for _, k := range m.MapKeys() {
		ks := k.String()
		if len(ks) > len(key) && (rest == ks || strings.HasPrefix(rest, ks+".")) {
			key = ks
		}
	}
	if key == "" {
		key, _, _ = strings.Cut(rest, ".")
	}
	return key, rest[len(key):]
}

// cutIndex parses a leading "[N]" off s.
func cutIndex(s string) (idx int, rest string, ok bool) {
	inner, rest, ok := strings.Cut(strings.TrimPrefix(s, "["), "]")
	if !ok || !strings.HasPrefix(s, "[") {
		return 0, "", false
	}
	idx, err := strconv.Atoi(inner)
	if err != nil || idx < 0 || strings.HasPrefix(inner, "+") {
		return 0, "", false
	}
	return idx, rest, true
}

// nearPaths describes the valid paths near an unknown field name under parent (of type t):
// the paths anywhere in the schema whose last element is closest to name (up to three), and
// the fields of parent.
func nearPaths(parent, name string, t reflect.Type) string {
	var b strings.Builder
	var best []string
	bestDist := closeEnough(name)
	for _, p := range schemaPaths(reflect.TypeFor[Scenario](), "") {
		last := p[strings.LastIndexAny(p, ".]")+1:]
		switch d := editDistance(name, last); {
		case d > bestDist:
		case d < bestDist || len(best) == 0:
			best, bestDist = []string{p}, d
		case d == bestDist && len(best) < 3:
			best = append(best, p)
		}
	}
	if len(best) > 0 {
		fmt.Fprintf(&b, "; did you mean %s?", strings.Join(best, " or "))
	}
	var here []string
	for _, f := range fieldNames(t) {
		here = append(here, joinPath(parent, f))
	}
	where := "top-level fields"
	if parent != "" {
		where = "fields of " + parent
	}
	fmt.Fprintf(&b, " (%s: %s)", where, strings.Join(here, ", "))
	return b.String()
}

// schemaPaths lists every settable path under a value of type t, with [N], KEY, NAME or
// TENANT standing for indexes and map keys.
func schemaPaths(t reflect.Type, prefix string) []string {
	switch {
	case isLeaf(t):
		return []string{prefix}
	case t.Kind() == reflect.Struct:
		out := []string{}
		if prefix != "" {
			out = append(out, prefix)
		}
		for _, f := range fieldNames(t) {
			i := yamlFields(t)[f]
			out = append(out, schemaPaths(t.Field(i).Type, joinPath(prefix, f))...)
		}
		return out
	case t.Kind() == reflect.Slice:
		return append([]string{prefix}, schemaPaths(t.Elem(), prefix+"[N]")...)
	case t.Kind() == reflect.Map:
		out := []string{prefix, prefix + ".KEY"}
		if et := t.Elem(); et.Kind() == reflect.Struct && !isLeaf(et) {
			out = append(out, schemaPaths(et, prefix+".KEY")[1:]...)
		}
		return out
	}
	return []string{prefix}
}
