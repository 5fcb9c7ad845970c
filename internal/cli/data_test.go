package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
)

// ratios measures the files below dir: how zstd at level 3 and LZ4 at
// their defaults compress each file (their sizes added up), and all 4 KiB
// chunks over the distinct ones (by SHA-256).
func ratios(t *testing.T, dir string) (zstdRatio, lz4Ratio, dedupe float64) {
	t.Helper()
	// Level 3 with the window the zstd command gives it (2 MiB, windowLog
	// 21): a window over 4 MiB finds the stream base of big files again,
	// whatever the ratios (see pattern.StreamMin).
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(3)), zstd.WithWindowSize(2<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	var raw, z, l, chunks int
	seen := map[[32]byte]bool{}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() || strings.HasPrefix(d.Name(), ".") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		raw += len(data)
		z += len(enc.EncodeAll(data, nil))
		l += lz4Size(t, data)
		for off := 0; off+4096 <= len(data); off += 4096 {
			seen[sha256.Sum256(data[off:off+4096])] = true
			chunks++
		}
		return nil
	})
	if err != nil || raw == 0 {
		t.Fatalf("reading %s: %d bytes, %v", dir, raw, err)
	}
	return float64(raw) / float64(z), float64(raw) / float64(l), float64(chunks) / float64(len(seen))
}

func lz4Size(t *testing.T, data []byte) int {
	var out bytes.Buffer
	w := lz4.NewWriter(&out)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Len()
}

// within fails unless got is within 5% of want.
func within(t *testing.T, what string, got, want float64) {
	t.Helper()
	t.Logf("%s: %.3f (want %g)", what, got, want)
	if math.Abs(got-want) > 0.05*want {
		t.Errorf("%s: %.3f, want %g +- 5%%", what, got, want)
	}
}

// TestDataRatiosOnTmpfs: what bench (the default benchmark, with
// --verify), a fio job file and checkpoint write on a tmpfs at a compress
// ratio of 2 compresses 1.9-2.1x with zstd and LZ4, and at a dedupe ratio
// of 3 has 2.9-3.1x as many 4 KiB chunks as distinct ones; the result
// states the ratios.
func TestDataRatiosOnTmpfs(t *testing.T) {
	testenv.NeedsServer(t, "a tmpfs mount")
	dir := testenv.Tmpfs(t, "128m")
	for _, c := range []struct {
		name string
		args []string
		job  string
	}{
		{"bench", []string{"bench", "DIR", "-p", "2", "--big-file-size", "8M", "--small-file-count", "64", "--small-file-size", "64K", "--verify"}, ""},
		{"fio", []string{"fio", "JOB"}, "[w]\ndirectory=DIR\nrw=write\nbs=64k\nsize=8m\nnumjobs=2\n"},
		{"checkpoint", []string{"checkpoint", "DIR", "--size", "16M", "-p", "2"}, ""},
	} {
		for _, d := range []struct {
			kind, flag, fio string
			want            float64
		}{{"compress", "--compress-ratio", "buffer_compress_percentage=50", 2}, {"dedupe", "--dedupe-ratio", "dedupe_percentage=67", 3}} {
			t.Run(c.name+"/"+d.kind, func(t *testing.T) {
				sub := filepath.Join(dir, c.name+"-"+d.kind)
				if err := os.Mkdir(sub, 0o755); err != nil {
					t.Fatal(err)
				}
				defer os.RemoveAll(sub)
				args := append(append([]string{}, c.args...), "--keep", "--json", "-q")
				args[1] = sub
				if c.job != "" {
					args[1] = filepath.Join(t.TempDir(), "w.fio")
					job := strings.Replace(c.job, "DIR", sub, 1) + d.fio + "\n"
					if err := os.WriteFile(args[1], []byte(job), 0o644); err != nil {
						t.Fatal(err)
					}
				} else {
					args = append(args, d.flag, strconv.FormatFloat(d.want, 'g', -1, 64))
				}
				out, errs, code := runFsbench(t, args...)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errs)
				}
				var res report.Result
				if err := json.Unmarshal([]byte(out), &res); err != nil {
					t.Fatal(err)
				}
				if r, err := strconv.ParseFloat(fmt.Sprint(res.Parameters.Get(d.kind+"_ratio")), 64); err != nil || math.Abs(r-d.want) > 0.05 {
					t.Errorf("parameter %s_ratio %v", d.kind, res.Parameters.Get(d.kind+"_ratio"))
				}
				for _, p := range res.Phases {
					if p.Errors != 0 {
						t.Errorf("phase %s: %d errors: %v", p.Name, p.Errors, p.ErrorSamples)
					}
				}
				z, l, dd := ratios(t, sub)
				if d.kind == "compress" {
					within(t, "zstd-3", z, 2)
					within(t, "lz4", l, 2)
				} else {
					within(t, "4 KiB chunks over distinct ones", dd, 3)
				}
			})
		}
	}
}

