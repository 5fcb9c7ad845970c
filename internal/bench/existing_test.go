package bench

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/internal/workload"
)

// userTree makes a tree of someone else's data in dir: files of several
// sizes (empty, smaller than a block, a block, larger) in nested
// directories, and symbolic links to a file and to a directory. Every
// file's access time is older than its modification time, so that a
// plain read updates it even under relatime. It returns the regular
// files' count and bytes.
func userTree(t *testing.T, dir string) (files int, bytes int64) {
	t.Helper()
	sizes := map[string]int64{
		"empty": 0, "one": 1, "a/odd": 4097, "a/block": 64 << 10, "a/b/over": 64<<10 + 3,
		"a/b/c/big": 3 << 20, "a/b/c/tail": 1<<20 + 511, "d/e/f/g": 100 << 10,
	}
	old := time.Unix(1_000_000_000, 0)
	for name, n := range sizes {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		data := make([]byte, n)
		rand.Read(data)
		if err := os.WriteFile(p, data, 0o640); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, time.Now()); err != nil {
			t.Fatal(err)
		}
		files++
		bytes += n
	}
	for link, to := range map[string]string{"a/link": "b/c/big", "dirlink": "a"} {
		if err := os.Symlink(to, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	return files, bytes
}

// atimeUpdates reports whether the mount of dir updates access times
// at all.
func atimeUpdates(t *testing.T, dir string) bool {
	m, err := sysio.FindMount(dir)
	if err != nil {
		t.Fatal(err)
	}
	return !strings.Contains(","+m.Options+",", ",noatime,")
}

func existingOptions(dir string) Options {
	o := Defaults()
	o.Path, o.ReadExisting, o.Threads, o.BlockSize = dir, true, 3, 64<<10
	return o
}

// testReadExisting reads a user tree through view (the tree itself, or a
// mount of it) whose data is in src: the run reads every regular file,
// once, and leaves every entry of src and view as it was.
func testReadExisting(t *testing.T, src, view string, direct bool) {
	files, size := userTree(t, src)
	local := src == view
	beforeSrc, beforeView := testenv.Snapshot(t, src, local), testenv.Snapshot(t, view, local)
	o := existingOptions(view)
	o.Direct = direct
	res := &report.Result{}
	if err := RunExisting(context.Background(), o, res); err != nil {
		t.Fatal(err)
	}
	var items, bytes, errs int64
	for _, p := range res.Phases {
		items, bytes, errs = items+p.Items, bytes+p.Bytes, errs+p.Errors
	}
	if items != int64(files) || bytes != size || errs != 0 || len(res.Phases) != 2 {
		t.Errorf("read %d files, %d bytes, %d errors in %d phases; want %d files, %d bytes in 2", items, bytes, errs, len(res.Phases), files, size)
	}
	if got := res.Parameters.Get("open"); got != "noatime" {
		t.Errorf("open = %v, want noatime (the test runs as the files' owner)", got)
	}
	if big := res.Phases[len(res.Phases)-1]; big.Name != ExistingBig || big.Ops != 2+48+17+2 {
		t.Errorf("last phase %s has %d block reads, want %s with 69", big.Name, big.Ops, ExistingBig)
	}
	testenv.SameTree(t, "source", beforeSrc, testenv.Snapshot(t, src, local))
	testenv.SameTree(t, "mount", beforeView, testenv.Snapshot(t, view, local))

	// The check can fail: a plain read through the same path moves the
	// access time of the data.
	if atimeUpdates(t, src) {
		if _, err := os.ReadFile(filepath.Join(view, "a/odd")); err != nil {
			t.Fatal(err)
		}
		if a := testenv.Snapshot(t, src, local)["a/odd"]; a.Atime == beforeSrc["a/odd"].Atime {
			t.Errorf("a plain read left the atime of a/odd as it was: the atime check proves nothing here")
		}
	}
}

func TestReadExistingLocal(t *testing.T) {
	dir := t.TempDir()
	testReadExisting(t, dir, dir, false)
}

func TestReadExistingFUSE(t *testing.T) {
	src := t.TempDir()
	testReadExisting(t, src, testenv.Bindfs(t, src), false)
}

func TestReadExistingDirect(t *testing.T) {
	dir := testenv.Ext4(t, "64M")
	testReadExisting(t, dir, dir, true)
}

// TestReadExistingReadOnlyMount reads a tree on a read-only mount, where
// the default benchmark cannot run.
func TestReadExistingReadOnlyMount(t *testing.T) {
	src := t.TempDir()
	files, size := userTree(t, src)
	o := existingOptions(testenv.ReadOnlyBind(t, src))
	o.Sample = Sample{Count: 3}
	res := &report.Result{}
	if err := RunExisting(context.Background(), o, res); err != nil {
		t.Fatal(err)
	}
	var items, bytes int64
	for _, p := range res.Phases {
		items, bytes = items+p.Items, bytes+p.Bytes
	}
	if items != 3 || bytes <= 0 || bytes >= size || files <= 3 {
		t.Errorf("a sample of 3 read %d files, %d bytes (of %d files, %d bytes)", items, bytes, files, size)
	}
	if res.Parameters.Get("sample") != "3" || res.Parameters.Get("files") != 3 || res.Parameters.Get("files_listed") != files {
		t.Errorf("parameters = %v", res.Parameters)
	}
}

func TestReadExistingRefusals(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		set  func(*Options)
		want string
	}{
		{func(o *Options) { o.Verify = true }, "--verify"},
		{func(o *Options) { o.Fsync = true }, "--fsync"},
		{func(o *Options) { o.Path = filepath.Join(dir, "missing") }, "no such file"},
		{func(o *Options) {}, "no regular files"},
	} {
		o := existingOptions(dir)
		c.set(&o)
		err := RunExisting(context.Background(), o, &report.Result{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want one saying %q", err, c.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the refused runs left %d entries in %s", len(entries), dir)
	}
}

func TestParseSample(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Sample
		bad  bool
	}{
		{"500", Sample{Count: 500}, false},
		{"0.25", Sample{Fraction: 0.25}, false},
		{"10%", Sample{Fraction: 0.1}, false},
		{"1", Sample{Count: 1}, false},
		{"0", Sample{}, true},
		{"-3", Sample{}, true},
		{"1.5", Sample{}, true},
		{"150%", Sample{}, true},
		{"0%", Sample{}, true},
		{"NaN", Sample{}, true},
		{"", Sample{}, true},
		{"ten", Sample{}, true},
	} {
		got, err := ParseSample(c.in)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("ParseSample(%q) = %+v, %v", c.in, got, err)
		}
	}
	files := make([]workload.TreeFile, 10)
	for i := range files {
		files[i] = workload.TreeFile{Name: fmt.Sprintf("f%02d", i), Size: int64(i)}
	}
	if got := (Sample{Fraction: 0.3}).pick(append([]workload.TreeFile(nil), files...), 7); len(got) != 3 {
		t.Errorf("30%% of 10 files picked %d", len(got))
	}
	got := (Sample{Count: 4}).pick(append([]workload.TreeFile(nil), files...), 7)
	if len(got) != 4 || !sortedNames(got) {
		t.Errorf("a sample of 4 = %v, want 4 files in path order", got)
	}
}

func sortedNames(fs []workload.TreeFile) bool {
	for i := 1; i < len(fs); i++ {
		if fs[i-1].Name >= fs[i].Name {
			return false
		}
	}
	return true
}

// TestReadExistingCancelledListing: a run cancelled while it lists the
// tree ends as interrupted, with no phase and nothing in the tree changed.
func TestReadExistingCancelledListing(t *testing.T) {
	dir := t.TempDir()
	userTree(t, dir)
	before := testenv.Snapshot(t, dir, true)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := &report.Result{}
	err := RunExisting(ctx, existingOptions(dir), res)
	if !errors.Is(err, context.Canceled) || !res.Interrupted || len(res.Phases) != 0 {
		t.Errorf("err = %v, interrupted %v, %d phases", err, res.Interrupted, len(res.Phases))
	}
	testenv.SameTree(t, "tree", before, testenv.Snapshot(t, dir, true))
}
