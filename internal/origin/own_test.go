package origin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/units"
)

// writeIO writes this process's io file under root with read_bytes.
func writeIO(t *testing.T, root string, readBytes int64) {
	t.Helper()
	dir := filepath.Join(root, fmt.Sprint(os.Getpid()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf("rchar: 1\nwchar: 1\nsyscr: 1\nsyscw: 1\nread_bytes: %d\nwrite_bytes: 0\ncancelled_write_bytes: 0\n", readBytes)
	if err := os.WriteFile(filepath.Join(dir, "io"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOwnBytesOfSharedDevice: the device counted 64 MiB during a phase
// that read 1 MiB, which this process fetched: the from-storage figure is
// the process's 1 MiB (100%), and the device is named shared.
func TestOwnBytesOfSharedDevice(t *testing.T) {
	root := procCopy(t)
	writeIO(t, root, 10*units.MiB)
	p := ForMount(root, sysio.Mount{FSType: "ext4", Major: 7, Minor: 0, MountPoint: "/mnt/img"}, nil)
	o, _ := measure(t, p, units.MiB, func() {
		rewrite(t, filepath.Join(root, "diskstats"), "loop0 12 0 48 ", fmt.Sprintf("loop0 20 0 %d ", 48+64*2048))
		writeIO(t, root, 11*units.MiB)
	})
	if !o.Own || *o.StorageBytes != units.MiB || *o.DeviceBytes != 64*units.MiB || !o.Shared || *o.FromStorage != 100 || o.Clamped {
		t.Fatalf("origin %+v: want the process's 1 MiB, 100%%, of a shared device", o)
	}
	line := report.OriginLine(&report.PhaseResult{Title: "Read big file", Origin: o})
	for _, want := range []string{"100.0% from storage (block device loop0 (7:0): 1 MiB of 1 MiB, fetched by this process", "shared device: it read 64 MiB in all"} {
		if !strings.Contains(line, want) {
			t.Errorf("line %q lacks %q", line, want)
		}
	}
}

// TestOwnBytesClamped: the process fetched 3 MiB (metadata, read-ahead)
// for the 1 MiB it read: 100%, said to be clamped.
func TestOwnBytesClamped(t *testing.T) {
	root := procCopy(t)
	writeIO(t, root, 0)
	p := ForMount(root, sysio.Mount{FSType: "ext4", Major: 7, Minor: 0, MountPoint: "/mnt/img"}, nil)
	o, _ := measure(t, p, units.MiB, func() {
		rewrite(t, filepath.Join(root, "diskstats"), "loop0 12 0 48 ", fmt.Sprintf("loop0 20 0 %d ", 48+3*2048))
		writeIO(t, root, 3*units.MiB)
	})
	if !o.Own || *o.StorageBytes != 3*units.MiB || o.Shared || !o.Clamped || *o.FromStorage != 100 {
		t.Fatalf("origin %+v: want 3 MiB of the process, clamped to 100%%", o)
	}
	if line := report.OriginLine(&report.PhaseResult{Title: "Read", Origin: o}); !strings.Contains(line, "counted as 100%") {
		t.Errorf("line %q does not say the share was clamped", line)
	}
}

// TestOwnBytesOfOtherDevices: the process's count grew by 5 MiB while
// this device's grew by 2 MiB: the rest came from other devices (its
// program's pages read back after the caches were dropped), so of this
// one it fetched 2 MiB at most.
func TestOwnBytesOfOtherDevices(t *testing.T) {
	root := procCopy(t)
	writeIO(t, root, 0)
	p := ForMount(root, sysio.Mount{FSType: "ext4", Major: 7, Minor: 0, MountPoint: "/mnt/img"}, nil)
	o, _ := measure(t, p, 4*units.MiB, func() {
		rewrite(t, filepath.Join(root, "diskstats"), "loop0 12 0 48 ", fmt.Sprintf("loop0 20 0 %d ", 48+2*2048))
		writeIO(t, root, 5*units.MiB)
	})
	if !o.Own || *o.StorageBytes != 2*units.MiB || *o.DeviceBytes != 2*units.MiB || *o.FromStorage != 50 {
		t.Fatalf("origin %+v: want 2 MiB from this device, 50%%", o)
	}
}

// TestSharedDeviceWithoutOwnCount: without the process's count, a device
// that counted 64 MiB while the phase read 1 MiB is not the run's own:
// from storage is unknown, never 100% of someone else's reads.
func TestSharedDeviceWithoutOwnCount(t *testing.T) {
	root := procCopy(t) // no io file of this process in the fixture
	p := ForMount(root, sysio.Mount{FSType: "ext4", Major: 7, Minor: 0, MountPoint: "/mnt/img"}, nil)
	o, w := measure(t, p, units.MiB, func() {
		rewrite(t, filepath.Join(root, "diskstats"), "loop0 12 0 48 ", fmt.Sprintf("loop0 20 0 %d ", 48+64*2048))
	})
	if o.Own || !o.Shared || o.FromStorage != nil || !strings.HasPrefix(o.Unknown, "shared device: not the run's own: block device loop0 (7:0) counted 64 MiB") {
		t.Fatalf("origin %+v: want unknown, a shared device", o)
	}
	if w != "" {
		t.Errorf("warning %q on an unknown origin without page cache", w)
	}
}
