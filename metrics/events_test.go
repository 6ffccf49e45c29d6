package metrics_test

import (
	"sync"
	"testing"
	"time"

	"github.com/tasksim/tasksim/metrics"
)

func TestEventsKeepsTheFirstAndCountsAll(t *testing.T) {
	l := metrics.NewEvents(3)
	t0 := time.Unix(100, 0)
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			l.Add(metrics.Event{At: t0.Add(time.Duration(10-i) * time.Second), Source: "server", Kind: "restart"})
		})
	}
	wg.Wait()
	l.Add(metrics.Event{At: t0, Source: "client", Kind: "crash", Task: "t1"})
	kept, dropped := l.Kept()
	if len(kept) != 3 || dropped != 8 {
		t.Fatalf("kept %d, dropped %d; want 3 and 8", len(kept), dropped)
	}
	for i := 1; i < len(kept); i++ {
		if kept[i].At.Before(kept[i-1].At) {
			t.Errorf("events not ordered by time: %v", kept)
		}
	}
	c := l.Counts()
	if c["server.restart"] != 10 || c["client.crash"] != 1 {
		t.Errorf("counts = %v", c)
	}
}

func TestNilEventsRecordsNothing(t *testing.T) {
	var l *metrics.Events
	l.Add(metrics.Event{Source: "client", Kind: "crash"})
	if kept, dropped := l.Kept(); kept != nil || dropped != 0 || l.Counts() != nil {
		t.Error("a nil log reported events")
	}
}
