package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/fsbench/fsbench/internal/testenv"
)

// TestRanksJob keeps deploy/k8s/ranks an Indexed Job whose pods are the
// ranks of one run: its completions, its parallelism (every rank at once)
// and the world size its pods are given are one number, 1,000; the run id
// is the Job's own; a failed pod is not retried (its rendezvous would be
// in use); and the rank's command line is one bench accepts.
func TestRanksJob(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "deploy", "k8s", "ranks", "job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var job struct {
		Spec struct {
			CompletionMode string `yaml:"completionMode"`
			Completions    int    `yaml:"completions"`
			Parallelism    int    `yaml:"parallelism"`
			BackoffLimit   *int   `yaml:"backoffLimit"`
			Template       struct {
				Spec struct {
					Containers []struct {
						Args []string `yaml:"args"`
						Env  []struct {
							Name      string `yaml:"name"`
							Value     string `yaml:"value"`
							ValueFrom struct {
								FieldRef struct {
									FieldPath string `yaml:"fieldPath"`
								} `yaml:"fieldRef"`
							} `yaml:"valueFrom"`
						} `yaml:"env"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(raw, &job); err != nil {
		t.Fatal(err)
	}
	s := job.Spec
	backoff := -1 // unset: Kubernetes retries 6 times
	if s.BackoffLimit != nil {
		backoff = *s.BackoffLimit
	}
	if s.CompletionMode != "Indexed" || s.Completions != 1000 || s.Parallelism != s.Completions || backoff != 0 {
		t.Errorf("mode %q, %d completions, parallelism %d, backoffLimit %d: want Indexed, 1000 at once, 0",
			s.CompletionMode, s.Completions, s.Parallelism, backoff)
	}
	if len(s.Template.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(s.Template.Spec.Containers))
	}
	c := s.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value + e.ValueFrom.FieldRef.FieldPath
	}
	if env["FSBENCH_WORLD_SIZE"] != strconv.Itoa(s.Completions) {
		t.Errorf("FSBENCH_WORLD_SIZE %q, want the completions, %d", env["FSBENCH_WORLD_SIZE"], s.Completions)
	}
	if !strings.Contains(env["FSBENCH_RUN_ID"], "controller-uid") {
		t.Errorf("FSBENCH_RUN_ID from %q, want the Job's uid", env["FSBENCH_RUN_ID"])
	}
	args := append([]string(nil), c.Args...)
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "/data", t.TempDir())
	}
	if len(args) == 0 || args[0] != "bench" {
		t.Fatalf("the rank runs %q, want bench", args)
	}
	if _, code, msg := parseBench(t, nil, args[1:]...); code != 0 {
		t.Errorf("%q: exit %d: %s", args, code, msg)
	}
}
