package chaos

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"net"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tasksim/tasksim/scenarios"
)

func always() scenarios.Trigger { return scenarios.Trigger{Probability: 1} }

func fixed(d time.Duration) scenarios.Dist {
	return scenarios.Dist{Kind: scenarios.DistFixed, Value: scenarios.Duration(d)}
}

// readAt reads exactly len(want) bytes from c and fails unless they are want and arrive
// exactly at, counted from t0.
func readAt(t *testing.T, c net.Conn, want string, t0 time.Time, at time.Duration) {
	t.Helper()
	got := make([]byte, len(want))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("reading %q: %v", want, err)
	}
	if string(got) != want {
		t.Errorf("read %q, want %q", got, want)
	}
	if el := time.Since(t0); el != at {
		t.Errorf("%q arrived at %v, want %v", want, el, at)
	}
}

func write(t *testing.T, c net.Conn, s string) {
	t.Helper()
	if _, err := c.Write([]byte(s)); err != nil {
		t.Fatalf("writing %q: %v", s, err)
	}
}

// TestChaosLatencyFixed: each chunk arrives exactly Latency after it was sent, in either
// direction, and chunks in flight do not wait for one another.
func TestChaosLatencyFixed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startPipes(t, scenarios.NetworkFaults{Latency: fixed(100 * time.Millisecond)}, 1)
		client, up := h.connect()
		t0 := time.Now()

		write(t, client, "a")
		time.Sleep(30 * time.Millisecond)
		write(t, client, "b")
		readAt(t, up, "a", t0, 100*time.Millisecond)
		readAt(t, up, "b", t0, 130*time.Millisecond)

		write(t, up, "pong")
		readAt(t, client, "pong", t0, 230*time.Millisecond)
	})
}

// TestChaosLatencyDist: with a random latency each chunk is due at its send time plus its
// own sample, drawn from the connection's stream of its direction, and never before the
// chunk ahead of it (order is kept).
func TestChaosLatencyDist(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dist := scenarios.Dist{Kind: scenarios.DistUniform, Max: scenarios.Duration(time.Second)}
		const seed, n, gap = 99, 20, 200 * time.Millisecond
		h := startPipes(t, scenarios.NetworkFaults{Latency: dist}, seed)
		client, up := h.connect()
		t0 := time.Now()
		go func() {
			for i := range n {
				client.Write([]byte{byte('a' + i)})
				time.Sleep(gap)
			}
		}()
		rng := latencyRand(seed, 0, false)
		var due time.Duration
		for i := range n {
			due = max(time.Duration(i)*gap+dist.Sample(rng), due)
			readAt(t, up, string(rune('a'+i)), t0, due)
		}
	})
}

// TestChaosBandwidth: N bytes through a cap of B bytes per second take exactly N/B
// seconds (rounded down to the nanosecond), whatever size they were sent in.
func TestChaosBandwidth(t *testing.T) {
	for _, tc := range []struct {
		bw    int64
		sizes []int
		want  time.Duration
	}{
		{1000, []int{5000}, 5 * time.Second},
		{1000, []int{1, 999, 3000, 1000}, 5 * time.Second},
		{3, []int{10}, 3333333333 * time.Nanosecond},
		{64 << 10, []int{100 << 10, 28 << 10}, 2 * time.Second},
	} {
		synctest.Test(t, func(t *testing.T) {
			h := startPipes(t, scenarios.NetworkFaults{Bandwidth: tc.bw}, 1)
			client, up := h.connect()
			total := 0
			for _, n := range tc.sizes {
				total += n
			}
			for _, dir := range []struct {
				name     string
				src, dst net.Conn
			}{{"down", up, client}, {"up", client, up}} {
				t0 := time.Now()
				go func() {
					for _, n := range tc.sizes {
						dir.src.Write(bytes.Repeat([]byte{'x'}, n))
					}
				}()
				if _, err := io.ReadFull(dir.dst, make([]byte, total)); err != nil {
					t.Fatal(err)
				}
				if el := time.Since(t0); el != tc.want {
					t.Errorf("%d B/s, sizes %v, %s: %d bytes took %v, want %v",
						tc.bw, tc.sizes, dir.name, total, el, tc.want)
				}
				time.Sleep(time.Second) // idle: no credit is banked
			}
			if st := h.p.Stats(); st.BytesUp != int64(total) || st.BytesDown != int64(total) {
				t.Errorf("stats %+v, want %d bytes each way", st, total)
			}
		})
	}
}

// TestChaosReset: the client reads exactly ResetAfter bytes, then its connection ends, by a
// reset where the connection can (SetLinger(0) before Close); the upstream is closed too.
func TestChaosReset(t *testing.T) {
	f := scenarios.NetworkFaults{Reset: always(), ResetAfter: 10}
	h := startPipes(t, f, 1)
	client, up := h.connect()
	go func() {
		for range 3 {
			up.Write([]byte("abcd")) // 12 bytes in 3 chunks: the reset falls in the third
		}
	}()
	got, err := io.ReadAll(client)
	if string(got) != "abcdabcdab" || err != nil {
		t.Errorf("client read %q, %v; want the first 10 bytes, then the end", got, err)
	}
	if _, err := up.Read(make([]byte, 1)); err == nil {
		t.Error("the upstream was not closed")
	}
	h.p.Close()
	if n := h.ln.lingers.Load(); n != 1 {
		t.Errorf("SetLinger(0) called %d times, want 1", n)
	}
	st := h.p.Stats()
	if st.Resets != 1 || st.BytesDown != 10 || st.Open != 0 {
		t.Errorf("stats %+v, want 1 reset after 10 bytes down, none open", st)
	}
	if c := h.ev.Counts(); !maps.Equal(c, map[string]int64{"network.reset": 1}) {
		t.Errorf("events %v, want one network.reset", c)
	}
}

