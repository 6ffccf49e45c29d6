// Package gcpolicy sets the Go garbage collector up for a load generator.
//
// A tasksim process keeps a steady live heap (one goroutine, session and histogram shard
// per virtual client, the embedded server's tasks) and allocates a little per request.
// With Go's default GOGC=100 the collector runs about once a second at 10,000 clients, and
// each cycle takes a quarter of the processors plus assists from the goroutines that
// allocate during it: every such cycle is a stall of the fleet's schedule (schedule_lag),
// and the collector's share of the CPU is taken from the requests. A load generator
// trades memory for a steady schedule, so tasksim runs with GOGC=DefaultPercent and a soft
// memory limit (runtime/debug.SetMemoryLimit) of half the memory the process may use (the
// machine's, or its cgroup's limit when lower): the
// collector runs a quarter as often, and runs sooner as the heap nears the limit instead
// of letting it grow past what the machine has. The headroom GOGC gives is capped at
// MaxHeadroom bytes beyond the live heap (headroom.go): below 128 MiB of live heap the
// collector runs as GOGC says, above it once per 512 MiB allocated, so that a shard of
// 100,000 clients (~190 MiB live) peaks near 700 MiB, not near 1 GiB.
//
// The environment decides when it speaks: GOGC or GOMEMLIMIT set (to any value) leave that
// setting as the Go runtime read it. Where the memory available cannot be read (no
// /proc/meminfo), the collector keeps Go's defaults: a raised GOGC without a limit could
// grow the heap without a bound.
package gcpolicy
