package runner

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/scenarios"
)

// TestABSides: the sides of shard I/N are 2I/2N and 2I+1/2N, so that each side's shards of
// every I merge into that side whole; the whole scenario is 0/2 and 1/2.
func TestABSides(t *testing.T) {
	for _, tc := range []struct{ sh, canary, stable scenarios.Shard }{
		{scenarios.Shard{}, scenarios.Shard{Index: 0, Count: 2}, scenarios.Shard{Index: 1, Count: 2}},
		{scenarios.Shard{Index: 2, Count: 3}, scenarios.Shard{Index: 4, Count: 6}, scenarios.Shard{Index: 5, Count: 6}},
	} {
		if c, s := ABSides(tc.sh); c != tc.canary || s != tc.stable {
			t.Errorf("ABSides(%v) = %v, %v; want %v, %v", tc.sh, c, s, tc.canary, tc.stable)
		}
	}
}

// TestCheckAB: an A/B run needs a canary, two servers and an even split of its clients.
func TestCheckAB(t *testing.T) {
	sc := scenarios.Default()
	sc.Workload.Clients = 4
	for _, tc := range []struct{ target, stable, want string }{
		{"", "http://127.0.0.1:2/mcp", "needs --target"},
		{"http://127.0.0.1:1/mcp", "http://127.0.0.1:1/mcp", "both http://127.0.0.1:1/mcp"},
		{"http://127.0.0.1:1/mcp", "http://127.0.0.1:2/mcp", ""},
	} {
		sc.Target = tc.target
		err := CheckAB(sc, tc.stable, scenarios.Shard{})
		if tc.want == "" && err != nil || tc.want != "" && (!errors.As(err, new(*UsageError)) || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckAB(%q, %q) = %v, want %q", tc.target, tc.stable, err, tc.want)
		}
	}
	sc.Target, sc.Workload.Clients = "http://127.0.0.1:1/mcp", 5
	if err := CheckAB(sc, "http://127.0.0.1:2/mcp", scenarios.Shard{}); err == nil || !strings.Contains(err.Error(), "5 clients split 3:2") {
		t.Errorf("CheckAB with 5 clients = %v, want an uneven split refused", err)
	}
}

// TestMeeting: the last side to arrive sets the common start abStartDelay ahead, and every
// side gets that one instant; a side whose wait is cancelled leaves with its context's error.
func TestMeeting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMeeting(2)
		first := make(chan time.Time)
		go func() {
			at, _ := m.arrive(context.Background())
			first <- at
		}()
		time.Sleep(time.Second)
		arrived := time.Now()
		at, err := m.arrive(context.Background())
		if err != nil || !at.Equal(arrived.Add(abStartDelay)) || !(<-first).Equal(at) {
			t.Errorf("arrive = %v, %v; want both sides at %v", at, err, arrived.Add(abStartDelay))
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := newMeeting(2).arrive(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("arrive on a cancelled context = %v, want context.Canceled", err)
		}
	})
}
