package fiojob

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/jobfile"
	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/skew"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
)

func env(vars map[string]string) Env {
	return func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
}

// convertFile reads a job file given as text.
func convertFile(t *testing.T, src string, vars map[string]string) (*Result, error) {
	t.Helper()
	secs, err := ParseFile([]byte(src), "t.fio", env(vars), nil)
	if err != nil {
		return nil, err
	}
	return Convert(&Input{Sections: secs}, "t.fio")
}

// noFiles reads no job file: command-line tests name none.
func noFiles(name string) ([]byte, error) { return nil, fs.ErrNotExist }

func convertArgs(t *testing.T, line string) (*Result, error) {
	t.Helper()
	in, err := ParseArgs(strings.Fields(line), env(nil), noFiles)
	if err != nil {
		return nil, err
	}
	return Convert(in, "")
}

// phase is a PhaseSpec with the fields a test leaves out at fio's
// defaults: sequential, one file, sync engine, no read share.
func phase(name, op string, xfer, file int64) jobfile.PhaseSpec {
	o, a, _ := jobfile.ResolveOp(op)
	return jobfile.PhaseSpec{Name: name, Op: o, Access: a, XferSize: xfer, FileSize: file, Files: 1, ReadPct: -1}
}

// The four fio lines of JuiceFS's guide, with a smaller size: one phase
// of 4 threads, 1 MiB transfers, a file of the size each, O_DIRECT;
// libaio at iodepth 1 runs on the sync engine and says so.
func TestJuiceFSLines(t *testing.T) {
	for _, rw := range []string{"write", "read", "randwrite", "randread"} {
		line := "--name=jfs-test --directory=/mnt/jfs --ioengine=libaio --rw=" + rw + " --bs=1m --size=1g --numjobs=4 --direct=1 --group_reporting"
		r, err := convertArgs(t, line)
		if err != nil {
			t.Fatalf("%s: %v", rw, err)
		}
		want := &jobfile.Job{Name: "jfs-test", Threads: 4, Direct: true,
			Phases: []jobfile.PhaseSpec{phase("jfs-test", rw, units.MiB, units.GiB)}}
		if !reflect.DeepEqual(r.Job, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", rw, r.Job, want)
		}
		if r.Dir != "/mnt/jfs" || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "libaio at iodepth 1 runs on fsbench's sync engine") {
			t.Errorf("%s: dir %q notes %q", rw, r.Dir, r.Notes)
		}
	}
}

