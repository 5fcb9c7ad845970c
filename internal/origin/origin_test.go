package origin

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/units"
)

const fixtureProc = "../../testdata/stats/proc"

// procCopy copies the fixture /proc tree, so that a test can move its
// counters between two readings.
func procCopy(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "proc")
	if out, err := exec.Command("cp", "-a", fixtureProc, dir).CombinedOutput(); err != nil {
		t.Fatalf("copy fixture: %v: %s", err, out)
	}
	return dir
}

// rewrite replaces old with new in file, which must hold old.
func rewrite(t *testing.T, file, old, new string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("%s does not hold %q", file, old)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// measure runs a made-up read phase of read bytes between a probe's two
// readings, with move changing the counters in between.
func measure(t *testing.T, p *Probe, read int64, move func()) (*report.Origin, string) {
	t.Helper()
	r := p.Begin(context.Background(), nil, false)
	move()
	ph := report.PhaseResult{Name: "read-big", Bytes: read}
	w := r.End(context.Background(), &ph, read)
	if ph.Origin == nil {
		t.Fatal("End set no origin")
	}
	return ph.Origin, w
}

func TestNFSFromMountstats(t *testing.T) {
	root := procCopy(t)
	p := ForMount(root, sysio.Mount{FSType: "nfs4", MountPoint: "/mnt/nfs", Source: "192.168.1.10:/export"}, nil)
	if p.Source() != "NFS client" {
		t.Fatalf("source %q (unknown: %s), want NFS client", p.Source(), p.Unknown())
	}
	// The client read 16 MiB more from the server (the fifth figure of
	// "bytes:") while the phase read 64 MiB: a quarter from the storage.
	o, w := measure(t, p, 64*units.MiB, func() {
		rewrite(t, filepath.Join(root, "self", "mountstats"),
			"bytes:	1207640230 104857600 0 0 1210214218", "bytes:	1274749094 104857600 0 0 1226991434")
	})
	if o.StorageBytes == nil || *o.StorageBytes != 16*units.MiB {
		t.Fatalf("storage bytes %v, want 16 MiB (origin %+v)", o.StorageBytes, o)
	}
	if o.FromStorage == nil || *o.FromStorage != 25 {
		t.Fatalf("from storage %v, want 25%%", o.FromStorage)
	}
	if !strings.Contains(w, "the NFS client's cache") || !strings.Contains(w, "--direct") {
		t.Errorf("warning %q names neither the NFS client's cache nor the remedy", w)
	}
}

func TestNFSMountMissingFromMountstats(t *testing.T) {
	p := ForMount(fixtureProc, sysio.Mount{FSType: "nfs", MountPoint: "/mnt/other"}, nil)
	o, _ := measure(t, p, units.MiB, func() {})
	if o.FromStorage != nil || !strings.Contains(o.Unknown, "/mnt/other") {
		t.Fatalf("origin %+v: want unknown naming the mount", o)
	}
}

func TestBlockDeviceFromDiskstats(t *testing.T) {
	root := procCopy(t)
	p := ForMount(root, sysio.Mount{FSType: "ext4", Major: 7, Minor: 0, MountPoint: "/mnt/img", Source: "/dev/loop0"}, nil)
	if p.Source() != "block device loop0 (7:0)" {
		t.Fatalf("source %q (unknown: %s)", p.Source(), p.Unknown())
	}
	// 48 sectors read before; 48 + 2048 (1 MiB) after, of 1 MiB read.
	o, w := measure(t, p, units.MiB, func() {
		rewrite(t, filepath.Join(root, "diskstats"), "loop0 12 0 48 ", "loop0 20 0 2096 ")
	})
	if o.StorageBytes == nil || *o.StorageBytes != units.MiB || o.FromStorage == nil || *o.FromStorage != 100 {
		t.Fatalf("origin %+v: want 1 MiB, 100%% from storage", o)
	}
	if w != "" {
		t.Errorf("a phase read from storage warns: %q", w)
	}
}

func TestReadAheadCapsAtFullyFromStorage(t *testing.T) {
	root := procCopy(t)
	p := ForMount(root, sysio.Mount{FSType: "ext4", Major: 7, Minor: 0, MountPoint: "/mnt/img"}, nil)
	o, _ := measure(t, p, units.MiB, func() {
		rewrite(t, filepath.Join(root, "diskstats"), "loop0 12 0 48 ", "loop0 20 0 4144 ")
	})
	if *o.StorageBytes != 2*units.MiB || *o.FromStorage != 100 {
		t.Fatalf("origin %+v: want 2 MiB from storage kept, 100%% shown", o)
	}
}

func TestDeviceMissingFromDiskstats(t *testing.T) {
	p := ForMount(fixtureProc, sysio.Mount{FSType: "ext4", Major: 8, Minor: 99, MountPoint: "/mnt/x", Source: "/dev/sdz"}, nil)
	if p.Source() != "" || !strings.Contains(p.Unknown(), "8:99 is not in") {
		t.Fatalf("source %q, unknown %q: want unknown naming 8:99", p.Source(), p.Unknown())
	}
}

func TestNoDeviceIsUnknownNeverAGuess(t *testing.T) {
	for _, m := range []sysio.Mount{
		{FSType: "tmpfs", MountPoint: "/dev/shm", Source: "tmpfs"},
		{FSType: "overlay", MountPoint: "/", Source: "overlay"},
		{FSType: "fuse.sshfs", MountPoint: "/mnt/s", Source: "user@host:/data"},
	} {
		p := ForMount(fixtureProc, m, nil)
		if p.Source() != "" || p.Unknown() == "" {
			t.Errorf("%s: source %q, unknown %q: want unknown with a reason", m.FSType, p.Source(), p.Unknown())
			continue
		}
		o, _ := measure(t, p, units.MiB, func() {})
		if o.FromStorage != nil || o.StorageBytes != nil || o.Unknown != p.Unknown() {
			t.Errorf("%s: origin %+v: want unknown", m.FSType, o)
		}
	}
}

func TestFUSEOfADirectoryFollowsItsSource(t *testing.T) {
	src := t.TempDir()
	lower := sysio.Mount{FSType: "ext4", Major: 7, Minor: 0, MountPoint: filepath.Dir(src)}
	fuse := sysio.Mount{FSType: "fuse", MountPoint: "/mnt/bind", Source: src}
	p := ForMount(fixtureProc, fuse, []sysio.Mount{{FSType: "ext4", Major: 254, Minor: 1, MountPoint: "/"}, lower, fuse})
	if p.Source() != "block device loop0 (7:0)" {
		t.Fatalf("source %q (unknown: %s): want the device under the FUSE mount's source", p.Source(), p.Unknown())
	}
}

func TestJuiceFSFromItsStats(t *testing.T) {
	mnt := t.TempDir()
	copyFile := func(name string) {
		data, err := os.ReadFile(filepath.Join("../../testdata/juicefs", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mnt, ".stats"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyFile("jfs-stats-before.txt")
	p := ForMount(fixtureProc, sysio.Mount{FSType: "fuse.juicefs", MountPoint: mnt, Source: "JuiceFS:myjfs"}, nil)
	// The real samples of a juicefs bench run: 2,149,318,656 bytes of
	// object GETs and 24,379,392 bytes of block-cache hits between them.
	o, w := measure(t, p, 2200*units.MiB, func() { copyFile("jfs-stats-after.txt") })
	if o.Source != "JuiceFS object storage" || o.StorageBytes == nil || *o.StorageBytes != 2149318656 {
		t.Fatalf("origin %+v: want 2149318656 bytes of object GETs", o)
	}
	if o.CacheBytes == nil || *o.CacheBytes != 24379392 || o.Cache != "JuiceFS block cache" {
		t.Fatalf("origin %+v: want 24379392 bytes of block-cache hits", o)
	}
	if w != "" {
		t.Errorf("a phase read mostly from the object store warns: %q", w)
	}
}

// TestJuiceFSBlockCacheOnly reads on a client that has made no GET yet:
// its labelled GET series does not exist, which is zero bytes from the
// object store, not unknown; the block cache served the phase.
func TestJuiceFSBlockCacheOnly(t *testing.T) {
	mnt := t.TempDir()
	before, err := os.ReadFile("../../testdata/juicefs/jfs-stats-before.txt")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(before), "data_bytes_GET") {
		t.Fatal("the fixture has GET bytes: it no longer shows a client before its first GET")
	}
	write := func(data string) {
		if err := os.WriteFile(filepath.Join(mnt, ".stats"), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(string(before))
	p := ForMount(fixtureProc, sysio.Mount{FSType: "fuse.juicefs", MountPoint: mnt}, nil)
	o, w := measure(t, p, 64*units.MiB, func() {
		write(strings.Replace(string(before), "juicefs_blockcache_hit_bytes 0", "juicefs_blockcache_hit_bytes 67108864", 1))
	})
	if o.StorageBytes == nil || *o.StorageBytes != 0 || o.FromStorage == nil || *o.FromStorage != 0 || *o.CacheBytes != 64*units.MiB {
		t.Fatalf("origin %+v: want 0 bytes from the object store, 64 MiB from the block cache", o)
	}
	if !strings.Contains(w, "JuiceFS block cache served the rest") {
		t.Errorf("warning %q does not name the JuiceFS block cache", w)
	}
	// Without the client's own counters the missing series stays unknown.
	write("juicefs_uptime 10\n")
	o, _ = measure(t, p, units.MiB, func() {})
	if o.FromStorage != nil || !strings.Contains(o.Unknown, "data_bytes_GET is missing") {
		t.Errorf("origin %+v: want unknown, the GET counter missing", o)
	}
}

// TestWarningRemedy: a phase the device did not serve is warned of with
// the usual remedy, with the one that says --direct did not bypass the
// cache after O_DIRECT reads, and with a command's own when it has one.
func TestWarningRemedy(t *testing.T) {
	for _, tc := range []struct {
		direct       bool
		remedy, want string
	}{
		{false, "", Remedy},
		{true, "", DirectRemedy},
		{false, "run with --drop-caches auto", "run with --drop-caches auto"},
	} {
		root := procCopy(t)
		p := ForMount(root, sysio.Mount{FSType: "ext4", Major: 7, Minor: 0, MountPoint: "/mnt/img"}, nil)
		p.Direct, p.Remedy = tc.direct, tc.remedy
		_, w := measure(t, p, units.MiB, func() {})
		if !strings.HasSuffix(w, "; "+tc.want) || (tc.direct && strings.Contains(w, "or use --direct")) {
			t.Errorf("direct %v, remedy %q: warning %q, want it to end with %q", tc.direct, tc.remedy, w, tc.want)
		}
	}
}

func TestWarningNamesTheCache(t *testing.T) {
	i := func(v int64) *int64 { return &v }
	cases := []struct {
		name string
		o    report.Origin
		want string // "" for no warning
	}{
		{"from storage", report.Origin{Source: "block device vda (254:0)", ReadBytes: 100, StorageBytes: i(96)}, ""},
		{"page cache", report.Origin{Source: "block device vda (254:0)", ReadBytes: 100, StorageBytes: i(3)}, "the page cache served the rest"},
		{"block cache", report.Origin{Source: "JuiceFS object storage", ReadBytes: 100, StorageBytes: i(10), CacheBytes: i(90), Cache: "JuiceFS block cache"}, "JuiceFS block cache served the rest"},
		{"unknown, cached", report.Origin{ReadBytes: 100, PageCacheBytes: i(100), Unknown: "tmpfs has no block device"}, "was in the page cache before it began (from storage unknown: tmpfs has no block device)"},
		{"unknown, not cached", report.Origin{ReadBytes: 100, PageCacheBytes: i(10), Unknown: "tmpfs"}, ""},
		{"unknown, page cache unknown", report.Origin{ReadBytes: 100, Unknown: "tmpfs"}, ""},
		{"nothing read", report.Origin{Source: "NFS client", StorageBytes: i(0)}, ""},
	}
	for _, tc := range cases {
		o := tc.o
		o.SetFromStorage()
		w := Warning("read-big", &o, Remedy)
		switch {
		case tc.want == "" && w != "":
			t.Errorf("%s: warning %q, want none", tc.name, w)
		case tc.want != "" && (!strings.Contains(w, tc.want) || !strings.HasPrefix(w, "read-big: ") || !strings.Contains(w, Remedy)):
			t.Errorf("%s: warning %q, want one holding %q and the remedy", tc.name, w, tc.want)
		}
	}
}

// TestPageCacheCounts reads a file into the page cache and drops it again,
// with cachestat(2) and with the mincore(2) fallback.
func TestPageCacheCounts(t *testing.T) {
	f := filepath.Join(t.TempDir(), "data")
	size := 4 * units.MiB
	if err := os.WriteFile(f, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	both := func(want func(int64) bool, what string) {
		t.Helper()
		n, why := PageCache([]string{f})
		if n == nil || !want(*n) {
			t.Errorf("cachestat: %v bytes cached (%s), want %s", n, why, what)
		}
		fd, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		defer fd.Close()
		m, err := mincoreCached(int(fd.Fd()), f)
		if err != nil || !want(m) {
			t.Errorf("mincore: %d bytes cached (%v), want %s", m, err, what)
		}
	}
	if _, err := os.ReadFile(f); err != nil {
		t.Fatal(err)
	}
	both(func(n int64) bool { return n == size }, "all 4 MiB")
	if err := sysio.DropFileCache(f); err != nil {
		t.Fatal(err)
	}
	both(func(n int64) bool { return n < size/4 }, "under 1 MiB after dropping the file's pages")
}

func TestPageCacheUnknown(t *testing.T) {
	n, why := PageCache([]string{filepath.Join(t.TempDir(), "missing")})
	if n != nil || !strings.Contains(why, "missing") {
		t.Errorf("a missing file: %v, %q: want unknown naming it", n, why)
	}
	n, why = PageCache(make([]string, MaxFiles+1))
	if n != nil || !strings.Contains(why, "more than") {
		t.Errorf("too many files: %v, %q: want unknown saying so", n, why)
	}
}

// TestMachineFromBootID: the probes of one running kernel name the same
// machine, whatever process made them, and the name is no copy of the
// boot ID; a /proc without one names none.
func TestMachineFromBootID(t *testing.T) {
	a, b := New(t.TempDir()), New(t.TempDir())
	id, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		t.Fatal(err)
	}
	if a.machine == "" || a.machine != b.machine || strings.Contains(string(id), a.machine) {
		t.Errorf("machines %q and %q (boot ID %s): want one name, not the ID itself", a.machine, b.machine, id)
	}
	proc := procCopy(t)
	if m := sysio.Machine(proc); m != "" {
		t.Errorf("a /proc without a boot ID names machine %q", m)
	}
	if err := os.MkdirAll(filepath.Join(proc, "sys/kernel/random"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proc, "sys/kernel/random/boot_id"), []byte("0f1e2d3c-aaaa-bbbb-cccc-000000000001\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if m := sysio.Machine(proc); m == "" || m == a.machine {
		t.Errorf("another boot ID names machine %q (this one %q): want another name", m, a.machine)
	}
	ph := report.PhaseResult{Name: "ior-hard-read"}
	a.BeginUnlooked(context.Background(), "a shared file").End(context.Background(), &ph, 100)
	if o := ph.Origin; o == nil || o.Machine != a.machine || o.PageCacheBytes != nil || o.PageCacheUnknown != "a shared file" {
		t.Errorf("an unlooked reading gave %+v: want the machine, no page cache, and why", o)
	}
}
