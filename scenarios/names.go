package scenarios

import (
	"fmt"
	"reflect"
	"strings"
)

// yamlFields maps the yaml names of t's exported fields to their indexes.
func yamlFields(t reflect.Type) map[string]int {
	m := map[string]int{}
	for i := range t.NumField() {
		if name := yamlName(t.Field(i)); name != "" {
			m[name] = i
		}
	}
	return m
}

// fieldNames lists the yaml names of t's fields in declaration order.
func fieldNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		if name := yamlName(t.Field(i)); name != "" {
			names = append(names, name)
		}
	}
	return names
}

// yamlName is the yaml name of a field, "" for unexported or `yaml:"-"` fields.
func yamlName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" {
		return ""
	}
	if name == "" {
		return strings.ToLower(f.Name)
	}
	return name
}

// suggest returns `; did you mean "x"?` for the candidate closest to s, if it is within
// closeEnough of it, else "".
func suggest(s string, candidates []string) string {
	best, bestDist := "", closeEnough(s)+1
	for _, c := range candidates {
		if dist := editDistance(s, c); dist < bestDist {
			best, bestDist = c, dist
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

// closeEnough is the largest edit distance at which a name is taken for a typo of s.
func closeEnough(s string) int { return max(1, len(s)/3) }

// editDistance is the optimal string alignment distance between a and b, by bytes: the
// Levenshtein distance with a swap of two adjacent bytes counted as one edit ("modle").
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return max(len(a), len(b))
	}
	// d[i][j] is the distance between a[:i] and b[:j].
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
