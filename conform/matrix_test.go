package conform_test

import (
	"strings"
	"testing"

	"github.com/tasksim/tasksim/client"
	"github.com/tasksim/tasksim/conform"
	"github.com/tasksim/tasksim/mockserver"
	"github.com/tasksim/tasksim/results"
)

// TestKnownBadMatrix proves that each case can fail: against the mock in each known-bad and
// insecure mode (each breaking one rule), exactly the cases that check that rule fail, each
// naming it, and every other case passes or skips as against the good mock. Tenants are on
// (two identities) so that the list and isolation cases run, except for the mode that is
// only wrong without them.
func TestKnownBadMatrix(t *testing.T) {
	cases := []matrixCase{
		{name: "none", set: func(*mockserver.Config) {}, want: fails{}},
		{name: "none without tenants", noAuth: true, set: func(*mockserver.Config) {}, want: fails{}},
		{name: "blocking_get", set: func(c *mockserver.Config) { c.KnownBad.BlockingGet = true },
			want: fails{"get.nonblocking": "R16", "input.round_trip": "R16"}},
		{name: "no_poll_interval", set: func(c *mockserver.Config) { c.KnownBad.NoPollInterval = true },
			want: fails{"get.poll_interval": "R15"}},
		{name: "missing_fields", set: func(c *mockserver.Config) { c.KnownBad.MissingFields = true },
			want: schemaToo(fails{"create.fields": "R42", "get.fields": "R42"}, "schema",
				"tool.optional", "create.ids", "get.poll_interval", "get.nonblocking", "task.lifecycle", "result.waits",
				"result.payload", "result.failed", "cancel.working", "cancel.terminal", "list.pages", "input.round_trip",
				"ttl.expiry", "isolation.get", "isolation.session", "isolation.result", "isolation.cancel")},
		{name: "cancel_terminal_ok", set: func(c *mockserver.Config) { c.KnownBad.CancelTerminalOK = true },
			want: fails{"cancel.terminal": "R26"}},
		{name: "cancel_not_final", set: func(c *mockserver.Config) { c.KnownBad.CancelNotFinal = true },
			want: fails{"cancel.working": "R28", "transitions": "R14"}},
		{name: "early_result", set: func(c *mockserver.Config) { c.KnownBad.EarlyResult = true },
			want: fails{"result.waits": "R18", "input.round_trip": "R18"}},
		{name: "no_related_meta", set: func(c *mockserver.Config) { c.KnownBad.NoRelatedMeta = true },
			want: fails{"result.payload": "R19"}},
		{name: "is_error_completed", set: func(c *mockserver.Config) { c.KnownBad.IsErrorCompleted = true },
			want: fails{"result.failed": "R51"}},
		{name: "list_without_auth", noAuth: true, set: func(c *mockserver.Config) { c.KnownBad.ListWithoutAuth = true },
			want: fails{"list.authorization": "R54"}},
		{name: "list_truncated", set: func(c *mockserver.Config) { c.KnownBad.ListTruncated = true; c.ListPageSize = 3 },
			want: fails{"list.pages": "R25"}},
		{name: "wrong_error_codes", set: func(c *mockserver.Config) { c.KnownBad.WrongErrorCodes = true },
			want: fails{"tool.forbidden": "R8", "tool.required": "R10", "cancel.terminal": "R26", "task.unknown": "R46",
				"list.bad_cursor": "R47", "ttl.expiry": "R46"}},
		{name: "no_task_support_check", set: func(c *mockserver.Config) { c.KnownBad.NoTaskSupportCheck = true },
			want: fails{"tool.forbidden": "R8", "tool.required": "R10"}},
		{name: "never_expire", set: func(c *mockserver.Config) { c.KnownBad.NeverExpire = true },
			want: fails{"ttl.expiry": "R56"}},
		{name: "lost_session_400", set: func(c *mockserver.Config) { c.KnownBad.LostSession400 = true },
			want: fails{"session.deleted": "H8"}},
		{name: "sessionless (allowed: a session id not required)", set: func(c *mockserver.Config) { c.KnownBad.Sessionless = true },
			want: fails{}},
		{name: "missing_session_404", set: func(c *mockserver.Config) { c.KnownBad.MissingSession404 = true },
			want: fails{"session.required": "H2"}},
		{name: "boolean_leaves", set: func(c *mockserver.Config) { c.KnownBad.BooleanLeaves = true },
			want: fails{"init.capabilities": "R1"}},
		{name: "any_version", set: func(c *mockserver.Config) { c.KnownBad.AnyVersion = true },
			want: fails{"init.version": "H1"}},
		{name: "input_no_meta", set: func(c *mockserver.Config) { c.KnownBad.InputNoMeta = true },
			want: fails{"input.round_trip": "R36"}},
		{name: "ignore_task_param", set: func(c *mockserver.Config) { c.KnownBad.IgnoreTaskParam = true },
			want: fails{"tool.optional": "R11"}},
		{name: "no tasks", noAuth: true, set: func(c *mockserver.Config) { c.NoTasks = true },
			want: fails{}},
		{name: "refuse_task_param", noAuth: true, set: func(c *mockserver.Config) { c.NoTasks = true; c.KnownBad.RefuseTaskParam = true },
			want: fails{"tasks.ignored": "R4"}},
		{name: "self_cancel", set: func(c *mockserver.Config) { c.KnownBad.SelfCancel = true },
			want: fails{"task.lifecycle": "R27", "result.failed": "R27", "input.round_trip": "R27"}},
		{name: "predictable_ids", noAuth: true, set: func(c *mockserver.Config) { c.Insecure.PredictableIDs = true },
			want: fails{"create.ids": "R54"}},
		{name: "predictable_ids with tenants (bound: allowed)", set: func(c *mockserver.Config) { c.Insecure.PredictableIDs = true },
			want: fails{}},
		{name: "no_tenant_check", set: func(c *mockserver.Config) { c.Insecure.NoTenantCheck = true },
			want: fails{"isolation.get": "R53", "isolation.session": "R52", "isolation.result": "R53", "isolation.cancel": "R53", "isolation.list": "R53"}},
		{name: "session_bound", set: func(c *mockserver.Config) { c.Insecure.SessionBound = true },
			want: fails{"isolation.session": "R52"}},
	}
	runMatrix(t, cases, conform.CaseIDs(), "", false)
}

