package results

import "github.com/tasksim/tasksim/metrics"

// ErrorKind is one kind of failed request (an outcome that metrics.Outcome.IsError counts):
// the method, how it failed, how often, and the first message seen, so that a summary says
// what failed, not only how often.
type ErrorKind struct {
	Method  string `json:"method"`           // JSON-RPC method, or "DELETE"
	Outcome string `json:"outcome"`          // metrics.Outcome name: rpc_error, http_error, transport, protocol
	Code    int    `json:"code,omitempty"`   // JSON-RPC error code; absent = none
	Status  int    `json:"status,omitempty"` // HTTP status; absent = none
	Count   int64  `json:"count"`
	// Message is the first message seen for this kind, on one line, its secrets redacted.
	Message string `json:"message"`
}

// MaxErrorKinds is how many kinds of failed request a summary keeps, the most frequent.
const MaxErrorKinds = 10

// errorKinds keeps the first MaxErrorKinds of ks (given most frequent first); never nil.
func errorKinds(ks []ErrorKind) []ErrorKind {
	out := make([]ErrorKind, min(len(ks), MaxErrorKinds))
	copy(out, ks)
	return out
}

// ErrorSummary is the summary of a run that a runtime error stopped before anything was
// measured (an unreachable target, a server that could not start): info.Error says why,
// the verdict is "error" (exit code 1), and nothing in it can be read as a pass. Every gate
// is not evaluated and does not pass; every threshold of info (the error budget included)
// is listed, failed, with the error. info.Duration, when set, is how long the attempt took.
func ErrorSummary(info RunInfo) *Summary {
	reason := "the run ended in an error before it measured anything"
	s := summaryHead(info, info.Duration)
	s.TrustNote = "not checked: " + reason
	s.Requests, s.Metrics = map[string]RequestStats{}, map[string]metrics.Stat{}
	s.Input = &Input{}
	s.Counters, s.Gauges = map[string]int64{}, map[string]Level{}
	s.Verdict, s.Error = VerdictError, info.Error
	s.Gates = reasonOnlyGates(reason)
	ths, sources, notes := judgedAll(info)
	s.Thresholds = make([]ThresholdResult, 0, len(ths))
	for i, th := range ths {
		s.Thresholds = append(s.Thresholds, ThresholdResult{Expr: th.Expr, Source: sources[i], Note: notes[i], WorstWindow: -1,
			Error: "not evaluated: " + reason})
	}
	if s.Error == "" {
		s.Error = "the run failed"
	}
	return s
}