// Each option the reader takes, alone or with what it needs, and the job
// it makes.
func TestOptions(t *testing.T) {
	base := "[j]\nsize=8m\n"
	withPhase := func(f func(p *jobfile.PhaseSpec)) func(*jobfile.Job) {
		return func(j *jobfile.Job) { f(&j.Phases[0]) }
	}
	tests := []struct {
		name, src string
		edit      func(*jobfile.Job)
	}{
		{"defaults", base, nil},
		{"rw randread", base + "rw=randread", withPhase(func(p *jobfile.PhaseSpec) { p.Op, p.Access = "read", workload.Random })},
		{"readwrite alias", base + "readwrite=randwrite", withPhase(func(p *jobfile.PhaseSpec) { p.Op, p.Access = "write", workload.Random })},
		{"rw suffix 1", base + "rw=randread:1", withPhase(func(p *jobfile.PhaseSpec) { p.Op, p.Access = "read", workload.Random })},
		{"rw mixed 50", base + "rw=rw", withPhase(func(p *jobfile.PhaseSpec) { p.Op, p.ReadPct = "rw", 50 })},
		{"rwmixread", base + "rw=randrw\nrwmixread=70", withPhase(func(p *jobfile.PhaseSpec) { p.Op, p.Access, p.ReadPct = "rw", workload.Random, 70 })},
		{"rwmixwrite", base + "rw=randrw\nrwmixwrite=30", withPhase(func(p *jobfile.PhaseSpec) { p.Op, p.Access, p.ReadPct = "rw", workload.Random, 70 })},
		{"bs", base + "bs=64k", withPhase(func(p *jobfile.PhaseSpec) { p.XferSize = 64 * units.KiB })},
		{"blocksize same both ways", base + "blocksize=8k,8k", withPhase(func(p *jobfile.PhaseSpec) { p.XferSize = 8 * units.KiB })},
		{"bsrange equal", base + "bsrange=16k-16k", withPhase(func(p *jobfile.PhaseSpec) { p.XferSize = 16 * units.KiB })},
		{"kb_base 1000", "[j]\nkb_base=1000\nsize=8m\nbs=4ki", withPhase(func(p *jobfile.PhaseSpec) { p.FileSize, p.XferSize = 8_000_000, 4096 })},
		{"mi is 1000^2 by default", "[j]\nsize=2mi", withPhase(func(p *jobfile.PhaseSpec) { p.FileSize = 2_000_000 })},
		{"nrfiles sequential", base + "nrfiles=4\nfile_service_type=sequential", withPhase(func(p *jobfile.PhaseSpec) { p.Files, p.FileSize = 4, 2*units.MiB })},
		{"filesize", "[j]\nfilesize=1m\nnrfiles=2\nfile_service_type=sequential", withPhase(func(p *jobfile.PhaseSpec) { p.Files, p.FileSize = 2, units.MiB })},
		{"filesize and size", "[j]\nfilesize=1m\nsize=2m\nnrfiles=2\nfile_service_type=sequential:4", withPhase(func(p *jobfile.PhaseSpec) { p.Files, p.FileSize = 2, units.MiB })},
		{"numjobs", base + "numjobs=3", func(j *jobfile.Job) { j.Threads = 3 }},
		{"io_uring", base + "ioengine=io_uring\niodepth=8", withPhase(func(p *jobfile.PhaseSpec) { p.IOEngine, p.IODepth = workload.IOUring, 8 })},
		{"libaio direct deep", base + "ioengine=libaio\niodepth=16\ndirect=1", func(j *jobfile.Job) {
			j.Direct, j.Phases[0].IOEngine, j.Phases[0].IODepth = true, workload.IOUring, 16
		}},
		{"libaio buffered deep is sync", base + "ioengine=libaio\niodepth=16", nil},
		{"posixaio deep", base + "ioengine=posixaio\niodepth=4", withPhase(func(p *jobfile.PhaseSpec) { p.IOEngine, p.IODepth = workload.IOUring, 4 })},
		{"psync deep is depth 1", base + "ioengine=psync\niodepth=32", nil},
		{"buffered=0", base + "buffered=0", func(j *jobfile.Job) { j.Direct = true }},
		{"direct flag", base + "direct", func(j *jobfile.Job) { j.Direct = true }},
		{"time_based", base + "time_based\nruntime=30\nramp_time=2s", withPhase(func(p *jobfile.PhaseSpec) { p.Duration, p.Warmup = 30*time.Second, 2*time.Second })},
		{"runtime alone", base + "runtime=1m", withPhase(func(p *jobfile.PhaseSpec) { p.Duration, p.Once = time.Minute, true })},
		{"timeout alias", base + "timeout=500ms", withPhase(func(p *jobfile.PhaseSpec) { p.Duration, p.Once = 500*time.Millisecond, true })},
		{"startdelay 0", base + "startdelay=0", nil},
		{"rate_iops", base + "rate_iops=100\nnumjobs=2", func(j *jobfile.Job) { j.Threads, j.Phases[0].Rate = 2, 200 }},
		{"rate bytes", base + "rate=1m\nbs=64k", withPhase(func(p *jobfile.PhaseSpec) { p.XferSize, p.Rate = 64*units.KiB, 16 })},
		{"rate_process linear", base + "rate_iops=10\nrate_process=linear", withPhase(func(p *jobfile.PhaseSpec) { p.Rate = 10 })},
		{"thinktime 0", base + "thinktime=0", nil},
		{"fsync 0", base + "fsync=0\nfdatasync=0", nil},
		{"end_fsync", base + "rw=write\nend_fsync=1", func(j *jobfile.Job) { j.Fsync, j.Phases[0].Op = true, "write" }},
		{"fsync_on_close", base + "rw=write\nfsync_on_close", func(j *jobfile.Job) { j.Fsync, j.Phases[0].Op = true, "write" }},
		{"create_on_open", base + "create_on_open=1", nil},
		{"fallocate none", base + "fallocate=none", nil},
		{"openfiles", base + "openfiles=1", nil},
		{"random_distribution random", base + "random_distribution=random", nil},
		{"random_distribution zipf", base + "rw=randread\nrandom_distribution=zipf:1.2", withPhase(func(p *jobfile.PhaseSpec) {
			p.Access, p.Distribution = workload.Random, skew.Spec{Kind: skew.Zipf, Param: 1.2}
		})},
		{"random_distribution zipf alone is fio's 1.1", base + "rw=randread\nrandom_distribution=zipf", withPhase(func(p *jobfile.PhaseSpec) {
			p.Access, p.Distribution = workload.Random, skew.Spec{Kind: skew.Zipf, Param: 1.1}
		})},
		{"random_distribution zoned", base + "rw=randread\nrandom_distribution=zoned:60/10:40/90", withPhase(func(p *jobfile.PhaseSpec) {
			p.Access, p.Distribution = workload.Random, skew.Spec{Kind: skew.Zoned, Zones: []skew.Zone{{Access: 60, Size: 10}, {Access: 40, Size: 90}}}
		})},
		{"compress and dedupe percentages", base + "rw=write\nbuffer_compress_percentage=50\ndedupe_percentage=75\ndedupe_mode=repeat\nbuffer_compress_chunk=4k",
			func(j *jobfile.Job) { j.Phases[0].Op, j.Data = "write", pattern.Data{Compress: 2, Dedupe: 4} }},
		{"compress percentage of a read job", base + "buffer_compress_percentage=50", nil},
		{"random_distribution of a sequential job", base + "random_distribution=pareto:0.3", nil},
		{"randrepeat norandommap", base + "randrepeat=0\nnorandommap", nil},
		{"verify on write adds a read", base + "rw=write\nverify=crc32c", func(j *jobfile.Job) {
			j.Verify, j.Phases[0].Op = true, "write"
			j.Phases = append(j.Phases, phase("j-verify", "read", 4096, 8*units.MiB))
		}},
		{"verify md5 on read", base + "verify=md5", func(j *jobfile.Job) { j.Verify = true }},
		{"verify sha256 no do_verify", base + "rw=write\nverify=sha256\ndo_verify=0", withPhase(func(p *jobfile.PhaseSpec) { p.Op = "write" })},
		{"verify pattern", base + "verify=pattern", func(j *jobfile.Job) { j.Verify = true }},
		{"thread group_reporting description", base + "thread\ngroup_reporting\ndescription=a test", func(j *jobfile.Job) { j.Description = "a test" }},
		{"loops", base + "loops=3\nbs=1m\nnumjobs=2", func(j *jobfile.Job) { j.Threads, j.Phases[0].XferSize, j.Phases[0].Ops = 2, units.MiB, 3*2*8 }},
		{"fsync applies to writes only", "[w]\nsize=8m\nrw=write\nend_fsync=1\n[r]\nstonewall\nsize=8m", func(j *jobfile.Job) {
			j.Fsync, j.Phases[0].Name, j.Phases[0].Op = true, "w", "write"
			j.Phases = append(j.Phases, phase("r", "read", 4096, 8*units.MiB))
		}},
		{"name", base + "name=renamed", withPhase(func(p *jobfile.PhaseSpec) { p.Name = "renamed" })},
		{"directory", base + "directory=/data", nil},
		{"filename relative", base + "filename=data.bin", nil},
		{"filename_format", base + "filename_format=$jobname.$jobnum.$filenum", nil},
		{"env", "[j]\nsize=${SIZE}\nbs=$BS", withPhase(func(p *jobfile.PhaseSpec) { p.FileSize, p.XferSize = 2*units.MiB, 8*units.KiB })},
		{"comments", "; a comment\n# another\n[j] \nsize=8m ; trailing\nbs=4k # trailing", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := convertFile(t, tc.src, map[string]string{"SIZE": "2m", "BS": "8k"})
			if err != nil {
				t.Fatal(err)
			}
			want := &jobfile.Job{Name: "t", File: "t.fio", Threads: 1, Phases: []jobfile.PhaseSpec{phase("j", "read", 4096, 8*units.MiB)}}
			if tc.edit != nil {
				tc.edit(want)
			}
			if !reflect.DeepEqual(r.Job, want) {
				t.Errorf("\n got %+v\nwant %+v", r.Job, want)
			}
		})
	}
}

