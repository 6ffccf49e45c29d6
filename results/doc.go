// Package results owns the result of a run: the summary model, thresholds and gate
// evaluation, and the CSV, JSON and HTML writers.
//
// It may import metrics and scenarios only.
package results
