package scenarios

import (
	"strings"
	"testing"
	"time"
)

func TestRollbackParse(t *testing.T) {
	s := mustParse(t, minimal+`rollback: {at: 2s, cancel: true, restart: true}
expect_manifest: pin.yaml
`)
	if s.Rollback != (Rollback{At: Duration(2 * time.Second), Cancel: true, Restart: true}) || !s.Rollback.On() || s.ExpectManifest != "pin.yaml" {
		t.Errorf("rollback %+v, expect_manifest %q", s.Rollback, s.ExpectManifest)
	}
	if err := s.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if Default().Rollback.On() {
		t.Error("a rollback is rehearsed by default")
	}
}

func TestRollbackValidate(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"rollback: {at: -1s}\n", "rollback.at: must be > 0, got -1s"},
		{"rollback: {at: 1h}\n", "rollback.at: must be within the load phase"},
		{"rollback: {on_abort: true}\n", "rollback.on_abort: needs a threshold with abort_on_fail: true"},
		{"rollback: {cancel: true}\n", "rollback: cancel or restart without a switch"},
		{"target: http://127.0.0.1:1/mcp\nrollback: {at: 1s, restart: true}\n", "rollback.restart: restarts the embedded server, and the run has a target"},
	} {
		err := mustParse(t, minimal+tc.yaml).Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: Validate() = %v, want %q", tc.yaml, err, tc.want)
		}
	}
	ok := mustParse(t, minimal+"thresholds: [{expr: 'requests.errors_rate < 5%', abort_on_fail: true}]\nrollback: {on_abort: true}\n")
	if err := ok.Validate(); err != nil {
		t.Errorf("on_abort with an abort_on_fail threshold: %v", err)
	}
}
