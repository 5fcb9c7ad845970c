package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/fsbench/fsbench/internal/testenv"
)

// TestDeployProbeDaemonSet keeps deploy/k8s/probe/probe.yaml working: a
// DaemonSet whose command line the probe accepts, whose round's command
// line bench accepts, serving its metrics on the port it declares.
func TestDeployProbeDaemonSet(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "deploy", "k8s", "probe", "probe.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Kind string `yaml:"kind"`
		Spec struct {
			Template struct {
				Metadata struct {
					Annotations map[string]string `yaml:"annotations"`
				} `yaml:"metadata"`
				Spec struct {
					Containers []struct {
						Image string   `yaml:"image"`
						Args  []string `yaml:"args"`
						Ports []struct {
							ContainerPort int `yaml:"containerPort"`
						} `yaml:"ports"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	if err := yaml.NewDecoder(bytes.NewReader(raw)).Decode(&d); err != nil {
		t.Fatal(err)
	}
	cs := d.Spec.Template.Spec.Containers
	if d.Kind != "DaemonSet" || len(cs) != 1 || cs[0].Image != kustomizeImage || len(cs[0].Args) == 0 || cs[0].Args[0] != "probe" {
		t.Fatalf("probe.yaml: %s with %+v", d.Kind, cs)
	}
	app, _, _ := testApp(nil)
	var o *ProbeOptions
	cmd := newProbeCmdWith(app, func(_ context.Context, po *ProbeOptions) error { o = po; return nil })
	cmd.SetArgs(cs[0].Args[1:])
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	if err := cmd.Execute(); err != nil {
		t.Fatalf("probe %q: %v", cs[0].Args[1:], err)
	}
	if o.Name != "$(NODE_NAME)" {
		t.Errorf("probe --name %q, want the node's name", o.Name)
	}
	if o.MetricsListen != ":9782" || len(cs[0].Ports) != 1 || cs[0].Ports[0].ContainerPort != 9782 ||
		d.Spec.Template.Metadata.Annotations["prometheus.io/port"] != "9782" {
		t.Errorf("metrics on %q, ports %+v, annotations %v", o.MetricsListen, cs[0].Ports, d.Spec.Template.Metadata.Annotations)
	}
	if o.Args[0] != "bench" || len(o.exprs) == 0 {
		t.Fatalf("round %q with %d expectations", o.Args, len(o.exprs))
	}
	if _, code, msg := parseBench(t, nil, append(o.Args[1:1:1], o.Args[1:]...)...); code != 0 {
		t.Errorf("round %q: exit %d: %s", o.Args, code, msg)
	}
}
