package scenarios

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// decoder walks a yaml.Node tree into a Go value by the yaml tags of its struct fields,
// collecting every problem with its position and field path, and recording where each field
// came from. A null value leaves the field as it was (its default).
type decoder struct {
	source  string
	origins map[string]origin // nil for a --set value: nothing recorded, problems unpositioned
	errs    []error
	steps   int
}

// wholeValue is implemented by structs that a mapping replaces instead of updating: their
// fields only make sense together (a distribution, a set of ratios).
type wholeValue interface{ replacedWhole() }

var (
	_ wholeValue = (*Dist)(nil)
	_ wholeValue = (*Input)(nil)
	_ wholeValue = (*Outcomes)(nil)
)

var (
	distType = reflect.TypeFor[Dist]()
	anyType  = reflect.TypeFor[any]()
)

// fail records a problem at node n. After maxFound problems decoding stops: the rest would
// not be shown anyway, and building messages for an alias bomb would take long.
func (d *decoder) fail(n *yaml.Node, path, format string, args ...any) {
	if len(d.errs) >= maxFound {
		d.steps = maxSteps
		return
	}
	e := &Error{Source: d.source, Path: path, Msg: fmt.Sprintf(format, args...)}
	if n != nil && d.origins != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	d.errs = append(d.errs, e)
}

// err joins the problems found in document order, keeping the first maxProblems.
func (d *decoder) err() error {
	errs := d.errs
	slices.SortStableFunc(errs, func(a, b error) int {
		ea, eb := a.(*Error), b.(*Error)
		return cmp.Or(cmp.Compare(ea.Line, eb.Line), cmp.Compare(ea.Column, eb.Column))
	})
	seen := map[string]bool{} // a merged mapping is decoded once per merge: report it once
	errs = slices.DeleteFunc(errs, func(e error) bool {
		dup := seen[e.Error()]
		seen[e.Error()] = true
		return dup
	})
	if len(errs) > maxProblems {
		more := *(errs[maxProblems].(*Error))
		more.Path, more.Msg = "", fmt.Sprintf("%d more problems not shown", len(errs)-maxProblems)
		if len(d.errs) >= maxFound {
			more.Msg = "more problems not shown"
		}
		errs = append(errs[:maxProblems:maxProblems], &more)
	}
	return errors.Join(errs...)
}

// step counts work and reports false once the budget is spent (alias or merge bombs).
func (d *decoder) step(n *yaml.Node, path string) bool {
	d.steps++
	if d.steps == maxSteps {
		d.fail(n, path, "document too complex: more than %d nodes after expanding aliases", maxSteps)
	}
	return d.steps < maxSteps
}

// record notes that path came from node n.
func (d *decoder) record(path string, n *yaml.Node) {
	if d.origins != nil && path != "" {
		d.origins[path] = origin{line: n.Line, col: n.Column}
	}
}

// deref follows an alias to its anchored node.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 8; i++ {
		n = n.Alias
	}
	return n
}

// value decodes n into v (settable), at path.
func (d *decoder) value(n *yaml.Node, v reflect.Value, path string) {
	if !d.step(n, path) {
		return
	}
	n = deref(n)
	if n.Kind == yaml.AliasNode {
		d.fail(n, path, "unresolved alias *%s", n.Value)
		return
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return // as if absent: the default stays
	}
	if u, ok := v.Addr().Interface().(yaml.Unmarshaler); ok {
		if err := u.UnmarshalYAML(n); err != nil {
			d.fail(n, path, "%v", err)
		}
		if th, ok := u.(*Threshold); ok && d.origins == nil {
			th.Line, th.Column = 0, 0 // a --set value: its positions are not in the file
		}
		return
	}
	if v.Type() == distType && n.Kind == yaml.ScalarNode {
		var fixed Duration
		if err := fixed.UnmarshalYAML(n); err != nil {
			d.fail(n, path, "expected a distribution {dist: ...} or a fixed duration: %v", err)
			return
		}
		v.Set(reflect.ValueOf(Dist{Kind: DistFixed, Value: fixed}))
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		d.structure(n, v, path)
	case reflect.Map:
		d.mapping(n, v, path)
	case reflect.Slice:
		d.sequence(n, v, path)
	default:
		d.scalar(n, v, path)
	}
}

// structure decodes a mapping into a struct, field by yaml tag; unknown keys are problems.
func (d *decoder) structure(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, "expected a mapping, got %s", describe(n))
		return
	}
	if _, ok := v.Addr().Interface().(wholeValue); ok {
		v.SetZero()
	}
	fields := yamlFields(v.Type())
	for _, p := range d.pairs(n, path, 0) {
		name := p.key.Value
		fpath := joinPath(path, name)
		i, ok := fields[name]
		if !ok {
			d.fail(p.key, fpath, "unknown field%s (valid: %s)",
				suggest(name, fieldNames(v.Type())), strings.Join(fieldNames(v.Type()), ", "))
			continue
		}
		d.record(fpath, p.key)
		d.value(p.val, v.Field(i), fpath)
	}
}

