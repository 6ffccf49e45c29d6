package cliflags

import (
	"github.com/spf13/pflag"

	"github.com/tasksim/tasksim/runner"
)

// DefaultTraceMaxPerSecond is --trace-max-per-second's default: at most this many new
// task (and other root) traces a second, each with its polls, whatever the run's rate, so
// that tracing a large run costs its collector a bounded load.
const DefaultTraceMaxPerSecond = 1000

// BindTelemetry defines the OpenTelemetry flags of `run` and `serve` on fs (docs/METRICS.md#traces)
// into the runner.Telemetry returned: --otlp-endpoint, --trace-sample-ratio,
// --trace-max-per-second.
func BindTelemetry(fs *pflag.FlagSet) *runner.Telemetry {
	t := &runner.Telemetry{}
	fs.StringVar(&t.Endpoint, "otlp-endpoint", "", "export traces and metrics over OTLP/HTTP to this base `URL` (URL/v1/traces, URL/v1/metrics), e.g. http://127.0.0.1:4318; default: OTEL_EXPORTER_OTLP_ENDPOINT, else off (docs/METRICS.md#traces)")
	fs.Float64Var(&t.SampleRatio, "trace-sample-ratio", 1, "share of new traces sampled, 0..1 (parent-based: a request with a sampled parent is sampled, a poll follows its task)")
	fs.Float64Var(&t.MaxPerSecond, "trace-max-per-second", DefaultTraceMaxPerSecond, "at most this many new task traces sampled a second (a token bucket; a sampled task's polls follow it, outside the cap); 0 = no cap")
	return t
}
