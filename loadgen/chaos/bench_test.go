package chaos

import (
	"io"
	"testing"

	"github.com/tasksim/tasksim/scenarios"
)

// BenchmarkChaosForward measures one direction of a connection without faults, over
// in-memory pipes: the proxy's own cost per 16 KiB chunk (allocations should be 0).
func BenchmarkChaosForward(b *testing.B) {
	h := newPipes(b, scenarios.NetworkFaults{}, 1)
	defer h.p.Close()
	client, up := h.connect()
	go io.Copy(io.Discard, up)
	msg := make([]byte, bufSize)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := client.Write(msg); err != nil {
			b.Fatal(err)
		}
	}
}
