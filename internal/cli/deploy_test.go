package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/fsbench/fsbench/internal/expect"
	"github.com/fsbench/fsbench/internal/testenv"
)

// k8sDoc is the part of a Kubernetes object the test looks at.
type k8sDoc struct {
	Kind     string                `yaml:"kind"`
	Metadata struct{ Name string } `yaml:"metadata"`
	Data     map[string]string     `yaml:"data"`
	Spec     struct {
		Template struct {
			Spec struct {
				Containers []struct {
					Name string   `yaml:"name"`
					Args []string `yaml:"args"`
					Env  []struct {
						Name string `yaml:"name"`
					} `yaml:"env"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// TestDeployManifest keeps deploy/ working: the example expectation files
// parse and fit their commands, the ConfigMap carries them verbatim, and
// the Jobs' command lines are accepted by fsbench's own flag parsing.
func TestDeployManifest(t *testing.T) {
	root := testenv.RepoRoot()
	examples := map[string]expect.Catalog{"bench.expect": expect.Bench, "objbench.expect": expect.Objbench}
	for name, cat := range examples {
		b, err := os.ReadFile(filepath.Join(root, "deploy", "examples", name))
		if err != nil {
			t.Fatal(err)
		}
		es, err := expect.ParseLines(bytes.NewReader(b), name)
		if err != nil || len(es) == 0 {
			t.Fatalf("%s: %v", name, err)
		}
		for _, e := range es {
			if err := cat.Check(e); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}

	raw, err := os.ReadFile(filepath.Join(root, "deploy", "k8s", "fsbench-job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	var docs []k8sDoc
	for {
		var d k8sDoc
		if err := dec.Decode(&d); err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("fsbench-job.yaml: %v", err)
		}
		docs = append(docs, d)
	}
	kinds := map[string]int{}
	tmp := t.TempDir()
	var jobs []k8sDoc
	for _, d := range docs {
		kinds[d.Kind]++
		switch d.Kind {
		case "ConfigMap":
			for name := range examples {
				want, _ := os.ReadFile(filepath.Join(root, "deploy", "examples", name))
				if d.Data[name] != string(want) {
					t.Errorf("ConfigMap %s differs from deploy/examples/%s", name, name)
				}
				os.WriteFile(filepath.Join(tmp, name), []byte(d.Data[name]), 0o644)
			}
		case "Job":
			jobs = append(jobs, d)
		}
	}
	if kinds["ConfigMap"] != 1 || kinds["PersistentVolumeClaim"] != 1 || kinds["Job"] != 2 {
		t.Fatalf("objects: %v", kinds)
	}
	env := map[string]string{"$(STORAGE)": "minio", "$(BUCKET_URL)": "http://127.0.0.1:9000/ci", "/etc/fsbench": tmp, "/data": tmp}
	for _, j := range jobs {
		c := j.Spec.Template.Spec.Containers[0]
		var args []string
		for _, a := range c.Args {
			for k, v := range env {
				a = strings.ReplaceAll(a, k, v)
			}
			args = append(args, a)
		}
		switch args[0] {
		case "bench":
			o, code, msg := parseBench(t, nil, args[1:]...)
			if code != 0 {
				t.Errorf("job %s: %q: exit %d: %s", j.Metadata.Name, args, code, msg)
				continue
			}
			if !o.CI.Quick || len(o.CI.Exprs) == 0 {
				t.Errorf("job %s: quick %v, %d expectations", j.Metadata.Name, o.CI.Quick, len(o.CI.Exprs))
			}
		case "objbench":
			for _, e := range c.Env {
				if e.Name == "SECRET_KEY" {
					env["SECRET_KEY"] = "set"
				}
			}
			if env["SECRET_KEY"] == "" {
				t.Errorf("job %s: no SECRET_KEY from the Secret", j.Metadata.Name)
			}
			app, _, _ := testApp(nil)
			cmd := findCommand(NewRoot(app), "objbench")
			if cmd == nil {
				t.Fatalf("job %s: no objbench command", j.Metadata.Name)
			}
			if err := cmd.ParseFlags(args[1:]); err != nil {
				t.Errorf("job %s: %q: %v", j.Metadata.Name, args, err)
			}
		default:
			t.Errorf("job %s runs %q", j.Metadata.Name, args[0])
		}
	}
}

func findCommand(root *cobra.Command, name string) *cobra.Command {
	for _, c := range root.Commands() {
		if c.Name() == name {
			return c
		}
	}
	return nil
}
