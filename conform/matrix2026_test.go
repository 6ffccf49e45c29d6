package conform_test

import (
	"testing"

	"github.com/tasksim/tasksim/conform"
	"github.com/tasksim/tasksim/mockserver"
)

// TestModernKnownBadMatrix proves that each case of the modern suite can fail: against the
// mock answering only 2026-07-28, in each modern known-bad mode (and each mode of the task
// core that reaches the modern era), exactly the cases that check the rule broken fail,
// each naming it first, and every other case passes as against the good mock. Tenants are on
// (two identities), so that the isolation case runs.
func TestModernKnownBadMatrix(t *testing.T) {
	cases := []matrixCase{
		{name: "none", set: func(*mockserver.Config) {}, want: fails{}},
		{name: "none without tenants", noAuth: true, set: func(*mockserver.Config) {}, want: fails{}},
		{name: "no_result_type", set: func(c *mockserver.Config) { c.KnownBad.NoResultType = true },
			want: fails{"modern.discover": "E11", "modern.result_type": "E11",
				"modern.removed": "schema-2026", "modern.capability": "schema-2026"}},
		{name: "lenient_envelope", set: func(c *mockserver.Config) { c.KnownBad.LenientEnvelope = true },
			want: fails{"modern.envelope.meta": "E3", "modern.envelope.version": "E9"}},
		{name: "no_header_check", set: func(c *mockserver.Config) { c.KnownBad.NoHeaderCheck = true },
			want: fails{"modern.envelope.headers": "E26", "modern.routing": "E26"}},
		{name: "unknown_method_200", set: func(c *mockserver.Config) { c.KnownBad.UnknownMethod200 = true },
			want: fails{"modern.envelope.unknown_method": "E27", "modern.removed": "E27"}},
		{name: "legacy_methods", set: func(c *mockserver.Config) { c.KnownBad.LegacyMethods = true },
			want: fails{"modern.removed": "E37"}},
		{name: "tasks_undeclared", set: func(c *mockserver.Config) { c.KnownBad.TasksUndeclared = true },
			want: fails{"modern.capability": "E44", "modern.removed": "E37"}},
		{name: "modern_missing_fields", set: func(c *mockserver.Config) { c.KnownBad.ModernMissingFields = true },
			want: schemaToo(fails{"modern.create.fields": "E45", "modern.get.fields": "E50"}, "schema-2026",
				"modern.create.ids", "modern.result.completed", "modern.result.failed", "modern.input", "modern.cancel",
				"modern.cancel.terminal", "modern.routing", "modern.isolation")},
		{name: "get_not_ready", set: func(c *mockserver.Config) { c.KnownBad.GetNotReady = true },
			want: fails{"modern.get.fields": "E46"}},
		{name: "is_error_failed", set: func(c *mockserver.Config) { c.KnownBad.IsErrorFailed = true },
			want: fails{"modern.result.completed": "E49"}},
		{name: "no_inline_payload", set: func(c *mockserver.Config) { c.KnownBad.NoInlinePayload = true },
			want: fails{"modern.result.completed": "E50", "modern.result.failed": "E50",
				"modern.input": "schema-2026", "modern.cancel.terminal": "schema-2026"}},
		{name: "reuse_input_keys", set: func(c *mockserver.Config) { c.KnownBad.ReuseInputKeys = true },
			want: fails{"modern.input": "E57"}},
		{name: "ack_with_task", set: func(c *mockserver.Config) { c.KnownBad.AckWithTask = true },
			want: fails{"modern.input": "E58", "modern.cancel": "E60"}},
		{name: "wrong_error_codes", set: func(c *mockserver.Config) { c.KnownBad.WrongErrorCodes = true },
			want: fails{"modern.unknown": "E65"}},
		{name: "cancel_not_final", set: func(c *mockserver.Config) { c.KnownBad.CancelNotFinal = true },
			want: fails{"modern.transitions": "E48"}},
		{name: "cancel_terminal_flip", set: func(c *mockserver.Config) { c.KnownBad.CancelTerminalFlip = true },
			want: fails{"modern.cancel.terminal": "E48", "modern.transitions": "E48"}},
		{name: "no_inline_result_type", set: func(c *mockserver.Config) { c.KnownBad.NoInlineResultType = true },
			want: schemaToo(fails{}, "schema-2026", "modern.result.completed", "modern.input", "modern.cancel.terminal")},
		{name: "predictable_ids", set: func(c *mockserver.Config) { c.Insecure.PredictableIDs = true },
			want: fails{"modern.create.ids": "E66"}},
		{name: "no_tenant_check", set: func(c *mockserver.Config) { c.Insecure.NoTenantCheck = true },
			want: fails{"modern.isolation": "E67"}},
	}
	runMatrix(t, cases, conform.ModernCaseIDs(), mockserver.ProtocolsModern, true)
}
