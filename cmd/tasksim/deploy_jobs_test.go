package main

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/tasksim/tasksim/runner"
	"github.com/tasksim/tasksim/scenarios"
)

// The shards Job and the merge Job, checked as Kubernetes runs them: each pod's environment
// resolved from the template (the Job controller adds the completion index), its $(VAR)
// references expanded as the kubelet expands them, and the command line handed to run's and
// merge's own flag parsing.

// completionIndexAnnotation is where the Job controller puts a pod's completion index.
const completionIndexAnnotation = "batch.kubernetes.io/job-completion-index"

// fieldPathRE reads the downward API's metadata.labels['K'] and metadata.annotations['K'].
var fieldPathRE = regexp.MustCompile(`^metadata\.(labels|annotations)\['([^']+)'\]$`)

// podEnv is c's environment in the pod the Job controller makes of tmpl for completion
// index idx (idx < 0: a pod of a Job that is not Indexed): plain values, and the labels and
// annotations the downward API reads. A reference to a label or annotation the pod lacks (it
// would be empty), or a source this test cannot resolve, fails the test.
func podEnv(t *testing.T, tmpl *corev1.PodTemplateSpec, c *corev1.Container, idx int) map[string]string {
	t.Helper()
	annotations := map[string]string{}
	for k, v := range tmpl.Annotations {
		annotations[k] = v
	}
	if idx >= 0 {
		annotations[completionIndexAnnotation] = strconv.Itoa(idx)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.FieldRef != nil:
			m := fieldPathRE.FindStringSubmatch(e.ValueFrom.FieldRef.FieldPath)
			if m == nil {
				t.Fatalf("container %s: env %s: fieldPath %q: this test resolves only metadata.labels['K'] and metadata.annotations['K']",
					c.Name, e.Name, e.ValueFrom.FieldRef.FieldPath)
			}
			from := tmpl.Labels
			if m[1] == "annotations" {
				from = annotations
			}
			v, ok := from[m[2]]
			if !ok {
				t.Fatalf("container %s: env %s reads %s, which the pod does not have: it would be empty", c.Name, e.Name, e.ValueFrom.FieldRef.FieldPath)
			}
			env[e.Name] = v
		default:
			t.Fatalf("container %s: env %s: a source this test cannot resolve", c.Name, e.Name)
		}
	}
	return env
}

// expand is s with its $(VAR) references replaced as the kubelet replaces them in command
// and args (Kubernetes' third_party/forked/golang/expansion): $(NAME) becomes NAME's value
// when env defines it and stays as written otherwise, $$ is a single $, any other $ stays.
// undefined lists the names referenced but not defined.
func expand(s string, env map[string]string) (out string, undefined []string) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch next := s[i+1]; next {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 { // incomplete: kept
				b.WriteString("$(")
				i++
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := env[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + name + ")")
				undefined = append(undefined, name)
			}
			i += 2 + end
		default:
			b.WriteByte('$')
			b.WriteByte(next)
			i++
		}
	}
	return b.String(), undefined
}

// expandArgs expands every argument; a reference to an undefined variable fails the test:
// Kubernetes would pass "$(NAME)" through as it is.
func expandArgs(t *testing.T, c *corev1.Container, env map[string]string) []string {
	t.Helper()
	var out []string
	for _, a := range c.Args {
		x, undefined := expand(a, env)
		if len(undefined) > 0 {
			t.Errorf("container %s: argument %q refers to $(%s), which its env does not define", c.Name, a, strings.Join(undefined, "), $("))
		}
		out = append(out, x)
	}
	return out
}