// TestChaosResetAtOnce: ResetAfter 0 resets the connection at once, without dialing.
func TestChaosResetAtOnce(t *testing.T) {
	h := startPipes(t, scenarios.NetworkFaults{Reset: always()}, 1)
	client := h.ln.dial()
	if n, err := client.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("client read %d bytes, %v; want 0, EOF", n, err)
	}
	h.p.Close()
	if len(h.ups) != 0 || h.ln.lingers.Load() != 1 || h.p.Stats().Resets != 1 {
		t.Errorf("dials %d, lingers %d, stats %+v; want no dial, one reset",
			len(h.ups), h.ln.lingers.Load(), h.p.Stats())
	}
}

// TestChaosBlackHole: the client's bytes are taken and dropped, nothing is dialed, and
// its read blocks until its own deadline.
func TestChaosBlackHole(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := startPipes(t, scenarios.NetworkFaults{BlackHole: always()}, 1)
		client := h.ln.dial()
		t0 := time.Now()
		write(t, client, "GET / HTTP/1.1\r\n\r\n")
		client.SetReadDeadline(t0.Add(30 * time.Second))
		if _, err := client.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("read: %v, want the deadline", err)
		}
		if el := time.Since(t0); el != 30*time.Second {
			t.Errorf("read returned after %v, want 30s", el)
		}
		client.Close() // the client gives up: the proxy lets go
		synctest.Wait()
		st := h.p.Stats()
		if len(h.ups) != 0 || st.BlackHoles != 1 || st.Open != 0 || st.BytesUp != 0 {
			t.Errorf("dials %d, stats %+v; want no dial, 1 black hole, none open", len(h.ups), st)
		}
		if c := h.ev.Counts(); c["network.black_hole"] != 1 {
			t.Errorf("events %v, want one network.black_hole", c)
		}
	})
}

// TestChaosHalfOpen: bytes flow until HalfOpenAfter; then the upstream sees its connection
// closed, and the client sees nothing at all: its writes are taken, its reads time out.
func TestChaosHalfOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := scenarios.NetworkFaults{HalfOpen: always(), HalfOpenAfter: scenarios.Duration(2 * time.Second)}
		h := startPipes(t, f, 1)
		client, up := h.connect()
		t0 := time.Now()
		write(t, client, "ping")
		readAt(t, up, "ping", t0, 0)
		write(t, up, "pong")
		readAt(t, client, "pong", t0, 0)

		if n, err := up.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Errorf("upstream read %d, %v; want 0, EOF", n, err)
		}
		if el := time.Since(t0); el != 2*time.Second {
			t.Errorf("upstream closed at %v, want 2s", el)
		}
		write(t, client, "still there?")
		client.SetReadDeadline(t0.Add(time.Minute))
		if _, err := client.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("client read: %v, want its deadline", err)
		}
		if el := time.Since(t0); el != time.Minute {
			t.Errorf("client read returned at %v, want 1m", el)
		}
		st := h.p.Stats()
		if st.HalfOpens != 1 || st.Open != 1 || st.BytesUp != 4 || st.BytesDown != 4 {
			t.Errorf("stats %+v, want 1 half-open still open, 4 bytes each way", st)
		}
		client.Close()
		synctest.Wait()
		if st := h.p.Stats(); st.Open != 0 {
			t.Errorf("stats %+v after the client closed, want none open", st)
		}
		if c := h.ev.Counts(); c["network.half_open"] != 1 {
			t.Errorf("events %v, want one network.half_open", c)
		}
	})
}

// TestChaosUpstreamEOF: without faults, an upstream that ends its side ends the client's
// (a pipe cannot half-close, so the whole connection closes).
func TestChaosUpstreamEOF(t *testing.T) {
	h := startPipes(t, scenarios.NetworkFaults{}, 1)
	client, up := h.connect()
	go func() {
		up.Write([]byte("bye"))
		up.Close()
	}()
	got, err := io.ReadAll(client)
	if string(got) != "bye" || err != nil {
		t.Errorf("client read %q, %v; want bye, EOF", got, err)
	}
}

// TestChaosDialError: a connection whose upstream cannot be dialed is closed and counted.
func TestChaosDialError(t *testing.T) {
	ln := newMemListener()
	p := New("upstream:1", scenarios.NetworkFaults{}, 1, nil)
	p.Dial = func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("connection refused")
	}
	p.Start(ln)
	defer p.Close()
	client := ln.dial()
	if n, err := client.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("client read %d, %v; want 0, EOF", n, err)
	}
	p.Close()
	if st := p.Stats(); st.Connections != 1 || st.DialErrors != 1 || st.Open != 0 {
		t.Errorf("stats %+v, want 1 connection, 1 dial error, none open", st)
	}
}
