package main

import (
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The pods of deploy/kubernetes: hardened, sized from the measured memory, on one pinned
// image; the Argo Rollouts metric runs the merge Job's very pod; kustomize renders them as
// written.

// pods are the pod templates of the manifests, by where they are.
func pods(t *testing.T, d *deployment) map[string]*corev1.PodTemplateSpec {
	t.Helper()
	out := map[string]*corev1.PodTemplateSpec{
		"Job " + d.shards.Name: &d.shards.Spec.Template,
		"Job " + d.merge.Name:  &d.merge.Spec.Template,
	}
	for _, m := range d.analysis.Spec.Metrics {
		if m.Provider.Job != nil {
			out["AnalysisTemplate metric "+m.Name] = &m.Provider.Job.Spec.Template
		}
	}
	return out
}

func TestDeployPodsAreHardened(t *testing.T) {
	d := loadDeployment(t, deployDir)
	for where, tmpl := range pods(t, d) {
		p := &tmpl.Spec
		if p.HostNetwork || p.HostPID || p.HostIPC {
			t.Errorf("%s: hostNetwork %v, hostPID %v, hostIPC %v: want none", where, p.HostNetwork, p.HostPID, p.HostIPC)
		}
		sc := p.SecurityContext
		if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
			t.Errorf("%s: pod securityContext %+v: want runAsNonRoot and a non-zero runAsUser", where, sc)
		} else if sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("%s: want seccompProfile RuntimeDefault", where)
		}
		if p.AutomountServiceAccountToken == nil || *p.AutomountServiceAccountToken {
			t.Errorf("%s: automountServiceAccountToken: want false, no pod here talks to the API server", where)
		}
		for _, c := range slices.Concat(p.InitContainers, p.Containers) {
			cs := c.SecurityContext
			if cs == nil || cs.AllowPrivilegeEscalation == nil || *cs.AllowPrivilegeEscalation ||
				cs.ReadOnlyRootFilesystem == nil || !*cs.ReadOnlyRootFilesystem ||
				cs.Capabilities == nil || !slices.Contains(cs.Capabilities.Drop, "ALL") ||
				(cs.Privileged != nil && *cs.Privileged) || (cs.RunAsUser != nil && *cs.RunAsUser == 0) {
				t.Errorf("%s, container %s: securityContext %+v: want no privilege escalation, a read-only root, every capability dropped, not root",
					where, c.Name, cs)
			}
			for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				req, okReq := c.Resources.Requests[r]
				lim, okLim := c.Resources.Limits[r]
				if !okReq || !okLim || req.Sign() <= 0 || req.Cmp(lim) > 0 {
					t.Errorf("%s, container %s: %s request %v, limit %v: want both, request <= limit", where, c.Name, r, &req, &lim)
				}
			}
			for _, port := range c.Ports {
				if port.HostPort != 0 {
					t.Errorf("%s, container %s: hostPort %d: want none", where, c.Name, port.HostPort)
				}
			}
		}
	}
}

// A shard's memory follows from the measured RSS per client: its request covers the
// expected peak, and its limit twice that, since tasksim's soft memory limit (GC) is half
// the cgroup's limit.
func TestDeployShardMemoryFromMeasuredRSS(t *testing.T) {
	d := loadDeployment(t, deployDir)
	runs := shardRuns(t, d)
	most := 0
	for _, r := range runs {
		most = max(most, r.shard.Size(r.sc.Workload.PoolSize()))
	}
	c := container(t, &d.shards.Spec.Template.Spec, "tasksim")
	want := shardRSS(most)
	req, lim := c.Resources.Requests[corev1.ResourceMemory], c.Resources.Limits[corev1.ResourceMemory]
	if req.Value() < want {
		t.Errorf("shard memory request %v: below the expected peak RSS of %d clients, %d MiB", &req, most, want>>20)
	}
	if lim.Value() < 2*want {
		t.Errorf("shard memory limit %v: want at least twice the expected peak RSS of %d clients (%d MiB): the collector's soft limit is half of it",
			&lim, most, want>>20)
	}
	if cpu := c.Resources.Requests[corev1.ResourceCPU]; cpu.Cmp(resource.MustParse("1")) < 0 {
		t.Errorf("shard CPU request %v: want at least one CPU: a starved load generator measures itself (schedule_lag)", &cpu)
	}
}

// tagRE reads an image reference's repository and tag (a digest may follow).
var tagRE = regexp.MustCompile(`^([^@]+?):([\w][\w.-]{0,127})(@sha256:[0-9a-f]{64})?$`)