// mapping decodes a mapping with string keys into a map, replacing it.
func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, "expected a mapping, got %s", describe(n))
		return
	}
	m := reflect.MakeMap(v.Type())
	for _, p := range d.pairs(n, path, 0) {
		kpath := joinPath(path, p.key.Value)
		d.record(kpath, p.key)
		elem := reflect.New(v.Type().Elem()).Elem()
		if v.Type().Elem() == anyType {
			d.anyValue(p.val, elem, kpath)
		} else {
			d.value(p.val, elem, kpath)
		}
		m.SetMapIndex(reflect.ValueOf(p.key.Value).Convert(v.Type().Key()), elem)
	}
	v.Set(m)
}

// anyValue decodes a free-form value (a tool argument) with yaml's own decoder, then checks
// that it can be sent as JSON.
func (d *decoder) anyValue(n *yaml.Node, v reflect.Value, path string) {
	var x any
	if err := n.Decode(&x); err != nil {
		d.fail(n, path, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
		return
	}
	x, err := jsonable(x, 0)
	if err != nil {
		d.fail(n, path, "%v", err)
		return
	}
	if x != nil {
		v.Set(reflect.ValueOf(x))
	}
}

// jsonable returns x with every map keyed by strings, or an error if x cannot be JSON.
func jsonable(x any, depth int) (any, error) {
	if depth > 64 {
		return nil, errors.New("nested more than 64 levels deep")
	}
	switch x := x.(type) {
	case map[string]any:
		for k, e := range x {
			e, err := jsonable(e, depth+1)
			if err != nil {
				return nil, err
			}
			x[k] = e
		}
		return x, nil
	case map[any]any:
		return nil, errors.New("mapping keys must be strings to be sent as JSON")
	case []any:
		for i, e := range x {
			e, err := jsonable(e, depth+1)
			if err != nil {
				return nil, err
			}
			x[i] = e
		}
		return x, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%v cannot be sent as JSON", x)
		}
	}
	return x, nil
}

// sequence decodes a sequence into a slice, replacing it.
func (d *decoder) sequence(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		d.fail(n, path, "expected a sequence, got %s", describe(n))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		ipath := indexPath(path, i)
		d.record(ipath, item)
		d.value(item, s.Index(i), ipath)
	}
	v.Set(s)
}

// scalar decodes a scalar into a string, integer, float or bool, strictly: no float into an
// integer, no "yes" for true, no NaN or infinity.
func (d *decoder) scalar(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.ScalarNode {
		d.fail(n, path, "expected %s, got %s", kindName(v.Kind()), describe(n))
		return
	}
	tag := n.ShortTag()
	bad := func() { d.fail(n, path, "expected %s, got %s", kindName(v.Kind()), describe(n)) }
	switch v.Kind() {
	case reflect.String:
		v.SetString(n.Value)
	case reflect.Bool:
		var b bool
		if tag != "!!bool" || n.Decode(&b) != nil {
			bad()
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64, reflect.Int32:
		var i int64
		if tag != "!!int" || n.Decode(&i) != nil || v.OverflowInt(i) {
			bad()
			return
		}
		v.SetInt(i)
	case reflect.Uint64:
		var u uint64
		if tag != "!!int" || n.Decode(&u) != nil {
			bad()
			return
		}
		v.SetUint(u)
	case reflect.Float64:
		var f float64
		if (tag != "!!int" && tag != "!!float") || n.Decode(&f) != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			bad()
			return
		}
		v.SetFloat(f)
	default:
		d.fail(n, path, "cannot decode into %s", v.Type()) // a schema bug: caught by tests
	}
}

// kindName names what a Go kind accepts, for error messages.
func kindName(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Uint64:
		return "a non-negative integer"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Float64:
		return "a finite number"
	}
	return k.String()
}

// pair is one key and value of a mapping.
type pair struct{ key, val *yaml.Node }

// pairs returns the entries of mapping n with merge keys (<<) expanded: its own keys first,
// then those of the merged mappings not already present, earlier merges winning. Keys must be
// scalars and must not repeat.
func (d *decoder) pairs(n *yaml.Node, path string, depth int) []pair {
	var out []pair
	var merges []*yaml.Node
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if !d.step(n, path) {
			return nil
		}
		k, val := deref(n.Content[i]), n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, val)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			d.fail(k, path, "mapping keys must be strings, got %s", describe(k))
			continue
		}
		if prev, dup := seen[k.Value]; dup {
			d.fail(k, joinPath(path, k.Value), "duplicate key (first at line %d)", prev.Line)
			continue
		}
		seen[k.Value] = k
		out = append(out, pair{k, val})
	}
	for _, m := range merges {
		m = deref(m)
		sources := []*yaml.Node{m}
		if m.Kind == yaml.SequenceNode {
			sources = m.Content
		}
		for _, src := range sources {
			src = deref(src)
			if src.Kind != yaml.MappingNode {
				d.fail(src, path, "a merge (<<) takes a mapping or a sequence of mappings, got %s", describe(src))
				continue
			}
			if depth >= 8 {
				d.fail(src, path, "merges (<<) nested more than 8 deep")
				continue
			}
			for _, p := range d.pairs(src, path, depth+1) {
				if _, ok := seen[p.key.Value]; !ok {
					seen[p.key.Value] = p.key
					out = append(out, p)
				}
			}
		}
	}
	return out
}
