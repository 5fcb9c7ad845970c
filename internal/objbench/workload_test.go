package objbench

import (
	"strings"
	"testing"
)

func TestWorkloadNamesUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, w := range workloadList {
		if w.Name == "" || w.Help == "" || w.Phase == nil {
			t.Errorf("workload %q lacks a name, help or phase", w.Name)
		}
		if seen[w.Name] {
			t.Errorf("workload %s is listed twice", w.Name)
		}
		seen[w.Name] = true
	}
}

func TestUnknownWorkload(t *testing.T) {
	o := Defaults()
	o.URL, o.Workload = "/tmp", "gett"
	err := o.Validate()
	if err == nil || !strings.Contains(err.Error(), `--workload "gett": unknown workload`) {
		t.Fatalf("Validate: %v", err)
	}
}
