package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

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
					Name  string   `yaml:"name"`
					Image string   `yaml:"image"`
					Args  []string `yaml:"args"`
					Env   []struct {
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
	for _, j := range jobs {
		for _, c := range j.Spec.Template.Spec.Containers {
			if c.Image != kustomizeImage {
				t.Errorf("job %s: image %q, want %q (set by kustomization.yaml)", j.Metadata.Name, c.Image, kustomizeImage)
			}
		}
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

// kustomizeImage is the image name the Jobs use and kustomization.yaml maps
// to the image the user built and pushed.
const kustomizeImage = "fsbench"

// TestKustomization checks that `kubectl apply -k deploy/k8s` applies every
// manifest of the directory and replaces the Jobs' image name.
func TestKustomization(t *testing.T) {
	dir := filepath.Join(testenv.RepoRoot(), "deploy", "k8s")
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		APIVersion string   `yaml:"apiVersion"`
		Kind       string   `yaml:"kind"`
		Resources  []string `yaml:"resources"`
		Images     []struct {
			Name    string `yaml:"name"`
			NewName string `yaml:"newName"`
			NewTag  string `yaml:"newTag"`
		} `yaml:"images"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&k); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		t.Errorf("kustomization.yaml: %s %s", k.APIVersion, k.Kind)
	}
	for _, m := range k8sManifests(t) {
		if name := filepath.Base(m); !slices.Contains(k.Resources, name) {
			t.Errorf("kustomization.yaml: resources lack %s", name)
		}
	}
	if len(k.Images) != 1 || k.Images[0].Name != kustomizeImage || k.Images[0].NewName == "" || k.Images[0].NewTag == "" {
		t.Errorf("kustomization.yaml: images %+v, want one entry for %q with newName and newTag", k.Images, kustomizeImage)
	}
}

// k8sSchemaVersions are the Kubernetes versions whose API schemas the
// manifests must satisfy: an old release still in wide use and the newest
// that the pinned kubernetes-validate (install.sh) knows.
var k8sSchemaVersions = []string{"1.30.0", "1.37.0"}

// TestK8sSchema validates deploy/k8s/*.yaml against the Kubernetes API
// schemas, strictly (unknown fields are errors), and makes sure the check
// can fail: a Job with a misspelt field is refused.
func TestK8sSchema(t *testing.T) {
	validate, err := testenv.LookPath("kubernetes-validate")
	if err != nil {
		testenv.Unavailable(t, "kubernetes-validate not found")
	}
	files, _ := filepath.Glob(filepath.Join(testenv.RepoRoot(), "deploy", "k8s", "*.yaml"))
	bad := filepath.Join(t.TempDir(), "bad-job.yaml")
	job := "apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  backofLimit: 0\n" +
		"  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: x, image: fsbench}]\n"
	if err := os.WriteFile(bad, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	objects := 0
	for _, m := range k8sManifests(t) {
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		objects += strings.Count("\n"+string(b), "\nkind: ")
	}
	for _, v := range k8sSchemaVersions {
		out, err := exec.Command(validate, append([]string{"--strict", "--kubernetes-version", v}, files...)...).CombinedOutput()
		if err != nil {
			t.Errorf("Kubernetes %s: %v\n%s", v, err, out)
		}
		if n := strings.Count(string(out), " passed for resource "); n != objects {
			t.Errorf("Kubernetes %s: %d objects passed, want %d:\n%s", v, n, objects, out)
		}
		out, err = exec.Command(validate, "--strict", "--kubernetes-version", v, bad).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "backofLimit") {
			t.Errorf("Kubernetes %s: a Job with backofLimit passed: %v\n%s", v, err, out)
		}
	}
}

// k8sManifests lists the Kubernetes objects' files of deploy/k8s.
func k8sManifests(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "deploy", "k8s", "*.yaml"))
	if err != nil || len(files) < 2 {
		t.Fatalf("deploy/k8s: %v %v", files, err)
	}
	return slices.DeleteFunc(files, func(f string) bool { return filepath.Base(f) == "kustomization.yaml" })
}

func findCommand(root *cobra.Command, name string) *cobra.Command {
	for _, c := range root.Commands() {
		if c.Name() == name {
			return c
		}
	}
	return nil
}
