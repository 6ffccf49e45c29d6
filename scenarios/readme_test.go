package scenarios

import (
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// requiredFields have no default: the schema block of docs/SCENARIOS.md gives them example values and
// says "required" on their line.
var requiredFields = []string{"name", "duration", "workload.clients"}

// TestReadmeSchemaDefaults: the schema block of docs/SCENARIOS.md, the reference the README
// points to ("every field with its default"), states the real defaults. Decoded, it is
// Default() but for the required fields; and every field whose default is not zero is
// written in it, so a default the page leaves out is caught as surely as one it gets wrong.
func TestReadmeSchemaDefaults(t *testing.T) {
	readme, err := os.ReadFile("../docs/SCENARIOS.md")
	if err != nil {
		t.Skip("docs/SCENARIOS.md not found in the module")
	}
	_, rest, ok := strings.Cut(string(readme), "The schema, every field with its default")
	_, rest, ok2 := strings.Cut(rest, "```yaml\n")
	block, _, ok3 := strings.Cut(rest, "\n```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/SCENARIOS.md has no ```yaml block after \"The schema, every field with its default\"")
	}

	sc, err := Parse("docs/SCENARIOS.md", []byte(block))
	if err != nil {
		t.Fatalf("the schema block of docs/SCENARIOS.md does not decode:\n%v", err)
	}
	lines := strings.Split(block, "\n")
	written := map[string]leaf{} // field path -> where the block writes it
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(block), &doc); err != nil {
		t.Fatal(err)
	}
	leaves(doc.Content[0], "", written)
	for _, path := range requiredFields {
		key, ok := written[path]
		if !ok || !strings.Contains(lines[key.line-1], "required") {
			t.Errorf("docs/SCENARIOS.md schema: %s has no default; its line must say it is required", path)
		}
	}
	sc.Name, sc.Duration, sc.Workload.Clients = "", 0, 0
	got, want := marshalLeaves(t, sc), marshalLeaves(t, Default())
	for _, path := range slices.Sorted(maps.Keys(want)) {
		w := want[path]
		switch g, ok := got[path]; {
		case !ok:
			t.Errorf("docs/SCENARIOS.md schema: %s decodes to nothing, Default() has %q", path, w.value)
		case g.value != w.value:
			t.Errorf("docs/SCENARIOS.md schema: %s decodes to %q, Default() has %q", path, g.value, w.value)
		}
	}
	for _, path := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[path]; !ok {
			t.Errorf("docs/SCENARIOS.md schema: %s decodes to %q, Default() has none", path, got[path].value)
		}
	}
	for _, path := range slices.Sorted(maps.Keys(want)) {
		if _, ok := written[path]; !ok && !slices.Contains([]string{"", "0", "0s", "0/s", "false"}, want[path].value) {
			t.Errorf("docs/SCENARIOS.md schema: %s (default %s) is not written", path, want[path].value)
		}
	}
}

// marshalLeaves encodes sc as YAML (zero-valued omitempty fields left out) and returns its
// leaves.
func marshalLeaves(t *testing.T, sc *Scenario) map[string]leaf {
	t.Helper()
	b, err := yaml.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]leaf{}
	leaves(doc.Content[0], "", out)
	return out
}

// leaf is a value that is not a non-empty mapping: where its key is and what it says (a
// sequence is its items' values, joined).
type leaf struct {
	line  int
	value string
}

// leaves records every leaf under the mapping n by its field path.
func leaves(n *yaml.Node, prefix string, out map[string]leaf) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		path := k.Value
		if prefix != "" {
			path = prefix + "." + k.Value
		}
		if v.Kind == yaml.MappingNode && len(v.Content) > 0 {
			leaves(v, path, out)
			continue
		}
		value := v.Value
		for _, item := range v.Content {
			value += item.Value + ";"
		}
		out[path] = leaf{line: k.Line, value: value}
	}
}

// TestReadmeScenarioExample: the one scenario the README shows ("## A scenario") is a valid
// scenario, as `tasksim validate` would judge it, so a newcomer's first file does not fail.
func TestReadmeScenarioExample(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Skip("README.md not found beside the module root")
	}
	_, rest, ok := strings.Cut(string(readme), "\n## A scenario\n")
	_, rest, ok2 := strings.Cut(rest, "```yaml\n")
	block, _, ok3 := strings.Cut(rest, "\n```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README has no ```yaml block under \"## A scenario\"")
	}
	sc, err := Parse("README.md", []byte(block))
	if err != nil {
		t.Fatalf("the README's scenario does not decode:\n%v", err)
	}
	if err := sc.Validate(); err != nil {
		t.Fatalf("the README's scenario is not valid:\n%v", err)
	}
}
