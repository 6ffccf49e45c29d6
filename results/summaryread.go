package results

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
)

// How a summary read back from summary.json says what the file lacked. An older tasksim
// wrote fewer keys, and a newer one may write more; the report reads the typed Summary
// alone, so absence has to be visible in the types: a pointer for a block (Input, Config,
// Shard), marks beside plain numbers for figures (Fleet.Measured, ThresholdResult.NoData
// and WorstWindow -1, Tasks.outcomes). A key that is missing or null reads as absent;
// one of a known name and the wrong type is an error of ReadSummary, as it always was.

// taskOutcome is one task outcome a summary holds, and its count.
type taskOutcome struct {
	name  string
	count int64
}

// outcomes lists the outcomes t holds: those of outcomeCounters it has, in summary order,
// then those a newer summary added, in key order.
func (t *Tasks) outcomes() []taskOutcome {
	var out []taskOutcome
	for i, oc := range outcomeCounters {
		if t.has&(1<<i) != 0 {
			out = append(out, taskOutcome{oc.name, *oc.field(t)})
		}
	}
	return append(out, t.other...)
}

// UnmarshalJSON reads the outcomes as plain fields (a known outcome that is not a number is
// an error), and marks which the object held: a known outcome null or absent is not held.
// Any other key is an outcome of a newer tasksim, kept when it is a whole number and
// skipped otherwise (null, a string, an object, 1.5): tolerant, since this version cannot
// know what a newer one meant by it.
func (t *Tasks) UnmarshalJSON(b []byte) error {
	type plain Tasks // the fields without this method
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return err
	}
	*t = Tasks(p)
	for i, oc := range outcomeCounters {
		if v, ok := keys[oc.name]; ok && string(v) != "null" {
			t.has |= 1 << i
		}
		delete(keys, oc.name)
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		var n *float64
		if json.Unmarshal(keys[k], &n) != nil || n == nil || *n != math.Trunc(*n) || math.Abs(*n) > 1<<53 {
			continue
		}
		t.other = append(t.other, taskOutcome{k, int64(*n)})
	}
	return nil
}
