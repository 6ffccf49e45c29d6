package metrics_test

import (
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
	"github.com/tasksim/tasksim/metrics"
)

// BenchmarkRecord records latencies from parallel goroutines: each into its own shard (the
// intended use: shard per worker), and all into one shard (the worst case of many virtual
// clients mapped onto one shard).
func BenchmarkRecord(b *testing.B) {
	for _, bc := range []struct {
		name   string
		shards int
	}{{"own-shard", runtime.GOMAXPROCS(0)}, {"one-shard", 1}} {
		b.Run(bc.name, func(b *testing.B) {
			r := metrics.NewRecorder(bc.shards, t0)
			var next atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				s := r.Shard(int(next.Add(1)-1) % bc.shards)
				v := int64(100)
				for pb.Next() {
					v = v*7%1_000_003 + 1 // cheap spread over 1 us .. 1 s
					s.Record(metrics.LatencyTasksGet, v)
				}
			})
		})
	}
}

// BenchmarkReply counts a request outcome and records its latency, from parallel goroutines
// on their own shards: the load generator's per-request cost.
func BenchmarkReply(b *testing.B) {
	r := metrics.NewRecorder(runtime.GOMAXPROCS(0), t0)
	var next atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		s := r.Shard(int(next.Add(1)-1) % r.Shards())
		d := time.Duration(0)
		for pb.Next() {
			d = (d*7 + 13*time.Microsecond) % time.Second
			s.Reply(mcp.OpTasksGet, metrics.OutcomeOK, 0, 200, d)
		}
	})
}

// BenchmarkFlush closes one window of 8 shards: empty, and after each shard recorded 1,000
// latencies (log-uniform, 100 us .. 1 s) in each of 4 histograms and some counters.
func BenchmarkFlush(b *testing.B) {
	const shards = 8
	for _, perHist := range []int{0, 1000} {
		name := "empty"
		if perHist > 0 {
			name = "busy"
		}
		b.Run(name, func(b *testing.B) {
			r := metrics.NewRecorder(shards, t0)
			rng := rand.New(rand.NewPCG(5, 6))
			values := make([]int64, 4096)
			for i := range values {
				values[i] = int64(100 << rng.IntN(14))
				values[i] += rng.Int64N(values[i])
			}
			hists := []metrics.Hist{metrics.LatencyToolsCall, metrics.LatencyTasksGet, metrics.TaskE2E, metrics.PollsPerTask}
			b.ReportAllocs()
			b.ResetTimer()
			for n := 0; b.Loop(); n++ {
				b.StopTimer()
				for i := range shards {
					s := r.Shard(i)
					for k := range perHist {
						for _, h := range hists {
							s.Record(h, values[(k+i)%len(values)]%h.Highest())
						}
						s.Add(metrics.Polls, 1)
					}
				}
				b.StartTimer()
				r.Flush(sec(n + 1))
			}
		})
	}
}
