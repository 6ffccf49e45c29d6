package scenarios

import (
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// SLO overrides or switches off the default SLOs every run is judged by after its
// thresholds and error budget (docs/METRICS.md#default-slos). Each key is absent (the
// default formula, relative to the poll interval the target advertised), "off", or a limit
// that replaces the formula. Default: every key absent.
type SLO struct {
	// DetectionLag is the limit of detection_lag.p99, a duration ("3s"). Default
	// max(2*P + 250ms, 1s).
	DetectionLag SLOLimit `yaml:"detection_lag"`
	// TasksGet is the limit of latency_tasks_get.p99, a duration ("800ms"). Default
	// min(max(P, 500ms), 5s).
	TasksGet SLOLimit `yaml:"tasks_get"`
	// UnknownTasks is how many tasks may end with an unknown outcome (tasks.unknown), a
	// count. Default 0.
	UnknownTasks SLOLimit `yaml:"unknown_tasks"`
	// SetupErrors is the share of initialize and server/discover requests that may fail
	// (requests.setup_errors_rate), a percentage ("2%"). Default 1%.
	SetupErrors SLOLimit `yaml:"setup_errors"`
}

// The keys of the slo section, as SLO.Limit takes them.
const (
	SLODetectionLag = "detection_lag"
	SLOTasksGet     = "tasks_get"
	SLOUnknownTasks = "unknown_tasks"
	SLOSetupErrors  = "setup_errors"
)

// SLOLimit is one key of the slo section: Off, or Value (the limit as written, checked by
// Validate for the key's unit), or neither: the default.
type SLOLimit struct {
	Off   bool
	Value string
}

var _ yaml.Unmarshaler = (*SLOLimit)(nil)

// UnmarshalYAML accepts "off" or a scalar limit.
func (l *SLOLimit) UnmarshalYAML(n *yaml.Node) error {
	if err := wantScalar(n, `"off" or a limit`); err != nil {
		return err
	}
	return l.UnmarshalText([]byte(n.Value))
}

// UnmarshalText reads "off" or a limit ("3s", "0", "2%"), as --set gives it.
func (l *SLOLimit) UnmarshalText(b []byte) error {
	v := strings.TrimSpace(string(b))
	*l = SLOLimit{Off: v == "off", Value: v}
	if l.Off {
		l.Value = ""
	}
	return nil
}

// MarshalText writes the limit as it was written: "off", the value, or "" for the default.
func (l SLOLimit) MarshalText() ([]byte, error) {
	if l.Off {
		return []byte("off"), nil
	}
	return []byte(l.Value), nil
}

// IsZero reports the default (yaml's omitempty).
func (l SLOLimit) IsZero() bool { return !l.Off && l.Value == "" }

// Limit returns the limit of key (one of the SLO* keys); the zero SLOLimit for another.
func (s SLO) Limit(key string) SLOLimit {
	switch key {
	case SLODetectionLag:
		return s.DetectionLag
	case SLOTasksGet:
		return s.TasksGet
	case SLOUnknownTasks:
		return s.UnknownTasks
	case SLOSetupErrors:
		return s.SetupErrors
	}
	return SLOLimit{}
}

// slo checks that every limit of the slo section fits its key: a duration, a count, a
// percentage.
func (v *validator) slo() {
	s := v.s.SLO
	for _, k := range []struct {
		key  string
		lim  SLOLimit
		kind string
	}{
		{SLODetectionLag, s.DetectionLag, "duration"},
		{SLOTasksGet, s.TasksGet, "duration"},
		{SLOUnknownTasks, s.UnknownTasks, "count"},
		{SLOSetupErrors, s.SetupErrors, "percent"},
	} {
		if k.lim.Value == "" {
			continue
		}
		path := "slo." + k.key
		switch k.kind {
		case "duration":
			var d Duration
			if err := d.UnmarshalText([]byte(k.lim.Value)); err != nil {
				v.add(path, "want off or a duration like 2s: %v", err)
			} else if d <= 0 || time.Duration(d) > 24*time.Hour {
				v.add(path, "must be in (0s, 24h], got %v", d)
			}
		case "count":
			if _, err := strconv.ParseUint(k.lim.Value, 10, 32); err != nil {
				v.add(path, "want off or a count of tasks like 0 or 5, got %q", k.lim.Value)
			}
		case "percent":
			var p Percent
			if err := p.UnmarshalText([]byte(k.lim.Value)); err != nil {
				v.add(path, "want off or a percentage like 2%%: %v", err)
			} else if p < 0 || p > 100 {
				v.add(path, "must be in [0%%, 100%%], got %v", p)
			}
		}
	}
}
