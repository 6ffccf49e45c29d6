// Package metrics owns tasksim's measurements: the sharded HDR recorder, counters,
// per-second windows, HdrHistogram interval logs and merging.
//
// It imports only the standard library and its own third-party dependencies; no other
// tasksim package.
package metrics
