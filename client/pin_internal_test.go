package client

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/internal/mcp"
)

// pinnedManifest is a manifest as a probe with --create-task reads it: two tools, a task
// granted a 1 s pollInterval and a 5 min ttl.
func pinnedManifest() *Manifest {
	poll, ttl := int64(1000), int64(300000)
	return &Manifest{
		Target: "http://127.0.0.1:1/mcp", ProtocolVersion: "2026-07-28", Era: "2026-07-28",
		Server: mcp.Implementation{Name: "billing", Version: "1.4.2"},
		Tasks:  TasksManifest{Extension: true},
		Tools: []ToolManifest{
			{Name: "deploy", TaskSupport: "required", schema: json.RawMessage(`{"type":"object","properties":{"env":{"type":"string"},"dry":{"type":"boolean"}}}`)},
			{Name: "status", TaskSupport: "forbidden"},
		},
		PollIntervalMs: &poll, TTLMs: &ttl, PollIntervalFound: true, seen: true,
	}
}

func TestPinRoundTrip(t *testing.T) {
	m := pinnedManifest()
	p := NewPin(m, time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	p.Allow = map[string]Allowance{"server.version": {Any: true}, "poll_interval_ms": {Min: 500, Max: 2000}}
	text := p.Marshal()
	back, err := parsePin("pin.yaml", text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if !reflect.DeepEqual(back, p) {
		t.Errorf("read back %+v\nwrote %+v\n%s", back, p, text)
	}
	if d := back.Check(m); d != nil {
		t.Errorf("the manifest drifts from its own pin: %v", d)
	}
	for _, want := range []string{"tools.deploy.task_support: required", "tools.status.input_schema: none",
		"poll_interval_ms: \"1000\"", "server.version: any", "poll_interval_ms: {min: 500, max: 2000}"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("the pin file does not say %q:\n%s", want, text)
		}
	}
}

func TestPinDrift(t *testing.T) {
	pin := NewPin(pinnedManifest(), time.Now())
	pin.Allow = map[string]Allowance{"server.version": {Any: true}, "poll_interval_ms": {Min: 500, Max: 2000}}
	for _, tc := range []struct {
		name   string
		change func(*Manifest)
		want   []Drift
	}{
		{"unchanged", func(*Manifest) {}, nil},
		{"allowed changes", func(m *Manifest) {
			m.Server.Version = "1.5.0"
			v := int64(2000)
			m.PollIntervalMs = &v
			// the same schema, listed in another order and spacing
			m.Tools[0].schema = json.RawMessage(`{ "properties": {"dry": {"type": "boolean"}, "env": {"type": "string"}}, "type": "object" }`)
		}, nil},
		{"poll interval out of range", func(m *Manifest) {
			v := int64(250)
			m.PollIntervalMs = &v
		}, []Drift{{"poll_interval_ms", "1000", "250"}}},
		{"no poll interval advertised", func(m *Manifest) { m.PollIntervalMs = nil },
			[]Drift{{"poll_interval_ms", "1000", PinNone}}},
		{"no task created", func(m *Manifest) { m.seen, m.PollIntervalMs, m.TTLMs = false, nil, nil },
			[]Drift{{"poll_interval_ms", "1000", PinNotObserved}, {"ttl_ms", "300000", PinNotObserved}}},
		{"ttl unlimited", func(m *Manifest) { m.TTLMs = nil }, []Drift{{"ttl_ms", "300000", PinUnlimited}}},
		{"protocol and era", func(m *Manifest) {
			m.ProtocolVersion, m.Era, m.Tasks = "2025-11-25", "2025-11-25", TasksManifest{Declared: true, ToolsCall: true}
			m.Session.IDIssued = true
		}, []Drift{
			{"protocol_version", "2026-07-28", "2025-11-25"}, {"era", "2026-07-28", "2025-11-25"},
			{"capabilities.tasks", PinAbsent, "true"}, {"capabilities.tasks.cancel", PinAbsent, "false"},
			{"capabilities.tasks.list", PinAbsent, "false"}, {"capabilities.tasks.requests.tools.call", PinAbsent, "true"},
			{"extensions.tasks", "true", PinAbsent}, {"sessions", PinAbsent, "true"},
		}},
		{"extension withdrawn", func(m *Manifest) { m.Tasks.Extension = false },
			[]Drift{{"extensions.tasks", "true", "false"}}},
		{"tool changed, gone, added", func(m *Manifest) {
			m.Tools[0].TaskSupport = "optional"
			m.Tools[0].schema = json.RawMessage(`{"type":"object","properties":{"env":{"type":"string"}}}`)
			m.Tools[1] = ToolManifest{Name: "rollback", TaskSupport: "required"}
		}, []Drift{
			{"tools.deploy.input_schema", pinnedSchemaHash(), "sha256:a9d65b81fb4a36b8b3bd6fe1ba7b1dcff5a0b4a2b8a63b5b2c5a1ff7b15fd8e4"},
			{"tools.deploy.task_support", "required", "optional"},
			{"tools.rollback.input_schema", PinAbsent, PinNone}, {"tools.rollback.task_support", PinAbsent, "required"},
			{"tools.status.input_schema", PinNone, PinAbsent}, {"tools.status.task_support", "forbidden", PinAbsent},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := pinnedManifest()
			tc.change(m)
			got := pin.Check(m)
			if tc.name == "tool changed, gone, added" && len(got) > 0 {
				tc.want[0].Now = got[0].Now // the hash of the new schema, whatever it is: it differs
				if got[0].Now == got[0].Pinned {
					t.Error("a changed schema hashes as the pinned one")
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("drift\n got %v\nwant %v", got, tc.want)
			}
		})
	}
}

func pinnedSchemaHash() string { return pinFields(pinnedManifest())["tools.deploy.input_schema"] }

// TestPinWithoutTask: a pin taken without a task does not check the pollInterval or ttl;
// a glob allows a whole family of fields.
func TestPinWithoutTask(t *testing.T) {
	m := pinnedManifest()
	m.seen, m.PollIntervalMs, m.TTLMs = false, nil, nil
	pin := NewPin(m, time.Now())
	if _, ok := pin.Fields["poll_interval_ms"]; ok {
		t.Fatal("a pin without a task pins the pollInterval")
	}
	if d := pin.Check(pinnedManifest()); d != nil {
		t.Errorf("drift %v: what the pin does not hold is not checked", d)
	}
	pin.Allow = map[string]Allowance{"tools.*": {Any: true}}
	later := pinnedManifest()
	later.Tools = append(later.Tools, ToolManifest{Name: "new", TaskSupport: "optional"})
	later.Tools[0].TaskSupport = "optional"
	if d := pin.Check(later); d != nil {
		t.Errorf("drift %v: tools.* allows any tool change", d)
	}
}

func TestParsePinErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"unknown key", "tasksim_pin: 1\nfields: {era: x}\nextra: 1\n", []string{"field extra not found"}},
		{"version", "fields: {era: x}\n", []string{"tasksim_pin: missing"}},
		{"newer version", "tasksim_pin: 2\nfields: {era: x}\n", []string{"version 2, this build reads version 1"}},
		{"nothing pinned", "tasksim_pin: 1\n", []string{"fields: none pinned"}},
		{"bad fields", "tasksim_pin: 1\nfields:\n  era: x\n  colour: blue\n  tools.x.owner: me\n  server.name: [a]\n", []string{
			"pin.yaml:4: fields.colour: not a pinned field", "pin.yaml:5: fields.tools.x.owner: not a pinned field",
			"pin.yaml:6: fields.server.name: want a scalar value, got a list"}},
		{"bad allow", "tasksim_pin: 1\nfields: {era: x}\nallow:\n  era: sometimes\n  ttl_ms: {min: 5}\n  poll_interval_ms: {min: 9, max: 1}\n  server.version: {min: 1, max: 2, step: 1}\n  '[': any\n", []string{
			`pin.yaml:4: allow.era: want any or {min: N, max: N}, got "sometimes"`,
			"pin.yaml:5: allow.ttl_ms: a range needs both min and max",
			"pin.yaml:6: allow.poll_interval_ms: min 9 > max 1",
			"pin.yaml:7: allow.server.version: step: unknown key in a range",
			"pin.yaml:8: allow.[: bad pattern"}},
		{"bad time", "tasksim_pin: 1\npinned_at: yesterday\nfields: {era: x}\n", []string{`pinned_at: "yesterday" is not an RFC 3339 time`}},
		{"allow typo", "tasksim_pin: 1\nfields: {era: x}\nallow:\n  poll_interval: any\n", []string{"pin.yaml:4: allow.poll_interval: not a pinned field"}},
		{"not yaml", "tasksim_pin: [\n", []string{"pin.yaml: not a pin file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parsePin("pin.yaml", []byte(tc.text))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