// TestDataRatiosObjects: objbench's put writes objects at the ratios, in
// a directory store; bad ratios are one line and exit 2.
func TestDataRatiosObjects(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	store := t.TempDir()
	_, errs, code := runFsbench(t, "objbench", "--storage", "file", store+"/", "--workload", "put", "--obj-size", "256K", "--ops", "200",
		"--compress-ratio", "4", "--keep", "-p", "2", "-q")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	z, l, d := ratios(t, store)
	within(t, "objects zstd-3", z, 4)
	within(t, "objects lz4", l, 4)
	if d != 1 {
		t.Errorf("objects repeat 4 KiB chunks without --dedupe-ratio: %.3f", d)
	}
	store = t.TempDir()
	if _, errs, code := runFsbench(t, "objbench", "--storage", "file", store+"/", "--workload", "put", "--obj-size", "256K", "--ops", "200",
		"--dedupe-ratio", "2", "--keep", "-p", "2", "-q"); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, _, d = ratios(t, store)
	within(t, "objects 4 KiB chunks over distinct ones", d, 2)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", store, "--compress-ratio", "0.5"}, `fsbench: --compress-ratio "0.5": want a ratio from 1 to 256`},
		{[]string{"bench", store, "--dedupe-ratio", "100%"}, `fsbench: --dedupe-ratio "100%": want a percentage from 0 to below 100`},
		{[]string{"bench", store, "--read-existing", "--compress-ratio", "2"}, "--read-existing writes nothing"},
		{[]string{"checkpoint", store, "--dedupe-ratio", "x"}, `fsbench: --dedupe-ratio "x"`},
		{[]string{"fio", "--name=z", "--directory=" + store, "--rw=write", "--size=1m", "--buffer_compress_percentage=100"}, "buffer_compress_percentage=100"},
		{[]string{"fio", "--name=z", "--directory=" + store, "--rw=write", "--size=1m", "--dedupe_mode=working_set"}, "working_set is not supported"},
	} {
		_, errs, code := runFsbench(t, c.args...)
		if code != 2 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2, one line with %q", c.args, code, errs, c.want)
		}
	}
}

// TestDataRatiosTreeReuse: a kept tree written at other ratios is rebuilt
// (its reads would not verify otherwise), or refused with format no; at
// the same ratios it is reused.
func TestDataRatiosTreeReuse(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	run := func(extra ...string) (string, int) {
		args := append([]string{"bench", dir, "--depth", "0", "--width", "1", "--files", "4", "--file-size", "64K", "--tree-dir", "t",
			"--rw", "read", "--verify", "--json"}, extra...)
		_, errs, code := runFsbench(t, args...)
		return errs, code
	}
	if errs, code := run("--compress-ratio", "2"); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, errs)
	}
	if errs, code := run("--compress-ratio", "2"); code != 0 || !strings.Contains(errs, "reusing the tree") {
		t.Errorf("same ratios: exit %d, %q; want the tree reused", code, errs)
	}
	if errs, code := run("--compress-ratio", "4", "--tree-format", "no"); code == 0 || !strings.Contains(errs, "was written with other data ratios (compress 2, dedupe 1)") {
		t.Errorf("format no at other ratios: exit %d, %q", code, errs)
	}
	if errs, code := run("--dedupe-ratio", "3"); code != 0 || !strings.Contains(errs, "rebuilding it") || strings.Contains(errs, "mismatch") {
		t.Errorf("other ratios: exit %d, %q; want the tree rebuilt and verified", code, errs)
	}
}