// Every tasksim container runs one image, tagged with this version; kustomization.yaml
// names the same; every other image has a tag other than latest.
func TestDeployImagesArePinned(t *testing.T) {
	d := loadDeployment(t, deployDir)
	tasksimImages := map[string]bool{}
	for where, tmpl := range pods(t, d) {
		for _, c := range slices.Concat(tmpl.Spec.InitContainers, tmpl.Spec.Containers) {
			m := tagRE.FindStringSubmatch(c.Image)
			if m == nil || m[2] == "latest" {
				t.Errorf("%s, container %s: image %q: want a pinned tag, not latest or none", where, c.Name, c.Image)
				continue
			}
			if c.ImagePullPolicy == corev1.PullNever {
				t.Errorf("%s, container %s: imagePullPolicy Never", where, c.Name)
			}
			if c.Name == "tasksim" || c.Name == "merge" {
				tasksimImages[c.Image] = true
			}
		}
	}
	if len(tasksimImages) != 1 {
		t.Fatalf("tasksim containers run %d images %v: want one", len(tasksimImages), tasksimImages)
	}
	var image string
	for image = range tasksimImages {
	}
	m := tagRE.FindStringSubmatch(image)
	if m[2] != version {
		t.Errorf("image %s: tag %s, want this version, %s", image, m[2], version)
	}
	k := d.kustomization
	if len(k.Images) != 1 || k.Images[0].Name != m[1] || k.Images[0].NewTag != m[2] || (k.Images[0].NewName != "" && k.Images[0].NewName != m[1]) {
		t.Errorf("kustomization.yaml images %+v: want the one entry name %s, newTag %s, as the manifests say", k.Images, m[1], m[2])
	}
}

// The Argo Rollouts metric is the merge Job: its {{args.run}} filled with the merge Job's
// run label, the two specs are the same.
func TestDeployAnalysisTemplateRunsTheMergeJob(t *testing.T) {
	d := loadDeployment(t, deployDir)
	path := filepath.Join(deployDir, "argo-rollouts", "analysis-template.yaml")
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]bool{}
	for _, a := range d.analysis.Spec.Args {
		declared[a.Name] = true
	}
	for _, ref := range regexp.MustCompile(`\{\{\s*args\.([\w-]+)\s*\}\}`).FindAllStringSubmatch(string(text), -1) {
		if !declared[ref[1]] {
			t.Errorf("%s: {{args.%s}} is not a declared argument", path, ref[1])
		}
	}
	run := d.merge.Spec.Template.Labels["tasksim/run"]
	filled := strings.ReplaceAll(string(text), "{{args.run}}", run)
	var at analysisTemplate
	decodeStrict(t, path, []byte(filled), &at)
	var job *batchv1.JobSpec
	for _, m := range at.Spec.Metrics {
		if m.Provider.Job == nil {
			continue
		}
		if m.FailureLimit == nil || *m.FailureLimit != 0 {
			t.Errorf("metric %s: failureLimit %v: want 0, one failed merge aborts the rollout", m.Name, val(m.FailureLimit))
		}
		if !reflect.DeepEqual(m.Provider.Job.Metadata.Labels, d.merge.Labels) {
			t.Errorf("metric %s: job labels %v, want the merge Job's %v", m.Name, m.Provider.Job.Metadata.Labels, d.merge.Labels)
		}
		job = &m.Provider.Job.Spec
	}
	if job == nil {
		t.Fatalf("%s: no metric with a job provider", path)
	}
	if !reflect.DeepEqual(*job, d.merge.Spec) {
		t.Errorf("%s: the metric's Job spec is not merge-job.yaml's: keep them the same", path)
	}
}

// kubectl kustomize renders the directory as the files say (kustomization.yaml changes
// nothing but what it names). Skips without kubectl.
func TestKubeKustomizeRendersTheManifests(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skipf("SKIP: no kubectl here to run 'kubectl kustomize %s' (%v)", deployDir, err)
	}
	out, err := exec.Command(kubectl, "kustomize", deployDir).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v", deployDir, err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rendered.yaml"), out, 0o644); err != nil {
		t.Fatal(err)
	}
	rendered := decodeManifests(t, dir, []string{filepath.Join(dir, "rendered.yaml")})
	d := loadDeployment(t, deployDir)
	if !reflect.DeepEqual(rendered.shards, d.shards) || !reflect.DeepEqual(rendered.merge, d.merge) ||
		!reflect.DeepEqual(rendered.scenario, d.scenario) || !reflect.DeepEqual(rendered.pvc, d.pvc) {
		t.Errorf("kubectl kustomize renders other objects than the files hold:\n%s", out)
	}
}

