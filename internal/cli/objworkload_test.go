package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/objbench"
	"github.com/fsbench/fsbench/internal/units"
)

func TestObjWorkloadFlags(t *testing.T) {
	o, code, msg := parseObjbench(t, nil, "/data", "--workload", "mixed", "--objects", "50", "--obj-size-dist", "log2:1KiB-1MiB",
		"--range", "512B", "--mix", "get=1,put=3", "--duration", "1m", "--autoterm", "--autoterm-dur", "20s", "--autoterm-pct", "5", "--seed", "7")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	want := objbench.AutoTerm{On: true, MinDur: 20 * time.Second, Pct: 5, Samples: 7}
	if o.Workload != "mixed" || o.Objects != 50 || !o.Sizes.Log2 || o.Sizes.Max != units.MiB || o.Range != 512 ||
		o.Mix.String() != "get=1,put=3" || o.AutoTerm != want || o.Seed != 7 {
		t.Errorf("options = %+v", o.Options)
	}
	o, code, msg = parseObjbench(t, nil, "/data", "--workload", "get", "--small-object-size", "64K")
	if code != 0 || o.Sizes.String() != "64KiB" || o.Mix != objbench.DefaultMix || o.AutoTerm.On {
		t.Errorf("defaults: exit %d (%s), sizes %s, mix %s", code, msg, o.Sizes, o.Mix)
	}
}

func TestObjWorkloadUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--workload", "nosuch"}, `--workload "nosuch": unknown workload; one of get, put`},
		{[]string{"--mix", "get=1"}, "--mix goes with --workload"},
		{[]string{"--workload", "get", "--mix", "get=1"}, "--mix goes with --workload mixed"},
		{[]string{"--workload", "mixed", "--mix", "get=0"}, "add up to 0"},
		{[]string{"--workload", "mixed", "--mix", "list=1"}, `"list": unknown operation`},
		{[]string{"--workload", "put", "--obj-size", "1K", "--obj-size-dist", "log2:1K-2K"}, "not both"},
		{[]string{"--workload", "put", "--obj-size-dist", "log2:2K-1K"}, "lower bound must be below"},
		{[]string{"--workload", "put", "--obj-size-dist", "1K:x"}, "whole number"},
		{[]string{"--workload", "put", "--obj-size", "0"}, "more than 0"},
		{[]string{"--workload", "put", "--range", "1K"}, "--range applies to the get and mixed workloads"},
		{[]string{"--workload", "get", "--obj-size", "1K", "--range", "2K"}, "larger than the smallest object"},
		{[]string{"--workload", "get", "--objects", "0"}, "--objects must be between"},
		{[]string{"--workload", "get", "--autoterm"}, "--autoterm needs --duration"},
		{[]string{"--workload", "get", "--autoterm-pct", "5"}, "go with --autoterm"},
		{[]string{"--workload", "get", "--duration", "1m", "--autoterm", "--autoterm-pct", "0"}, "--autoterm-pct must be"},
		{[]string{"--workload", "get", "--expect", "put>=1MiB/s"}, `no metric "put"`},
		{[]string{"--workload", "get", "--expect", "functional"}, "runs no functional checks"},
	} {
		_, code, msg := parseObjbench(t, nil, append([]string{"/d"}, c.args...)...)
		if code != ExitUsage || !strings.Contains(msg, c.want) || strings.Count(strings.TrimSpace(msg), "\n") > 0 {
			t.Errorf("objbench %v: exit %d, %q; want exit 2 and one line with %q", c.args, code, msg, c.want)
		}
	}
}

// TestObjWorkloadProgressUnits: a workload's progress line counts what one
// of its operations is: the list workload counted pages of up to 1000
// objects as "objects" (61 "objects" beside a table of 9847 objects/s),
// and the mixed workload its operations.
func TestObjWorkloadProgressUnits(t *testing.T) {
	for _, tc := range []struct{ workload, ops, want string }{
		{"list", "3", "list objects: 3 pages in "},
		{"mixed", "40", "mixed operations: 40 ops in "},
		{"get", "40", "get objects: 40 objects in "},
	} {
		t.Run(tc.workload, func(t *testing.T) {
			dir := t.TempDir()
			code, _, stderr := runCLI(t, "objbench", dir, "--workload", tc.workload, "--objects", "30",
				"--obj-size", "1K", "-p", "1", "--ops", tc.ops)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("progress does not contain %q:\n%s", tc.want, stderr)
			}
		})
	}
}

// TestObjWorkloadIntervalHeaders: with --interval, the timed phase's lines
// come under one header, and the untimed prepare, which has no interval
// lines, prints no header of its own (it printed one with nothing under it).
func TestObjWorkloadIntervalHeaders(t *testing.T) {
	code, _, stderr := runCLI(t, "objbench", t.TempDir(), "--workload", "get", "--objects", "20",
		"--obj-size", "1K", "-p", "1", "--duration", "400ms", "--interval", "100ms")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	headers := 0
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "prepare objects") {
			t.Errorf("a line for the untimed prepare: %q", line)
		}
		if f := strings.Fields(line); len(f) >= 4 && f[len(f)-4] == "time" && f[len(f)-1] == "latency" {
			headers++
			if !strings.HasPrefix(line, "get objects ") {
				t.Errorf("header of another item: %q", line)
			}
		}
	}
	if headers != 1 || !strings.Contains(stderr, "get objects ") {
		t.Errorf("want one header over the get phase's lines:\n%s", stderr)
	}
}
