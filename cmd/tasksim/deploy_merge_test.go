package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
)

// The merge Job: it reads exactly the shards' directories, on the shared claim, waits for
// all of them (its wait script is run here under sh), and is never retried.

// mergeDirs reads merge's command line: its positional directories and --out.
func mergeDirs(t *testing.T, args []string) (dirs []string, out string, allowMissing bool) {
	t.Helper()
	fs := pflag.NewFlagSet("merge", pflag.ContinueOnError)
	o := fs.String("out", "", "")
	am := fs.Bool("allow-missing", false, "")
	if err := fs.Parse(args); err != nil {
		t.Fatalf("merge %q: %v", args, err)
	}
	return fs.Args(), *o, *am
}

// rebase moves the paths under mount to under root.
func rebase(args []string, mount, root string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		for _, pre := range []string{"", "--out="} {
			if rest, ok := strings.CutPrefix(a, pre+mount+"/"); ok {
				out[i] = pre + filepath.Join(root, rest)
			}
		}
	}
	return out
}

func TestDeployMergeJobMergesEveryShard(t *testing.T) {
	d := loadDeployment(t, deployDir)
	runs := shardRuns(t, d)
	j, spec := d.merge, &d.merge.Spec
	pod := &spec.Template.Spec
	c := container(t, pod, "merge")
	args := expandArgs(t, c, podEnv(t, &spec.Template, c, -1))
	if len(args) == 0 || args[0] != "merge" {
		t.Fatalf("Job %s: args %q: want merge DIR... --out DIR", j.Name, args)
	}
	dirs, out, allowMissing := mergeDirs(t, args[1:])
	vol, results := mountFor(t, pod, c, out)
	if err := parseMergeCLI(rebase(args[1:], results.MountPath, t.TempDir())); err != nil {
		t.Fatalf("Job %s: merge %q: %v", j.Name, args[1:], err)
	}
	var want []string
	for _, r := range runs {
		want = append(want, r.out)
	}
	if !slices.Equal(slices.Sorted(slices.Values(dirs)), slices.Sorted(slices.Values(want))) {
		t.Errorf("merge reads %q, want exactly the shards' directories %q", dirs, want)
	}
	if allowMissing {
		t.Errorf("merge --allow-missing: a partial merge's verdict is a part's; a canary must not pass on it")
	}
	if vol.PersistentVolumeClaim == nil || vol.PersistentVolumeClaim.ClaimName != d.pvc.Name {
		t.Errorf("merge writes %s on volume %q, not on the shared claim %s", out, vol.Name, d.pvc.Name)
	}
	if spec.BackoffLimit == nil || *spec.BackoffLimit != 0 || pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("backoffLimit %v, restartPolicy %q: the verdict is the first merge's exit code: want 0 and Never", val(spec.BackoffLimit), pod.RestartPolicy)
	}
	w := container(t, pod, "wait")
	if !slices.ContainsFunc(pod.InitContainers, func(x corev1.Container) bool { return x.Name == w.Name }) {
		t.Fatalf("container wait is not an init container: merge would not wait for it")
	}
	env := podEnv(t, &spec.Template, w, -1)
	if env["SHARDS"] != strconv.Itoa(len(runs)) {
		t.Errorf("wait: SHARDS=%q, want the %d shards", env["SHARDS"], len(runs))
	}
	if _, wm := mountFor(t, pod, w, env["RESULTS"]+"/x"); wm.Name != results.Name || env["RESULTS"] != results.MountPath {
		t.Errorf("wait: RESULTS=%q on volume %q: want %s, where merge reads the shards (volume %q)", env["RESULTS"], wm.Name, results.MountPath, results.Name)
	}
	waitS, err := strconv.Atoi(env["WAIT_SECONDS"])
	if sd := d.shards.Spec.ActiveDeadlineSeconds; err != nil || sd == nil || int64(waitS) < *sd {
		t.Errorf("wait: WAIT_SECONDS=%q: want at least the shards Job's activeDeadlineSeconds (%v): the merge must not give up first", env["WAIT_SECONDS"], val(sd))
	}
	if a := spec.ActiveDeadlineSeconds; a == nil || *a <= int64(waitS) {
		t.Errorf("activeDeadlineSeconds %v: want more than WAIT_SECONDS (%d), room to merge after the wait", val(a), waitS)
	}
	t.Run("wait script", func(t *testing.T) { runWaitScript(t, w, env, results.MountPath, want, out) })
}

// runWaitScript runs the wait container's script here, under sh, on a directory that stands
// for the volume: it must pass once every shard's summary.json is there, give up naming a
// shard whose file is missing, and refuse a run merged already. WAIT_SECONDS=0: it looks
// once, and passes or gives up at once.
func runWaitScript(t *testing.T, w *corev1.Container, env map[string]string, mount string, shardDirs []string, out string) {
	t.Helper()
	if len(w.Command) < 1 {
		t.Fatalf("wait: no command")
	}
	sh, err := exec.LookPath(w.Command[0])
	if err != nil {
		t.Skipf("SKIP the wait script: no %s here to run it (%v)", w.Command[0], err)
	}
	var cmdline []string
	for _, a := range w.Command {
		x, _ := expand(a, env) // undefined $(...) in a script are the shell's
		cmdline = append(cmdline, x)
	}
	root := t.TempDir()
	run := func(waitSeconds string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang is a failure, not a wait
		defer cancel()
		cmd := exec.CommandContext(ctx, sh, cmdline[1:]...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "POLL_SECONDS=0", "WAIT_SECONDS=" + waitSeconds, "RESULTS=" + root}
		for k, v := range env {
			if k != "POLL_SECONDS" && k != "WAIT_SECONDS" && k != "RESULTS" {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
		}
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	local := rebase(shardDirs, mount, root)
	for _, dir := range local[:len(local)-1] {
		writeFile(t, filepath.Join(dir, "summary.json"), "{}")
	}
	if msg, err := run("0"); err == nil || !strings.Contains(msg, strconv.Itoa(len(local)-1)) {
		t.Errorf("wait with the last shard's summary.json missing: %v, %q: want a failure naming shard %d", err, msg, len(local)-1)
	}
	writeFile(t, filepath.Join(local[len(local)-1], "summary.json"), "{}")
	if msg, err := run("0"); err != nil {
		t.Errorf("wait with every shard's summary.json: %v, %q: want it to pass", err, msg)
	}
	claimed := rebase([]string{out}, mount, root)[0]
	if fi, err := os.Stat(claimed); err != nil || !fi.IsDir() {
		t.Errorf("a passing wait did not claim %s (mkdir): %v", out, err)
	}
	if msg, err := run("0"); err == nil || !strings.Contains(msg, "exists") {
		t.Errorf("wait with %s there already: %v, %q: want a refusal (a second merge of the run)", out, err, msg)
	}
}

// val is what p points to, for a message; "unset" for nil.
func val[T any](p *T) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
