package results

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestEvidenceForms: the reason-only form (every gate of an error summary, a gate with
// nothing to look at) marshals as {"reason": ...} and nothing else, a rollback drill whose
// switch never flipped adds only "planned", and each reads back into its struct (strictly)
// and writes the same bytes again.
func TestEvidenceForms(t *testing.T) {
	errSum := ErrorSummary(RunInfo{Error: "probe: connection refused"})
	notFlipped := Build(RunInfo{Rollback: &Rollback{Planned: "at 10s"}}, nil, nil)
	for _, tc := range []struct {
		name  string
		gates Gates
		want  map[string]string // gate name -> its evidence, compact
	}{
		{"error summary", errSum.Gates, map[string]string{
			GateHard:          `{"reason":"the run ended in an error before it measured anything"}`,
			GateRecovery:      `{"reason":"the run ended in an error before it measured anything"}`,
			GateCancellation:  `{"reason":"the run ended in an error before it measured anything"}`,
			GateCompatibility: `{"reason":"the run ended in an error before it measured anything"}`,
			GateContract:      `{"reason":"the run ended in an error before it measured anything"}`,
			GateRollback:      `{"reason":"the run ended in an error before it measured anything"}`,
		}},
		{"nothing to look at", notFlipped.Gates, map[string]string{
			GateCompatibility: `{"reason":"no capability manifest: the target's tasks capability was not compared"}`,
			GateContract:      `{"reason":"` + contractNotRun + `"}`,
			GateRollback:      `{"planned":"at 10s","reason":"the switch never flipped (planned at 10s): the run ended first, or no abort_on_fail threshold failed"}`,
		}},
	} {
		b, err := json.Marshal(tc.gates)
		if err != nil {
			t.Fatal(err)
		}
		var byName map[string]struct {
			Evidence json.RawMessage `json:"evidence"`
		}
		if err := json.Unmarshal(b, &byName); err != nil {
			t.Fatal(err)
		}
		for name, want := range tc.want {
			if got := string(byName[name].Evidence); got != want {
				t.Errorf("%s: %s evidence %s, want %s", tc.name, name, got, want)
			}
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		var back Gates
		if err := dec.Decode(&back); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if again, err := json.Marshal(back); err != nil || !bytes.Equal(again, b) {
			t.Errorf("%s: read back and written again (%v):\n%s\nwas\n%s", tc.name, err, again, b)
		}
	}
}
