package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/scenarios"
)

// TestGateEvidenceIsTyped: the gates of real runs' summary.json (the embedded server in each
// era; faults, so that recovery is evaluated; tenant probes, with their samples; the sync
// fallback; rollback drills, one passing and one losing tasks; and a merge of a drill's
// shards) read strictly into results.Gates (an evidence key its struct lacks is an error)
// and write back byte for byte: the typed evidence is the contract writer and merge share,
// and it loses nothing a run writes.
func TestGateEvidenceIsTyped(t *testing.T) {
	for _, tc := range []struct {
		name, scenario string
		sets           []string
		shows          func(g *results.Gates) bool // the form of evidence the run is here for
	}{
		{"smoke-2025-11-25", "smoke", []string{"protocol=" + client.ProtocolLegacy}, func(g *results.Gates) bool { return g.Hard.Evaluated }},
		{"smoke-2026-07-28", "smoke", []string{"protocol=" + client.ProtocolModern}, func(g *results.Gates) bool { return g.Hard.Evaluated }},
		{"contract", "smoke", []string{"contract=true"}, func(g *results.Gates) bool { return g.Contract.Evaluated }},
		{"faults", "server-restart", nil, func(g *results.Gates) bool { return g.Recovery.Evaluated }},
		{"tenant-leaks", "tenant-leak-demo", nil, func(g *results.Gates) bool { return g.Hard.Evidence.LeakSample != nil }},
		{"sync-fallback", "no-tasks-peer", nil, func(g *results.Gates) bool { return g.Compatibility.Evidence.SyncCalls != nil }},
		{"rollback-drill", "rollback-drill", []string{"duration=12s", "grace=12s", "rollback.at=5s"},
			func(g *results.Gates) bool { return g.Rollback.Evaluated && g.Rollback.Pass }},
		{"rollback-lost", "rollback-lost-tasks-demo", []string{"duration=12s", "grace=12s", "rollback.at=5s"},
			func(g *results.Gates) bool { return g.Rollback.Evaluated && len(g.Rollback.Evidence.Failures) > 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sum, dir := runEvidence(t, tc.scenario, scenarios.Shard{}, time.Time{}, tc.sets...)
				if sum != nil && !tc.shows(&sum.Gates) {
					t.Errorf("the run does not show what it is here for: gates %+v", sum.Gates)
				}
				checkGatesTyped(t, dir)
			})
		})
	}
	t.Run("merge", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now().Add(time.Second)
			dirs := make([]string, 2)
			var wg sync.WaitGroup
			for i := range dirs {
				wg.Go(func() {
					_, dirs[i] = runEvidence(t, "rollback-drill", scenarios.Shard{Index: i, Count: len(dirs)}, start,
						"duration=12s", "grace=12s", "rollback.at=5s")
				})
			}
			wg.Wait()
			out := filepath.Join(t.TempDir(), "merged")
			m, err := results.MergeRuns(dirs, out, results.MergeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !m.Gates.Rollback.Evaluated || m.Gates.Rollback.Evidence.PreSwitch == 0 {
				t.Errorf("merged rollback gate %+v: want the drill evaluated", m.Gates.Rollback)
			}
			for _, d := range append(dirs, out) {
				checkGatesTyped(t, d)
			}
		})
	})
}

// runEvidence runs the scenario name in process (virtual time) as shard, from start (zero:
// none), and returns its summary and directory, whatever its verdict.
func runEvidence(t *testing.T, name string, shard scenarios.Shard, start time.Time, sets ...string) (*results.Summary, string) {
	t.Helper()
	sc, err := scenarios.Load(name)
	if err != nil {
		t.Error(err)
		return nil, ""
	}
	for _, kv := range sets {
		path, value, _ := strings.Cut(kv, "=")
		if err := sc.Set(path, value); err != nil {
			t.Error(err)
			return nil, ""
		}
	}
	dir := filepath.Join(t.TempDir(), name+"-"+strconv.Itoa(shard.Index))
	sum, err := Run(context.Background(), sc, Options{Dir: dir, InProcess: true, Shard: shard, StartAt: start})
	if sum == nil {
		t.Errorf("%s: no summary: %v", name, err)
	}
	return sum, dir
}

// checkGatesTyped reads dir's summary.json "gates" strictly into results.Gates and writes it
// again: the same JSON, key for key and value for value (null where null, absent where
// absent), every object's keys in the same order. The samples are loadgen's records, read
// back as plain JSON (any reader sorts their keys): their order is not compared.
func checkGatesTyped(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, results.SummaryJSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Gates json.RawMessage `json:"gates"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw.Gates))
	dec.DisallowUnknownFields()
	var gates results.Gates
	if err := dec.Decode(&gates); err != nil {
		t.Fatalf("%s: gates do not decode strictly into results.Gates: %v", dir, err)
	}
	again, err := json.Marshal(&gates)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(genericJSON(t, raw.Gates), genericJSON(t, again)) {
		t.Errorf("%s: gates read into results.Gates and written again differ:\nwrote %s\nagain %s", dir, raw.Gates, again)
	}
	if want, got := keyOrder(t, raw.Gates), keyOrder(t, again); !slices.Equal(want, got) {
		t.Errorf("%s: gates written again have their keys in another order:\nwrote %q\nagain %q", dir, want, got)
	}
}

// sampleKeys are the evidence keys whose values are loadgen's records, as given.
var sampleKeys = map[string]bool{"leak_sample": true, "secret_sample": true, "reconciliation_sample": true,
	"invalid_transitions_detail": true, "tasks_lost_after_reconnect_detail": true}

// keyOrder lists the keys of every object in b, by path, in the order b holds them, the
// values of sampleKeys left out.
func keyOrder(t *testing.T, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	var out []string
	var walk func(path string)
	walk = func(path string) {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					t.Fatal(err)
				}
				key := path + "." + k.(string)
				out = append(out, key)
				if sampleKeys[k.(string)] {
					var skip json.RawMessage
					if err := dec.Decode(&skip); err != nil {
						t.Fatal(err)
					}
					continue
				}
				walk(key)
			}
			_, _ = dec.Token()
		case json.Delim('['):
			for dec.More() {
				walk(path + "[]")
			}
			_, _ = dec.Token()
		}
	}
	walk("")
	return out
}
