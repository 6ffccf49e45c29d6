package main

import (
	"bufio"
	"cmp"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The container build (Dockerfile at the repository's root). No Docker engine runs where the
// tests run, so the image is not built here: these tests read the Dockerfile, hold its final
// stage to a static, non-root image, and run its own go build line to check that what it
// builds is a static binary that runs.

// repoRoot is the repository's root, from this package's directory.
const repoRoot = "../.."

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	line int    // where it starts
	cmd  string // upper case: FROM, RUN, COPY, ...
	rest string
}

// dockerStage is one FROM and what follows it.
type dockerStage struct {
	from, name string
	instrs     []instruction
}

// readDockerfile parses the Dockerfile: the ARGs before the first FROM (their defaults),
// and the stages.
func readDockerfile(t *testing.T, path string) (args map[string]string, stages []dockerStage) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	args = map[string]string{}
	sc := bufio.NewScanner(f)
	var cur *instruction
	var all []instruction
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if cur == nil && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if cur == nil {
			cmd, rest, _ := strings.Cut(line, " ")
			cur = &instruction{line: n, cmd: strings.ToUpper(cmd)}
			line = rest
		}
		if body, more := strings.CutSuffix(line, `\`); more {
			cur.rest += strings.TrimSpace(body) + " "
			continue
		}
		cur.rest = strings.TrimSpace(cur.rest + line)
		all = append(all, *cur)
		cur = nil
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, in := range all {
		switch {
		case in.cmd == "FROM":
			from, name, _ := strings.Cut(in.rest, " ")
			_, name, _ = strings.Cut(strings.TrimSpace(name), " ") // "AS name"
			stages = append(stages, dockerStage{from: from, name: strings.TrimSpace(name)})
		case len(stages) == 0 && in.cmd == "ARG":
			k, v, _ := strings.Cut(in.rest, "=")
			args[k] = v
		case len(stages) == 0:
			t.Fatalf("%s:%d: %s before the first FROM", path, in.line, in.cmd)
		default:
			stages[len(stages)-1].instrs = append(stages[len(stages)-1].instrs, in)
		}
	}
	if len(stages) < 2 {
		t.Fatalf("%s: %d stages: want a build stage and a final one", path, len(stages))
	}
	return args, stages
}

// shellWords splits a plain command line into words, with '...' and "..." quoting; anything
// a shell would do more with fails, since the test runs the words without a shell.
func shellWords(s string) ([]string, error) {
	if strings.ContainsAny(s, "$`;&|<>\\(){}*?") {
		return nil, fmt.Errorf("%q: not a plain command (variables, operators or globs)", s)
	}
	var words []string
	var w strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			w.WriteByte(c)
		case c == '"' || c == '\'':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("%q: unclosed quote", s)
	}
	if in {
		words = append(words, w.String())
	}
	return words, nil
}

// goBuild is the build stage's go build line: its environment assignments and go's
// arguments after "build", and the -o path.
func goBuild(t *testing.T, stages []dockerStage) (env, args []string, out string) {
	t.Helper()
	for _, st := range stages[:len(stages)-1] {
		for _, in := range st.instrs {
			if in.cmd != "RUN" || !strings.Contains(in.rest, "go build") {
				continue
			}
			words, err := shellWords(in.rest)
			if err != nil {
				t.Fatalf("Dockerfile:%d: %v", in.line, err)
			}
			i := 0
			for ; i < len(words) && strings.Contains(words[i], "="); i++ {
				env = append(env, words[i])
			}
			if i+1 >= len(words) || words[i] != "go" || words[i+1] != "build" {
				t.Fatalf("Dockerfile:%d: want [VAR=value ...] go build ..., got %q", in.line, words)
			}
			args = words[i+2:]
			for k, a := range args {
				if a == "-o" && k+1 < len(args) {
					out = args[k+1]
				} else if v, ok := strings.CutPrefix(a, "-o="); ok {
					out = v
				}
			}
			if out == "" {
				t.Fatalf("Dockerfile:%d: go build without -o", in.line)
			}
			return env, args, out
		}
	}
	t.Fatal("Dockerfile: no RUN ... go build in a build stage")
	return nil, nil, ""
}

