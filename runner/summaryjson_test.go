package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/scenarios"
)

// TestSummaryJSONIsTyped runs smoke for real (2 s of load) on the embedded server in each
// era, and against a target (another embedded server's URL: no server block, the
// server-side figures not measured), and reads each summary.json back strictly into
// results.Summary (an unknown key is an error) and writes it again: the JSON must be the
// same, key for key and value for value. The typed summary loses nothing a run writes.
func TestSummaryJSONIsTyped(t *testing.T) {
	if testing.Short() {
		t.Skip("runs smoke three times for 2 s each, in real time")
	}
	target, err := mockserver.NewServer(ServerConfig(scenarios.Default()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(target.Close) // after the parallel subtests
	for _, tc := range []struct {
		name, protocol, target string
		server                 bool // the summary has a server block
	}{
		{"embedded-2025-11-25", client.ProtocolLegacy, "", true},
		{"embedded-2026-07-28", client.ProtocolModern, "", true},
		{"target", client.ProtocolAuto, target.URL, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sc, err := scenarios.Load("smoke")
			if err != nil {
				t.Fatal(err)
			}
			for _, kv := range []string{"duration=2s", "grace=3s", "workload.clients=5"} {
				path, value, _ := strings.Cut(kv, "=")
				if err := sc.Set(path, value); err != nil {
					t.Fatal(err)
				}
			}
			sc.Protocol, sc.Target = tc.protocol, tc.target
			dir := t.TempDir()
			sum, err := Run(context.Background(), sc, Options{Dir: dir})
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if got := !sum.Server.IsZero(); got != tc.server || sum.Manifest == nil || sum.Runtime.Run == nil {
				t.Errorf("server block %v (want %v), manifest %v, runtime %v", got, tc.server, sum.Manifest, sum.Runtime.Run)
			}
			b, err := os.ReadFile(filepath.Join(dir, results.SummaryJSONFile))
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			var typed results.Summary
			if err := dec.Decode(&typed); err != nil {
				t.Fatalf("summary.json does not decode strictly into results.Summary: %v", err)
			}
			again, err := json.Marshal(&typed)
			if err != nil {
				t.Fatal(err)
			}
			if want, got := genericJSON(t, b), genericJSON(t, again); !reflect.DeepEqual(want, got) {
				t.Errorf("summary.json read into results.Summary and written again differs:\nwrote %s\nagain %s", b, again)
			}
			// The parts read through custom decoders are strict too: their keys are all known.
			for _, part := range []struct {
				name string
				into any
			}{{"manifest", new(client.Manifest)}, {"runtime", new(results.Runtime)}, {"server", new(results.ServerStats)},
				{"client", new(results.Client)}} {
				raw := genericJSON(t, b).(map[string]any)[part.name]
				if raw == nil {
					continue
				}
				pb, _ := json.Marshal(raw)
				d := json.NewDecoder(bytes.NewReader(pb))
				d.DisallowUnknownFields()
				if err := d.Decode(part.into); err != nil {
					t.Errorf("%s: %v", part.name, err)
				}
			}
		})
	}
}

// genericJSON decodes b as any JSON reader does (map[string]any, []any, float64, ...).
func genericJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}
