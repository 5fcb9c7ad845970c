package io500

import (
	"bytes"
	"cmp"
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/runenv"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/internal/units"
)

func small() Sizes {
	return Sizes{EasyXfer: 64 * units.KiB, EasySegments: 8, HardSegments: 20, EasyFiles: 150, HardFiles: 120}
}

func phaseOf(t *testing.T, res *report.Result, name string) report.PhaseResult {
	t.Helper()
	for _, p := range res.Phases {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no phase %s in %d phases", name, len(res.Phases))
	return report.PhaseResult{}
}

// The whole suite on three ranks: the phases in IO500's order, every count
// exact, every byte read back verified by another rank, find's matches
// exactly the mdtest-hard files whose names hold "01", and nothing left.
func TestSuiteCountsAreExact(t *testing.T) {
	dir := t.TempDir()
	var res report.Result
	o := Options{Dir: dir, Threads: 3, Stonewall: time.Hour, Sizes: small(), Verify: true, Seed: 3, Quick: true}
	if err := Run(context.Background(), o, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Phases) != len(Order) {
		t.Fatalf("%d phases", len(res.Phases))
	}
	for i, p := range res.Phases {
		if p.Name != Order[i] || p.Errors != 0 || p.Value.Value <= 0 {
			t.Errorf("phase %d: %s, %d errors, value %v", i, p.Name, p.Errors, p.Value)
		}
	}
	z := small()
	for name, want := range map[string]int64{
		"mdtest-easy-write": 3 * 150, "mdtest-easy-stat": 3 * 150, "mdtest-easy-delete": 3 * 150,
		"mdtest-hard-write": 3 * 120, "mdtest-hard-stat": 3 * 120, "mdtest-hard-read": 3 * 120, "mdtest-hard-delete": 3 * 120,
	} {
		if got := phaseOf(t, &res, name).Items; got != want {
			t.Errorf("%s: %d items, want %d", name, got, want)
		}
	}
	for name, want := range map[string]int64{
		"ior-easy-write": 3 * 8 * z.EasyXfer, "ior-easy-read": 3 * 8 * z.EasyXfer,
		"ior-hard-write": 3 * 20 * HardXfer, "ior-hard-read": 3 * 20 * HardXfer, "mdtest-hard-read": 3 * 120 * HardFileSize,
	} {
		if got := phaseOf(t, &res, name).Bytes; got != want {
			t.Errorf("%s: %d bytes, want %d", name, got, want)
		}
	}
	// Names file.mdtest.R.N with "01" in them, counted here from the names.
	var want int64
	for r := range 3 {
		for i := range 120 {
			if ok, _ := path.Match("*01*", "file.mdtest."+strconv.Itoa(r)+"."+strconv.Itoa(i)); ok {
				want++
			}
		}
	}
	if f := phaseOf(t, &res, "find"); slices.ContainsFunc(res.Warnings, func(w string) bool { return !strings.Contains(w, "from the storage") }) || f.Items < 3*(150+120) || want == 0 ||
		!strings.Contains(f.LatencyOf, "; "+strconv.FormatInt(want, 10)+" of them matched") {
		t.Errorf("find: %d entries, %q, warnings %q (want %d matches)", f.Items, f.LatencyOf, res.Warnings, want)
	}
	if s := ScoresOf(res.Phases); s.Bandwidth <= 0 || s.Metadata <= 0 || s.Total <= 0 {
		t.Errorf("scores %+v", s)
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Errorf("left behind: %v, %v", ents, err)
	}
}

// With a stonewall that ends the writes early, the later phases work on
// exactly what was written: as many stats, reads and deletes as files
// created, as many bytes read as written.
func TestStonewallCountsCarryOver(t *testing.T) {
	dir := t.TempDir()
	var res report.Result
	z := Sizes{EasyXfer: 4096, EasySegments: 1 << 30, HardSegments: 1 << 30, EasyFiles: 200_000, HardFiles: 200_000}
	o := Options{Dir: dir, Threads: 2, Stonewall: 300 * time.Millisecond, Sizes: z, Verify: true, Seed: 5}
	if err := Run(context.Background(), o, &res); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][]string{
		{"mdtest-easy-write", "mdtest-easy-stat", "mdtest-easy-delete"},
		{"mdtest-hard-write", "mdtest-hard-stat", "mdtest-hard-read", "mdtest-hard-delete"},
	} {
		made := phaseOf(t, &res, c[0]).Items
		if made == 0 || made >= 2*200_000 {
			t.Fatalf("%s made %d files: not stonewalled", c[0], made)
		}
		for _, later := range c[1:] {
			if got := phaseOf(t, &res, later).Items; got != made {
				t.Errorf("%s: %d items, %s made %d", later, got, c[0], made)
			}
		}
	}
	for _, c := range [][2]string{{"ior-easy-write", "ior-easy-read"}, {"ior-hard-write", "ior-hard-read"}} {
		w, r := phaseOf(t, &res, c[0]), phaseOf(t, &res, c[1])
		if w.Bytes == 0 || r.Bytes != w.Bytes || r.Errors != 0 {
			t.Errorf("%s wrote %d bytes, %s read %d with %d errors", c[0], w.Bytes, c[1], r.Bytes, r.Errors)
		}
	}
	for _, w := range res.Warnings {
		if strings.Contains(w, "before the stonewall") {
			t.Errorf("a stonewalled write warned of: %q", w)
		}
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Errorf("left behind: %v, %v", ents, err)
	}
}

