package live

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/workload"
)

func TestAccumulator(t *testing.T) {
	write := &workload.FilePhase{Name: "write-big", Kind: workload.Write}
	read := &workload.FilePhase{Name: "read-big", Kind: workload.Read}
	stat := &workload.FilePhase{Name: "stat", Kind: workload.Stat}
	snap := func(ops, bytes int64) metrics.Snapshot {
		return metrics.Snapshot{Ops: ops, Bytes: bytes, LatencyNs: ops * 1000}
	}
	type want struct{ ops, read, write int64 }
	steps := []struct {
		phase *workload.FilePhase
		snap  metrics.Snapshot
		want  want
		name  string
	}{
		{nil, snap(0, 0), want{0, 0, 0}, ""},
		{write, snap(10, 100), want{10, 0, 100}, "write-big"},
		{write, snap(20, 200), want{20, 0, 200}, "write-big"},
		// Between phases: the engine keeps the last phase's totals.
		{nil, snap(25, 250), want{25, 0, 250}, ""},
		// The next phase, seen after its counters overtook the last ones.
		{read, snap(30, 300), want{55, 300, 250}, "read-big"},
		// The reset is seen while no phase is current...
		{nil, snap(0, 0), want{55, 300, 250}, ""},
		// ...and then the phase: its counts are not added twice.
		{stat, snap(5, 0), want{60, 300, 250}, "stat"},
		{stat, snap(7, 0), want{62, 300, 250}, "stat"},
		// A new phase seen first with counters below the last ones.
		{write, snap(1, 10), want{63, 300, 260}, "write-big"},
	}
	var a Accumulator
	var prev Snapshot
	for i, st := range steps {
		a.Update(st.phase, st.snap)
		var s Snapshot
		a.Fill(&s)
		if s.Ops != st.want.ops || s.ReadBytes != st.want.read || s.WriteBytes != st.want.write || s.Phase != st.name {
			t.Errorf("step %d: ops %d read %d write %d phase %q, want %+v %q", i, s.Ops, s.ReadBytes, s.WriteBytes, s.Phase, st.want, st.name)
		}
		if s.LatencyNs != s.Ops*1000 {
			t.Errorf("step %d: latency %d for %d ops", i, s.LatencyNs, s.Ops)
		}
		if s.Ops < prev.Ops || s.ReadBytes < prev.ReadBytes || s.WriteBytes < prev.WriteBytes {
			t.Errorf("step %d: went backwards: %+v after %+v", i, s, prev)
		}
		prev = s
	}
}

type fakeEngine struct {
	mu    sync.Mutex
	phase *workload.FilePhase
	snap  metrics.Snapshot
}

func (f *fakeEngine) probe() (*workload.FilePhase, metrics.Snapshot) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.phase, f.snap
}

