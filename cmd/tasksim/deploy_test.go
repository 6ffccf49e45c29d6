package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/tasksim/tasksim/results"
	"github.com/tasksim/tasksim/scenarios"
)

// This file holds deploy/kubernetes to what tasksim accepts: every manifest decodes strictly
// into the Kubernetes API types, the shards' and the merge's command lines parse with run's
// and merge's own flag parsing once Kubernetes has expanded their $(VAR) references, and the
// pieces agree with each other (N, the run's directories, the scenario's mount, the image).
// docs/FLEET.md "Running across machines" says how the manifests are used.

// deployDir is deploy/kubernetes, from this package's directory.
const deployDir = "../../deploy/kubernetes"

// The measured memory of one tasksim process driving clients against an external target
// (loadgen BenchmarkHundredThousandClients: 719 to 765 MiB peak RSS at 100,000 clients):
// a fixed part (the HDR recorder and the runtime), what an idle client keeps live, and the
// garbage collector's headroom over the live heap (GOGC 400, capped at 512 MiB by
// internal/gcpolicy), plus what the process holds beyond its heap. The one place these
// figures live in code: update them (and docs/FLEET.md's "Running across machines", which
// quotes them) when a measurement changes them.
const (
	measuredFixedBytes     = 45 << 20 // live heap with no client
	measuredLivePerClient  = 1485     // bytes of live heap per idle client (1.45 KiB)
	measuredHeadroomMax    = 512 << 20
	measuredNonHeapBytes   = 50 << 20
	measuredHeadroomFactor = 4 // GOGC 400
)

// maxClientsPerShard bounds a shard of the manifests: 10,000 clients take about 2 cores at
// their request rate beside a probe of each task (docs/CONTRIBUTING.md#performance); a shard
// that starves measures itself (trustworthy: false). Memory allows more (shardRSS), and
// file descriptors are bounded by client.max_conns, not by the clients.
const maxClientsPerShard = 15000

// shardRSS is the memory a shard of n clients is expected to reach, from the measured
// figures: live + min(4 x live, 512 MiB) + 50 MiB.
func shardRSS(n int) int64 {
	live := int64(measuredFixedBytes) + int64(n)*measuredLivePerClient
	return live + min(measuredHeadroomFactor*live, measuredHeadroomMax) + measuredNonHeapBytes
}

// deployment is deploy/kubernetes, decoded.
type deployment struct {
	scenario      *corev1.ConfigMap
	pvc           *corev1.PersistentVolumeClaim
	shards, merge *batchv1.Job
	kustomization *kustomization
	analysis      *analysisTemplate   // tasksim-merged-verdict
	compare       *analysisTemplate   // tasksim-canary-compare
	files         map[string][]string // file -> kinds it holds
}

// kustomization is the part of kustomize's Kustomization the manifests use; decoding is
// strict, so a field it does not name fails the test rather than being ignored.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
	Images     []struct {
		Name    string `json:"name"`
		NewName string `json:"newName,omitempty"`
		NewTag  string `json:"newTag,omitempty"`
		Digest  string `json:"digest,omitempty"`
	} `json:"images"`
}

// analysisTemplate is the part of Argo Rollouts' AnalysisTemplate (a CRD: not in the
// Kubernetes API types) the manifest uses; its job provider's Job decodes into batch/v1.
type analysisTemplate struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       struct {
		Args []struct {
			Name  string  `json:"name"`
			Value *string `json:"value,omitempty"`
		} `json:"args"`
		Metrics []struct {
			Name             string `json:"name"`
			FailureLimit     *int   `json:"failureLimit,omitempty"`
			SuccessCondition string `json:"successCondition,omitempty"`
			Provider         struct {
				Job *struct {
					Metadata metav1.ObjectMeta `json:"metadata"`
					Spec     batchv1.JobSpec   `json:"spec"`
				} `json:"job"`
			} `json:"provider"`
		} `json:"metrics"`
	} `json:"spec"`
}

// yamlDocs splits a multi-document YAML stream into its documents, empty ones dropped.
func yamlDocs(t *testing.T, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := k8syaml.NewYAMLReader(bufio.NewReader(f))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var probe any
		if err := yaml.Unmarshal(doc, &probe); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if probe != nil {
			docs = append(docs, doc)
		}
	}
}

// decodeStrict decodes one document into v, refusing unknown and duplicate fields.
func decodeStrict(t *testing.T, where string, doc []byte, v any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(doc, v); err != nil {
		t.Fatalf("%s: not a valid %T: %v", where, v, err)
	}
}