// render.sh sets one run's label and start instant in both Jobs, everywhere they are read,
// and refuses values that are not a label or an instant. Skips without kubectl or sh.
func TestKubeRenderSetsTheRun(t *testing.T) {
	for _, tool := range []string{"kubectl", "sh"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("SKIP: no %s here to run render.sh (%v)", tool, err)
		}
	}
	script := filepath.Join(deployDir, "render.sh")
	const run, start = "fleet-7", "2026-12-01T12:34:56Z"
	out, err := exec.Command("sh", script, run, start).Output()
	if err != nil {
		t.Fatalf("render.sh %s %s: %v", run, start, err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rendered.yaml"), out, 0o644); err != nil {
		t.Fatal(err)
	}
	r := decodeManifests(t, dir, []string{filepath.Join(dir, "rendered.yaml")})
	if r.shards == nil || r.merge == nil {
		t.Fatalf("render.sh: want both Jobs, got:\n%s", out)
	}
	for _, j := range []*batchv1.Job{r.shards, r.merge} {
		if j.Labels["tasksim/run"] != run || j.Spec.Template.Labels["tasksim/run"] != run {
			t.Errorf("Job %s: tasksim/run %q, template %q: want %q", j.Name, j.Labels["tasksim/run"], j.Spec.Template.Labels["tasksim/run"], run)
		}
	}
	if got := r.shards.Spec.Template.Annotations["tasksim/start-at"]; got != start {
		t.Errorf("Job %s: tasksim/start-at %q, want %q", r.shards.Name, got, start)
	}
	for _, bad := range [][]string{{"Fleet", start}, {"fleet-", start}, {run, "tomorrow"}, {run, start + ";x"}, {run},
		{run, "2026-13-45T99:99:99Z"}, {run, "2026-12-01T23:00:00"}} { // no such month; no zone
		cmd := exec.Command("sh", append([]string{script}, bad...)...)
		if err := cmd.Run(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 2 {
			t.Errorf("render.sh %q: %v, want exit code 2", bad, err)
		}
	}
}

// The canary comparison's metric runs an A/B run whose command line `tasksim run` accepts,
// with the scenario the ConfigMap holds where its volume is mounted; its Job never retries
// (a comparison that failed must not pass on a second try) and one failure aborts the
// rollout.
func TestDeployCanaryCompareTemplate(t *testing.T) {
	d := loadDeployment(t, deployDir)
	text, err := os.ReadFile(filepath.Join(deployDir, "argo-rollouts", "canary-compare.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	filled := strings.NewReplacer("{{args.canary-url}}", "http://127.0.0.1:1/mcp", "{{args.stable-url}}", "http://127.0.0.1:2/mcp",
		"{{args.run}}", "r1").Replace(string(text))
	var at analysisTemplate
	decodeStrict(t, "canary-compare.yaml", []byte(filled), &at)
	if len(at.Spec.Metrics) != 1 || at.Spec.Metrics[0].Provider.Job == nil {
		t.Fatalf("metrics %+v: want one job metric", at.Spec.Metrics)
	}
	m := at.Spec.Metrics[0]
	if m.FailureLimit == nil || *m.FailureLimit != 0 {
		t.Errorf("failureLimit %v: want 0", val(m.FailureLimit))
	}
	job := m.Provider.Job.Spec
	if job.BackoffLimit == nil || *job.BackoffLimit != 0 {
		t.Errorf("backoffLimit %v: want 0", val(job.BackoffLimit))
	}
	c := job.Template.Spec.Containers[0]
	if c.Args[0] != "run" {
		t.Fatalf("args %q: want run", c.Args)
	}
	f, name, err := parseRunFlags(c.Args[1:], io.Discard)
	if err != nil {
		t.Fatalf("tasksim run %q: %v", c.Args[1:], err)
	}
	if f.Target != "http://127.0.0.1:1/mcp" || f.BaselineTarget != "http://127.0.0.1:2/mcp" {
		t.Errorf("target %q, baseline-target %q: want the canary and the stable URL", f.Target, f.BaselineTarget)
	}
	dir, file := filepath.Split(name)
	var mounted bool
	for _, vm := range c.VolumeMounts {
		mounted = mounted || (vm.Name == "scenario" && filepath.Clean(vm.MountPath) == filepath.Clean(dir))
	}
	if _, ok := d.scenario.Data[file]; !ok || !mounted {
		t.Errorf("scenario %s: the ConfigMap holds %v, mounted at %s: %v", name, slices.Sorted(maps.Keys(d.scenario.Data)), dir, mounted)
	}
}