func TestPublisherWritesAndRemoves(t *testing.T) {
	dir := t.TempDir()
	eng := &fakeEngine{phase: &workload.FilePhase{Name: "write-big", Kind: workload.Write}, snap: metrics.Snapshot{Ops: 3, Bytes: 3 << 20, LatencyNs: 3e6}}
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	p, err := Start(Options{Command: "bench", Target: "/data/x", Mount: "/data", Probe: eng.probe, Dir: dir, Period: time.Hour,
		Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, strconv.Itoa(os.Getpid())+".json")
	if p.Path() != want {
		t.Errorf("path %s, want %s", p.Path(), want)
	}
	snaps := ListDir(dir, now.Add(time.Second))
	if len(snaps) != 1 {
		t.Fatalf("%d snapshots", len(snaps))
	}
	s := snaps[0]
	if s.PID != os.Getpid() || s.Target != "/data/x" || s.Mount != "/data" || s.Phase != "write-big" || s.Kind != "write" ||
		s.Ops != 3 || s.WriteBytes != 3<<20 || s.ReadBytes != 0 || s.Command != "bench" {
		t.Errorf("snapshot %+v", s)
	}
	// Too old: a process that stopped publishing (stopped, or a reused pid).
	if n := len(ListDir(dir, now.Add(StaleAfter+time.Second))); n != 0 {
		t.Errorf("%d stale snapshots listed", n)
	}
	p.Stop()
	p.Stop() // twice is fine
	if _, err := os.Stat(want); !os.IsNotExist(err) {
		t.Errorf("snapshot left behind: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("files left: %v", ents)
	}
	var nilPub *Publisher
	nilPub.Stop()
}

func TestPublisherPeriodic(t *testing.T) {
	dir := t.TempDir()
	eng := &fakeEngine{}
	p, err := Start(Options{Command: "bench", Target: t.TempDir(), Probe: eng.probe, Dir: dir, Period: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	eng.mu.Lock()
	eng.phase = &workload.FilePhase{Name: "read-big", Kind: workload.Read}
	eng.snap = metrics.Snapshot{Ops: 9, Bytes: 900}
	eng.mu.Unlock()
	// Wait for the background writer to publish the change; no timing is
	// asserted, the loop only bounds the wait.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if s := ListDir(dir, time.Now()); len(s) == 1 && s[0].ReadBytes == 900 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the publisher never published the new counters")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestPublisherNoDir(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	eng := &fakeEngine{}
	if _, err := Start(Options{Probe: eng.probe, Dir: filepath.Join(f, "sub")}); err == nil {
		t.Error("no error when the directory cannot be made")
	}
	if _, err := Start(Options{Dir: t.TempDir()}); err == nil {
		t.Error("no error without a probe")
	}
}

func TestListDirSkips(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	write := func(name string, s *Snapshot) {
		data := []byte("not json")
		if s != nil {
			data, _ = Marshal(s)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	alive := map[int]bool{100: true, 101: true, 102: true, 104: true}
	old := Alive
	Alive = func(pid int) bool { return alive[pid] }
	defer func() { Alive = old }()
	write("100.json", &Snapshot{Version: Version, PID: 100, Time: now, Ops: 1})
	write("101.json", nil)                                                  // malformed
	write("102.json", &Snapshot{Version: Version, PID: 999, Time: now})     // pid does not match the name
	write("103.json", &Snapshot{Version: Version, PID: 103, Time: now})     // dead process
	write("104.json", &Snapshot{Version: Version + 1, PID: 104, Time: now}) // a newer format
	write(".105.tmp", &Snapshot{Version: Version, PID: 105, Time: now})
	write("x.json", &Snapshot{Version: Version, PID: 1, Time: now})
	got := ListDir(dir, now)
	if len(got) != 1 || got[0].PID != 100 {
		t.Errorf("listed %+v", got)
	}
	if ListDir(filepath.Join(dir, "missing"), now) != nil {
		t.Error("a missing directory lists something")
	}
}

func TestDirs(t *testing.T) {
	t.Setenv(DirEnv, "/x/y")
	if d := Dirs(); len(d) != 1 || d[0] != "/x/y" {
		t.Errorf("with %s: %v", DirEnv, d)
	}
	t.Setenv(DirEnv, "")
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/1000")
	d := Dirs()
	if len(d) != 3 || d[0] != "/run/fsbench" || d[1] != "/run/user/1000/fsbench" || d[2] != filepath.Join(os.TempDir(), "fsbench-live") {
		t.Errorf("Dirs() = %v", d)
	}
}

func TestParse(t *testing.T) {
	for _, in := range []string{
		`{"v":1,"pid":0}`, `{"v":2,"pid":5}`, `{"v":1,"pid":5,"ops":-1}`, `[]`, ``, `{"v":1,"pid":"x"}`,
	} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("no error for %q", in)
		}
	}
	s, err := Parse([]byte(`{"v":1,"pid":5,"target":"/a","ops":3,"write_bytes":7,"future_field":1}`))
	if err != nil || s.Ops != 3 || s.WriteBytes != 7 || s.Target != "/a" {
		t.Errorf("%+v %v", s, err)
	}
}

func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		path, dir string
		want      bool
	}{
		{"/a/b", "/a", true}, {"/a", "/a", true}, {"/ab", "/a", false}, {"/a/b", "/", true},
		{"/a/b", "/a/", true}, {"", "/a", false}, {"/a", "", false},
	} {
		if got := Within(tc.path, tc.dir); got != tc.want {
			t.Errorf("Within(%q, %q) = %v", tc.path, tc.dir, got)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"v":1,"pid":5,"target":"/a","mount":"/","phase":"write-big","kind":"write","ops":3,"write_bytes":7,"latency_ns":9}`))
	f.Add([]byte(`{"v":1,"pid":-1}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			return
		}
		if s.PID <= 0 || s.Ops < 0 || s.ReadBytes < 0 || s.WriteBytes < 0 || s.Errors < 0 || s.LatencyNs < 0 {
			t.Errorf("accepted %+v", s)
		}
		// What is accepted survives a round trip.
		out, err := Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(out); err != nil {
			t.Errorf("round trip: %v", err)
		}
	})
}