// fails maps case ids to the rule each one's failure message names first.
type fails map[string]string

// schemaToo adds to f the cases ids, which fail only because a reply they read does not
// match the official schema (rule, conform/schema.go).
func schemaToo(f fails, rule string, ids ...string) fails {
	for _, id := range ids {
		f[id] = rule
	}
	return f
}

// matrixCase is one mode of a known-bad matrix: how it sets up the mock, and the cases it
// must fail.
type matrixCase struct {
	name   string
	noAuth bool // no tokens: no authorization context, one identity
	set    func(*mockserver.Config)
	want   fails
}

// runMatrix checks that every case of ids is failed by some mode of cases, then runs the
// suite against the mock (answering protocols) in each mode: exactly the cases it wants fail,
// each naming its rule first, and the verdict follows. noSkip also wants every other case to
// pass (but the isolation cases without tenants).
func runMatrix(t *testing.T, cases []matrixCase, ids []string, protocols mockserver.Protocols, noSkip bool) {
	t.Helper()
	shown := map[string]bool{}
	for _, tc := range cases {
		for id := range tc.want {
			shown[id] = true
		}
	}
	for _, id := range ids {
		if !shown[id] {
			t.Errorf("case %s is shown to fail by no mode of the matrix", id)
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, a, b := tenants()
			o := conform.Options{Target: &client.Target{Header: a}, Other: b}
			if tc.noAuth {
				cfg.Tokens = nil
				o = conform.Options{Target: &client.Target{}}
			}
			cfg.Protocols = protocols
			tc.set(&cfg)
			res := runSuite(t, cfg, o)
			var got []string
			for _, k := range res.Cases {
				rule, want := tc.want[k.ID]
				switch {
				case want && k.Verdict != results.CaseFail:
					t.Errorf("%s: %s (%s), want a failure of %s", k.ID, k.Verdict, k.Message, rule)
				case want && !strings.HasPrefix(k.Message, rule+":"):
					t.Errorf("%s failed with %q, want it to name %s first", k.ID, k.Message, rule)
				case !want && k.Verdict == results.CaseFail:
					t.Errorf("%s failed, and should not: %s", k.ID, k.Message)
				case !want && noSkip && k.Verdict == results.CaseSkip && !(tc.noAuth && strings.Contains(k.ID, "isolation")):
					t.Errorf("%s skipped, and should not: %s", k.ID, k.Message)
				}
				if k.Verdict == results.CaseFail {
					got = append(got, k.ID)
				}
			}
			if t.Failed() {
				dump(t, res)
			}
			if len(tc.want) > 0 && res.Verdict != results.VerdictFail {
				t.Errorf("verdict %s with failures %v, want fail", res.Verdict, got)
			}
			if len(tc.want) == 0 && res.Verdict != results.VerdictPass {
				t.Errorf("verdict %s, want pass", res.Verdict)
			}
		})
	}
}
