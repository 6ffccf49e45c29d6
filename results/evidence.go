package results

import (
	"bytes"
	"encoding/json"
	"reflect"
)

// The gates' evidence, one struct per gate: the contract between the writer (Build, the
// gate functions) and every reader of summary.json (tasksim merge, tasksim report, a
// pipeline). Each marshals exactly as the evidence object summary.json has always held:
// the same keys, in alphabetical order (the fields are declared so); null where a figure
// was not measured (a pointer without omitempty); absent where it does not apply
// (omitempty, or omitzero where an empty {} or [] must still be written).
//
// Every evidence has three forms:
//
//	evaluated      the gate's figures
//	not evaluated  "reason", and what is known anyway (the figures, or, for the rollback
//	               gate, "planned")
//	reason only    "reason" and nothing else: a gate with nothing to look at, or any gate
//	               of an error summary (ErrorSummary)
//
// The reason-only form is an evidence that holds nothing but its Reason (reasonOnly): it
// marshals as {"reason": ...} and reads back as the same. No evaluated evidence is one:
// each holds a non-nil list or object, or a figure, beyond its reason.
//
// Samples (leak_sample, reconciliation_sample, the *_detail lists) are loadgen's records,
// which results may not import: they are marshalled as given, and read back as plain JSON
// values.

// HardEvidence is the hard gate's evidence (hardGate).
type HardEvidence struct {
	CrossTenantLeaks *int64 `json:"cross_tenant_leaks,omitempty"` // absent without probes and leaks
	DuplicateEffects *int64 `json:"duplicate_effects"`            // null: an external target
	// DuplicateWindowS is the ledger's window, in seconds, with duplicate_effects: a key
	// repeated within it of its last use is detected; beyond it, not (RunInfo.DuplicateWindow).
	DuplicateWindowS   *float64         `json:"duplicate_window_s,omitempty"`
	InjectionFindings  map[string]int64 `json:"injection_findings,omitempty"`
	InvalidTransitions int64            `json:"invalid_transitions"`
	// InvalidTransitionsDetail is the sample of the invalid transitions
	// (RunInfo.InvalidTransitionSample); absent when none was given.
	InvalidTransitionsDetail any               `json:"invalid_transitions_detail,omitempty"`
	LeakSample               any               `json:"leak_sample,omitempty"`
	LeaksByKind              map[string]int64  `json:"leaks_by_kind,omitzero"` // with cross_tenant_leaks
	NotChecked               []string          `json:"not_checked"`
	Notes                    map[string]string `json:"notes,omitempty"`           // why a figure is null or not checked
	PlantedSecrets           *int64            `json:"planted_secrets,omitempty"` // absent without canaries and secrets
	ProbesInconclusive       map[string]int64  `json:"probes_inconclusive,omitzero"`
	ProbesSent               map[string]int64  `json:"probes_sent,omitzero"`
	Reason                   string            `json:"reason,omitempty"`
	SecretSample             any               `json:"secret_sample,omitempty"`
	SecretsByWhere           map[string]int64  `json:"secrets_by_where,omitzero"` // with planted_secrets
	TouchedTasks             []string          `json:"touched_tasks,omitempty"`
}