// TestPhaseStartIsTheClock: PhaseStart (a host's barrier) is called once
// a phase, in IO500's order, once the phase is ready to start its clock:
// inside the engine's run of the phase (whose count starts again at 0),
// after what the phase prepares (but for what the ior reads learn from
// the writers); the time it takes (another host getting
// ready) is in no phase's time.
func TestPhaseStartIsTheClock(t *testing.T) {
	const wait = 40 * time.Millisecond
	var names []string
	counts := map[string]int64{}
	var res report.Result
	o := Options{Dir: t.TempDir(), Threads: 2, Stonewall: time.Hour, Sizes: small(), Seed: 5, Quick: true,
		PhaseStart: func(name string, ops func() int64) {
			names = append(names, name)
			counts[name] = ops()
			time.Sleep(wait)
		}}
	t0 := time.Now()
	if err := Run(context.Background(), o, &res); err != nil {
		t.Fatal(err)
	}
	total := time.Since(t0)
	if strings.Join(names, " ") != strings.Join(Order, " ") {
		t.Fatalf("PhaseStart for %v, want %v", names, Order)
	}
	for name, n := range counts {
		// find runs outside the engine; the ior reads pass the barrier
		// before they read the writers' segment counts (prepare).
		if n != 0 && name != "find" && name != "ior-easy-read" && name != "ior-hard-read" {
			t.Errorf("%s: PhaseStart saw %d operations counted: called before the phase's run began", name, n)
		}
	}
	var phases time.Duration
	for _, p := range res.Phases {
		phases += time.Duration(p.Seconds * float64(time.Second))
	}
	if outside := total - time.Duration(len(Order))*wait; phases > outside {
		t.Fatalf("the phases took %v of the %v left beside PhaseStart's waits: a wait was timed", phases, outside)
	}
}

