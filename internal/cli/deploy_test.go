package cli

import (
	"bytes"
	"errors"
	"io"
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

	var docs []k8sDoc
	for _, f := range []string{"components/expectations/expectations.yaml", "bench/job.yaml", "objbench/job.yaml", "train/job.yaml"} {
		raw, err := os.ReadFile(filepath.Join(root, "deploy", "k8s", f))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, decodeK8s(t, f, raw)...)
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
	if kinds["ConfigMap"] != 1 || kinds["Job"] != 3 {
		t.Fatalf("objects: %v", kinds)
	}
	for _, j := range jobs {
		for _, c := range j.Spec.Template.Spec.Containers {
			if c.Image != kustomizeImage {
				t.Errorf("job %s: image %q, want %q (set by components/image)", j.Metadata.Name, c.Image, kustomizeImage)
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
		case "train":
			app, _, _ := testApp(nil)
			if err := findCommand(NewRoot(app), "train").ParseFlags(args[1:]); err != nil {
				t.Errorf("job %s: %q: %v", j.Metadata.Name, args, err)
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

// kustomizeImage is the image name the manifests use and
// components/image maps to the image the user built and pushed.
const kustomizeImage = "fsbench"

// k8sParts are the parts of deploy/k8s that `kubectl apply -k` deploys one
// at a time, with the kinds of objects each renders.
var k8sParts = map[string][]string{
	"probe":    {"DaemonSet", "PersistentVolumeClaim", "PodMonitor"},
	"agents":   {"Job", "PersistentVolumeClaim", "Secret", "Service", "ServiceMonitor", "StatefulSet"},
	"bench":    {"ConfigMap", "Job", "PersistentVolumeClaim"},
	"objbench": {"ConfigMap", "Job", "Secret"},
	"train":    {"Job", "PersistentVolumeClaim"},
	"ranks":    {"Job", "PersistentVolumeClaim"},
}

// renderedObject is what the tests look at of a rendered object.
type renderedObject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name   string            `yaml:"name"`
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec struct {
		StorageClassName string `yaml:"storageClassName"`
		Selector         struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		Ports []struct {
			Name string `yaml:"name"`
		} `yaml:"ports"`
		Endpoints           []struct{ Port string } `yaml:"endpoints"`
		PodMetricsEndpoints []struct{ Port string } `yaml:"podMetricsEndpoints"`
		Template            struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec struct {
				SecurityContext struct {
					RunAsNonRoot *bool `yaml:"runAsNonRoot"`
					FSGroup      *int  `yaml:"fsGroup"`
				} `yaml:"securityContext"`
				Containers []struct {
					Image string `yaml:"image"`
					Ports []struct {
						Name string `yaml:"name"`
					} `yaml:"ports"`
					SecurityContext struct {
						ReadOnlyRootFilesystem *bool `yaml:"readOnlyRootFilesystem"`
					} `yaml:"securityContext"`
				} `yaml:"containers"`
				Volumes []struct {
					PersistentVolumeClaim *struct {
						ClaimName string `yaml:"claimName"`
					} `yaml:"persistentVolumeClaim"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// kustomize renders a kustomization directory with kubectl.
func kustomize(t *testing.T, dir string) []byte {
	t.Helper()
	kubectl, err := testenv.LookPath("kubectl")
	if err != nil {
		testenv.Unavailable(t, "kubectl not found")
	}
	out, err := exec.Command(kubectl, "kustomize", dir).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, stderr)
	}
	return out
}

// decodeK8s decodes every object of a YAML stream.
func decodeK8s(t *testing.T, what string, raw []byte) []k8sDoc {
	t.Helper()
	var docs []k8sDoc
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	for {
		var d k8sDoc
		if err := dec.Decode(&d); err != nil {
			if errors.Is(err, io.EOF) {
				return docs
			}
			t.Fatalf("%s: %v", what, err)
		}
		docs = append(docs, d)
	}
}

// renderPart renders one part of deploy/k8s into its objects.
func renderPart(t *testing.T, part string) ([]renderedObject, []byte) {
	t.Helper()
	raw := kustomize(t, filepath.Join(testenv.RepoRoot(), "deploy", "k8s", part))
	var objs []renderedObject
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	for {
		var o renderedObject
		if err := dec.Decode(&o); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, raw
			}
			t.Fatalf("%s: %v", part, err)
		}
		objs = append(objs, o)
	}
}

// TestKustomizeParts renders each part of deploy/k8s as `kubectl apply -k
// deploy/k8s/PART` would: it holds its own objects and no other part's,
// the image set in components/image, the storage class of
// components/data/params.env, pods that run as non-root with fsGroup
// where they mount the volume and a read-only root file system, and
// monitors that select the pods and name a port they serve.
func TestKustomizeParts(t *testing.T) {
	for part, kinds := range k8sParts {
		t.Run(part, func(t *testing.T) {
			objs, _ := renderPart(t, part)
			var got []string
			pods := map[string][]string{} // the ports of the pods, by app label
			for _, o := range objs {
				got = append(got, o.Kind)
				checkRendered(t, o)
				for _, c := range o.Spec.Template.Spec.Containers {
					for _, p := range c.Ports {
						app := o.Spec.Template.Metadata.Labels["app.kubernetes.io/name"]
						pods[app] = append(pods[app], p.Name)
					}
				}
				if o.Kind == "Service" { // a ServiceMonitor selects Services by their labels
					key := "service:" + o.Metadata.Labels["app.kubernetes.io/name"]
					for _, p := range o.Spec.Ports {
						pods[key] = append(pods[key], p.Name)
					}
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, kinds) {
				t.Errorf("objects %v, want %v", got, kinds)
			}
			checkMonitors(t, objs, pods)
		})
	}
}

// checkRendered checks one rendered object of a part.
func checkRendered(t *testing.T, o renderedObject) {
	t.Helper()
	if o.Kind == "PersistentVolumeClaim" && (o.Metadata.Name != "fsbench-data" || o.Spec.StorageClassName != "juicefs-sc") {
		t.Errorf("claim %s of class %q, want fsbench-data of juicefs-sc (params.env)", o.Metadata.Name, o.Spec.StorageClassName)
	}
	if o.Kind == "ConfigMap" && o.Metadata.Name == "fsbench-params" {
		t.Errorf("the parameters' ConfigMap is rendered: it is local-config")
	}
	ps := o.Spec.Template.Spec
	if len(ps.Containers) == 0 {
		return
	}
	if ps.SecurityContext.RunAsNonRoot == nil || !*ps.SecurityContext.RunAsNonRoot {
		t.Errorf("%s %s: pods may run as root", o.Kind, o.Metadata.Name)
	}
	for _, v := range ps.Volumes {
		if v.PersistentVolumeClaim != nil && ps.SecurityContext.FSGroup == nil {
			t.Errorf("%s %s mounts %s without fsGroup", o.Kind, o.Metadata.Name, v.PersistentVolumeClaim.ClaimName)
		}
	}
	for _, c := range ps.Containers {
		if c.Image != "registry.example.com/fsbench:dev" {
			t.Errorf("%s %s: image %q, not components/image's", o.Kind, o.Metadata.Name, c.Image)
		}
		if c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
			t.Errorf("%s %s: the root file system is writable", o.Kind, o.Metadata.Name)
		}
	}
}

// checkMonitors checks that each PodMonitor and ServiceMonitor selects
// pods (or a Service) of the part by a port they have.
func checkMonitors(t *testing.T, objs []renderedObject, ports map[string][]string) {
	t.Helper()
	for _, o := range objs {
		var want []string
		switch o.Kind {
		case "PodMonitor":
			for _, e := range o.Spec.PodMetricsEndpoints {
				want = append(want, e.Port)
			}
			if have := ports[o.Spec.Selector.MatchLabels["app.kubernetes.io/name"]]; len(want) == 0 || !slices.Contains(have, want[0]) {
				t.Errorf("PodMonitor %s scrapes port %v of pods with ports %v", o.Metadata.Name, want, have)
			}
		case "ServiceMonitor":
			for _, e := range o.Spec.Endpoints {
				want = append(want, e.Port)
			}
			if have := ports["service:"+o.Spec.Selector.MatchLabels["app.kubernetes.io/name"]]; len(want) == 0 || !slices.Contains(have, want[0]) {
				t.Errorf("ServiceMonitor %s scrapes port %v of a Service with ports %v", o.Metadata.Name, want, have)
			}
		default:
			continue
		}
		if o.APIVersion != "monitoring.coreos.com/v1" {
			t.Errorf("%s %s: apiVersion %s", o.Kind, o.Metadata.Name, o.APIVersion)
		}
	}
}

// TestKustomizeStorageClass sets the storage class in an overlay of a
// part, as docs/kubernetes.md shows: the claim takes it.
func TestKustomizeStorageClass(t *testing.T) {
	dir := t.TempDir()
	part, err := filepath.Rel(dir, filepath.Join(testenv.RepoRoot(), "deploy", "k8s", "probe"))
	if err != nil {
		t.Fatal(err)
	}
	k := "resources: [" + part + "]\npatches:\n  - target: {kind: PersistentVolumeClaim, name: fsbench-data}\n" +
		"    patch: '[{\"op\": \"replace\", \"path\": \"/spec/storageClassName\", \"value\": \"nfs-csi\"}]'\n"
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
	out := string(kustomize(t, dir))
	if !strings.Contains(out, "storageClassName: nfs-csi") || strings.Contains(out, "juicefs-sc") {
		t.Errorf("the overlay's storage class is not the claim's:\n%s", out)
	}
}

// k8sSchemaVersions are the Kubernetes versions whose API schemas the
// manifests must satisfy: an old release still in wide use and the newest
// that the pinned kubernetes-validate (install.sh) knows.
var k8sSchemaVersions = []string{"1.30.0", "1.37.0"}

// TestK8sSchema validates what each part of deploy/k8s renders against the
// Kubernetes API schemas, strictly (unknown fields are errors), and makes
// sure the check can fail: a Job with a misspelt field is refused. The
// Prometheus operator's monitors are not in those schemas: TestKustomizeParts
// checks them.
func TestK8sSchema(t *testing.T) {
	validate, err := testenv.LookPath("kubernetes-validate")
	if err != nil {
		testenv.Unavailable(t, "kubernetes-validate not found")
	}
	tmp := t.TempDir()
	bad := filepath.Join(tmp, "bad-job.yaml")
	job := "apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  backofLimit: 0\n" +
		"  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: x, image: fsbench}]\n"
	if err := os.WriteFile(bad, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	var files []string
	objects := 0
	for part := range k8sParts {
		_, raw := renderPart(t, part)
		var keep []string
		for _, d := range strings.Split(string(raw), "\n---\n") {
			if !strings.Contains(d, "apiVersion: monitoring.coreos.com/") {
				keep = append(keep, d)
			}
		}
		f := filepath.Join(tmp, part+".yaml")
		if err := os.WriteFile(f, []byte(strings.Join(keep, "\n---\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		objects += len(keep)
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

func findCommand(root *cobra.Command, name string) *cobra.Command {
	for _, c := range root.Commands() {
		if c.Name() == name {
			return c
		}
	}
	return nil
}
