package objbench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/report"
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

// Every workload in process on a directory, with a warm-up, intervals and
// size classes: each counts only what it measured, its classes add up to
// its total, and the directory is left as it was.
func TestWorkloadsOnDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "precious"), []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range WorkloadNames() {
		o := Defaults()
		o.URL, o.Workload, o.Threads, o.Objects, o.Ops = dir, name, 3, 40, 90
		o.Sizes, _ = ParseSizeDist("1KiB:1,8KiB:1")
		o.Interval = 10 * time.Millisecond
		res := &report.Result{}
		if err := Run(context.Background(), o, res); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		total := res.FindPhase(name)
		if name == "multipart" || name == "versioned" {
			// A directory has neither capability: the row says so.
			if total == nil || total.Value.Unit != "not support" || total.Ops != 0 {
				t.Fatalf("%s on a directory: %+v", name, total)
			}
			continue
		}
		want := int64(90)
		if name == "delete" {
			want = 40
		}
		if total == nil || total.Ops != want || total.Errors != 0 {
			t.Fatalf("%s: %+v", name, total)
		}
		if name != "list" {
			a, b := res.FindPhase(name+"-1kib"), res.FindPhase(name+"-8kib")
			if a == nil || b == nil || a.Ops+b.Ops != total.Ops || a.Latency.Count+b.Latency.Count != total.Latency.Count {
				t.Errorf("%s: size classes do not add up to %d operations", name, total.Ops)
			}
		}
		ents, _ := os.ReadDir(dir)
		if len(ents) != 1 || ents[0].Name() != "precious" {
			t.Errorf("%s: the directory holds %v after the run", name, ents)
		}
	}
}
