// Package scenarios owns the scenario schema, strict YAML decoding, validation, and the
// shipped scenario library embedded into the binary.
//
// A run's scenario goes through Load (a file, or a built-in name; Parse underneath: strict
// decoding over the defaults of Default), then Set for each `--set path=value` and flag
// override, then Validate, which reports every problem at once as SOURCE:LINE:COL: PATH: MSG.
// A Scenario is plain data; Where locates any of its fields for other packages' messages.
// Shard is the slice of a scenario's work one process of a sharded run takes (shard.go), and
// Scenario.Hash tells the shards of one resolved scenario from those of another.
//
// It imports the standard library, its own third-party dependencies and, of tasksim, only
// internal/mcp: the keys of server.latency are the names of protocol operations (mcp.Op).
package scenarios
