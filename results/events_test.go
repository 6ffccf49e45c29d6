package results_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/metrics"
	"github.com/tasksim/tasksim/results"
)

func TestEventsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	in := []metrics.Event{
		{At: start.Add(1500 * time.Millisecond), Source: "client", Kind: "create_reply"},
		{At: start.Add(2 * time.Second), Source: "server", Kind: "restart", Task: "t-1"},
	}
	if err := results.WriteEvents(dir, start, in, 3); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, results.EventsFile))
	want := "time,offset_s,source,kind,task_id\n" +
		"2026-01-05T09:00:01.5Z,1.500,client,create_reply,\n" +
		"2026-01-05T09:00:02Z,2.000,server,restart,t-1\n" +
		",,,more_not_kept,3\n"
	if string(raw) != want {
		t.Errorf("events.csv:\n%s\nwant:\n%s", raw, want)
	}
	out, err := results.ReadEvents(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || !out[0].At.Equal(in[0].At) || out[1] != (metrics.Event{At: in[1].At, Source: "server", Kind: "restart", Task: "t-1"}) {
		t.Errorf("read back %+v", out)
	}
	if ev, err := results.ReadEvents(t.TempDir()); ev != nil || err != nil {
		t.Errorf("a run without events.csv: %v, %v", ev, err)
	}
	_ = os.WriteFile(filepath.Join(dir, results.EventsFile), []byte("time,offset_s,source,kind,task_id\nnot-a-time,0,a,b,\n"), 0o644)
	if _, err := results.ReadEvents(dir); err == nil || !strings.Contains(err.Error(), "events.csv:2") {
		t.Errorf("bad time: %v", err)
	}
}