// Options that change what is measured and that the engine does not
// have are refused by name, before anything runs.
func TestRefused(t *testing.T) {
	base := "[j]\nsize=8m\n"
	tests := []struct{ src, want string }{
		{base + "rw=randread:8", "rw=randread:8: fsbench picks a new random offset"},
		{base + "rw=read:4k", "rw=read:4k: fsbench reads and writes without holes"},
		{base + "rw=trim", "rw=trim: fsbench does not trim"},
		{base + "bs=4k,8k", "bs=4k,8k: fsbench uses one size"},
		{base + "bsrange=4k-8k", "bsrange=4k-8k: fsbench uses one transfer size"},
		{base + "bssplit=4k/50:8k/50", "bssplit: fsbench uses one transfer size"},
		{base + "random_distribution=zipf:1", "random_distribution=zipf:1: bad distribution \"zipf:1\": the exponent must be above 0, not 1"},
		{base + "random_distribution=zipf:1.2:0.5", "random_distribution=zipf:1.2:0.5: bad distribution"},
		{base + "random_distribution=zoned_abs:60/10M:40/6M", "zoned_abs: fsbench's zones are percentages"},
		{base + "random_distribution=zoned:50/50:50/50,100/100", "random_distribution=zoned:50/50:50/50,100/100: bad distribution"},
		{base + "thinktime=100", "thinktime=100: fsbench's threads do not pause"},
		{base + "fsync=32", "fsync=32: fsbench syncs a file once"},
		{base + "fdatasync=1", "fdatasync=1: fsbench syncs a file once"},
		{base + "startdelay=4", "startdelay=4: fsbench starts a phase's threads together"},
		{base + "fallocate=native", "fallocate=native: fsbench writes into files it has not preallocated"},
		{base + "rate_process=poisson\nrate_iops=5", "poisson is not supported"},
		{base + "rate_iops=10,20", "rate_iops=10,20: fsbench has one rate"},
		{base + "verify=crc64", "verify=crc64: fsbench checks every byte read"},
		{base + "ioengine=null", "ioengine=null: fsbench does file I/O with"},
		{base + "nrfiles=2", "nrfiles=2 with file_service_type=roundrobin"},
		{base + "nrfiles=2\nfile_service_type=random", "file_service_type=random"},
		{base + "zonemode=zbd", "zonemode: zoned access is not supported"},
		{base + "frobnicate=1", "fio option frobnicate is not supported"},
		{base + "time_based", "time_based needs runtime="},
		{base + "ramp_time=2", "ramp_time needs time_based"},
		{base + "filename=/dev/sdb", "filename=/dev/sdb: fsbench does not write to devices"},
		{base + "filename=a:b", "several files are not supported"},
		{base + "numjobs=2\nfilename_format=shared", "filename_format=shared: files shared between threads"},
		{base + "rwmixread=60\nrwmixwrite=30", "do not add up to 100"},
		{"[j]\nrw=read", "size= is needed"},
		{base + "size=30%", "size=30%: a share of a device"},
		{"[j]\nfilesize=1k-4k", "filesize=1k-4k: fsbench's files have one size"},
		{"[j]\nsize=${NOPE}", "${NOPE} is not set in the environment"},
		{"[a]\nsize=8m\n[b]\nsize=8m\niodepth=4\nioengine=io_uring", "jobs that run at the same time (no stonewall between them), [a] and [b], differ in iodepth"},
		{"[a]\nsize=8m\nnumjobs=2\n[b]\nstonewall\nsize=8m", "numjobs differs between [a] (2) and [b] (1)"},
		{"[a]\nsize=8m\ndirect=1\n[b]\nstonewall\nsize=8m", "direct differs"},
		{"[a]\nsize=8m\ndirectory=/x\n[b]\nstonewall\nsize=8m\ndirectory=/y", "fsbench runs in one directory"},
		{"size=8m\n[j]", "comes before any [section]"},
		{base + "bs", "bs needs a value"},
		{base + "loops=2\nruntime=10", "loops=2 with runtime="},
		{"[global]\nsize=8m", "no job to run"},
		{"[w]\nsize=8m\nrw=write\nverify=md5\n[r]\nstonewall\nsize=8m", "verify differs between [w] (true) and [r] (false)"},
		{"[a]\nsize=8m\nrw=write\nbuffer_compress_percentage=50\n[b]\nstonewall\nrw=write\nsize=8m", "buffer_compress_percentage/dedupe_percentage differs between [a] ({2 0}) and [b] ({0 0})"},
		{"[w]\nsize=8m\nrw=write\nend_fsync=1\n[w2]\nstonewall\nrw=randwrite\nsize=8m", "end_fsync/fsync_on_close differs"},
	}
	for _, tc := range tests {
		_, err := convertFile(t, tc.src, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant an error with %q", tc.src, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error of more than one line: %q", tc.src, err)
		}
	}
}

