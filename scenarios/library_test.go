package scenarios

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestBuiltins: every shipped scenario loads, validates, is named after its file and has a
// description; the list is sorted.
func TestBuiltins(t *testing.T) {
	list := Builtins()
	var names []string
	for _, info := range list {
		names = append(names, info.Name)
	}
	if want := []string{"backpressure", "baseline", "canary-gate", "cancel-storm", "duplicate-effects-demo", "flaky-network", "input-required", "no-tasks-peer", "open-ramp", "poll-storm", "reconnect-storm", "rollback-drill", "rollback-lost-tasks-demo", "server-restart", "slow-downstream", "smoke", "tenant-isolation", "tenant-leak-demo", "ttl-expiry"}; !slices.Equal(names, want) {
		t.Errorf("Builtins() names = %v, want %v", names, want)
	}
	for _, info := range list {
		t.Run(info.Name, func(t *testing.T) {
			s, err := Load(info.Name)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if err := s.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if s.Name != info.Name {
				t.Errorf("name: %q in library/%s.yaml", s.Name, info.Name)
			}
			if s.Source != "builtin:"+info.Name {
				t.Errorf("Source = %q", s.Source)
			}
			if info.Description == "" || info.Description != s.Description || strings.Contains(info.Description, "invalid") {
				t.Errorf("description %q", info.Description)
			}
		})
	}
}

// TestBuiltinContents pins the properties other packages and the end-to-end tests rely on.
func TestBuiltinContents(t *testing.T) {
	load := func(name string) *Scenario {
		s, err := Load(name)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	b := load("baseline")
	if b.Workload.Model != ModelClosed || b.Workload.Clients != 200 || b.Tool != "work_task" ||
		b.Args["duration_ms"] != 5000 || b.Server.PollInterval != Duration(time.Second) ||
		b.Duration != Duration(50*time.Second) || b.Grace != Duration(15*time.Second) ||
		b.Client.Poll.Policy != PollServer || b.Target != "" {
		t.Errorf("baseline = %+v", b)
	}
	// "about a minute": load phase plus the longest drain.
	if total := time.Duration(b.Duration + b.Grace); total > 70*time.Second {
		t.Errorf("baseline can take %v", total)
	}
	s := load("smoke")
	if s.Workload.Clients != 20 || s.Duration != Duration(5*time.Second) || s.Args["duration_ms"] != 500 ||
		s.Server.PollInterval != Duration(100*time.Millisecond) || s.Grace != Duration(5*time.Second) {
		t.Errorf("smoke = %+v", s)
	}
	o := load("open-ramp")
	w := o.Workload
	if w.Model != ModelOpen || w.MaxInFlight != 2000 || o.Args["duration_ms"] != 2000 ||
		w.RateAt(0) != 0 || w.RateAt(10*time.Second) != 50 || w.RateAt(20*time.Second) != 100 ||
		w.RateAt(39*time.Second) != 100 || w.StagesDuration() != 40*time.Second || o.Duration != Duration(40*time.Second) {
		t.Errorf("open-ramp = %+v", o)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Run("file path", func(t *testing.T) {
		p := write("mine.yaml", minimal)
		s, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		if s.Source != p || s.Name != "t" || s.Where("workload") != p+":3:1" {
			t.Errorf("Load(%q) = %+v (where %q)", p, s, s.Where("workload"))
		}
	})
	t.Run("file errors are located in the file", func(t *testing.T) {
		p := write("bad.yml", minimal+"bogus: 1\n")
		_, err := Load(p)
		if err == nil || !strings.HasPrefix(err.Error(), p+":4:1: bogus: unknown field") {
			t.Errorf("Load = %v", err)
		}
	})
	t.Run("file without extension that exists", func(t *testing.T) {
		p := write("plain", minimal)
		t.Chdir(dir)
		if s, err := Load("plain"); err != nil || s.Source != "plain" {
			t.Errorf("Load(plain) = %v, %v", s, err)
		}
		_ = p
	})
	t.Run("missing file", func(t *testing.T) {
		_, err := Load(filepath.Join(dir, "missing.yaml"))
		if err == nil || !strings.Contains(err.Error(), "no such file") {
			t.Errorf("Load = %v", err)
		}
	})
	t.Run("directory", func(t *testing.T) {
		_, err := Load(dir + string(os.PathSeparator))
		if err == nil || !strings.Contains(err.Error(), "is a directory") {
			t.Errorf("Load = %v", err)
		}
	})
	t.Run("unknown name lists the built-ins", func(t *testing.T) {
		_, err := Load("nope")
		want := `unknown scenario "nope": no such file, and the built-ins are backpressure, baseline, canary-gate, cancel-storm, duplicate-effects-demo, flaky-network, input-required, no-tasks-peer, open-ramp, poll-storm, reconnect-storm, rollback-drill, rollback-lost-tasks-demo, server-restart, slow-downstream, smoke, tenant-isolation, tenant-leak-demo, ttl-expiry`
		if err == nil || err.Error() != want {
			t.Errorf("Load = %v, want %s", err, want)
		}
	})
	t.Run("builtin lookups stay inside the library", func(t *testing.T) {
		for _, name := range []string{"../doc", "Baseline", "library/baseline", ""} {
			if _, err := Load(name); err == nil {
				t.Errorf("Load(%q) succeeded", name)
			}
		}
	})
}