func TestKubeExpandAsKubelet(t *testing.T) {
	env := map[string]string{"A": "1", "RUN": "r"}
	for in, want := range map[string]string{
		"$(A)": "1", "/x/$(RUN)/s-$(A)": "/x/r/s-1", "$$(A)": "$(A)", "$(B)": "$(B)", "$(A": "$(A",
		"$((i + 1))": "$((i + 1))", "$(date +%s)": "$(date +%s)", "a$b": "a$b", "$": "$",
	} {
		if got, _ := expand(in, env); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
	if _, undefined := expand("$(A) $(B)", env); !slices.Equal(undefined, []string{"B"}) {
		t.Errorf("undefined = %v, want [B]", undefined)
	}
}

// shardCLI is what `tasksim run` makes of a shard's command line.
type shardCLI struct {
	sc      *scenarios.Scenario // the scenario with the flags applied, validated
	shard   scenarios.Shard
	startAt time.Time
	out     string
	noProg  bool
}

// parseShardCLI and parseMergeCLI are this file's only uses of cmd/tasksim's internals:
// run's flag parsing (parseRunFlags, the flags applied to the scenario; then runner.ParseShard
// with the pod's environment and runner.ParseStartAt, as runRun calls them), and merge's (runMerge, given directories under root that
// do not exist: it parses its flags, then stops at the first directory). scenarioAt maps
// the scenario argument (a path in the pod) to a file here.
func parseShardCLI(args []string, scenarioAt func(string) string, env map[string]string) (shardCLI, error) {
	f, name, err := parseRunFlags(args, io.Discard)
	if err != nil {
		return shardCLI{}, err
	}
	sc, err := f.Scenario(scenarioAt(name))
	if err != nil {
		return shardCLI{}, err
	}
	sh, err := runner.ParseShard(f.Shard, f.Shards, f.fs.Changed("shards"), func(k string) string { return env[k] })
	if err != nil {
		return shardCLI{}, err
	}
	at, err := runner.ParseStartAt(f.StartAt, time.Now())
	if err != nil {
		return shardCLI{}, err
	}
	return shardCLI{sc: sc, shard: sh, startAt: at, out: f.Out, noProg: f.noProgress}, nil
}

// parseMergeCLI: see parseShardCLI. It returns nil when merge accepted its command line.
func parseMergeCLI(args []string) error {
	err := runMerge(args, io.Discard, io.Discard)
	var usage *runner.UsageError
	switch {
	case err == nil:
		return errors.New("merge ran: want it to stop at the first directory, which does not exist")
	case errors.As(err, &usage):
		return err
	case strings.Contains(err.Error(), "run directory"):
		return nil
	}
	return fmt.Errorf("merge stopped before its directories: %w", err)
}

// shardRuns is what every pod of the shards Job runs: its command line as run reads it, per
// completion index.
func shardRuns(t *testing.T, d *deployment) []shardCLI {
	t.Helper()
	spec := &d.shards.Spec
	if spec.Completions == nil {
		t.Fatalf("Job %s: no completions", d.shards.Name)
	}
	pod := &spec.Template.Spec
	c := container(t, pod, "tasksim")
	var runs []shardCLI
	for i := range int(*spec.Completions) {
		env := podEnv(t, &spec.Template, c, i)
		args := expandArgs(t, c, env)
		if len(args) < 2 || args[0] != "run" || strings.HasPrefix(args[1], "-") {
			t.Fatalf("Job %s: args %q: want run SCENARIO_FILE FLAGS...", d.shards.Name, args)
		}
		scenarioAt := func(name string) string { return scenarioFile(t, d, pod, c, name) }
		r, err := parseShardCLI(args[1:], scenarioAt, env)
		if err != nil {
			t.Fatalf("Job %s, completion index %d: run %q: %v", d.shards.Name, i, args[1:], err)
		}
		runs = append(runs, r)
	}
	return runs
}

func TestDeployShardsJobRunsEveryShardOnce(t *testing.T) {
	d := loadDeployment(t, deployDir)
	j, spec := d.shards, &d.shards.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		t.Fatalf("Job %s: completionMode %v: want Indexed (each pod its JOB_COMPLETION_INDEX)", j.Name, val(spec.CompletionMode))
	}
	if spec.Parallelism == nil || spec.Completions == nil || *spec.Parallelism != *spec.Completions {
		t.Fatalf("Job %s: parallelism %v, completions %v: want them equal, every shard at once", j.Name, val(spec.Parallelism), val(spec.Completions))
	}
	n := int(*spec.Completions)
	runs := shardRuns(t, d)
	annotated, err := time.Parse(time.RFC3339Nano, spec.Template.Annotations["tasksim/start-at"])
	if err != nil {
		t.Fatalf("Job %s: annotation tasksim/start-at: %v", j.Name, err)
	}
	pool := runs[0].sc.Workload.PoolSize()
	outs := map[string]int{}
	for i, r := range runs {
		if want := (scenarios.Shard{Index: i, Count: n}); r.shard != want {
			t.Errorf("completion index %d runs shard %d/%d, want %d/%d (--shards = completions)", i, r.shard.Index, r.shard.Count, i, n)
		}
		if !r.startAt.Equal(annotated) {
			t.Errorf("completion index %d: --start-at %v, want the annotation's %v: every shard starts at one instant", i, r.startAt, annotated)
		}
		if r.sc.Target == "" {
			t.Errorf("completion index %d: no --target: the shards would each run an embedded server of their own", i)
		}
		if !r.noProg {
			t.Errorf("completion index %d: want --no-progress in a pod's log", i)
		}
		if prev, dup := outs[r.out]; dup {
			t.Errorf("completion indexes %d and %d both write %s", prev, i, r.out)
		}
		outs[r.out] = i
		if size := r.shard.Size(pool); size == 0 || size > maxClientsPerShard {
			t.Errorf("shard %d/%d holds %d of %d clients: want 1..%d a shard (file descriptors and ports: docs/FLEET.md#running-across-machines)",
				i, n, size, pool, maxClientsPerShard)
		}
	}
	pod := &spec.Template.Spec
	c := container(t, pod, "tasksim")
	for out := range outs {
		if vol, _ := mountFor(t, pod, c, out); vol.PersistentVolumeClaim == nil || vol.PersistentVolumeClaim.ClaimName != d.pvc.Name {
			t.Errorf("a shard writes %s on volume %q, not on the shared claim %s", out, vol.Name, d.pvc.Name)
		}
	}
	sc := runs[0].sc
	run := time.Duration(sc.Duration + sc.Grace)
	if g := pod.TerminationGracePeriodSeconds; g == nil || time.Duration(*g)*time.Second <= time.Duration(sc.Grace) {
		t.Errorf("terminationGracePeriodSeconds %v: want more than the scenario's grace (%v), so that a stopped shard drains and writes its files", val(g), time.Duration(sc.Grace))
	}
	if a := spec.ActiveDeadlineSeconds; a == nil || time.Duration(*a)*time.Second < run+5*time.Minute {
		t.Errorf("activeDeadlineSeconds %v: want a bound, and room for the wait for start-at beyond the run's %v", val(a), run)
	}
}

