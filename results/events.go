package results

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/tasksim/tasksim/metrics"
)

// EventsFile is the run's fault timeline: one row per injected fault (client cuts and
// crashes, server faults, network toxics), in time order.
const EventsFile = "events.csv"

// eventsHeader is the header of events.csv: the instant (RFC 3339, UTC), its offset from
// the start of the run in seconds, where the fault was injected, which fault, and the task
// it hit ("" when none was known).
var eventsHeader = []string{"time", "offset_s", "source", "kind", "task_id"}

// WriteEvents writes events.csv under dir: the events kept, and when more were counted than
// kept, a last row of kind "more_not_kept" whose task_id column holds how many.
func WriteEvents(dir string, start time.Time, events []metrics.Event, dropped int64) error {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write(eventsHeader)
	for _, e := range events {
		_ = w.Write([]string{
			e.At.UTC().Format(time.RFC3339Nano),
			strconv.FormatFloat(e.At.Sub(start).Seconds(), 'f', 3, 64),
			e.Source, e.Kind, e.Task,
		})
	}
	if dropped > 0 {
		_ = w.Write([]string{"", "", "", "more_not_kept", strconv.FormatInt(dropped, 10)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("results: %s: %w", filepath.Join(dir, EventsFile), err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return writeAtomic(dir, EventsFile, b.Bytes())
}

// ReadEvents reads a run's events.csv (for `tasksim report`); a run without faults has none
// and returns nil, nil.
func ReadEvents(dir string) ([]metrics.Event, error) {
	b, err := os.ReadFile(filepath.Join(dir, EventsFile))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("results: %s: %w", filepath.Join(dir, EventsFile), err)
	}
	var out []metrics.Event
	for i, r := range rows {
		if i == 0 || len(r) != len(eventsHeader) || r[0] == "" {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, r[0])
		if err != nil {
			return nil, fmt.Errorf("results: %s:%d: time %q: %w", filepath.Join(dir, EventsFile), i+1, r[0], err)
		}
		out = append(out, metrics.Event{At: at, Source: r[2], Kind: r[3], Task: r[4]})
	}
	return out, nil
}
