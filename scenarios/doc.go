// Package scenarios owns the scenario schema, strict YAML decoding, validation, and the
// shipped scenario library embedded into the binary.
//
// It imports only the standard library and its own third-party dependencies; no other
// tasksim package.
package scenarios
