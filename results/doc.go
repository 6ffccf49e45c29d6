// Package results owns the result of a run: the summary model, thresholds and gate
// evaluation, and the CSV, JSON and HTML writers; and the result of the contract suite
// (Contract), with its JSON, JUnit XML, text and HTML writers.
//
// It may import internal/mcp, client (the capability manifest is client.Manifest), metrics
// and scenarios only.
package results