// TestReadOrigin: on a loop device's ext4, the read phases say where their
// bytes came from. Back to back, as IO500 runs them, the page cache served
// them, and each is warned of; with the caches dropped before each, the
// device served them. ior-hard's file, of which each rank reads a part, has
// its page cache not looked at, and says why.
func TestReadOrigin(t *testing.T) {
	dir := testenv.LoopExt4(t, "128M")
	reads := []string{"ior-easy-read", "ior-hard-read", "mdtest-hard-read"}
	for _, drop := range []string{runenv.DropNever, runenv.DropAlways} {
		var res report.Result
		o := Options{Dir: dir, Threads: 2, Stonewall: time.Hour, Sizes: small(), Seed: 5, Quick: true, DropCaches: drop}
		release := func() {}
		// Another process may drop every cache before the reads (fsbench's
		// tests as root do): with the caches kept, what was written is
		// pinned in the page cache once the writes are done.
		o.PhaseEnd = func(name string) {
			if name == "mdtest-hard-write" && drop == runenv.DropNever {
				release = testenv.PinPageCache(t, written(t, dir)...)
			}
		}
		// With the caches dropped, a write phase starts once what the
		// one before wrote is written back.
		dirtyAtStart := -1
		o.PhaseStart = func(name string, _ func() int64) {
			if name == "mdtest-easy-write" {
				dirtyAtStart = testenv.DirtyPages(t, written(t, dir)...)
			}
		}
		err := Run(context.Background(), o, &res)
		release()
		if err != nil {
			t.Fatal(err)
		}
		if drop == runenv.DropAlways && dirtyAtStart != 0 {
			t.Errorf("mdtest-easy-write began with %d pages of ior-easy-write's dirty", dirtyAtStart)
		}
		wantDrop := map[string]string{runenv.DropNever: "none", runenv.DropAlways: "drop_caches"}[drop]
		if res.CacheDrop != wantDrop {
			t.Errorf("--drop-caches %s: cache drop %q, want %q", drop, res.CacheDrop, wantDrop)
		}
		for _, name := range reads {
			p := phaseOf(t, &res, name)
			o := p.Origin
			if o == nil || o.FromStorage == nil || o.ReadBytes != p.Bytes || o.Machine == "" {
				t.Fatalf("--drop-caches %s, %s: origin %+v: want one measured on the loop device", drop, name, o)
			}
			warned := slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.HasPrefix(w, name+": only") && strings.Contains(w, Remedy) })
			served := *o.FromStorage >= 90
			if (drop == runenv.DropAlways) != served || warned == served {
				t.Errorf("--drop-caches %s, %s: %.1f%% from storage, warned %v (warnings %q)", drop, name, *o.FromStorage, warned, res.Warnings)
			}
			if shared := name == "ior-hard-read"; shared != (o.PageCacheUnknown == sharedUnlooked) {
				t.Errorf("--drop-caches %s, %s: page cache %v, %q", drop, name, o.PageCacheBytes, o.PageCacheUnknown)
			}
			if drop == runenv.DropNever && name != "ior-hard-read" && (o.PageCacheBytes == nil || *o.PageCacheBytes < p.Bytes) {
				t.Errorf("back to back, %s: %v bytes of %d were in the page cache (%s): want all", name, o.PageCacheBytes, p.Bytes, o.PageCacheUnknown)
			}
		}
		for _, p := range res.Phases {
			if p.Origin != nil && !slices.Contains(reads, p.Name) {
				t.Errorf("%s, which reads no data, has an origin", p.Name)
			}
		}
	}
	if err := (&Options{Threads: 1, Stonewall: time.Second, Sizes: small(), DropCaches: "sometimes"}).Validate(); err == nil || !strings.Contains(err.Error(), "--drop-caches") {
		t.Errorf("--drop-caches sometimes: %v", err)
	}
}