func TestDockerfileImageIsStaticAndNonRoot(t *testing.T) {
	path := filepath.Join(repoRoot, "Dockerfile")
	args, stages := readDockerfile(t, path)
	env, buildArgs, out := goBuild(t, stages)
	if !containsStr(env, "CGO_ENABLED=0") {
		t.Errorf("go build environment %q: want CGO_ENABLED=0, a static binary with no libc", env)
	}
	if !containsStr(buildArgs, "-trimpath") {
		t.Errorf("go build %q: want -trimpath, no build machine's paths in the binary", buildArgs)
	}
	final := stages[len(stages)-1]
	distroless := regexp.MustCompile(`^gcr\.io/distroless/static(-debian\d+)?:(nonroot|latest-nonroot|debug-nonroot)$`)
	if final.from != "scratch" && !distroless.MatchString(final.from) {
		t.Errorf("final stage FROM %s: want distroless static nonroot, or scratch", final.from)
	}
	var user, entry, copied string
	for _, in := range final.instrs {
		switch in.cmd {
		case "USER":
			user = in.rest
		case "ENTRYPOINT":
			var e []string
			if err := json.Unmarshal([]byte(in.rest), &e); err != nil || len(e) == 0 {
				t.Errorf("Dockerfile:%d: ENTRYPOINT %s: want the JSON form, no shell in the image", in.line, in.rest)
			} else {
				entry = e[0]
			}
		case "COPY":
			w := strings.Fields(in.rest)
			if len(w) == 3 && strings.HasPrefix(w[0], "--from=") && w[1] == out {
				copied = w[2]
			}
		case "RUN":
			t.Errorf("Dockerfile:%d: RUN in the final stage: it has no shell", in.line)
		}
	}
	uid, _, _ := strings.Cut(user, ":")
	n, err := strconv.Atoi(uid)
	if err != nil || n == 0 {
		t.Errorf("final stage USER %q: want a numeric user other than 0 (Kubernetes' runAsNonRoot checks a number)", user)
	}
	if d := loadDeployment(t, deployDir); d.shards.Spec.Template.Spec.SecurityContext.RunAsUser == nil ||
		*d.shards.Spec.Template.Spec.SecurityContext.RunAsUser != int64(n) {
		t.Errorf("final stage USER %s: the pods run as another user; keep them the same", user)
	}
	if copied == "" || entry != copied {
		t.Errorf("ENTRYPOINT %q, binary copied to %q: want the copied binary", entry, copied)
	}
	// The builder's Go is at least go.mod's.
	goVersion := args["GO_VERSION"]
	if !strings.Contains(stages[0].from, "${GO_VERSION}") || goVersion == "" {
		t.Fatalf("build stage FROM %s: want golang:${GO_VERSION}-..., with ARG GO_VERSION=X.Y.Z", stages[0].from)
	}
	mod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod: no go directive")
	}
	if olderVersion(goVersion, string(m[1])) {
		t.Errorf("ARG GO_VERSION=%s: older than go.mod's go %s", goVersion, m[1])
	}
}

func containsStr(xs []string, x string) bool { return slices.Contains(xs, x) }

// olderVersion reports whether Go version a (X.Y.Z) is older than b.
func olderVersion(a, b string) bool {
	num := func(v string) []int {
		var out []int
		for _, p := range strings.Split(v, ".") {
			n, _ := strconv.Atoi(p)
			out = append(out, n)
		}
		return out
	}
	return slices.CompareFunc(num(a), num(b), cmp.Compare[int]) < 0
}

