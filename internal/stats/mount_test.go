package stats

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/juicefs"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/testenv"
)

// TestJuiceFSOnFUSE watches a real FUSE mount of type fuse.juicefs (bindfs
// with subtype=juicefs) whose .stats changes from a real before-snapshot to
// a real after-snapshot between two samples.
func TestJuiceFSOnFUSE(t *testing.T) {
	t.Setenv("FSBENCH_LIVE_DIR", t.TempDir())
	src := t.TempDir()
	before := readFixture(t, "juicefs/jfs-stats-before.txt")
	after := readFixture(t, "juicefs/jfs-stats-after.txt")
	if err := os.WriteFile(filepath.Join(src, ".stats"), before, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := testenv.Bindfs(t, src, "subtype=juicefs")
	m, err := sysio.FindMount(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.FSType != juicefs.FSType {
		t.Fatalf("mount type %q", m.FSType)
	}
	clock := &fakeClock{now: t0}
	clock.onWait = func() {
		if err := os.WriteFile(filepath.Join(src, ".stats"), after, 0o644); err != nil {
			t.Error(err)
		}
	}
	plan, err := Prepare(context.Background(), Options{Mount: &m, Path: dir, Interval: time.Second, Count: 1, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Schema != "ufmcosb" {
		t.Errorf("schema %q", plan.Schema)
	}
	var buf bytes.Buffer
	plan.Runner.Render = NewRenderer(&buf, FormatJSON, false, false)
	if err := plan.Runner.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var row struct {
		Sections map[string]map[string]*float64 `json:"sections"`
	}
	if err := json.Unmarshal(buf.Bytes(), &row); err != nil {
		t.Fatalf("%v: %s", err, buf.String())
	}
	b, a := juicefs.ParseStats(before), juicefs.ParseStats(after)
	for _, c := range []struct {
		section, field string
		want           float64
	}{
		{"fuse", "write_bytes_per_s", a["juicefs_fuse_written_size_bytes_sum"] - b["juicefs_fuse_written_size_bytes_sum"]},
		{"fuse", "ops_per_s", a["juicefs_fuse_ops_durations_histogram_seconds_total"] - b["juicefs_fuse_ops_durations_histogram_seconds_total"]},
		{"object", "put_bytes_per_s", a["juicefs_object_request_data_bytes_PUT"] - b["juicefs_object_request_data_bytes_PUT"]},
		{"usage", "mem_bytes", a["juicefs_memory"]},
	} {
		got := row.Sections[c.section][c.field]
		if got == nil || *got != c.want {
			t.Errorf("%s.%s = %v, want %v", c.section, c.field, got, c.want)
		}
	}
}

// TestFUSEDaemon finds the process serving a real FUSE mount (bindfs) and
// shows its CPU and memory.
func TestFUSEDaemon(t *testing.T) {
	t.Setenv("FSBENCH_LIVE_DIR", t.TempDir())
	dir := testenv.Bindfs(t, t.TempDir())
	pid := FindFUSEDaemon(sysio.ProcRoot, dir)
	if pid == 0 {
		t.Fatal("bindfs not found")
	}
	cmd, _ := os.ReadFile(filepath.Join(sysio.ProcRoot, strconv.Itoa(pid), "cmdline"))
	if !strings.Contains(string(cmd), "bindfs") {
		t.Errorf("pid %d is %q", pid, cmd)
	}
	m, err := sysio.FindMount(dir)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Prepare(context.Background(), Options{Mount: &m, Path: dir, Interval: time.Second, Count: 1, Clock: &fakeClock{now: t0}})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Schema != "psb" {
		t.Errorf("schema %q", plan.Schema)
	}
	if v := Compute(plan.Runner.Sections, nil, plan.Runner.First); !cellOK(v, "process", "mem_bytes") {
		t.Errorf("no memory of the daemon: %+v", plan.Runner.First.Values)
	}
}

func cellOK(r *Row, section, field string) bool {
	for _, rs := range r.Sections {
		for _, v := range rs.Values {
			if rs.Section.Name == section && v.Col.Field == field {
				return v.OK && v.V > 0
			}
		}
	}
	return false
}
