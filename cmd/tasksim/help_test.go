package main

import (
	"bytes"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tasksim/tasksim/runner"
)

// version is the tasksim version the tests expect in outputs.
const version = runner.Version

// allCommands are the subcommands an SRE can ask for help about. TestHelp fails when
// commands() gains one that is not listed here, so that a new command gets its help checked.
var allCommands = []string{"run", "serve", "probe", "conform", "sweep", "report", "compare", "merge", "scenarios", "validate", "version"}

// runCLI runs one command line in-process and returns stdout, stderr and the exit code.
func runCLI(args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return out.String(), errb.String(), code
}

// TestHelp: requested help (-h, --help, `help COMMAND`) works on every command and on
// tasksim itself: exit code 0, the help on stdout, nothing on stderr. No command at all, or
// a flag a command does not know, is a usage error: exit code 2, stderr only.
func TestHelp(t *testing.T) {
	var names []string
	for _, c := range commands(process{}) {
		names = append(names, c.name)
	}
	if !slices.Equal(slices.Sorted(slices.Values(names)), slices.Sorted(slices.Values(allCommands))) {
		t.Fatalf("commands() = %v; allCommands = %v: list every command in both", names, allCommands)
	}
	texts, err := fs.Glob(helpFiles, "help/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range texts { // a help text no command shows would drift unseen
		if name := strings.TrimSuffix(path.Base(f), ".txt"); name != "tasksim" && !slices.Contains(allCommands, name) {
			t.Errorf("%s is the help of no command", f)
		}
	}

	type tc struct {
		args []string
		want string // stdout starts with it
	}
	var cases []tc
	for _, top := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		cases = append(cases, tc{top, "tasksim: load and chaos simulator"})
	}
	for _, name := range allCommands {
		want := "Usage: tasksim " + name
		cases = append(cases, tc{[]string{name, "--help"}, want}, tc{[]string{name, "-h"}, want},
			tc{[]string{"help", name}, want})
	}
	cases = append(cases, tc{[]string{"run", "smoke", "--clients", "5", "--help"}, "Usage: tasksim run"})
	for _, c := range cases {
		stdout, stderr, code := runCLI(c.args...)
		if code != exitOK || stderr != "" || !strings.HasPrefix(stdout, c.want) {
			t.Errorf("tasksim %s: exit %d, stdout %.60q, stderr %q; want exit 0 and %q on stdout only",
				strings.Join(c.args, " "), code, stdout, stderr, c.want)
		}
	}

	top, _, _ := runCLI("help")
	for _, name := range allCommands {
		if !regexp.MustCompile(`(?m)^  ` + name + ` +\S`).MatchString(top) {
			t.Errorf("tasksim help does not list %s:\n%s", name, top)
		}
	}

	stdout, stderr, code := runCLI()
	if code != exitUsage || stdout != "" || !strings.Contains(stderr, "Usage: tasksim COMMAND") {
		t.Errorf("tasksim with no command: exit %d, stdout %q, stderr %q; want 2 and the usage on stderr", code, stdout, stderr)
	}
	for _, name := range allCommands {
		stdout, stderr, code := runCLI(name, "--no-such-flag")
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, "'tasksim "+name+" --help'") {
			t.Errorf("tasksim %s --no-such-flag: exit %d, stdout %q, stderr %q; want 2 and a pointer to --help on stderr",
				name, code, stdout, stderr)
		}
	}
	if _, stderr, code := runCLI("help", "frobnicate"); code != exitUsage || !strings.Contains(stderr, `unknown command "frobnicate"`) {
		t.Errorf("tasksim help frobnicate: exit %d, stderr %q; want 2 naming the command", code, stderr)
	}
}

// TestHelpExitCodes: each command's help states the exit codes it can give.
func TestHelpExitCodes(t *testing.T) {
	codes := map[string][]string{
		"run":       {"0", "1", "2", "99", "130"},
		"serve":     {"0", "1", "2"},
		"probe":     {"0", "1", "2"},
		"sweep":     {"0", "1", "2", "99", "130"},
		"report":    {"0", "1", "2"},
		"scenarios": {"0", "2"},
		"validate":  {"0", "2"},
		"version":   {"0", "2"},
	}
	for _, name := range allCommands {
		stdout, _, _ := runCLI(name, "--help")
		_, text, ok := strings.Cut(stdout, "Exit codes:")
		if !ok {
			t.Errorf("%s --help has no \"Exit codes:\"", name)
			continue
		}
		text, _, _ = strings.Cut(text, "Flags")
		for _, c := range codes[name] {
			if !regexp.MustCompile(`(^|[\s,])` + c + `\s`).MatchString(text) {
				t.Errorf("%s --help does not give exit code %s:%s", name, c, text)
			}
		}
	}
}

