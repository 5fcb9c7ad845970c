package stats

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

const fixtureProc = "../../testdata/stats/proc"

func collect(t *testing.T, src Source) *Sample {
	t.Helper()
	sm := NewSample(time.Unix(0, 0))
	if err := src.Collect(context.Background(), sm); err != nil {
		t.Fatalf("%s: %v", src.Name(), err)
	}
	return sm
}

func checkValues(t *testing.T, sm *Sample, want map[string]float64) {
	t.Helper()
	for k, w := range want {
		got, ok := sm.Values[k]
		if !ok {
			t.Errorf("%s missing", k)
			continue
		}
		if math.Abs(got-w) > 1e-6*math.Max(1, math.Abs(w)) {
			t.Errorf("%s = %v, want %v", k, got, w)
		}
	}
}

func TestSystemSource(t *testing.T) {
	s, err := NewSystemSource(fixtureProc)
	if err != nil {
		t.Fatal(err)
	}
	sm := collect(t, s)
	// /proc/stat counts in USER_HZ (100 per second).
	checkValues(t, sm, map[string]float64{
		"sys.cpu.user":      (102474 + 12) / 100.0,
		"sys.cpu.system":    (16501 + 7 + 478) / 100.0,
		"sys.cpu.iowait":    4863 / 100.0,
		"sys.cpu.idle":      71069 / 100.0,
		"sys.cpu.total":     (102474 + 12 + 16501 + 7 + 478 + 4863 + 71069 + 2539) / 100.0,
		"sys.mem.total":     24682416 * 1024,
		"sys.mem.used":      (24682416 - 24061764) * 1024,
		"sys.mem.dirty":     107960 * 1024,
		"sys.mem.writeback": 2048 * 1024,
		"sys.mem.cached":    430800 * 1024,
		"sys.mem.free":      22389576 * 1024,
	})
}

