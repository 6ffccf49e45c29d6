package client

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestProbeJSON: the manifest as probe prints it is summary.json's object, in its order,
// indented, without the fields only a run fills in and without a final newline.
func TestProbeJSON(t *testing.T) {
	m := &Manifest{Target: "http://127.0.0.1:9/mcp", ProtocolVersion: "2025-11-25", Tool: "work_task", AsTask: true,
		Fallback: "poll", FallbackInterval: 1000, Notes: []string{"a note"}}
	b, err := m.ProbeJSON()
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, key := range runOnlyKeys {
		if strings.Contains(s, `"`+key+`"`) {
			t.Errorf("ProbeJSON holds %q:\n%s", key, s)
		}
	}
	if !strings.HasPrefix(s, "{\n  \"target\": \"http://127.0.0.1:9/mcp\",\n  \"taken_at\"") || strings.HasSuffix(s, "\n") ||
		!strings.Contains(s, `"notes": [`) || strings.Index(s, `"protocol_version"`) > strings.Index(s, `"tools"`) {
		t.Errorf("ProbeJSON:\n%s", s)
	}
	if _, err := withoutKeys([]byte(`[1]`), "a"); err == nil {
		t.Error("withoutKeys of an array: no error")
	}
}

// TestWritePin: a pin is written, and a re-pin keeps the allow entries of the pin it
// replaces; the drift table is aligned, one drift a line.
func TestWritePin(t *testing.T) {
	name := filepath.Join(t.TempDir(), "pin.yaml")
	m := &Manifest{ProtocolVersion: "2025-11-25", Era: "2025-11-25"}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if kept, err := WritePin(name, m, now); err != nil || kept != 0 {
		t.Fatalf("WritePin = %d, %v", kept, err)
	}
	pin, err := ReadPin(name)
	if err != nil {
		t.Fatal(err)
	}
	pin.Allow = map[string]Allowance{"server.version": {Any: true}}
	if err := os.WriteFile(name, pin.Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	if kept, err := WritePin(name, m, now); err != nil || kept != 1 {
		t.Fatalf("re-pin: kept %d, %v; want the 1 allow entry", kept, err)
	}
	if pin, err = ReadPin(name); err != nil || !pin.Allow["server.version"].Any {
		t.Errorf("re-pinned: allow %v, %v", pin.Allow, err)
	}
	if _, err := WritePin(filepath.Join(name, "not-a-dir", "pin.yaml"), m, now); err == nil {
		t.Error("WritePin into a missing directory: no error")
	}

	var b bytes.Buffer
	if err := WriteDriftTable(&b, []Drift{{Field: "server.version", Pinned: "1", Now: "2"}, {Field: "era", Pinned: "2025-11-25", Now: "2026-07-28"}}); err != nil {
		t.Fatal(err)
	}
	want := "drift  field           pinned      now\n       server.version  1           2\n       era             2025-11-25  2026-07-28\n"
	if b.String() != want {
		t.Errorf("drift table:\n%s\nwant:\n%s", b.String(), want)
	}
}