// Jobs without stonewall between them run at the same time in fio: the
// same job under several names is one phase with their threads; stonewall
// makes phases in order, and [global] applies to every job after it.
func TestGroups(t *testing.T) {
	src := `[global]
size=4m
bs=64k
[t0]
[t1]
numjobs=2
[w]
stonewall
rw=write
numjobs=3
[r]
stonewall
rw=randread
numjobs=3
`
	r, err := convertFile(t, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 1+2 threads in the first group; the others must match it.
	if r.Job.Threads != 3 {
		t.Errorf("threads %d, want 3", r.Job.Threads)
	}
	if len(r.Job.Phases) != 3 || r.Job.Phases[0].Name != "t0" || r.Job.Phases[1].Name != "w" || r.Job.Phases[2].Access != workload.Random {
		t.Errorf("phases %+v", r.Job.Phases)
	}
	if !reflect.DeepEqual(r.Groups, [][]string{{"t0", "t1"}, {"w"}, {"r"}}) {
		t.Errorf("groups %v", r.Groups)
	}
}

// include reads another file relative to the including one; --section
// runs only the sections named.
func TestIncludeAndSection(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "common.fio"), []byte("bs=16k\nsize=1m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	job := filepath.Join(dir, "job.fio")
	if err := os.WriteFile(job, []byte("[global]\ninclude common.fio\n[a]\nrw=write\n[b]\nstonewall\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := ParseArgs([]string{job, "--section=b"}, env(nil), os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Convert(in, job)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Job.Phases) != 1 || r.Job.Phases[0].Name != "b" || r.Job.Phases[0].XferSize != 16*units.KiB || r.Job.Phases[0].FileSize != units.MiB {
		t.Errorf("phases %+v", r.Job.Phases)
	}
	if _, err := ParseArgs([]string{"/dev/zero"}, env(nil), ReadJobFile); err == nil || !strings.Contains(err.Error(), "/dev/zero is not a regular file") {
		t.Errorf("a device as the job file: %v", err)
	}
	if err := os.WriteFile(job, []byte("[global]\ninclude job.fio\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseArgs([]string{job}, env(nil), ReadJobFile); err == nil || !strings.Contains(err.Error(), "nest more than") {
		t.Errorf("include loop: %v", err)
	}
}

// fio's command line: --key=value and --key value, several --name= start
// several jobs, options before the first are global; fio's own options.
func TestArgs(t *testing.T) {
	r, err := convertArgs(t, "--bs 64k --size=1m --direct 0 --name=a --rw write --group_reporting --name=b --stonewall --rw=read --output-format=json")
	if err != nil {
		t.Fatal(err)
	}
	want := &jobfile.Job{Name: "a", Threads: 1, Phases: []jobfile.PhaseSpec{
		phase("a", "write", 64*units.KiB, units.MiB), phase("b", "read", 64*units.KiB, units.MiB)}}
	if !reflect.DeepEqual(r.Job, want) {
		t.Errorf("\n got %+v\nwant %+v", r.Job, want)
	}
	in, _ := ParseArgs([]string{"--name=a", "--size=1m", "--output-format=json"}, nil, noFiles)
	if in.OutputFormat != "json" {
		t.Errorf("output format %q", in.OutputFormat)
	}
	for line, want := range map[string]string{
		"--rw=read --size=1m":                      "no job: start one with --name=JOB",
		"--name=a --size=1m job.fio":               "not both",
		"--name=a --size=1m --output=x.txt":        "--result-file FILE",
		"--name=a --size=1m -x":                    "short options",
		"--name=a --size=1m --minimal":             "--minimal:",
		"--name=a --size=1m --output-format=terse": "writes normal (its table) or json",
		"": "no job",
	} {
		if _, err := convertArgs(t, line); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", line, err, want)
		}
	}
}

// A fio job file is told from a YAML workload by its first line.
func TestIsJobFile(t *testing.T) {
	for src, want := range map[string]bool{
		"; fio\n[global]\nbs=4k\n": true,
		"[job1]\n":                 true,
		"name: x\nphases: []\n":    false,
		"[a, b]\n":                 false,
		"":                         false,
	} {
		if got := IsJobFile([]byte(src)); got != want {
			t.Errorf("IsJobFile(%q) = %v", src, got)
		}
	}
}

func TestSizesAndTimes(t *testing.T) {
	for s, want := range map[string]int64{"4096": 4096, "4k": 4096, "4KB": 4096, "4kib": 4000, "1m": units.MiB, "1g": units.GiB, "0x10": 16, "2t": 2 << 40} {
		if got, err := parseSize(s, 1024); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "k", "4x", "1e3", "99999999999999999999", "16777216p"} {
		if _, err := parseSize(s, 1024); err == nil {
			t.Errorf("parseSize(%q): no error", s)
		}
	}
	for s, want := range map[string]time.Duration{"30": 30 * time.Second, "5m": 5 * time.Minute, "250ms": 250 * time.Millisecond, "1h": time.Hour, "10us": 10 * time.Microsecond} {
		if got, err := parseTime(s, time.Second); err != nil || got != want {
			t.Errorf("parseTime(%q) = %v, %v", s, got, err)
		}
	}
}

// FuzzParse feeds the job-file reader and the conversion anything: an
// error or a job that validates, never a panic.
func FuzzParse(f *testing.F) {
	f.Add("[global]\nbs=4k\nsize=1m\n[a]\nrw=randrw\nrwmixread=70\n[b]\nstonewall\nrw=write\nverify=md5\n")
	f.Add("[j]\nsize=${X}\nnumjobs=3\nloops=2\nbsrange=1k-1k\nruntime=1\n")
	f.Add("[j]\nsize=1m\nrw=randread:1\nioengine=libaio\niodepth=8\ndirect\nrate=1m,1m\n")
	f.Fuzz(func(t *testing.T, src string) {
		secs, err := ParseFile([]byte(src), "f.fio", env(map[string]string{"X": "1m"}), nil)
		if err != nil {
			return
		}
		r, err := Convert(&Input{Sections: secs}, "f.fio")
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error of more than one line: %q", err)
			}
			return
		}
		if err := r.Job.Validate(); err != nil {
			t.Errorf("converted job does not validate: %v", err)
		}
	})
}