// written is every file under dir with data in it.
func written(t *testing.T, dir string) []string {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		if info, err := d.Info(); err == nil && info.Size() > 0 {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// IO500's write phases end with what they wrote on the storage, inside
// their time: IOR's -e fsyncs each rank's file before it is closed, and
// mdtest's -Y syncs after the creates. On an ext4 of its own, the device
// under it has been written at least a write phase's bytes by the time
// the phase ends (the kernel's own writeback waits 30 s for data this
// young), and each of those phases took the writes into its time.
func TestWritePhasesReachTheStorage(t *testing.T) {
	dir := filepath.Join(testenv.LoopExt4(t, "128M"), "run")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	written := map[string]int64{}
	var before int64
	var errs []error
	device := func() int64 {
		n, err := testenv.DeviceWritten(dir)
		if err != nil {
			errs = append(errs, err)
		}
		return n
	}
	var res report.Result
	o := Options{Dir: dir, Threads: 2, Stonewall: time.Hour, Sizes: small(), Seed: 5, Quick: true,
		PhaseStart: func(string, func() int64) { before = device() },
		PhaseEnd:   func(name string) { written[name] = device() - before }}
	if err := Run(context.Background(), o, &res); err != nil {
		t.Fatal(err)
	}
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
	z := small()
	for name, least := range map[string]int64{
		"ior-easy-write":    2 * int64(z.EasySegments) * z.EasyXfer,
		"ior-hard-write":    2 * int64(z.HardSegments) * HardXfer,
		"mdtest-hard-write": 2 * int64(z.HardFiles) * HardFileSize,
		"mdtest-easy-write": 1, // the journal's record of the new files
	} {
		if p := phaseOf(t, &res, name); p.Bytes != least && least > 1 || written[name] < least {
			t.Errorf("%s: %d bytes written, %d on the device by its end, want at least %d", name, p.Bytes, written[name], least)
		}
	}
}

// A create phase's directories are made as it starts, after the phases
// before it wrote their files, as mdtest makes its tree: at each phase's
// start, mdtest-easy's directory of a rank exists from mdtest-easy-write
// on, mdtest-hard's from mdtest-hard-write on.
func TestCreateDirsAtTheirPhase(t *testing.T) {
	dir := t.TempDir()
	type seen struct{ easy, hard bool }
	at := map[string]seen{}
	exists := func(p string) bool { _, err := os.Stat(filepath.Join(dir, p)); return err == nil }
	o := Options{Dir: dir, Threads: 2, Stonewall: time.Hour, Sizes: small(), Seed: 5, Quick: true,
		PhaseStart: func(name string, _ func() int64) {
			at[name] = seen{exists(path.Join(mdEasy, rankDir(1))), exists(mdHard)}
		}}
	var res report.Result
	if err := Run(context.Background(), o, &res); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]seen{
		"ior-easy-write": {false, false}, "mdtest-easy-write": {true, false},
		"ior-hard-write": {true, false}, "mdtest-hard-write": {true, true}, "mdtest-hard-stat": {true, true},
	} {
		if at[name] != want {
			t.Errorf("at %s's start: mdtest-easy's and mdtest-hard's directories made %v, want %v", name, at[name], want)
		}
	}
}

// The create phases name their files as mdtest does (file.mdtest.R.I),
// so that a directory holds entries of mdtest's length: listed as the
// phase after each starts, rank 1's files are mdtest's names for rank 1.
func TestFilesHaveMdtestNames(t *testing.T) {
	dir := t.TempDir()
	listed := map[string][]string{}
	list := func(d string) []string {
		ents, err := os.ReadDir(filepath.Join(dir, d))
		if err != nil {
			t.Error(err)
		}
		var names []string
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "file.mdtest.1.") {
				names = append(names, e.Name())
			}
		}
		slices.Sort(names)
		return names
	}
	z := small()
	o := Options{Dir: dir, Threads: 2, Stonewall: time.Hour, Sizes: z, Seed: 5, Quick: true,
		PhaseStart: func(name string, _ func() int64) {
			switch name {
			case "ior-hard-write":
				listed["easy"] = list(path.Join(mdEasy, rankDir(1)))
			case "find":
				listed["hard"] = list(mdHard)
			}
		}}
	var res report.Result
	if err := Run(context.Background(), o, &res); err != nil {
		t.Fatal(err)
	}
	for kind, n := range map[string]int{"easy": z.EasyFiles, "hard": z.HardFiles} {
		var want []string
		for i := range n {
			want = append(want, "file.mdtest.1."+strconv.Itoa(i))
		}
		slices.Sort(want)
		if !slices.Equal(listed[kind], want) {
			t.Errorf("mdtest-%s's files of rank 1: %d named as mdtest names them, want %d (first %q)", kind, len(listed[kind]), len(want), first(listed[kind]))
		}
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// --data-packet-type: the default writes ior-hard transfers that differ;
// timestamp writes each from the same buffer, as IOR does by default, and
// every phase still reads back verified. The result names the type.
func TestDataPacketType(t *testing.T) {
	for _, tc := range []struct {
		typ  string
		same bool
	}{{"", false}, {DataRandom, false}, {DataTimestamp, true}} {
		dir := t.TempDir()
		var res report.Result
		o := Options{Dir: dir, Threads: 2, Stonewall: time.Hour, Sizes: small(), Verify: true, Seed: 3, Quick: true, Keep: true, DataPacketType: tc.typ}
		if err := Run(context.Background(), o, &res); err != nil {
			t.Fatal(err)
		}
		for _, p := range res.Phases {
			if p.Errors != 0 {
				t.Errorf("%q: %s: %d errors %q", tc.typ, p.Name, p.Errors, p.ErrorSamples)
			}
		}
		data, err := os.ReadFile(filepath.Join(dir, hardDir, "ior_file_hard"))
		if err != nil || len(data) != 2*20*HardXfer {
			t.Fatalf("%q: ior-hard's file: %d bytes, %v", tc.typ, len(data), err)
		}
		first := data[:HardXfer]
		same := bytes.Equal(first, data[HardXfer:2*HardXfer]) && bytes.Equal(first, data[len(data)-HardXfer:])
		if same != tc.same {
			t.Errorf("%q: transfers the same: %v, want %v", tc.typ, same, tc.same)
		}
		want := cmp.Or(tc.typ, DataRandom)
		if got := params(o).Get("data_packet_type"); got != want {
			t.Errorf("%q: parameter data_packet_type %v, want %s", tc.typ, got, want)
		}
	}
	o := Options{Threads: 1, Stonewall: time.Second, Sizes: small(), DataPacketType: "offset"}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), `--data-packet-type must be random or timestamp (got "offset")`) {
		t.Errorf("offset: %v", err)
	}
}