// TestRunHelpListsEveryOutputFile: every file a run writes is named in `run --help`, and so
// are the exit codes. The run has a fault on, so that events.csv is written too: a restart
// scheduled after its end, which never fires.
func TestRunHelpListsEveryOutputFile(t *testing.T) {
	help, _, _ := runCLI("run", "--help")
	dir := t.TempDir()
	_, stderr, code := tasksim(t, "run", "smoke", "--duration", "1s", "--set", "grace=2s", "--out", dir, "--no-progress",
		"--set", "faults.server.restart.at=[1h]")
	if code != exitOK && code != exitGate { // files are written either way
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") {
			files = append(files, e.Name())
		}
	}
	if !slices.Contains(files, "events.csv") || len(files) < 6 {
		t.Fatalf("the run wrote %v; want the six files, events.csv included", files)
	}
	for _, f := range files {
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(f) + ` +\S`).MatchString(help) {
			t.Errorf("run wrote %s, which run --help does not list:\n%s", filepath.Join(dir, f), help)
		}
	}
	for _, c := range []string{"0", "1", "2", "99", "130"} {
		if !regexp.MustCompile(`(?m)^  ` + c + ` +\S`).MatchString(help) {
			t.Errorf("run --help does not explain exit code %s", c)
		}
	}
}

// TestReadmeCommandsMatchFlags: the synopsis block of docs/COMMANDS.md, the reference the
// README points to, names every command, and for each command exactly the flags its --help
// lists.
func TestReadmeCommandsMatchFlags(t *testing.T) {
	readme, err := os.ReadFile("../../docs/COMMANDS.md")
	if err != nil {
		t.Skip("docs/COMMANDS.md not found in the module")
	}
	_, block, _ := strings.Cut(string(readme), "\n## Synopsis\n\n```\n")
	block, _, ok := strings.Cut(block, "\n```\n")
	if !ok {
		t.Fatal("docs/COMMANDS.md has no ``` block under ## Synopsis")
	}
	documented := map[string]map[string]bool{} // command -> flags
	cmd := ""
	flag := regexp.MustCompile(`--[a-z][a-z-]*`)
	for _, line := range strings.Split(block, "\n") {
		if rest, ok := strings.CutPrefix(line, "tasksim "); ok {
			cmd = strings.Fields(rest)[0]
			documented[cmd] = map[string]bool{}
		}
		line, _, _ = strings.Cut(line, "#") // comments explain, they do not list flags
		for _, f := range flag.FindAllString(line, -1) {
			documented[cmd][f] = true
		}
	}
	listed := regexp.MustCompile(`(?m)^\s+(?:-[a-zA-Z], )?(--[a-z][a-z-]*)`)
	for _, name := range allCommands {
		flags, ok := documented[name]
		if !ok {
			t.Errorf("docs/COMMANDS.md synopsis has no line for tasksim %s", name)
			continue
		}
		help, _, _ := runCLI(name, "--help")
		real := map[string]bool{}
		for _, m := range listed.FindAllStringSubmatch(help, -1) {
			real[m[1]] = true
			if !flags[m[1]] {
				t.Errorf("tasksim %s has %s, which the docs/COMMANDS.md synopsis does not list", name, m[1])
			}
		}
		for f := range flags {
			if !real[f] {
				t.Errorf("the docs/COMMANDS.md synopsis lists %s for tasksim %s, which has no such flag", f, name)
			}
		}
	}
}

// TestValidateTwoPasses: validate's one-line summary says what its two passes report, and
// they do: every decoding problem at file:line:col, and once the file decodes, every
// invalid value at once.
func TestValidateTwoPasses(t *testing.T) {
	var summary string
	for _, c := range commands(process{}) {
		if c.name == "validate" {
			summary = c.summary
		}
	}
	for _, want := range []string{"unknown field", "wrong type", "file:line:col", "once it decodes", "every invalid value"} {
		if !strings.Contains(summary, want) {
			t.Errorf("validate's summary %q does not say %q", summary, want)
		}
	}

	dir := t.TempDir()
	undecodable := filepath.Join(dir, "undecodable.yaml")
	invalid := filepath.Join(dir, "invalid.yaml")
	for file, text := range map[string]string{
		undecodable: "name: x\nduration: 10s\nworkload: {clientz: 3}\nseed: many\n",
		invalid:     "name: x\nduration: 0s\nworkload: {clients: 5}\nclient: {poll: {jitter: 2}}\n",
	} {
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for file, wants := range map[string][]string{
		undecodable: {undecodable + ":3:12: workload.clientz: unknown field", undecodable + ":4:7: seed: "},
		invalid:     {invalid + ":2:1: duration: must be > 0", invalid + ":4:17: client.poll.jitter: must be in [0, 1)"},
	} {
		stdout, stderr, code := runCLI("validate", file)
		if code != exitUsage || stdout != "" {
			t.Errorf("validate %s: exit %d, stdout %q; want 2 and nothing on stdout", file, code, stdout)
		}
		for _, want := range wants {
			if !strings.Contains(stderr, want) {
				t.Errorf("validate %s: stderr lacks %q:\n%s", file, want, stderr)
			}
		}
	}
}