// loadDeployment decodes every manifest of dir (and dir/argo-rollouts) strictly, by kind.
// Each object the manifests need must be there exactly once.
func loadDeployment(t *testing.T, dir string) *deployment {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	more, _ := filepath.Glob(filepath.Join(dir, "argo-rollouts", "*.yaml"))
	d := decodeManifests(t, dir, append(paths, more...))
	for what, missing := range map[string]bool{
		"the scenario ConfigMap": d.scenario == nil, "the results PersistentVolumeClaim": d.pvc == nil,
		"Job tasksim-shards": d.shards == nil, "Job tasksim-merge": d.merge == nil,
		"kustomization.yaml": d.kustomization == nil, "the AnalysisTemplate": d.analysis == nil,
		"the AnalysisTemplate tasksim-canary-compare": d.compare == nil,
	} {
		if missing {
			t.Fatalf("%s: no %s", dir, what)
		}
	}
	return d
}

// decodeManifests decodes every document of the files strictly, into the type its
// apiVersion and kind name; an object twice, or of a kind the manifests do not use, fails.
func decodeManifests(t *testing.T, dir string, paths []string) *deployment {
	t.Helper()
	d := &deployment{files: map[string][]string{}}
	if len(paths) == 0 {
		t.Fatalf("no manifests in %s", dir)
	}
	once := func(where, what string, done bool) {
		if done {
			t.Fatalf("%s: a second %s: want one", where, what)
		}
	}
	for _, p := range paths {
		rel, _ := filepath.Rel(dir, p)
		for i, doc := range yamlDocs(t, p) {
			where := fmt.Sprintf("%s (document %d)", rel, i+1)
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal(doc, &tm); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			d.files[rel] = append(d.files[rel], tm.Kind)
			switch gvk := tm.APIVersion + " " + tm.Kind; gvk {
			case "v1 ConfigMap":
				once(where, gvk, d.scenario != nil)
				d.scenario = new(corev1.ConfigMap)
				decodeStrict(t, where, doc, d.scenario)
			case "v1 PersistentVolumeClaim":
				once(where, gvk, d.pvc != nil)
				d.pvc = new(corev1.PersistentVolumeClaim)
				decodeStrict(t, where, doc, d.pvc)
			case "batch/v1 Job":
				j := new(batchv1.Job)
				decodeStrict(t, where, doc, j)
				switch j.Name {
				case "tasksim-shards":
					once(where, "Job tasksim-shards", d.shards != nil)
					d.shards = j
				case "tasksim-merge":
					once(where, "Job tasksim-merge", d.merge != nil)
					d.merge = j
				default:
					t.Fatalf("%s: Job %q: want tasksim-shards or tasksim-merge", where, j.Name)
				}
			case "kustomize.config.k8s.io/v1beta1 Kustomization":
				once(where, gvk, d.kustomization != nil)
				d.kustomization = new(kustomization)
				decodeStrict(t, where, doc, d.kustomization)
			case "argoproj.io/v1alpha1 AnalysisTemplate":
				at := new(analysisTemplate)
				decodeStrict(t, where, doc, at)
				switch at.Metadata.Name {
				case "tasksim-merged-verdict":
					once(where, "AnalysisTemplate tasksim-merged-verdict", d.analysis != nil)
					d.analysis = at
				case "tasksim-canary-compare":
					once(where, "AnalysisTemplate tasksim-canary-compare", d.compare != nil)
					d.compare = at
				default:
					t.Fatalf("%s: AnalysisTemplate %q: want tasksim-merged-verdict or tasksim-canary-compare", where, at.Metadata.Name)
				}
			default:
				t.Fatalf("%s: unexpected apiVersion and kind %q", where, gvk)
			}
		}
	}
	return d
}

func TestDeployManifestsDecodeStrictly(t *testing.T) {
	d := loadDeployment(t, deployDir)
	// kustomization.yaml lists every manifest of the directory but itself; argo-rollouts/
	// needs CRDs a cluster may lack, so it stays out.
	var want []string
	for f := range d.files {
		if f != "kustomization.yaml" && !strings.HasPrefix(f, "argo-rollouts"+string(filepath.Separator)) {
			want = append(want, f)
		}
	}
	slices.Sort(want)
	got := slices.Sorted(slices.Values(d.kustomization.Resources))
	if !slices.Equal(got, want) {
		t.Errorf("kustomization.yaml resources = %v, want the directory's manifests %v", got, want)
	}
	if d.pvc.Name == "" || !slices.Contains(d.pvc.Spec.AccessModes, corev1.ReadWriteMany) {
		t.Errorf("PersistentVolumeClaim %q: access modes %v: shards on several nodes write to it at once, want ReadWriteMany",
			d.pvc.Name, d.pvc.Spec.AccessModes)
	}
	if q, ok := d.pvc.Spec.Resources.Requests[corev1.ResourceStorage]; !ok || q.Sign() <= 0 {
		t.Errorf("PersistentVolumeClaim %q: no storage request", d.pvc.Name)
	}
}

