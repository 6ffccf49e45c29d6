package metrics

import (
	"maps"
	"slices"
	"sync"
	"time"
)

// Event is one injected fault (or a recovery action it caused), for the run's timeline and
// its fault counts: which fault, where it was injected, when, and on which task if known.
type Event struct {
	At     time.Time
	Source string // "client", "server" or "network"
	Kind   string // the fault's name in the scenario: "create_reply", "http_5xx", "restart", ...
	Task   string // task id, "" when none is known
}

// Key is "source.kind", the name under which Counts counts the event.
func (e Event) Key() string { return e.Source + "." + e.Kind }

// Events records events from every goroutine. It keeps the first Limit events in full (the
// timeline) and counts all of them, so memory stays bounded however many faults a long run
// injects. A nil *Events records nothing.
type Events struct {
	mu      sync.Mutex
	limit   int
	kept    []Event
	counts  map[string]int64
	dropped int64
}

// DefaultEventLimit is how many events a log keeps in full unless told otherwise: a run's
// timeline, and a merge's (results.MergeRuns keeps the earliest this many of its shards').
const DefaultEventLimit = 10000

// NewEvents returns a log that keeps at most limit events (limit <= 0: DefaultEventLimit).
func NewEvents(limit int) *Events {
	if limit <= 0 {
		limit = DefaultEventLimit
	}
	return &Events{limit: limit, counts: make(map[string]int64)}
}

// Add records ev.
func (l *Events) Add(ev Event) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.counts[ev.Key()]++
	if len(l.kept) < l.limit {
		l.kept = append(l.kept, ev)
	} else {
		l.dropped++
	}
}

// Counts returns the number of events per Key.
func (l *Events) Counts() map[string]int64 {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.counts)
}

// Kept returns the events kept, ordered by time, and how many more were counted only.
func (l *Events) Kept() (events []Event, dropped int64) {
	if l == nil {
		return nil, 0
	}
	l.mu.Lock()
	out := slices.Clone(l.kept)
	dropped = l.dropped
	l.mu.Unlock()
	slices.SortStableFunc(out, func(a, b Event) int { return a.At.Compare(b.At) })
	return out, dropped
}
