package scenarios

import (
	"reflect"
	"strings"
	"testing"
)

// TestKnownBadParse: server.known_bad decodes to the modes named, each on, and valid.
func TestKnownBadParse(t *testing.T) {
	s := mustParse(t, minimal+`server:
  known_bad: [blocking_get, never_expire]
`)
	if !s.Server.KnownBadOn(KnownBadBlockingGet) || !s.Server.KnownBadOn(KnownBadNeverExpire) || s.Server.KnownBadOn(KnownBadSessionless) {
		t.Errorf("known_bad = %v", s.Server.KnownBad)
	}
	if err := s.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if len(Default().Server.KnownBad) != 0 {
		t.Error("a known-bad mode is on by default")
	}
	all := KnownBadModes()
	src := minimal + "server:\n  known_bad: ["
	for i, m := range all {
		if i > 0 {
			src += ", "
		}
		src += string(m)
	}
	if err := mustParse(t, src+"]\n").Validate(); err != nil {
		t.Errorf("every mode at once: %v", err)
	}
}

// TestKnownBadValidate: an unknown mode is an error at its place, server.known_bad[i], and
// known-bad modes apply to the embedded server only.
func TestKnownBadValidate(t *testing.T) {
	s := mustParse(t, minimal+`server:
  known_bad: [blocking_get, leaky]
`)
	err := s.Validate()
	want := `t.yaml:5:29: server.known_bad[1]: must be one of blocking_get, no_poll_interval, missing_fields, ` +
		`cancel_terminal_ok, cancel_not_final, early_result, no_related_meta, is_error_completed, list_without_auth, ` +
		`list_truncated, wrong_error_codes, no_task_support_check, never_expire, lost_session_400, sessionless, ` +
		`any_version, input_no_meta, ignore_task_param, refuse_task_param, self_cancel, missing_session_404, boolean_leaves, ` +
		`cancel_ignored, cancel_terminal, ` +
		`no_result_type, lenient_envelope, no_header_check, unknown_method_200, legacy_methods, tasks_undeclared, ` +
		`modern_missing_fields, get_not_ready, is_error_failed, no_inline_payload, reuse_input_keys, ack_with_task, cancel_terminal_flip, no_inline_result_type, got "leaky"`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Validate() = %v\nwant %s", err, want)
	}
	if err != nil && strings.Contains(err.Error(), "known_bad[0]") {
		t.Errorf("a valid mode is reported: %v", err)
	}

	s = mustParse(t, minimal+`target: https://mcp.example.com/mcp
server:
  known_bad: [early_result]
`)
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "server.known_bad[0]: applies to the embedded server only") {
		t.Errorf("Validate() with a target = %v", err)
	}
}

// TestKnownBadSet: --set takes a whole list or one item, and a bad name is reported at
// --set with its index.
func TestKnownBadSet(t *testing.T) {
	s := mustParse(t, minimal)
	if err := s.Set("server.known_bad", "[blocking_get, any_version]"); err != nil {
		t.Fatal(err)
	}
	if err := s.Set("server.known_bad[2]", "sessionless"); err != nil {
		t.Fatal(err)
	}
	if want := []KnownBadMode{KnownBadBlockingGet, KnownBadAnyVersion, KnownBadSessionless}; !reflect.DeepEqual(s.Server.KnownBad, want) {
		t.Errorf("known_bad = %v, want %v", s.Server.KnownBad, want)
	}
	if err := s.Set("server.known_bad[0]", "blocking_post"); err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), `--set: server.known_bad[0]: must be one of blocking_get`) {
		t.Errorf("Validate() = %v", err)
	}
}