// With End called at each phase's end, phases too short for any poll to
// see are counted exactly, even when the next phase's counters equal them.
func TestAccumulatorEnd(t *testing.T) {
	write := &workload.FilePhase{Name: "write-big", Kind: workload.Write}
	read := &workload.FilePhase{Name: "read-big", Kind: workload.Read}
	final := metrics.Snapshot{Ops: 16, Bytes: 16 << 20, LatencyNs: 16e6}
	var a Accumulator
	check := func(step string, ops, r, w int64) {
		t.Helper()
		var s Snapshot
		a.Fill(&s)
		if s.Ops != ops || s.ReadBytes != r || s.WriteBytes != w {
			t.Errorf("%s: ops %d read %d write %d, want %d %d %d", step, s.Ops, s.ReadBytes, s.WriteBytes, ops, r, w)
		}
	}
	a.Update(nil, metrics.Snapshot{})
	a.End(write, final) // never polled while running
	check("after write", 16, 0, 16<<20)
	a.Update(nil, final) // polled between phases: nothing new
	check("between", 16, 0, 16<<20)
	a.End(read, final) // the read phase, as short, with equal counters
	check("after read", 32, 16<<20, 16<<20)
	a.Update(nil, final)
	a.Update(write, metrics.Snapshot{Ops: 2, Bytes: 2 << 20}) // the next phase, polled
	check("polled", 34, 16<<20, 18<<20)
	a.End(write, metrics.Snapshot{Ops: 4, Bytes: 4 << 20})
	check("ended", 36, 16<<20, 20<<20)
	a.Update(nil, metrics.Snapshot{}) // the reset window of the next phase
	a.Update(read, metrics.Snapshot{Ops: 1, Bytes: 1 << 20})
	check("next", 37, 17<<20, 20<<20)
}

// The publisher on a real engine: a write and a read phase of a few files,
// too short to be polled, published exactly through EndPhase.
func TestPublisherEngine(t *testing.T) {
	t.Setenv(DirEnv, t.TempDir())
	dir := t.TempDir()
	e := workload.NewRunner(workload.Config{Dir: dir, Workers: 2, Seed: 1}, 4096)
	p, err := StartRunner("bench", dir, e)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	var names []string
	for i := range 2 * 3 { // three files per worker
		names = append(names, "f."+strconv.Itoa(i))
	}
	tg := e.NewTargets(dir, names)
	for _, ph := range []workload.FilePhase{
		{Name: "write", Title: "Write", Kind: workload.Create, Targets: tg, FileSize: 16384, BlockSize: 4096},
		{Name: "read", Title: "Read", Kind: workload.Read, Targets: tg, FileSize: 16384, BlockSize: 4096},
	} {
		if _, err := e.Run(t.Context(), ph); err != nil {
			t.Fatal(err)
		}
		p.EndPhase(&ph)
	}
	s := p.Snapshot()
	if s.Ops != 2*2*3*4 || s.WriteBytes != 2*3*16384 || s.ReadBytes != 2*3*16384 || s.Errors != 0 {
		t.Errorf("published %+v", s)
	}
	if s.Target != dir && !Within(dir, "/") {
		t.Errorf("target %q", s.Target)
	}
	if s.Mount == "" {
		t.Error("no mount point")
	}
}

func TestPublisherRemovesStale(t *testing.T) {
	dir := t.TempDir()
	old := Alive
	Alive = func(pid int) bool { return pid == os.Getpid() || pid == 7 }
	defer func() { Alive = old }()
	for _, n := range []string{"5.json", ".5.tmp", "7.json", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	eng := &fakeEngine{}
	p, err := Start(Options{Probe: eng.probe, Dir: dir, Period: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	if p.Err() != nil {
		t.Error(p.Err())
	}
	var names []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		names = append(names, e.Name())
	}
	want := []string{strconv.Itoa(os.Getpid()) + ".json", "7.json", "notes.txt"}
	if len(names) != 3 || names[0] != want[0] && names[1] != want[0] {
		t.Errorf("left %v, want %v", names, want)
	}
	for _, n := range []string{"5.json", ".5.tmp"} {
		if _, err := os.Stat(filepath.Join(dir, n)); !os.IsNotExist(err) {
			t.Errorf("%s of a dead process kept", n)
		}
	}
}

// TestAccumulatorMixed: the bytes of a phase of mixed reads and writes are
// split as the engine counted them, and carried over into later phases.
func TestAccumulatorMixed(t *testing.T) {
	var a Accumulator
	rw := &workload.FilePhase{Name: "randrw", Kind: workload.Mixed}
	a.Update(rw, metrics.Snapshot{Ops: 10, Bytes: 1000, ReadBytes: 300})
	var s Snapshot
	a.Fill(&s)
	if s.ReadBytes != 300 || s.WriteBytes != 700 {
		t.Errorf("during the phase: read %d, write %d, want 300 and 700", s.ReadBytes, s.WriteBytes)
	}
	a.End(rw, metrics.Snapshot{Ops: 20, Bytes: 2000, ReadBytes: 1200})
	a.Update(&workload.FilePhase{Name: "write", Kind: workload.Write}, metrics.Snapshot{Ops: 1, Bytes: 50})
	a.Fill(&s)
	if s.ReadBytes != 1200 || s.WriteBytes != 850 {
		t.Errorf("after it: read %d, write %d, want 1200 and 850", s.ReadBytes, s.WriteBytes)
	}
}
