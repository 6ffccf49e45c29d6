package main

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// podMonitor is the part of the Prometheus Operator's PodMonitor (a CRD: not in the
// Kubernetes API types) that deploy/kubernetes/prometheus/podmonitor.yaml uses; decoding is
// strict, so a misspelt field fails the test.
type podMonitor struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		PodMetricsEndpoints []struct {
			Port        string `json:"port"`
			Path        string `json:"path"`
			Interval    string `json:"interval"`
			Relabelings []struct {
				SourceLabels []string `json:"sourceLabels"`
				TargetLabel  string   `json:"targetLabel"`
			} `json:"relabelings"`
		} `json:"podMetricsEndpoints"`
	} `json:"spec"`
}

// TestDeployShardsAreScraped: every shard serves its live metrics (--metrics-listen) on
// every interface of its pod, on the container port named "metrics", and both ways of finding it point there: the pod's
// prometheus.io/* annotations (port, path) and the PodMonitor (its selector picks the
// shards' pods and no other, on that port and path).
func TestDeployShardsAreScraped(t *testing.T) {
	d := loadDeployment(t, deployDir)
	tmpl := &d.shards.Spec.Template
	c := container(t, &tmpl.Spec, "tasksim")
	var listen string
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--metrics-listen="); ok {
			listen = v
		}
	}
	if listen == "" {
		t.Fatalf("the shards' arguments %q have no --metrics-listen=ADDR", c.Args)
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil || host == "" || net.ParseIP(host) == nil || net.ParseIP(host).IsLoopback() {
		t.Fatalf("--metrics-listen=%s: want every interface of the pod (0.0.0.0:PORT); no host would be 127.0.0.1, which no scraper reaches (%v)", listen, err)
	}
	var named *corev1.ContainerPort
	for i := range c.Ports {
		if c.Ports[i].Name == "metrics" {
			named = &c.Ports[i]
		}
	}
	if named == nil || port == "" || named.ContainerPort == 0 || port != strconv.Itoa(int(named.ContainerPort)) {
		t.Fatalf("--metrics-listen=%s, container ports %+v: want a port named metrics on the same number", listen, c.Ports)
	}
	for k, want := range map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": port, "prometheus.io/path": "/metrics"} {
		if got := tmpl.Annotations[k]; got != want {
			t.Errorf("the shards' pod annotation %s = %q, want %q", k, got, want)
		}
	}

	b, err := os.ReadFile(filepath.Join(deployDir, "prometheus", "podmonitor.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var pm podMonitor
	if err := yaml.UnmarshalStrict(b, &pm); err != nil {
		t.Fatalf("podmonitor.yaml: %v", err)
	}
	if pm.APIVersion != "monitoring.coreos.com/v1" || pm.Kind != "PodMonitor" || len(pm.Spec.PodMetricsEndpoints) != 1 {
		t.Fatalf("podmonitor.yaml: %s %s with %d endpoints: want one monitoring.coreos.com/v1 PodMonitor endpoint",
			pm.APIVersion, pm.Kind, len(pm.Spec.PodMetricsEndpoints))
	}
	if ep := pm.Spec.PodMetricsEndpoints[0]; ep.Port != named.Name || ep.Path != "/metrics" {
		t.Errorf("the PodMonitor scrapes port %q path %q; want %q and /metrics", ep.Port, ep.Path, named.Name)
	}
	selects := func(labels map[string]string) bool {
		for k, v := range pm.Spec.Selector.MatchLabels {
			if labels[k] != v {
				return false
			}
		}
		return len(pm.Spec.Selector.MatchLabels) > 0
	}
	if !selects(tmpl.Labels) {
		t.Errorf("the PodMonitor's selector %v does not pick the shards' pods %v", pm.Spec.Selector.MatchLabels, tmpl.Labels)
	}
	if selects(d.merge.Spec.Template.Labels) {
		t.Errorf("the PodMonitor's selector %v picks the merge's pod too, which serves no metrics", pm.Spec.Selector.MatchLabels)
	}
}