// RecoveryEvidence is the recovery gate's evidence (recoveryGate).
type RecoveryEvidence struct {
	Accounting string `json:"accounting,omitempty"` // why tasks_accounted is false
	// Failures says in words why tasks_lost fails the gate; absent when none was lost.
	Failures                []string          `json:"failures,omitempty"`
	FaultsInjected          map[string]int64  `json:"faults_injected"`
	Finding                 string            `json:"finding,omitempty"`
	NotChecked              []string          `json:"not_checked,omitempty"`
	Notes                   map[string]string `json:"notes,omitempty"`
	Reason                  string            `json:"reason,omitempty"`
	Reconciled              int64             `json:"reconciled"`
	ReconciliationList      map[string]int64  `json:"reconciliation_list"` // by reason
	ReconciliationSample    any               `json:"reconciliation_sample,omitempty"`
	Reconnects              int64             `json:"reconnects"`
	ResultsLost             int64             `json:"results_lost"`
	ResumedObservations     int64             `json:"resumed_observations"`
	RetriedCreates          int64             `json:"retried_creates"`
	SecondCreates           *int64            `json:"second_creates"`            // null: an external target
	TasksAccounted          *bool             `json:"tasks_accounted,omitempty"` // absent when not checked
	TasksLost               int64             `json:"tasks_lost"`
	TasksLostAfterReconnect int64             `json:"tasks_lost_after_reconnect"`
	// TasksLostAfterReconnectDetail is the sample of their ids
	// (RunInfo.LostAfterReconnectSample); absent when none was given.
	TasksLostAfterReconnectDetail any   `json:"tasks_lost_after_reconnect_detail,omitempty"`
	TasksUnknown                  int64 `json:"tasks_unknown"`
}

// CancellationEvidence is the cancellation gate's evidence (cancellationGate).
type CancellationEvidence struct {
	CancelLatencyCount   int64    `json:"cancel_latency_count"`
	CancelLatencyP50Ms   *float64 `json:"cancel_latency_p50_ms"` // null: nothing measured
	CancelLatencyP99Ms   *float64 `json:"cancel_latency_p99_ms"` // null: nothing measured
	CancelledByOwnCancel int64    `json:"cancelled_by_own_cancel"`
	CancelledUnrequested int64    `json:"cancelled_unrequested"`
	CancelsAcked         int64    `json:"cancels_acked"`
	CancelsBroken        int64    `json:"cancels_broken"`
	CancelsIgnored       int64    `json:"cancels_ignored"`
	CancelsIgnoredLimit  float64  `json:"cancels_ignored_limit_pct"` // the share the gate allows
	CancelsIgnoredShare  float64  `json:"cancels_ignored_pct"`       // of cancels_sent
	CancelsLate          int64    `json:"cancels_late"`
	CancelsRefused       int64    `json:"cancels_refused"`
	CancelsSent          int64    `json:"cancels_sent"`
	CancelsUndone        int64    `json:"cancels_undone"`
	EffectsAfterCancel   *int64   `json:"effects_after_cancel"` // null: an external target
	Failures             []string `json:"failures,omitempty"`
	Finding              string   `json:"finding,omitempty"`
	// IgnoredRule says what the spec of the run's era says of an ignored cancel (R27, E60);
	// absent when none was ignored.
	IgnoredRule    string            `json:"ignored_rule,omitempty"`
	Notes          map[string]string `json:"notes,omitempty"`
	Reason         string            `json:"reason,omitempty"`
	TasksCancelled int64             `json:"tasks_cancelled"`
}

// CompatibilityEvidence is the compatibility gate's evidence (compatibilityGate). The
// fields of a fallback (missing to tasks_created) are present only when the target cannot
// take a task for the tool; era_calls only when the era fell back; expected_manifest and
// manifest_drift only with a pin.
type CompatibilityEvidence struct {
	AsTask            bool              `json:"as_task"`
	DeclaredFallback  string            `json:"declared_fallback"`
	Era               string            `json:"era"`
	EraCalls          *int64            `json:"era_calls,omitempty"`
	EraFallback       string            `json:"era_fallback,omitempty"`
	ExpectedManifest  string            `json:"expected_manifest,omitempty"`
	Failures          []string          `json:"failures,omitempty"`
	FallbackTaken     *string           `json:"fallback_taken,omitempty"`
	ManifestDrift     []ManifestDrift   `json:"manifest_drift,omitzero"`
	Missing           *string           `json:"missing,omitempty"` // what the target lacks (Compat.Why)
	Notes             map[string]string `json:"notes,omitempty"`
	ProtocolVersion   string            `json:"protocol_version"`
	Reason            string            `json:"reason,omitempty"`
	SyncCalls         *int64            `json:"sync_calls,omitempty"`
	SyncCompleted     *int64            `json:"sync_completed,omitempty"`
	SyncFailed        *int64            `json:"sync_failed,omitempty"`
	TaskParamsIgnored *int64            `json:"task_params_ignored"` // null: an external target
	TaskParamsSent    *int64            `json:"task_params_sent,omitempty"`
	TasksCancel       bool              `json:"tasks_cancel"`
	TasksCreated      *int64            `json:"tasks_created,omitempty"`
	TasksDeclared     bool              `json:"tasks_declared"`
	TasksList         bool              `json:"tasks_list"`
	TasksToolsCall    bool              `json:"tasks_tools_call"`
	Tool              string            `json:"tool"`
	ToolTaskSupport   string            `json:"tool_task_support"`
}

