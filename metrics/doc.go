// Package metrics owns tasksim's measurements: the sharded HDR recorder, counters,
// per-second windows, HdrHistogram interval logs and merging.
//
// It imports the standard library, its own third-party dependencies and, of tasksim, only
// internal/mcp, for mcp.Op: requests are counted per protocol operation, the one enum the
// engines and the mock server share, and keyed by mcp.Op.Name in outputs.
//
// # What is measured
//
// Histograms (Hist) hold the metrics of docs/METRICS.md#histograms, durations in microseconds
// (reported in ms), PollsPerTask as a count and PollAmplification in 1/1000 units. Every
// histogram of one Hist has the same geometry (NewHistogram: 0 .. 1 h or 0 .. 1e6 at 3
// significant digits), so shards, windows and runs merge exactly; values outside are
// clamped and counted. Counters (Counter) count task outcomes and events; requests are
// counted per mcp.Op and Outcome, with bounded tables of JSON-RPC error codes and HTTP
// statuses. Gauges (Gauge) are sampled levels. Everything is indexed by small enums: no
// string keys, no maps, no fmt on the recording path.
//
// # Recording, windows and totals
//
//	rec := metrics.NewRecorder(workers, start)
//	sh := rec.Shard(i)                     // worker i; many goroutines may share it
//	sh.RecordDuration(metrics.LatencyTasksGet, d)
//	sh.Add(metrics.Polls, 1)
//	sh.Request(mcp.OpTasksGet, metrics.OutcomeOK, 0, 200)
//	rec.SetGauge(metrics.RetainedTasks, n)
//
//	// the collector goroutine, once per second
//	win := rec.Flush(now)                  // one Window: [previous Flush, now)
//	logw.Write(win)                        // histograms.hlog
//	...
//	rec.Flush(end); total := rec.Total()   // the run: total.Summary(metrics.TaskE2E)
//
// Each Shard records into its own tally under its own mutex, which concurrent recorders
// of the same shard and Flush (for a two-pointer swap) are the only ones to take; shards
// never contend with each other and recording never allocates. Flush swaps every shard's
// tally for an empty spare, merges the full ones into a fresh Window and into the run
// totals, and empties them: windows partition the data exactly, and the run totals are
// merged by the collector alone, so shards keep no cumulative copies.
//
// # Memory
//
// Fixed at NewRecorder: ShardBytes (about 5.4 MiB: two tallies of 14 duration histograms
// of 184 KiB and 2 count histograms of 88 KiB) per shard, plus one tally (2.7 MiB) of run
// totals. Shard per worker, never per virtual client. Each Flush allocates the histograms
// of the Window it returns, only for the histograms that received values, and for each of
// those a copy of the counts of every shard that recorded into it and a new run total (it
// adds count arrays instead of walking the buckets: countSums).
package metrics
