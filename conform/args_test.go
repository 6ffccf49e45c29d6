package conform

import (
	"strings"
	"testing"
)

// TestSetArgs: each argument flag takes a JSON object, --args only with --tool, and a
// problem names the flag.
func TestSetArgs(t *testing.T) {
	o := Options{Tool: "work"}
	if err := o.SetArgs(`{"duration_ms":1}`, `{"outcome":"failed"}`, `{"outcome":"error"}`, []string{`work_sync={}`}); err != nil {
		t.Fatal(err)
	}
	if string(o.Args) != `{"duration_ms":1}` || string(o.FailArgs) != `{"outcome":"failed"}` || string(o.ErrorArgs) != `{"outcome":"error"}` || string(o.ToolArgs["work_sync"]) != "{}" {
		t.Errorf("SetArgs gave %+v", o)
	}
	for _, tc := range []struct {
		o                       Options
		args, fail, error, tool string
		want                    string
	}{
		{Options{}, `{}`, "", "", "", "give --tool too"},
		{Options{Tool: "work"}, `[1]`, "", "", "", "--args: not a JSON object"},
		{Options{}, "", `null`, "", "", "--fail-args: not a JSON object"},
		{Options{}, "", "", `"x"`, "", "--error-args: not a JSON object"},
		{Options{}, "", "", "", "work", `--tool-args "work": want NAME={JSON object}`},
	} {
		var per []string
		if tc.tool != "" {
			per = []string{tc.tool}
		}
		if err := tc.o.SetArgs(tc.args, tc.fail, tc.error, per); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("SetArgs(%q, %q, %q, %q) = %v, want %q", tc.args, tc.fail, tc.error, per, err, tc.want)
		}
	}
}
