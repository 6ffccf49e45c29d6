package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/scenarios"
)

// TestConcurrentRunsAreIndependent runs four scenarios at once in one process, each with
// secrets of its own, and checks that nothing of one run reaches another: each run redacts
// its own tokens from its error, its notes and every file it writes (and knows no other
// run's), and each reports the peaks of its own embedded server. Two runs are against a
// target that echoes the credentials it gets into its JSON-RPC error, so that each run's
// error holds its own token until redacted; two run on embedded servers, one with an
// executor queue that fills (2 workers) and one without a queue.
func TestConcurrentRunsAreIndependent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four short scenarios in real time (about 5 s)")
	}
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		msg, _ := json.Marshal("credentials refused: " + r.Header.Get("Authorization"))
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":%s}}`, msg)
	}))
	defer echo.Close()

	type run struct {
		name, token string
		sets        []string
		target      bool // against echo, else on the embedded server
		notes       []string
		sum         *results.Summary
		err         error
		dir         string
	}
	runs := []*run{
		{name: "echo-a", token: "token-of-run-a-0123", target: true},
		{name: "echo-b", token: "token-of-run-b-4567", target: true},
		{name: "queued", token: "token-of-run-c-89ab", sets: []string{"server.backpressure.workers=2", "server.backpressure.queue=100"}},
		{name: "unqueued", token: "token-of-run-d-cdef"},
	}
	var wg sync.WaitGroup
	for _, r := range runs {
		sc, err := scenarios.Load("smoke")
		if err != nil {
			t.Fatal(err)
		}
		sc.Name = r.name
		for _, kv := range append([]string{"duration=2s", "grace=3s", "workload.clients=10"}, r.sets...) {
			path, value, _ := strings.Cut(kv, "=")
			if err := sc.Set(path, value); err != nil {
				t.Fatal(err)
			}
		}
		if r.target {
			sc.Target, sc.Protocol = echo.URL, "2025-11-25"
			sc.Headers = map[string]scenarios.Secret{"Authorization": scenarios.Secret("Bearer " + r.token)}
		} else {
			sc.Server.Tokens = map[string]scenarios.Secret{"acme": scenarios.Secret(r.token)}
		}
		r.dir = filepath.Join(t.TempDir(), r.name)
		var mu sync.Mutex
		opts := Options{Dir: r.dir, Notes: func(line string) { mu.Lock(); r.notes = append(r.notes, line); mu.Unlock() }}
		wg.Go(func() { r.sum, r.err = Run(context.Background(), sc, opts) })
	}
	wg.Wait()

	peaks := map[string]int64{}
	for _, r := range runs {
		if r.target {
			var te *TargetError
			switch {
			case !errors.As(r.err, &te) || !errors.Is(r.err, ErrNoRunSummary):
				t.Errorf("%s: error %v, want a *TargetError before the summary", r.name, r.err)
			case !strings.Contains(r.err.Error(), "credentials refused: ***"):
				t.Errorf("%s: error %q does not show the echoed credentials redacted", r.name, r.err)
			case r.sum == nil || r.sum.Verdict != results.VerdictError || !strings.Contains(r.sum.Error, "***"):
				t.Errorf("%s: summary %+v, want the error summary with the redacted reason", r.name, r.sum)
			}
		} else if r.err != nil || r.sum == nil || r.sum.Verdict != results.VerdictPass {
			t.Errorf("%s: error %v, summary %v", r.name, r.err, r.sum)
			continue
		}
		outputs := map[string]string{"error": fmt.Sprint(r.err), "notes": strings.Join(r.notes, "\n")}
		entries, err := os.ReadDir(r.dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(r.dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			outputs[e.Name()] = string(b)
		}
		for where, text := range outputs {
			if strings.Contains(text, r.token) {
				t.Errorf("%s: %s holds the run's own token", r.name, where)
			}
		}
		if !r.target {
			peaks[r.name] = queueDepthMax(t, r.dir)
		}
	}
	if peaks["queued"] == 0 || peaks["unqueued"] != 0 {
		t.Errorf("queue_depth_max: queued run %d (want > 0: 2 workers for 10 clients), unqueued run %d (want 0)",
			peaks["queued"], peaks["unqueued"])
	}
}

// queueDepthMax reads server.queue_depth_max of dir/summary.json.
func queueDepthMax(t *testing.T, dir string) int64 {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, results.SummaryJSONFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var s struct {
		Server struct {
			QueueDepthMax int64 `json:"queue_depth_max"`
		} `json:"server"`
	}
	if err := json.NewDecoder(io.LimitReader(f, 64<<20)).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s.Server.QueueDepthMax
}
