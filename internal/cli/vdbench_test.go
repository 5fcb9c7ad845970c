package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/cluster"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
)

func vdbenchExample(name string) string {
	return filepath.Join(testenv.RepoRoot(), "examples", "vdbench", name)
}

// runVdbench runs fsbench vdbench with -o json and returns the result.
func runVdbench(t *testing.T, args ...string) *report.Result {
	t.Helper()
	code, out, errs := runCLI(t, append([]string{"vdbench", "-o", "json", "--drop-caches", "never"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	r, err := report.ReadJSON(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func phaseNames(r *report.Result) []string {
	var out []string
	for _, p := range r.Phases {
		out = append(out, p.Name)
	}
	return out
}

// The guide's files run unchanged, scaled down, in a directory of the
// test's: the tree is made in the anchor (the format phase writes every
// file of it, whole), each rd is a phase of its transfers, and the tree
// is kept for the next run, which reuses it (format=restart).
func TestVdbenchGuideFilesRun(t *testing.T) {
	for _, tc := range []struct {
		file   string
		scale  string
		phases []string
		files  int64
		size   int64
		xfer   int64
	}{
		{"local-big", "0.01", []string{"format", "rd1", "rd2"}, 1, 10 * units.MiB, units.MiB},
		{"local-small", "0.001", []string{"format", "rd1", "rd2", "rd3"}, 20 * 2, 128 * units.KiB, 128 * units.KiB},
	} {
		t.Run(tc.file, func(t *testing.T) {
			dir := t.TempDir()
			anchor := filepath.Join(dir, tc.file)
			r := runVdbench(t, "-f", vdbenchExample(tc.file), "--scale", tc.scale, "--anchor", anchor)
			if got := phaseNames(r); !reflect.DeepEqual(got, tc.phases) {
				t.Fatalf("phases %q, want %q", got, tc.phases)
			}
			if f := r.Phases[0]; f.Items != tc.files || f.Bytes != tc.files*tc.size || f.Errors != 0 {
				t.Errorf("format: %d files, %d bytes (%d errors), want %d files of %d bytes", f.Items, f.Bytes, f.Errors, tc.files, tc.size)
			}
			for _, p := range r.Phases[1:] {
				if p.Ops == 0 || p.Bytes != p.Ops*tc.xfer || p.Errors != 0 {
					t.Errorf("%s: %d operations, %d bytes (%d errors): want transfers of %d", p.Name, p.Ops, p.Bytes, p.Errors, tc.xfer)
				}
			}
			if _, err := workload.ReadTreeInfo(anchor); err != nil {
				t.Errorf("the tree is not kept in the anchor: %v", err)
			}
			if left := leftIn(t, dir); !reflect.DeepEqual(left, []string{tc.file}) {
				t.Errorf("left in the anchor's parent: %q, want the anchor alone", left)
			}
			again := runVdbench(t, "-f", vdbenchExample(tc.file), "--scale", tc.scale, "--anchor", anchor)
			if got := phaseNames(again); !reflect.DeepEqual(got, tc.phases[1:]) {
				t.Errorf("second run: phases %q, want the tree reused, %q", got, tc.phases[1:])
			}
		})
	}
}

// A run moves the data the file asks for: maxdata= bytes in each rd,
// format=yes a format phase of every file first; $name comes from the
// command line.
func TestVdbenchMaxdata(t *testing.T) {
	dir := t.TempDir()
	parm := filepath.Join(dir, "parm")
	text := "fsd=fsd1,anchor=$dir/tree,depth=1,width=2,files=3,size=256k\n" +
		"fwd=default,fsd=fsd1,xfersize=64k,threads=2,fileio=random\n" +
		"fwd=w,operation=write\nfwd=r,operation=read\n" +
		"rd=default,elapsed=600,interval=1,maxdata=5m\n" +
		"rd=write,fwd=w,format=yes\nrd=read,fwd=r,format=restart\n"
	if err := os.WriteFile(parm, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runVdbench(t, parm, "dir="+dir)
	if got := phaseNames(r); !reflect.DeepEqual(got, []string{"write-format", "write", "read"}) {
		t.Fatalf("phases %q", got)
	}
	if f := r.Phases[0]; f.Items != 6 || f.Bytes != 6*256*units.KiB {
		t.Errorf("format: %d files, %d bytes", f.Items, f.Bytes)
	}
	for _, p := range r.Phases[1:] {
		if p.Bytes != 5*units.MiB || p.Ops != 80 || p.Errors != 0 {
			t.Errorf("%s: %d bytes in %d operations (%d errors), want maxdata=5m in 64 KiB transfers", p.Name, p.Bytes, p.Ops, p.Errors)
		}
	}
}

// What fsbench cannot honour is refused, exit 2, before anything is
// made; so is an anchor fsbench did not make.
func TestVdbenchUsageErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	theirs := filepath.Join(dir, "theirs")
	if err := os.Mkdir(theirs, 0o755); err != nil {
		t.Fatal(err)
	}
	ok := write("ok", "fsd=f,anchor="+filepath.Join(dir, "t")+",depth=1,width=1,files=1,size=4k\nfwd=w,fsd=f\nrd=r,fwd=w,elapsed=1\n")
	skew := write("skew", "fsd=f,anchor=/m/t,depth=1,width=1,files=1,size=4k\nfwd=w,fsd=f,skew=10\nrd=r,fwd=w\n")
	huge := write("huge", "fsd=f,anchor="+filepath.Join(dir, "new", "tree")+",depth=2,width=10,files=10,size=1t\nfwd=w,fsd=f\nrd=r,fwd=w,format=yes\n")
	hosts := write("hosts", "hd=a,system=127.0.0.1:1\nhd=b,system=127.0.0.1:2\nfsd=f,anchor=/m/t,depth=1,width=1,files=2,size=4k,shared=yes\nfwd=w,fsd=f\nrd=r,fwd=w,format=yes\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "give a vdbench parameter file"},
		{[]string{"-f", filepath.Join(dir, "missing")}, "missing: no such file or directory"},
		{[]string{"-f", skew}, "skew:2: fwd=w: skew= is not supported"},
		{[]string{"-f", ok, "--scale", "2"}, "--scale 2: want a factor above 0 and at most 1"},
		{[]string{"-f", ok, "--anchor", theirs}, "anchor " + theirs + " exists and is not a tree fsbench made"},
		{[]string{"-f", hosts, "--hosts", "127.0.0.1:3"}, "name the hosts; give them there or with --hosts, not both"},
		{[]string{"-f", huge}, "needs 1000 TiB (1,000 files of 1 TiB) and " + dir + " has "},
	} {
		code, _, errs := runCLI(t, append([]string{"vdbench"}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%q: exit %d, %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
	if got := leftIn(t, dir); !reflect.DeepEqual(got, []string{"hosts", "huge", "ok", "skew", "theirs"}) {
		t.Errorf("made %q", got)
	}
}

// The hd= lines are the hosts of --hosts: the same list, and each agent
// reads back the very workload the coordinator read.
func TestVdbenchHostsAreHostsFlag(t *testing.T) {
	dir := t.TempDir()
	parm := filepath.Join(dir, "parm")
	text := "hd=default,vdbench=/opt/vdbench,user=root\nhd=h0,system=127.0.0.1:7001\nhd=h1,system=localhost\n" +
		"fsd=fsd1,anchor=" + filepath.Join(dir, "vdb") + ",depth=1,width=2,files=10,size=8k,shared=yes\n" +
		"fwd=default,fsd=fsd1,operation=read,xfersize=4k,fileio=random,fileselect=random,threads=3\nfwd=fwd1,host=h0\nfwd=fwd2,host=h1\n" +
		"rd=rd1,fwd=fwd*,fwdrate=max,format=yes,elapsed=3,interval=1\n"
	if err := os.WriteFile(parm, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	v, code, msg := parseWith(t, newVdbenchCmdWith, []string{"-f", parm})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	b, code, msg := parseBench(t, nil, dir, "--hosts", "127.0.0.1:7001,localhost:7781")
	if code != 0 {
		t.Fatalf("bench --hosts: exit %d: %s", code, msg)
	}
	if !reflect.DeepEqual(v.Cluster.Hosts, b.Cluster.Hosts) || !v.Cluster.active() || v.Path != dir {
		t.Fatalf("hosts %q (path %s), --hosts gives %q", v.Cluster.Hosts, v.Path, b.Cluster.Hosts)
	}
	if tr := v.Job.Job.Tree; tr.Files != 5 || tr.Dir != "" || tr.Format != "yes" {
		t.Errorf("tree %+v: want each host's half of the files in its own directory", *tr)
	}

	// The same file without its hd= lines, given --hosts: the same run.
	nohd := filepath.Join(dir, "nohd")
	fsdLine := text[strings.Index(text, "fsd="):strings.Index(text, "fwd=")]
	one := fsdLine + "fwd=fwd1,fsd=fsd1,operation=read,xfersize=4k,fileio=random,fileselect=random,threads=3\n" +
		"rd=rd1,fwd=fwd*,fwdrate=max,format=yes,elapsed=3,interval=1\n"
	if err := os.WriteFile(nohd, []byte(one), 0o644); err != nil {
		t.Fatal(err)
	}
	w, code, msg := parseWith(t, newVdbenchCmdWith, []string{"-f", nohd, "--hosts", "127.0.0.1:7001,localhost:7781"})
	if code != 0 {
		t.Fatalf("--hosts: exit %d: %s", code, msg)
	}
	if !reflect.DeepEqual(w.Cluster.Hosts, b.Cluster.Hosts) || w.Job.Job.Tree.Shape != v.Job.Job.Tree.Shape || w.Job.Job.Tree.Dir != "" {
		t.Errorf("--hosts: hosts %q, tree %+v", w.Cluster.Hosts, *w.Job.Job.Tree)
	}

	// The job the agents get: bench with the workload as a --job file.
	app, _, _ := testApp(nil)
	cmd := newVdbenchCmdWith(app, nil)
	vo := &VdbenchOptions{}
	c, err := vo.cluster(cmd, nil, v)
	if err != nil {
		t.Fatal(err)
	}
	if c.job.Command != cluster.CommandBench || c.command != "bench" || c.job.Need != 10*8*units.KiB {
		t.Fatalf("agents run %q", c.job.Command)
	}
	local := filepath.Join(t.TempDir(), "job.yaml")
	if err := os.WriteFile(local, c.job.Files[vdbenchJobFile], 0o644); err != nil {
		t.Fatal(err)
	}
	r := &agentRunner{app: app}
	job := c.job
	job.RunName, job.Index, job.Hosts = "run", 0, 2
	p, err := r.Prepare(&job, map[string]string{vdbenchJobFile: local}, allowAll)
	if err != nil {
		t.Fatal(err)
	}
	aj, ok := p.(*agentJob[*BenchOptions])
	if !ok || aj.o.Job.Job == nil || aj.o.Path != dir {
		t.Fatalf("the agent prepared %T", p)
	}
	got, want := *aj.o.Job.Job, *v.Job.Job
	got.File, want.File = "", ""
	got.Tree.Line, want.Tree.Line = 0, 0
	for i := range got.Phases {
		got.Phases[i].Line, want.Phases[i].Line = 0, 0
	}
	if !reflect.DeepEqual(got.Phases, want.Phases) || *got.Tree != *want.Tree || got.Threads != want.Threads {
		t.Errorf("agent's job\n%+v\nwant\n%+v", got, want)
	}
}

// --print-job prints the workload and where it would run; --quick
// scales by 0.01.
func TestVdbenchPrintJob(t *testing.T) {
	code, out, errs := runCLI(t, "vdbench", "-f", vdbenchExample("local-big"), "--print-job", "--quick")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"# fsbench bench /mnt/jfs --job FILE\n", "dir: local-big", "file_size: 10485760", "duration: 1.2s", "direct: true"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	code, out, _ = runCLI(t, "vdbench", "-f", vdbenchExample("jfs-test"), "--print-job")
	if code != 0 || !strings.Contains(out, "--hosts node0:7781,node1:7781,node2:7781") || !strings.Contains(out, "files: 1000") {
		t.Errorf("jfs-test: exit %d\n%s", code, out)
	}
}

func TestFitScale(t *testing.T) {
	for _, tc := range []struct {
		free, need int64
		want       float64
	}{{73, 586, 0.1}, {1, 1000, 0.0009}, {100, 200, 0.4}} {
		if got := fitScale(tc.free, tc.need); got > 0.9*float64(tc.free)/float64(tc.need)*(1+1e-9) || got < tc.want*0.999 || got > tc.want*1.001 {
			t.Errorf("fitScale(%d, %d) = %g, want %g", tc.free, tc.need, got, tc.want)
		}
	}
}
