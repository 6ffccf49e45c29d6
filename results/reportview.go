package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// How report.html lays out the JSON values of a summary that have no fixed shape (gate
// evidence, the capability manifest, the embedded server's figures, the input block, the
// top errors): as facts and tables, never as JSON text.
//
//	value                                  shown as
//	number, string, bool                   a fact: key and value
//	null                                   a fact: "not recorded"
//	[] or {}                               a fact: "none" or "empty" ({} may declare a capability)
//	array of scalars                       a fact: the values, comma separated
//	object of scalars (8 keys or fewer)    a table of one row, the keys as its header
//	object of scalars (more keys)          a table of two columns, key and value
//	array of objects                       a table, one row per element, one column per key
//	object of objects of scalars           a table, one row per key, one column per inner key
//	any other object                       its leaves as facts, keys joined with "."
//
// A cell that is an array of scalars is its values, comma separated; any other array or
// object in a cell is compact JSON.

// maxViewRows bounds the rows of one table; the rest is counted under it.
const maxViewRows = 50

// evidence is a JSON object laid out for the page.
type evidence struct {
	Facts  []fact
	Tables []grid
}

// fact is one key and its value as text; Class is "fail" when the figure failed a gate,
// "na" when it is not recorded.
type fact struct {
	K, V, Class string
}

// wideFact is the length of key and value beyond which a fact takes a whole line.
const wideFact = 28

// Wide says the fact is too long to share a line with others.
func (f fact) Wide() bool { return len(f.K)+len(f.V) > wideFact }

// grid is a table: Title is the key it came from ("" for a table that is the whole value),
// More counts the rows beyond maxViewRows that are not shown.
type grid struct {
	Title string
	Cols  []string
	Rows  [][]string
	More  int
	Class string // "fail" when the table is evidence of a failure
}

// NumCol says every cell of column i is a number (or empty): it is aligned right.
func (g grid) NumCol(i int) bool {
	for _, r := range g.Rows {
		if r[i] == "" {
			continue
		}
		if _, err := strconv.ParseFloat(r[i], 64); err != nil {
			return false
		}
	}
	return true
}

// Empty says the object had nothing to show.
func (e evidence) Empty() bool { return len(e.Facts) == 0 && len(e.Tables) == 0 }

// viewObject lays out the object v (any other value is one fact under the key "value").
// Keys in failing are marked as failures. Keys that name credentials are never shown.
func viewObject(v any, failing map[string]bool) evidence {
	var e evidence
	m, ok := v.(map[string]any)
	if !ok {
		if v != nil {
			e.Facts = append(e.Facts, fact{K: "value", V: valueText(v)})
		}
		return e
	}
	e.add("", m, failing)
	return e
}

// add lays out the keys of m under the dotted prefix path.
func (e *evidence) add(path string, m map[string]any, failing map[string]bool) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		key := k
		if path != "" {
			key = path + "." + k
		}
		cls := ""
		if failing[key] {
			cls = "fail"
		}
		if secretKey(k) {
			e.Facts = append(e.Facts, fact{K: key, V: "(not shown)"})
			continue
		}
		switch x := m[k].(type) {
		case nil:
			e.Facts = append(e.Facts, fact{K: key, V: "not recorded", Class: "na"})
		case map[string]any:
			switch {
			case len(x) == 0:
				e.Facts = append(e.Facts, fact{K: key, V: "empty", Class: cls})
			case scalarValues(x):
				g := objectGrid(x)
				g.Title, g.Class = key, cls
				e.Tables = append(e.Tables, g)
			case objectValues(x):
				g := rowsGrid(x)
				g.Title, g.Class = key, cls
				e.Tables = append(e.Tables, g)
			default:
				e.add(key, x, failing)
			}
		case []any:
			if g, ok := arrayGrid(x); ok {
				g.Title, g.Class = key, cls
				e.Tables = append(e.Tables, g)
				continue
			}
			e.Facts = append(e.Facts, fact{K: key, V: listText(x), Class: cls})
		default:
			e.Facts = append(e.Facts, fact{K: key, V: valueText(x), Class: cls})
		}
	}
}

// objectGrid is an object of scalars as a table: one row under its keys, or key and value
// rows when it has too many keys to read across.
func objectGrid(m map[string]any) grid {
	keys := slices.Sorted(maps.Keys(m))
	if len(keys) > 8 {
		g := grid{Cols: []string{"key", "value"}}
		for _, k := range keys {
			g.Rows = append(g.Rows, []string{k, valueText(m[k])})
		}
		return g.bounded()
	}
	row := make([]string, len(keys))
	for i, k := range keys {
		row[i] = valueText(m[k])
	}
	return grid{Cols: keys, Rows: [][]string{row}}
}

