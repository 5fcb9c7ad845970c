package journal

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/fsbench/fsbench/internal/workload"
)

// run writes files below root as a benchmark would and tells a journal:
// it is the writer side of the tests.
type run struct {
	t    testing.TB
	root string
	w    *Writer
}

func newRun(t testing.TB) *run {
	t.Helper()
	root := t.TempDir()
	w, err := Create(filepath.Join(t.TempDir(), "j"), root, 2, 7)
	if err != nil {
		t.Fatal(err)
	}
	return &run{t: t, root: root, w: w}
}

func (r *run) path(name string) string { return filepath.Join(r.root, name) }

// write writes data at off of name and journals it.
func (r *run) write(name string, off int64, data []byte) {
	r.t.Helper()
	f, err := os.OpenFile(r.path(name), os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		r.t.Fatal(err)
	}
	t0 := time.Now()
	if _, err := f.WriteAt(data, off); err != nil {
		r.t.Fatal(err)
	}
	f.Close()
	r.w.Trace(0, workload.Event{Op: "write", Path: r.path(name), Offset: off, Size: int64(len(data)), Done: int64(len(data)), Data: data, Start: t0, Dur: time.Since(t0)})
}

func (r *run) event(op, name string) {
	r.w.Trace(1, workload.Event{Op: op, Path: r.path(name), Start: time.Now()})
}

// verify closes the journal, reads it and verifies the tree.
func (r *run) verify() *Summary {
	r.t.Helper()
	if err := r.w.Close(); err != nil {
		r.t.Fatal(err)
	}
	j, err := ReadFile(r.w.f.Name())
	if err != nil {
		r.t.Fatal(err)
	}
	s, err := Verify(context.Background(), j, Dir(r.root))
	if err != nil {
		r.t.Fatal(err)
	}
	return s
}