func TestDiskSource(t *testing.T) {
	for _, tc := range []struct {
		name         string
		major, minor uint32
		whole        bool
		want         map[string]float64
		wantErr      bool
	}{
		{name: "vda", major: 254, minor: 0, want: map[string]float64{
			"disk.reads": 412345, "disk.writes": 723456, "disk.ios": 412345 + 723456,
			"disk.read_bytes": 26873560 * 512, "disk.write_bytes": 187654320 * 512,
			"disk.wait_ms": 91234 + 1234567, "disk.busy_ms": 456789,
		}},
		{name: "partition", major: 254, minor: 1, want: map[string]float64{"disk.reads": 410000}},
		{name: "whole disks: vda and nvme0n1, not loop, partitions or dm", whole: true, want: map[string]float64{
			"disk.reads": 412345 + 1000, "disk.write_bytes": (187654320 + 16000) * 512,
		}},
		{name: "missing device", major: 8, minor: 0, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := NewDiskSource(fixtureProc, tc.major, tc.minor, tc.whole)
			if err != nil {
				t.Fatal(err)
			}
			sm := NewSample(time.Unix(0, 0))
			err = d.Collect(context.Background(), sm)
			if tc.wantErr {
				if err == nil {
					t.Fatal("no error for a missing device")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkValues(t, sm, tc.want)
		})
	}
}

func TestWholeDisk(t *testing.T) {
	for name, want := range map[string]bool{
		"sda": true, "sda1": false, "vda": true, "vda2": false, "xvda": true, "nvme0n1": true, "nvme0n1p2": false,
		"mmcblk0": true, "mmcblk0p1": false, "loop0": false, "dm-0": false, "md0": false, "ram0": false, "sr0": false,
	} {
		if got := WholeDisk(name); got != want {
			t.Errorf("WholeDisk(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestNFSSource(t *testing.T) {
	for _, tc := range []struct {
		mount string
		want  map[string]float64
	}{
		{"/mnt/nfs", map[string]float64{
			"nfs.read_bytes": 1210214218, "nfs.write_bytes": 104857600,
			"nfs.ops":      1298 + 400 + 20 + 120 + 2000 + 300, // NULL is left out
			"nfs.read.ops": 1298, "nfs.read.rtt_ms": 79386, "nfs.read.exe_ms": 79407,
			"nfs.write.ops": 420, "nfs.write.rtt_ms": 31600, "nfs.write.exe_ms": 31720,
			"nfs.meta.ops": 2420, "nfs.meta.rtt_ms": 1390, "nfs.meta.exe_ms": 1510,
		}},
		{"/mnt/nfs3", map[string]float64{"nfs.read.ops": 1, "nfs.meta.ops": 5, "nfs.write.ops": 0, "nfs.read_bytes": 4096}},
	} {
		t.Run(tc.mount, func(t *testing.T) {
			n, err := NewNFSSource(fixtureProc, tc.mount)
			if err != nil {
				t.Fatal(err)
			}
			checkValues(t, collect(t, n), tc.want)
		})
	}
	n, _ := NewNFSSource(fixtureProc, "/mnt/jfs")
	if err := n.Collect(context.Background(), NewSample(time.Unix(0, 0))); err == nil {
		t.Error("no error for a mount without NFS statistics")
	}
}

func TestProcessSource(t *testing.T) {
	p, err := NewProcessSource(fixtureProc, 4242)
	if err != nil {
		t.Fatal(err)
	}
	checkValues(t, collect(t, p), map[string]float64{
		"proc.cpu": (812 + 105) / 100.0, "proc.rss": 125753 * float64(os.Getpagesize()), "proc.threads": 17, "proc.start": 98123,
	})
	p.PID = 4343 // a process that is gone
	if err := p.Collect(context.Background(), NewSample(time.Unix(0, 0))); err == nil {
		t.Error("no error for a process that is gone")
	}
}

func TestJuiceFSSource(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("../../testdata/juicefs/jfs-stats-after.txt")
	if err != nil {
		t.Fatal(err)
	}
	// Older clients name the file .jfs.stats.
	if err := os.WriteFile(filepath.Join(dir, ".jfs.stats"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".config"), []byte(`{"Meta":{"Strict":true},"Pid":4242,"PPid":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	j := &JuiceFSSource{MountPoint: dir}
	checkValues(t, collect(t, j), map[string]float64{
		"juicefs_fuse_ops_durations_histogram_seconds_total": 35882,
		"juicefs_object_request_data_bytes_PUT":              2173698048,
		"juicefs_uptime":                                     22.012414104,
	})
	if j.file != ".jfs.stats" {
		t.Errorf("remembered %q", j.file)
	}
	if pid := JuiceFSPID(dir); pid != 4242 {
		t.Errorf("JuiceFSPID = %d", pid)
	}
	if err := (&JuiceFSSource{MountPoint: t.TempDir()}).Collect(context.Background(), NewSample(time.Unix(0, 0))); err == nil {
		t.Error("no error without .stats")
	}
}

func TestFindFUSEDaemonNone(t *testing.T) {
	// The fixture tree has no fd directories: nobody holds /dev/fuse.
	if pid := FindFUSEDaemon(fixtureProc, "/mnt/jfs"); pid != 0 {
		t.Errorf("FindFUSEDaemon = %d, want 0", pid)
	}
}

func TestParseProcStat(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    ProcStat
		wantErr bool
	}{
		{in: "4242 (juicefs) S 1 4242 4242 0 -1 4194560 183920 0 12 0 812 105 0 0 20 0 17 0 98123 2415919104 125753 1844674",
			want: ProcStat{CPUSeconds: 9.17, RSSPages: 125753, Threads: 17, StartTicks: 98123}},
		// A command name with spaces and parentheses.
		{in: "77 (a) b (c)) R 1 1 1 0 -1 0 0 0 0 0 100 50 0 0 20 0 3 0 500 1000 42 0",
			want: ProcStat{CPUSeconds: 1.5, RSSPages: 42, Threads: 3, StartTicks: 500}},
		{in: "", wantErr: true},
		{in: "1 )( S", wantErr: true},
		{in: "1 (x) S 1 2 3", wantErr: true},
		{in: "4242 (juicefs) S 1 4242 4242 0 -1 4194560 183920 0 12 0 x 105 0 0 20 0 17 0 98123 2415919104 125753", wantErr: true},
	} {
		got, err := ParseProcStat([]byte(tc.in))
		if (err != nil) != tc.wantErr {
			t.Errorf("%q: err %v", tc.in, err)
			continue
		}
		if !tc.wantErr && (math.Abs(got.CPUSeconds-tc.want.CPUSeconds) > 1e-9 || got.RSSPages != tc.want.RSSPages ||
			got.Threads != tc.want.Threads || got.StartTicks != tc.want.StartTicks) {
			t.Errorf("%q: %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

type panicky struct{}

func (panicky) Name() string { return "panicky" }
func (panicky) Collect(context.Context, *Sample) error {
	var m map[string]int
	m["x"]++
	return nil
}

func TestRunnerSurvivesPanic(t *testing.T) {
	var warned []string
	r := &Runner{Sources: []Source{panicky{}}, Warn: func(f string, a ...any) { warned = append(warned, f) }}
	r.Collect(context.Background())
	if len(warned) != 1 {
		t.Errorf("warnings %q", warned)
	}
}

// FuzzParseProcStat: no input panics, and the CPU time of what parses
// (two unsigned tick counts) is not negative.
func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("4242 (juicefs) S 1 4242 4242 0 -1 4194560 183920 0 12 0 812 105 0 0 20 0 17 0 98123 2415919104 125753 1844674"))
	f.Add([]byte("77 (a) b (c)) R 1 1 1 0 -1 0 0 0 0 0 100 50 0 0 20 0 3 0 500 1000 42 0"))
	f.Add([]byte("1 (x)"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := ParseProcStat(data)
		if err == nil && st.CPUSeconds < 0 {
			t.Errorf("%q: %+v", data, st)
		}
	})
}