// fio's summary lines: the job, IOPS and BW as fio writes them, clat in
// microseconds and its percentiles from the phase's histogram; the
// service time when the phase ran at a rate.
func TestSummary(t *testing.T) {
	h := metrics.NewHistogram()
	for range 99 {
		h.Record(100 * time.Microsecond)
	}
	h.Record(10 * time.Millisecond)
	enc, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	p := report.PhaseResult{Name: "r", Ops: 100, Bytes: 100 * 4096, Seconds: 1, OpsPerSec: 100, BytesPerSec: 409600,
		LatencyOf: "4 KiB random read", Latency: h.Summary(), Histogram: enc}
	res := &report.Result{Threads: 2, Phases: []report.PhaseResult{p}}
	var b strings.Builder
	Summary(&b, res, [][]string{{"t0", "t1"}})
	for _, want := range []string{
		"t0, t1: (groupid=0, jobs=2): err= 0\n",
		"  read: IOPS=100, BW=400KiB/s (410kB/s)(400KiB/1000msec)\n",
		"    clat (usec): min=100, max=10",
		"     |  1.00th=[  100],  5.00th=[  100], 10.00th=[  100], 20.00th=[  100],\n",
		" 99.99th=[10",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	s := metrics.NewHistogram()
	s.Record(7 * time.Microsecond)
	senc, _ := s.Encode()
	p.LatencyOf, p.ServiceTime, p.ServiceHistogram = "4 KiB random write", &metrics.Summary{Count: 1, Min: 7, Max: 7, Mean: 7}, senc
	b.Reset()
	Summary(&b, &report.Result{Threads: 1, Phases: []report.PhaseResult{p}}, nil)
	if !strings.Contains(b.String(), "r: (groupid=0, jobs=1)") || !strings.Contains(b.String(), "  write: IOPS=100") ||
		!strings.Contains(b.String(), "clat (usec): min=7, max=7, avg=7.00") || !strings.Contains(b.String(), " 50.00th=[    7]") {
		t.Errorf("with a service time:\n%s", b.String())
	}
}

// FuzzArgs does the same for fio's command line, split at blanks.
func FuzzArgs(f *testing.F) {
	f.Add("--name=a --size=1m --rw randwrite --bs 64k --verify=md5 --name=b --stonewall --section=b")
	f.Add("--bs=4k,4k --name=x --size=2m --nrfiles 2 --file_service_type=sequential --loops=3 --direct 1")
	f.Fuzz(func(t *testing.T, line string) {
		in, err := ParseArgs(strings.Fields(line), env(nil), noFiles)
		if err != nil {
			return
		}
		if r, err := Convert(in, ""); err == nil {
			if err := r.Job.Validate(); err != nil {
				t.Errorf("converted job does not validate: %v", err)
			}
		}
	})
}

// docs/fio.md names every option fsbench fio takes.
func TestDocsListEveryOption(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "fio.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range Supported() {
		if !strings.Contains(string(doc), "`"+o) {
			t.Errorf("docs/fio.md does not name %s", o)
		}
	}
}