func random(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func TestRoundTrip(t *testing.T) {
	r := newRun(t)
	r.write("a", 100, random(9000))
	r.event("fsync", "a")
	r.event("create", "b")
	r.w.Trace(1, workload.Event{Op: "rename", Path: r.path("b"), To: r.path("c"), Start: time.Now()})
	r.event("unlink", "c")
	r.event("read", "a")                                                            // not journalled
	r.w.Trace(0, workload.Event{Op: "write", Path: r.path("a"), Err: os.ErrClosed}) // failed: not journalled
	if err := r.w.Close(); err != nil {
		t.Fatal(err)
	}
	j, err := ReadFile(r.w.f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if j.Header.Root != r.root || j.Header.Seed != 7 || j.Ignored != 0 {
		t.Fatalf("header %+v, ignored %d", j.Header, j.Ignored)
	}
	var types []byte
	for _, rec := range j.Records {
		types = append(types, rec.Type)
	}
	if string(types) != "WSNRD" {
		t.Fatalf("records %q", types)
	}
	w := j.Records[0]
	if w.Path != "a" || w.Off != 100 || w.Len != 9000 || len(w.Sums) != 3 || j.Records[3].To != "c" {
		t.Fatalf("write %+v, rename %+v", w, j.Records[3])
	}
}

// TestSamePath: a write to the path of the record before it in its frame
// leaves the path out, and reads back with it.
func TestSamePath(t *testing.T) {
	r := newRun(t)
	for _, name := range []string{"a", "a", "b", "b", "a"} {
		r.write(name, 0, random(10))
	}
	r.event("fsync", "a")
	r.write("a", 10, random(10))
	r.w.Flush()
	r.write("a", 20, random(10))
	r.w.Close()
	j, err := ReadFile(r.w.f.Name())
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, rec := range j.Records {
		paths = append(paths, rec.Path)
	}
	if got := strings.Join(paths, ","); got != "a,a,b,b,a,a,a,a" {
		t.Fatalf("paths %s", got)
	}
}

// TestTornTail cuts the journal at every byte of its last frame: the
// records before it are read, the rest is ignored and counted.
func TestTornTail(t *testing.T) {
	r := newRun(t)
	r.write("a", 0, random(4096))
	if err := r.w.Flush(); err != nil {
		t.Fatal(err)
	}
	r.write("a", 4096, random(4096))
	r.w.Close()
	whole, _ := os.ReadFile(r.w.f.Name())
	j, err := Read(bytes.NewReader(whole))
	if err != nil || len(j.Records) != 2 {
		t.Fatalf("%v %d", err, len(j.Records))
	}
	last := lastFrame(whole)
	for cut := last + 1; cut < len(whole); cut++ {
		j, err := Read(bytes.NewReader(whole[:cut]))
		if err != nil || len(j.Records) != 1 || j.Ignored != int64(cut-last) {
			t.Fatalf("cut at %d: %v, %d records, %d ignored", cut, err, len(j.Records), j.Ignored)
		}
	}
	flipped := bytes.Clone(whole)
	flipped[len(flipped)-3] ^= 1
	if j, err := Read(bytes.NewReader(flipped)); err != nil || len(j.Records) != 1 || j.Ignored == 0 {
		t.Fatalf("a flipped bit: %v", err)
	}
	if _, err := Read(bytes.NewReader([]byte("hello"))); err == nil {
		t.Fatal("not a journal, read")
	}
}

// lastFrame is the offset of the last frame of a journal.
func lastFrame(whole []byte) int {
	at, last := len(Magic), 0
	for at < len(whole) {
		last = at
		at += frameHead + int(binary.LittleEndian.Uint32(whole[at:]))
	}
	return last
}

func TestVerifyIntact(t *testing.T) {
	r := newRun(t)
	r.write("a", 0, random(3*Cell))
	r.write("a", 3*Cell+10, random(5000))
	r.event("fsync", "a")
	r.write("b", 0, random(100))
	s := r.verify()
	if s.Failed() != 0 || s.UnsyncedFailed != 0 || s.Held != 3 || s.Writes != 3 || s.Unsynced != 1 || s.Files != 2 {
		t.Fatalf("%+v", s)
	}
}

// plant writes two synced files, damages them with f and verifies.
func plant(t *testing.T, sync bool, f func(r *run, a, b []byte)) *Summary {
	r := newRun(t)
	a, b := random(4*Cell), random(2*Cell)
	r.write("a", 0, a)
	r.write("b", 0, b)
	if sync {
		r.event("fsync", "a")
		r.event("fsync", "b")
	}
	f(r, a, b)
	return r.verify()
}

func overwrite(t *testing.T, path string, off int64, data []byte) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(data, off); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyFindsPlantedLoss(t *testing.T) {
	cases := []struct {
		name, kind, detail string
		plant              func(r *run, a, b []byte)
	}{
		{"overwritten", Unexpected, "content never written there", func(r *run, a, b []byte) { overwrite(t, r.path("a"), Cell, random(Cell)) }},
		{"zeroed", Lost, "zeros", func(r *run, a, b []byte) { overwrite(t, r.path("b"), 0, make([]byte, 2*Cell)) }},
		{"truncated", Lost, "file ends before it", func(r *run, a, b []byte) { os.Truncate(r.path("a"), 0) }},
		{"torn", Torn, "partly new, past the end", func(r *run, a, b []byte) { os.Truncate(r.path("a"), 2*Cell) }},
		{"half zero", Torn, "partly new, zeros", func(r *run, a, b []byte) { overwrite(t, r.path("b"), Cell, make([]byte, Cell)) }},
		{"removed", Lost, "file missing", func(r *run, a, b []byte) { os.Remove(r.path("b")) }},
	}
	for _, c := range cases {
		s := plant(t, true, c.plant)
		if s.Failed() != 1 || len(s.Findings) != 1 || s.Findings[0].Kind != c.kind || s.Findings[0].Detail != c.detail || !s.Findings[0].Durable {
			t.Errorf("%s: %+v", c.name, s)
		}
		// Not synced: named, not counted.
		s = plant(t, false, c.plant)
		if s.Failed() != 0 || s.UnsyncedFailed != 1 || len(s.Findings) != 1 || s.Findings[0].Durable {
			t.Errorf("%s unsynced: %+v", c.name, s)
		}
	}
}

// TestVerifyStale: a range rewritten and synced that holds its first
// content again is stale; a delete that did not hold is named.
func TestVerifyStale(t *testing.T) {
	r := newRun(t)
	old := random(2 * Cell)
	r.write("a", 0, old)
	r.write("a", 0, random(2*Cell))
	r.event("fsync", "a")
	r.write("gone", 0, random(10))
	r.event("unlink", "gone")
	overwrite(t, r.path("a"), 0, old)
	s := r.verify()
	if s.Stale != 1 || s.Failed() != 1 || s.Findings[0].Detail != "an earlier write's content" || s.Findings[0].BadBytes != 2*Cell || s.Writes != 1 || s.Recorded != 3 {
		t.Fatalf("%+v", s)
	}
	if s.UnsyncedFailed != 1 || s.Findings[1].Kind != Unexpected || s.Findings[1].Path != "gone" {
		t.Fatalf("the delete that did not hold: %+v", s.Findings)
	}
}

// TestSyncCoversEarlierOnly: an fsync makes durable what was acknowledged
// before it began, not what came after.
func TestSyncCoversEarlierOnly(t *testing.T) {
	r := newRun(t)
	r.write("a", 0, random(Cell))
	r.event("fsync", "a")
	r.write("a", Cell, random(Cell))
	os.Truncate(r.path("a"), 0)
	s := r.verify()
	if s.Lost != 1 || s.UnsyncedFailed != 1 || s.Unsynced != 1 {
		t.Fatalf("%+v", s)
	}
}

// TestVerifyStaysBelowRoot: a record whose path leads out of the root (a
// journal made up by hand) is an error, and nothing outside is read.
func TestVerifyStaysBelowRoot(t *testing.T) {
	r := newRun(t)
	r.w.Trace(0, workload.Event{Op: "write", Path: "/etc/passwd", Done: 4, Data: []byte("root"), Start: time.Now()})
	r.w.Close()
	j, err := ReadFile(r.w.f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(context.Background(), j, Dir(r.root)); err == nil || !strings.Contains(err.Error(), "not below") {
		t.Fatalf("a path out of the root: %v", err)
	}
}

// TestAliasRecordsPathsBelowRoot: events of a directory reached by
// another name (an agent's /proc/self/fd/N) are journalled as the paths
// below the root that name it, and verify finds them there; a path under
// neither is kept as it was.
func TestAliasRecordsPathsBelowRoot(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "run", "host-0"), 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := os.Open(filepath.Join(root, "run"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	base := "/proc/self/fd/" + strconv.Itoa(int(d.Fd()))
	jp := filepath.Join(t.TempDir(), "j")
	w, err := Create(jp, root, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	w.Alias(base, "run")
	data := bytes.Repeat([]byte("fsbench!"), 1024)
	p := filepath.Join(base, "host-0", "f")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	w.Trace(0, workload.Event{Op: "write", Path: p, Size: int64(len(data)), Done: int64(len(data)), Data: data, Start: time.Now()})
	w.Trace(0, workload.Event{Op: "fsync", Path: p, Start: time.Now()})
	w.Trace(0, workload.Event{Op: "unlink", Path: "/elsewhere/g", Start: time.Now()})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	j, err := ReadFile(jp)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, r := range j.Records {
		paths = append(paths, r.Path)
	}
	if strings.Join(paths, " ") != "run/host-0/f run/host-0/f /elsewhere/g" {
		t.Fatalf("paths %q", paths)
	}
	j.Records = j.Records[:2]
	s, err := Verify(context.Background(), j, Dir(root))
	if err != nil || s.Held != 1 || s.Failed() != 0 || s.Unsynced != 0 {
		t.Fatalf("verify: %v %+v", err, s)
	}
}

// TestAddSumsJournals: two journals' summaries added count both, keep
// the findings of each and each one's verdict.
func TestAddSumsJournals(t *testing.T) {
	a, b := newRun(t), newRun(t)
	for _, r := range []*run{a, b} {
		r.event("create", "f")
		r.write("f", 0, bytes.Repeat([]byte{7}, 8192))
		r.event("fsync", "f")
	}
	overwriteZeros(t, b.path("f"))
	sa, sb := a.verify(), b.verify()
	var s Summary
	s.Add("a", "h0", sa)
	s.Add("b", "h1", sb)
	if s.Writes != 2 || s.Held != 1 || s.Failed() != 1 || len(s.Findings) != 1 || len(s.Journals) != 2 ||
		s.Journals[0].Failed != 0 || s.Journals[1].Failed != 1 || !strings.HasPrefix(s.Line(), "verify: LOST WRITES: 1 of 2 durable writes held") {
		t.Fatalf("%+v\n%s", s, s.Line())
	}
}

func overwriteZeros(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, make([]byte, 8192), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestNextRecords: a write right after the frame's previous one, of its
// length, is a Next record of a few bytes, read back as the whole write
// it stands for; a write that breaks the run (elsewhere, of another
// length, after another record) is a full record again.
func TestNextRecords(t *testing.T) {
	r := newRun(t)
	data := random(8 * Cell)
	for i := range 5 {
		r.write("a", int64(i)*Cell, data[i*Cell:(i+1)*Cell])
	}
	r.write("a", 6*Cell, data[6*Cell:7*Cell])     // a gap
	r.write("a", 7*Cell, data[7*Cell:7*Cell+100]) // another length
	r.event("fsync", "a")
	r.write("a", 5*Cell, data[5*Cell:6*Cell]) // after another record
	r.w.Flush()
	raw, _ := os.ReadFile(r.w.f.Name())
	if n := bytes.Count(raw, []byte{Next}); n < 4 {
		t.Errorf("%d Next type bytes in the journal, want 4 at least", n)
	}
	j, err := ReadFile(r.w.f.Name())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	last := int64(-1)
	for _, rec := range j.Records {
		if rec.Type == Write {
			got = append(got, strconv.FormatInt(rec.Off/Cell, 10)+"+"+strconv.FormatInt(rec.Len, 10))
			if rec.T < last || len(rec.Sums) != 1 {
				t.Errorf("write %+v after time %d", rec, last)
			}
			last = rec.T
		}
	}
	if s := strings.Join(got, ","); s != "0+4096,1+4096,2+4096,3+4096,4+4096,6+4096,7+100,5+4096" {
		t.Fatalf("writes read back: %s", s)
	}
	if s := r.verify(); s.Failed() != 0 || s.Held != 8 {
		t.Fatalf("intact: %+v", s)
	}
	// A piece of a Next record is checked as any other.
	overwrite(t, r.path("a"), 3*Cell+512, []byte("torn sector"))
	r.w = nil
	s, err := Verify(context.Background(), j, Dir(r.root))
	if err != nil || s.Failed() != 1 || s.Findings[0].Offset != 3*Cell {
		t.Fatalf("damage in the fourth write: %+v, %v", s, err)
	}
}

// TestNextFirstInFrame: a Next record with no write before it in its frame
// does not stand for anything, and the frame is torn.
func TestNextFirstInFrame(t *testing.T) {
	b := append([]byte(Magic), seal(appendRecord(make([]byte, frameHead), &Record{Type: Header, Root: "/r"}))...)
	p := append(make([]byte, frameHead), Next, 5)
	p = binary.LittleEndian.AppendUint32(p, 1)
	b = append(b, seal(p)...)
	j, err := Read(bytes.NewReader(b))
	if err != nil || len(j.Records) != 0 || j.Ignored != int64(len(p)) {
		t.Fatalf("journal %+v, %v", j, err)
	}
}

// TestVersion1 reads and verifies a journal as version 1 wrote it (its
// magic line, no Next records, fingerprintV1's sums).
func TestVersion1(t *testing.T) {
	root := t.TempDir()
	data := random(2 * Cell)
	if err := os.WriteFile(filepath.Join(root, "a"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	frame := appendRecord(make([]byte, frameHead), &Record{Type: Header, Root: root})
	for i := range 2 {
		frame = appendRecord(frame, &Record{Type: Write, T: int64(i + 1), Path: "a", Off: int64(i) * Cell, Len: Cell, Sums: []uint32{fingerprintV1(data[i*Cell : (i+1)*Cell])}})
	}
	frame = appendRecord(frame, &Record{Type: Sync, T: 3, Path: "a"})
	j, err := Read(bytes.NewReader(append([]byte(magicV1), seal(frame)...)))
	if err != nil {
		t.Fatal(err)
	}
	if s, err := Verify(context.Background(), j, Dir(root)); err != nil || s.Failed() != 0 || s.Held != 2 {
		t.Fatalf("intact: %+v, %v", s, err)
	}
	overwrite(t, filepath.Join(root, "a"), Cell, random(8))
	if s, err := Verify(context.Background(), j, Dir(root)); err != nil || s.Failed() != 1 || s.Findings[0].Offset != Cell {
		t.Fatalf("damaged: %+v, %v", s, err)
	}
}

// TestFingerprint: the unrolled fingerprint of a whole cell is the one of
// its loop; a change to any sampled word, or two sectors swapped, changes
// it; and pieces of every length are summed.
func TestFingerprint(t *testing.T) {
	for range 100 {
		b := random(Cell)
		loop := seed(Cell)
		for s := 0; s < Cell; s += 512 {
			loop += lane(word(b[s:]), s)
		}
		if want := finish(loop + lane(word(b[Cell-8:]), Cell)); Fingerprint(b) != want {
			t.Fatalf("unrolled %x, loop %x", Fingerprint(b), want)
		}
		sum := Fingerprint(b)
		for _, at := range []int{0, 512 + 7, 3584 + 3, Cell - 1} {
			c := bytes.Clone(b)
			c[at] ^= 1
			if Fingerprint(c) == sum {
				t.Errorf("byte %d changed, the sum did not", at)
			}
		}
		c := bytes.Clone(b)
		copy(c[512:1024], b[1024:1536])
		copy(c[1024:1536], b[512:1024])
		if Fingerprint(c) == sum {
			t.Error("two sectors swapped, the sum did not change")
		}
	}
	sums := map[uint32]int{}
	for n := 1; n <= Cell; n++ {
		sums[Fingerprint(make([]byte, n))] = n
	}
	if len(sums) != Cell {
		t.Errorf("%d distinct sums of zeros of %d lengths", len(sums), Cell)
	}
}

// TestWorkerBufferTwoLines: a worker's buffer is 128 bytes, two cache
// lines of its own, so that two workers' writes never share a line.
func TestWorkerBufferTwoLines(t *testing.T) {
	if n := unsafe.Sizeof(wbuf{}); n != 128 {
		t.Fatalf("wbuf is %d bytes, want 128", n)
	}
}
