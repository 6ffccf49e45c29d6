package conform

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// SetArgs sets the suite's call arguments from their text, as `tasksim conform` takes them:
// toolArgs (Args, of o.Tool: --args), failArgs and errorArgs (FailArgs and ErrorArgs: the
// calls that end in a tool error and in a protocol error) and perTool, each NAME=JSON
// (ToolArgs). "" leaves a field alone. Every value must be a JSON object, and Args needs
// o.Tool; the error names the flag, so that any caller reports it as the CLI does.
func (o *Options) SetArgs(toolArgs, failArgs, errorArgs string, perTool []string) error {
	if toolArgs != "" {
		if !isJSONObject(toolArgs) {
			return fmt.Errorf("--args: not a JSON object: %s", toolArgs)
		}
		if o.Tool == "" {
			return fmt.Errorf("--args are the arguments of --tool: give --tool too")
		}
		o.Args = json.RawMessage(toolArgs)
	}
	for _, fa := range []struct {
		flag, value string
		dst         *json.RawMessage
	}{{"--fail-args", failArgs, &o.FailArgs}, {"--error-args", errorArgs, &o.ErrorArgs}} {
		if fa.value == "" {
			continue
		}
		if !isJSONObject(fa.value) {
			return fmt.Errorf("%s: not a JSON object: %s", fa.flag, fa.value)
		}
		*fa.dst = json.RawMessage(fa.value)
	}
	for _, ta := range perTool {
		name, js, ok := strings.Cut(ta, "=")
		if !ok || name == "" || !isJSONObject(js) {
			return fmt.Errorf("--tool-args %q: want NAME={JSON object}", ta)
		}
		if o.ToolArgs == nil {
			o.ToolArgs = map[string]json.RawMessage{}
		}
		o.ToolArgs[name] = json.RawMessage(js)
	}
	return nil
}

// isJSONObject reports whether s is a JSON object.
func isJSONObject(s string) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal([]byte(s), &m) == nil && m != nil
}

// DefaultDir is the output directory of a suite run on its own that started at start,
// when none is given: runs/conform-<UTC time>, beside the runs of `tasksim run`.
func DefaultDir(start time.Time) string {
	return filepath.Join("runs", "conform-"+start.UTC().Format("20060102T150405Z"))
}