// TestKubeStrictDecodingRefusesUnknownFields proves the decoding above can fail: a field
// the API types do not have, or one given twice, is an error, not ignored.
func TestKubeStrictDecodingRefusesUnknownFields(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown field": "apiVersion: batch/v1\nkind: Job\nspec:\n  completionMode: Indexed\n  paralelism: 4\n",
		"duplicate":     "apiVersion: batch/v1\nkind: Job\nspec:\n  completions: 4\n  completions: 5\n",
		"wrong type":    "apiVersion: batch/v1\nkind: Job\nspec:\n  completions: four\n",
	} {
		if err := yaml.UnmarshalStrict([]byte(doc), new(batchv1.Job)); err == nil {
			t.Errorf("%s: decoded without an error", name)
		}
	}
}

// scenarioFile is where this test puts the scenario that container c of pod reads at arg:
// arg must be a key of the scenario ConfigMap, on a volume of that ConfigMap; its data is
// written to a temporary file.
func scenarioFile(t *testing.T, d *deployment, pod *corev1.PodSpec, c *corev1.Container, arg string) (path string) {
	t.Helper()
	vol, mount := mountFor(t, pod, c, arg)
	if vol.ConfigMap == nil || vol.ConfigMap.Name != d.scenario.Name {
		t.Fatalf("%s: the scenario %s is on volume %q, which is not ConfigMap %q", c.Name, arg, vol.Name, d.scenario.Name)
	}
	key := strings.TrimPrefix(strings.TrimPrefix(arg, mount.MountPath), "/")
	data, ok := d.scenario.Data[key]
	if !ok {
		t.Fatalf("%s: the scenario %s is key %q of ConfigMap %q, which has keys %v",
			c.Name, arg, key, d.scenario.Name, slices.Sorted(maps.Keys(d.scenario.Data)))
	}
	path = filepath.Join(t.TempDir(), key)
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// mountFor is the volume and mount of c under which path lies (the longest mount path).
func mountFor(t *testing.T, pod *corev1.PodSpec, c *corev1.Container, path string) (corev1.Volume, corev1.VolumeMount) {
	t.Helper()
	var best *corev1.VolumeMount
	for i, m := range c.VolumeMounts {
		if strings.HasPrefix(path, strings.TrimSuffix(m.MountPath, "/")+"/") && (best == nil || len(m.MountPath) > len(best.MountPath)) {
			best = &c.VolumeMounts[i]
		}
	}
	if best == nil {
		t.Fatalf("container %s: %s is on no volume it mounts", c.Name, path)
	}
	for _, v := range pod.Volumes {
		if v.Name == best.Name {
			return v, *best
		}
	}
	t.Fatalf("container %s mounts volume %q, which the pod does not have", c.Name, best.Name)
	return corev1.Volume{}, corev1.VolumeMount{}
}

// container is the pod's (init) container of that name.
func container(t *testing.T, pod *corev1.PodSpec, name string) *corev1.Container {
	t.Helper()
	for _, cs := range [][]corev1.Container{pod.Containers, pod.InitContainers} {
		for i := range cs {
			if cs[i].Name == name {
				return &cs[i]
			}
		}
	}
	t.Fatalf("no container %q", name)
	return nil
}

// The scenario in the ConfigMap is what `tasksim validate` accepts: strict YAML, every
// value valid, every threshold expression parsed.
func TestDeployScenarioValidates(t *testing.T) {
	d := loadDeployment(t, deployDir)
	if len(d.scenario.Data) == 0 {
		t.Fatalf("ConfigMap %s holds no scenario", d.scenario.Name)
	}
	for key, data := range d.scenario.Data {
		sc, err := scenarios.Parse(key, []byte(data))
		if err != nil {
			t.Fatalf("ConfigMap %s, key %s: %v", d.scenario.Name, key, err)
		}
		if err := errors.Join(sc.Validate(), results.CheckThresholds(sc)); err != nil {
			t.Errorf("ConfigMap %s, key %s: %v", d.scenario.Name, key, err)
		}
		if sc.Target != "" {
			t.Errorf("ConfigMap %s, key %s: target %q: the shards Job gives the target (--target), the scenario should not", d.scenario.Name, key, sc.Target)
		}
	}
}