// failureAction is the action the Job's pod failure policy takes when container name exits
// with code (Kubernetes' rules: the first rule that matches; "" when none does).
func failureAction(p *batchv1.PodFailurePolicy, name string, code int32) batchv1.PodFailurePolicyAction {
	if p == nil {
		return ""
	}
	for _, r := range p.Rules {
		e := r.OnExitCodes
		if e == nil || (e.ContainerName != nil && *e.ContainerName != name) {
			continue
		}
		in := slices.Contains(e.Values, code)
		if (e.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && in) ||
			(e.Operator == batchv1.PodFailurePolicyOnExitCodesOpNotIn && !in) {
			return r.Action
		}
	}
	return ""
}

// A shard is never run again: a re-run would start late and overwrite its directory. Its
// own failed gates (99), an error (1) or a signal (130) fail its index only, and the merge
// judges the whole; a usage error (2), the same in every shard, fails the Job.
func TestDeployShardsJobNeverReruns(t *testing.T) {
	d := loadDeployment(t, deployDir)
	spec := &d.shards.Spec
	if spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q: want Never", spec.Template.Spec.RestartPolicy)
	}
	if spec.BackoffLimitPerIndex == nil || *spec.BackoffLimitPerIndex != 0 {
		t.Errorf("backoffLimitPerIndex %v: want 0, no index retried", val(spec.BackoffLimitPerIndex))
	}
	if m := spec.MaxFailedIndexes; m != nil && *m < *spec.Completions {
		t.Errorf("maxFailedIndexes %d: a shard whose gates failed would stop the others; want none", *m)
	}
	for code, want := range map[int32]batchv1.PodFailurePolicyAction{
		1: batchv1.PodFailurePolicyActionFailIndex, 99: batchv1.PodFailurePolicyActionFailIndex,
		130: batchv1.PodFailurePolicyActionFailIndex, 2: batchv1.PodFailurePolicyActionFailJob,
	} {
		if got := failureAction(spec.PodFailurePolicy, "tasksim", code); got != want {
			t.Errorf("exit code %d: pod failure policy action %q, want %q", code, got, want)
		}
	}
}