// rowsGrid is an object of objects of scalars as a table: a row per key, in key order.
func rowsGrid(m map[string]any) grid {
	keys := slices.Sorted(maps.Keys(m))
	rows := make([]any, len(keys))
	for i, k := range keys {
		row := maps.Clone(m[k].(map[string]any))
		row[""] = k
		rows[i] = row
	}
	g, _ := arrayGrid(rows)
	return g
}

// objectValues says every value of m is a non-empty object of scalars.
func objectValues(m map[string]any) bool {
	for _, v := range m {
		o, ok := v.(map[string]any)
		if !ok || len(o) == 0 || !scalarValues(o) {
			return false
		}
	}
	return true
}

// arrayGrid is an array of objects as a table, or false when x is empty or holds
// anything but objects.
func arrayGrid(x []any) (grid, bool) {
	if len(x) == 0 {
		return grid{}, false
	}
	seen := map[string]bool{}
	for _, e := range x {
		m, ok := e.(map[string]any)
		if !ok {
			return grid{}, false
		}
		for k := range m {
			seen[k] = true
		}
	}
	g := grid{Cols: columnOrder(slices.Collect(maps.Keys(seen)))}
	for _, e := range x {
		m := e.(map[string]any)
		row := make([]string, len(g.Cols))
		for i, c := range g.Cols {
			if v, ok := m[c]; ok {
				row[i] = cellText(v)
			}
		}
		g.Rows = append(g.Rows, row)
	}
	return g.bounded(), true
}

// leadColumns and tailColumns fix where the columns that samples and error lists share
// stand: what was involved first, the long text last. Other columns sort between them.
// "" is the key column of rowsGrid.
var (
	leadColumns = []string{"", "id", "method", "kind", "outcome", "code", "status", "reason", "idempotency_key", "key", "task", "task_id", "count"}
	tailColumns = []string{"where", "detail", "message"}
)

// columnOrder sorts the column names cols: leadColumns first, tailColumns last.
func columnOrder(cols []string) []string {
	rank := func(c string) int {
		if i := slices.Index(leadColumns, c); i >= 0 {
			return i - len(leadColumns)
		}
		if i := slices.Index(tailColumns, c); i >= 0 {
			return 1 + i
		}
		return 0
	}
	slices.SortFunc(cols, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	return cols
}

// bounded keeps the first maxViewRows rows and counts the rest.
func (g grid) bounded() grid {
	if len(g.Rows) > maxViewRows {
		g.More = len(g.Rows) - maxViewRows
		g.Rows = g.Rows[:maxViewRows]
	}
	return g
}

// scalarValues says no value of m is an object or an array.
func scalarValues(m map[string]any) bool {
	for _, v := range m {
		switch v.(type) {
		case map[string]any, []any:
			return false
		}
	}
	return true
}

// listText is an array as one line: its scalars comma separated, "none" when empty.
func listText(x []any) string {
	if len(x) == 0 {
		return "none"
	}
	parts := make([]string, len(x))
	for i, e := range x {
		parts[i] = valueText(e)
	}
	return strings.Join(parts, ", ")
}

// cellText is a value in a table cell: scalars as valueText, "" for null, an array of
// scalars as its values, anything else as compact JSON.
func cellText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case []any:
		if scalars(x) {
			return listText(x)
		}
	}
	return valueText(v)
}

// scalars says no element of x is an object or an array.
func scalars(x []any) bool {
	for _, e := range x {
		switch e.(type) {
		case map[string]any, []any:
			return false
		}
	}
	return true
}

// valueText is a JSON value as the report shows it: numbers in as few digits as they
// take, strings as they are, anything else as compact JSON.
func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case float64:
		return num(x)
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	}
	return jsonText(v)
}

// jsonText is v as compact JSON with sorted keys.
func jsonText(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // html/template escapes the page; keep < and > readable
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// secretKey says a key may hold a credential.
func secretKey(k string) bool {
	switch strings.ToLower(k) {
	case "header", "headers", "authorization", "token", "tokens", "cookie", "cookies", "password", "secret":
		return true
	}
	return false
}

// generic is v as a reader of its JSON sees it (map[string]any, []any, float64, ...), for
// viewObject: nil when v encodes as null or does not encode.
func generic(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}
