package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/tasksim/tasksim/results"
)

// TestKubeJobFlowOnLoopback plays the Jobs of deploy/kubernetes here, with the tasksim
// binary and a `tasksim serve` on 127.0.0.1 as the target: every pod of the shards Job with
// its own environment (JOB_COMPLETION_INDEX, START_AT, RUN, TARGET_URL) and its arguments
// as the kubelet expands them, the volume a temporary directory; then the merge Job's wait
// script and its merge. The scenario is the ConfigMap's, made small by flags appended to the
// shards' arguments (clients, duration, task length), and its --metrics-listen moved to
// loopback. Every shard must serve its live metrics; the merge must find every shard, and
// its exit code must be its verdict's.
func TestKubeJobFlowOnLoopback(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP in -short: runs the shards and the merge of deploy/kubernetes on loopback")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skipf("SKIP: no sh here to run the merge Job's wait script (%v)", err)
	}
	d := loadDeployment(t, deployDir)
	url := startServe(t, "--poll-interval", "100ms")
	root := t.TempDir()
	startAt := time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano) // no wait: the pods are here
	small := []string{"--clients", "8", "--duration", "2s", "--set", "grace=5s", "--set", "workload.think_time=0s",
		"--args", `{"duration_ms":300}`}

	spec := &d.shards.Spec
	pod := &spec.Template.Spec
	c := container(t, pod, "tasksim")
	vol := claimMount(t, pod, c, d.pvc.Name)
	n := int(*spec.Completions)
	codes := make([]int, n)
	outputs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		env := podEnv(t, &spec.Template, c, i)
		env["TARGET_URL"], env["START_AT"] = url, startAt
		args := rebase(expandArgs(t, c, env), vol.MountPath, root)
		args[1] = scenarioFile(t, d, pod, c, args[1])
		for j, a := range args { // a pod's own network is every interface; here, loopback
			if strings.HasPrefix(a, "--metrics-listen=") {
				args[j] = "--metrics-listen=127.0.0.1:0"
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], outputs[i] = runBin(t, env, append(args, small...)...)
		}()
	}
	wg.Wait()
	for i, code := range codes {
		if code != 0 && code != exitGate {
			t.Fatalf("shard %d: exit %d (want 0, or 99 for its own gates)\n%s", i, code, outputs[i])
		}
		if !strings.Contains(outputs[i], "metrics: http://127.0.0.1:") {
			t.Errorf("shard %d did not serve its live metrics (--metrics-listen):\n%s", i, outputs[i])
		}
	}

	mpod := &d.merge.Spec.Template.Spec
	w := container(t, mpod, "wait")
	wenv := podEnv(t, &d.merge.Spec.Template, w, -1)
	var script []string
	for _, a := range w.Command {
		x, _ := expand(a, wenv)
		script = append(script, x)
	}
	cmd := exec.Command(sh, script[1:]...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "RESULTS=" + root, "RUN=" + wenv["RUN"], "SHARDS=" + wenv["SHARDS"],
		"WAIT_SECONDS=0", "POLL_SECONDS=0"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the wait script, every shard done: %v\n%s", err, out)
	}

	m := container(t, mpod, "merge")
	margs := rebase(expandArgs(t, m, podEnv(t, &d.merge.Spec.Template, m, -1)), claimMount(t, mpod, m, d.pvc.Name).MountPath, root)
	code, out := runBin(t, nil, margs...)
	_, mergedDir, _ := mergeDirs(t, margs[1:])
	sum, err := results.ReadSummary(mergedDir)
	if err != nil {
		t.Fatalf("merge: exit %d, no summary: %v\n%s", code, err, out)
	}
	if sum.Merge == nil || sum.Merge.Count != n || len(sum.Merge.Merged) != n || sum.Merge.Partial {
		t.Errorf("merge block %+v: want all %d shards", sum.Merge, n)
	}
	if want := sum.ExitCode(); code != want {
		t.Errorf("merge exit %d, its verdict %q says %d\n%s", code, sum.Verdict, want, out)
	}
	t.Logf("shards' exit codes %v; merge: exit %d, verdict %s", codes, code, sum.Verdict)
	if sum.Tasks.Created == 0 {
		t.Errorf("the merged run created no task\n%s", out)
	}
}

// claimMount is where container c of pod mounts the claim.
func claimMount(t *testing.T, pod *corev1.PodSpec, c *corev1.Container, claim string) corev1.VolumeMount {
	t.Helper()
	for _, m := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name == m.Name && v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim {
				return m
			}
		}
	}
	t.Fatalf("container %s does not mount claim %s", c.Name, claim)
	return corev1.VolumeMount{}
}

// runBin runs the tasksim binary with env added to this process's environment, and returns
// its exit code and its output.
func runBin(t *testing.T, env map[string]string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bin(t), args...)
	cmd.Dir = t.TempDir()
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String()
	case err != nil:
		t.Fatalf("running tasksim %s: %v", strings.Join(args, " "), err)
	}
	return 0, out.String()
}
