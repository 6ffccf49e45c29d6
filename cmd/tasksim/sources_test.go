package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDryRunSourceAddrs: --dry-run shows the source addresses given, those tasksim chose for
// a loopback target that may need more connections than one address has ports, and none
// otherwise; bad ones are a usage error saying which and why.
func TestDryRunSourceAddrs(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // "" = no sources line
	}{
		{[]string{"--source-addrs", "127.0.0.1-127.0.0.3"},
			"sources      connections dialed from 127.0.0.1, 127.0.0.2, 127.0.0.3, round robin (client.source_addresses)"},
		{[]string{"--set", "client.source_addresses=[127.0.1.0/29]"},
			"sources      connections dialed from 127.0.1.0, 127.0.1.1, 127.0.1.2, ... 127.0.1.7 (8 addresses), round robin (client.source_addresses)"},
		{[]string{"--target", "http://127.0.0.1:9/mcp", "--clients", "100000"},
			"(8 addresses), round robin (chosen by tasksim: more connections than one address has ports)"},
		{[]string{"--target", "http://127.0.0.1:9/mcp", "--clients", "100000", "--set", "client.max_conns=8000"}, ""},
		{[]string{"--clients", "100000"}, ""}, // the embedded server: 256 requests in flight
	} {
		stdout, stderr, code := runCLI(append([]string{"run", "smoke", "--dry-run"}, c.args...)...)
		if code != exitOK {
			t.Fatalf("run %q: exit %d\n%s", c.args, code, stderr)
		}
		line := ""
		for l := range strings.SplitSeq(stdout, "\n") {
			if strings.HasPrefix(l, "sources") {
				line = l
			}
		}
		if c.want == "" && line != "" || !strings.Contains(line, c.want) {
			t.Errorf("run %q --dry-run: sources line %q, want %q", c.args, line, c.want)
		}
	}
	_, stderr, code := runCLI("run", "smoke", "--dry-run", "--source-addrs", "10.0.0.1,127.0.0.x")
	for _, want := range []string{
		"--source-addrs: client.source_addresses[0]: 10.0.0.1 is not a loopback address, and the target 127.0.0.1 is on loopback",
		`--source-addrs: client.source_addresses[1]: "127.0.0.x": not an IP address`,
	} {
		if code != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("bad --source-addrs: exit %d, stderr %q; want exit %d saying %q", code, stderr, exitUsage, want)
		}
	}
}

// TestRunRecordsSourceAddrs: a run dialing from source addresses says so in summary.json
// (runtime), with its bound on requests in flight.
func TestRunRecordsSourceAddrs(t *testing.T) {
	if testing.Short() {
		t.Skip("a real-time run")
	}
	dir := t.TempDir()
	_, stderr, code := runCLI("run", "smoke", "--duration", "1s", "--set", "grace=5s", "--no-progress",
		"--source-addrs", "127.0.0.2-127.0.0.3", "--set", "client.max_conns=16", "--out", dir,
		"--set", "server.poll_interval=500ms") // a trust limit of 50 ms, not smoke's 10: a loaded machine keeps it
	if code != exitOK {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Runtime struct {
			MaxConns int      `json:"max_conns"`
			Sources  []string `json:"source_addresses"`
			Auto     bool     `json:"source_addresses_auto"`
		} `json:"runtime"`
		Requests map[string]struct {
			Errors int `json:"errors"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	rt := sum.Runtime
	if rt.MaxConns != 16 || !slices.Equal(rt.Sources, []string{"127.0.0.2", "127.0.0.3"}) || rt.Auto {
		t.Errorf("runtime = %+v; want max_conns 16, source_addresses [127.0.0.2 127.0.0.3], not auto", rt)
	}
	for m, r := range sum.Requests {
		if r.Errors != 0 {
			t.Errorf("%s: %d errors", m, r.Errors)
		}
	}
}