// ContractEvidence is the contract gate's evidence (contractGate).
type ContractEvidence struct {
	CasesFailed  int               `json:"cases_failed"`
	CasesPassed  int               `json:"cases_passed"`
	CasesSkipped int               `json:"cases_skipped"`
	Failed       []ContractFailure `json:"failed"`
	Failure      string            `json:"failure,omitempty"` // a failing verdict without a failed case
	LeftBehind   []string          `json:"left_behind"`
	Reason       string            `json:"reason,omitempty"`
	RulesBroken  []string          `json:"rules_broken"`
	Skipped      []ContractSkip    `json:"skipped"`
	SuiteNotes   []string          `json:"suite_notes,omitempty"`
	TasksCreated int               `json:"tasks_created"`
}

// ContractFailure is one failed case of the contract gate's evidence.
type ContractFailure struct {
	ID      string   `json:"id"`
	Message string   `json:"message"`
	Rules   []string `json:"rules"`
}

// ContractSkip is one skipped case of the contract gate's evidence; Enable says how to run
// it, "" = absent.
type ContractSkip struct {
	Enable string `json:"enable,omitempty"`
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// RollbackEvidence is the rollback gate's evidence (rollbackGate). Its not-evaluated form
// holds only reason and, when a drill was planned, planned: it is the form of every
// evidence without a trigger.
type RollbackEvidence struct {
	CreatesAfter        int64                   `json:"creates_after"`
	DrainS              *float64                `json:"drain_s"` // null: not every pre-switch task ended
	Failures            []string                `json:"failures,omitempty"`
	FallbackCalls       int64                   `json:"fallback_calls"`
	FallbackErrors      int64                   `json:"fallback_errors"`
	FallbackErrorsRate  *float64                `json:"fallback_errors_rate"` // percent; null: no plain call
	Notes               map[string]string       `json:"notes,omitempty"`
	Planned             string                  `json:"planned,omitempty"` // not evaluated: the switch never flipped
	PreSwitch           int64                   `json:"pre_switch"`
	PreSwitchListed     int64                   `json:"pre_switch_listed"`
	PreSwitchSettled    int64                   `json:"pre_switch_settled"`
	PreSwitchUnlisted   int64                   `json:"pre_switch_unlisted"`
	Reason              string                  `json:"reason,omitempty"`
	Reconciliation      *RollbackReconciliation `json:"reconciliation,omitempty"` // absent on an external target
	Refused             int64                   `json:"refused"`
	ServerCreatesAfter  *int64                  `json:"server_creates_after"` // null: an external target
	SwitchedAtS         float64                 `json:"switched_at_s"`
	TasksAfterPlainCall int64                   `json:"tasks_after_plain_call"`
	TasksLost           *int64                  `json:"tasks_lost"` // null: an external target
	Trigger             string                  `json:"trigger"`
	UnlistedSample      []string                `json:"unlisted_sample"`
	WatcherCancelled    int64                   `json:"watcher_cancelled"`
}

// RollbackReconciliation is the embedded server's ledger on the operations in flight at the
// switch, as the rollback gate's evidence holds it: counts, and a sample of each class.
type RollbackReconciliation struct {
	Applied          int            `json:"applied"`
	AppliedSample    []ReconciledOp `json:"applied_sample"`
	InFlight         int            `json:"in_flight"`
	NotApplied       int            `json:"not_applied"`
	NotAppliedSample []ReconciledOp `json:"not_applied_sample"`
	Unknown          int            `json:"unknown"`
	UnknownSample    []ReconciledOp `json:"unknown_sample"`
}

// MarshalJSON writes the reason-only form as {"reason": ...}, any other as its fields.
func (e HardEvidence) MarshalJSON() ([]byte, error) {
	type plain HardEvidence
	return evidenceJSON(plain(e), reasonOnly(e, HardEvidence{Reason: e.Reason}), e.Reason)
}

// MarshalJSON writes the reason-only form as {"reason": ...}, any other as its fields.
func (e RecoveryEvidence) MarshalJSON() ([]byte, error) {
	type plain RecoveryEvidence
	return evidenceJSON(plain(e), reasonOnly(e, RecoveryEvidence{Reason: e.Reason}), e.Reason)
}

// MarshalJSON writes the reason-only form as {"reason": ...}, any other as its fields.
func (e CancellationEvidence) MarshalJSON() ([]byte, error) {
	type plain CancellationEvidence
	return evidenceJSON(plain(e), reasonOnly(e, CancellationEvidence{Reason: e.Reason}), e.Reason)
}

// MarshalJSON writes the reason-only form as {"reason": ...}, any other as its fields.
func (e CompatibilityEvidence) MarshalJSON() ([]byte, error) {
	type plain CompatibilityEvidence
	return evidenceJSON(plain(e), reasonOnly(e, CompatibilityEvidence{Reason: e.Reason}), e.Reason)
}

// MarshalJSON writes the reason-only form as {"reason": ...}, any other as its fields.
func (e ContractEvidence) MarshalJSON() ([]byte, error) {
	type plain ContractEvidence
	return evidenceJSON(plain(e), reasonOnly(e, ContractEvidence{Reason: e.Reason}), e.Reason)
}

// MarshalJSON writes an evidence without a trigger (not evaluated) as its reason and
// plan, any other as its fields.
func (e RollbackEvidence) MarshalJSON() ([]byte, error) {
	if e.Trigger == "" {
		return plainJSON(struct {
			Planned string `json:"planned,omitempty"`
			Reason  string `json:"reason"`
		}{e.Planned, e.Reason})
	}
	type plain RollbackEvidence
	return plainJSON(plain(e))
}

// reasonOnly says e is the reason-only form: equal, nil lists and objects included, to
// the evidence holding only its reason. An evidence read back from summary.json holds
// non-nil lists and objects wherever its JSON had them ([] and {} included).
func reasonOnly[E any](e, onlyReason E) bool { return reflect.DeepEqual(e, onlyReason) }

// evidenceJSON is {"reason": reason} when only, else fields as JSON.
func evidenceJSON(fields any, only bool, reason string) ([]byte, error) {
	if only {
		return plainJSON(struct {
			Reason string `json:"reason"`
		}{reason})
	}
	return plainJSON(fields)
}

// plainJSON is v as JSON without HTML escaping: the encoder that writes summary.json
// (summaryJSON) escapes none, and what a MarshalJSON returns is copied as it is.
func plainJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// EvidenceMap is g's evidence as summary.json holds it, read back as plain JSON values
// (numbers float64, lists []any, objects map[string]any): the form the generic renderers
// walk, the same for a run's own summary and one read from a file. Never nil.
//
// It is generic by design, the one part of a summary the report and the text summary read
// so: each gate has an evidence of its own shape (with samples of loadgen's), the report
// lays every one out by the same rules (reportview.go) and the text summary prints its
// scalars, so a figure added to an evidence is shown without a change to either. The gates
// decide from the typed evidence (gates.go).
func (g *Gate[E]) EvidenceMap() map[string]any {
	m := map[string]any{}
	if b, err := json.Marshal(g.Evidence); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m
}