// TestDockerBuildLineMakesStaticBinary runs the Dockerfile's go build line (its environment,
// its flags, its package; the output in a temporary directory) and checks the binary: no
// program interpreter, no shared library, and it runs `version`.
func TestDockerBuildLineMakesStaticBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP in -short: builds tasksim the way the Dockerfile does")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("SKIP: no go command here to run the Dockerfile's build line (%v)", err)
	}
	_, stages := readDockerfile(t, filepath.Join(repoRoot, "Dockerfile"))
	env, args, out := goBuild(t, stages)
	bin := filepath.Join(t.TempDir(), "tasksim")
	for i, a := range args {
		if a == out {
			args[i] = bin
		} else if a == "-o="+out {
			args[i] = "-o=" + bin
		}
	}
	cmd := exec.Command(goCmd, append([]string{"build"}, args...)...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, b)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("%s: not an ELF binary: %v", bin, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the binary has a program interpreter (PT_INTERP): it is dynamically linked")
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("the binary needs shared libraries %v (%v): want none", libs, err)
	}
	got, err := exec.Command(bin, "version").Output()
	if first, _, _ := strings.Cut(string(got), "\n"); err != nil || first != "tasksim "+version {
		t.Errorf("%s version: %q, %v; want a first line \"tasksim %s\"", bin, got, err, version)
	}
}

// dockerIgnored reports whether a .dockerignore pattern excludes path (slash-separated,
// relative to the build context): as Docker matches them, * and ? within one path element,
// ** across elements, and a pattern that matches a directory excludes what is under it.
func dockerIgnored(pattern, path string) bool {
	pattern = strings.TrimPrefix(filepath.ToSlash(filepath.Clean(pattern)), "/")
	var re strings.Builder
	re.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; {
		case strings.HasPrefix(pattern[i:], "**/"):
			re.WriteString("(.*/)?")
			i += 2
		case strings.HasPrefix(pattern[i:], "**"):
			re.WriteString(".*")
			i++
		case c == '*':
			re.WriteString("[^/]*")
		case c == '?':
			re.WriteString("[^/]")
		default:
			re.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	re.WriteString("(/.*)?$")
	return regexp.MustCompile(re.String()).MatchString(path)
}

// TestDockerIgnoreKeepsTheBuildInputs: .dockerignore leaves in the build context every file
// the Dockerfile's go build reads (go.mod, go.sum, and each Go and embedded file of the
// module's packages tasksim is built from), and keeps out what it says it keeps out.
func TestDockerIgnoreKeepsTheBuildInputs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			if strings.HasPrefix(l, "!") {
				t.Fatalf(".dockerignore: %q: exceptions are not read by this test", l)
			}
			patterns = append(patterns, l)
		}
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("SKIP: no go command here to list tasksim's files (%v)", err)
	}
	cmd := exec.Command(goCmd, "list", "-deps", "-f",
		`{{if .Module}}{{if .Module.Main}}{{.Dir}}|{{join .GoFiles ","}},{{join .EmbedFiles ","}}{{end}}{{end}}`, "./cmd/tasksim")
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	needed := []string{"go.mod", "go.sum"}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		dir, files, _ := strings.Cut(line, "|")
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range strings.Split(files, ",") {
			if f != "" {
				needed = append(needed, filepath.ToSlash(filepath.Join(rel, f)))
			}
		}
	}
	if len(needed) < 10 {
		t.Fatalf("go list found %d files: %q", len(needed), out)
	}
	for _, f := range needed {
		for _, p := range patterns {
			if dockerIgnored(p, f) {
				t.Errorf(".dockerignore: %q leaves %s out of the build context; the build needs it", p, f)
			}
		}
	}
	for path, want := range map[string]bool{
		".git/HEAD": true, "runs/x/summary.json": true, "internal/peers/testdata/node_modules/a.js": true,
		"cmd/tasksim/tasksim.test": true, "cmd/tasksim/main.go": false, "go.sum": false,
	} {
		if got := slices.ContainsFunc(patterns, func(p string) bool { return dockerIgnored(p, path) }); got != want {
			t.Errorf(".dockerignore leaves out %s: %v, want %v", path, got, want)
		}
	}
}
