package vdbjob

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/jobfile"
	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
)

func example(t *testing.T, name string) Source {
	t.Helper()
	p := filepath.Join("..", "..", "examples", "vdbench", name)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return Source{p, b}
}

func read(t *testing.T, text string, o Options) (*Run, error) {
	t.Helper()
	return Read([]Source{{"p.vdb", []byte(text)}}, o)
}

func tree(dir string, depth, width, files int, size int64, format string, line int) *jobfile.Tree {
	t := &jobfile.Tree{Dir: dir, Format: format, Line: line}
	t.Depth, t.Width, t.Files, t.FileSize = depth, width, files, size
	return t
}

func phase(name, op string, access, sel workload.Access, xfer int64, d, interval time.Duration, line int) jobfile.PhaseSpec {
	return jobfile.PhaseSpec{Name: name, Op: op, Access: access, Select: sel, XferSize: xfer, ReadPct: -1, Files: 1,
		Duration: d, Interval: interval, Line: line}
}

const (
	seq  = workload.Sequential
	rand = workload.Random
)

// Each parameter file of JuiceFS's guide, unchanged, is the workload its
// lines describe, with vdbench's units (1024-based sizes, seconds).
func TestGuideFiles(t *testing.T) {
	mix := phase("rd3", jobfile.OpRW, rand, rand, 128*units.KiB, 120*time.Second, time.Second, 11)
	mix.ReadPct = 70
	for _, tc := range []struct {
		file  string
		path  string
		hosts []string
		job   jobfile.Job
	}{
		{"local-big", "/mnt/jfs", nil, jobfile.Job{Threads: 4, Direct: true, Tree: tree("local-big", 1, 1, 4, units.GiB, "restart", 3),
			Phases: []jobfile.PhaseSpec{
				phase("rd1", "write", seq, seq, units.MiB, 120*time.Second, time.Second, 8),
				phase("rd2", "read", seq, seq, units.MiB, 120*time.Second, time.Second, 9),
			}}},
		{"local-small", "/mnt/jfs", nil, jobfile.Job{Threads: 4, Direct: true, Tree: tree("local-small", 1, 20, 2000, 128*units.KiB, "restart", 3),
			Phases: []jobfile.PhaseSpec{
				phase("rd1", "write", rand, rand, 128*units.KiB, 120*time.Second, time.Second, 9),
				phase("rd2", "read", rand, rand, 128*units.KiB, 120*time.Second, time.Second, 10),
				mix,
			}}},
		// Three hosts sharing the tree (shared=yes): each its third of
		// the files, in its own directory of the run.
		{"jfs-test", "/mnt/jfs", []string{"node0:7781", "node1:7781", "node2:7781"}, jobfile.Job{Threads: 4,
			Tree: tree("", 1, 100, 1000, 128*units.KiB, "yes", 8),
			Phases: []jobfile.PhaseSpec{
				{Name: "rd1-format", Op: jobfile.OpFormat, XferSize: units.MiB, ReadPct: -1, Files: 1, Interval: time.Second, Line: 15},
				phase("rd1", "read", rand, rand, 128*units.KiB, 300*time.Second, time.Second, 15),
			}}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			src := example(t, tc.file)
			r, err := Read([]Source{src}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := tc.job
			want.Name, want.File = "vdbench "+tc.file, src.Name
			if !reflect.DeepEqual(*r.Job, want) {
				t.Errorf("job\n%+v\nwant\n%+v", *r.Job, want)
				for i := range min(len(want.Phases), len(r.Job.Phases)) {
					if !reflect.DeepEqual(r.Job.Phases[i], want.Phases[i]) {
						t.Errorf("phase %d\n%+v\nwant\n%+v", i, r.Job.Phases[i], want.Phases[i])
					}
				}
				t.Errorf("tree %+v want %+v", *r.Job.Tree, *want.Tree)
			}
			if r.Path != tc.path || !reflect.DeepEqual(r.Hosts, tc.hosts) {
				t.Errorf("path %q hosts %q, want %q %q", r.Path, r.Hosts, tc.path, tc.hosts)
			}
		})
	}
}

// The field report's file: five rds, 4 KiB transfers, 2 s reports; the
// anchor is the mount itself, which --anchor moves below it.
func TestFieldReportFile(t *testing.T) {
	r, err := Read([]Source{example(t, "4k-test.cfg")}, Options{Anchor: "/mnt/jfs/vdbench-4k"})
	if err != nil {
		t.Fatal(err)
	}
	j := r.Job
	var got []string
	for _, p := range j.Phases {
		got = append(got, p.Name+":"+p.Op+":"+p.Access.String()+":"+p.Duration.String()+":"+p.Interval.String())
	}
	want := "rd1:write:random:10m0s:2s rd2:read:random:10m0s:2s rd3:write:sequential:10m0s:2s rd4:read:sequential:10m0s:2s rd5:rw:random:10m0s:2s"
	if strings.Join(got, " ") != want || j.Phases[4].ReadPct != 70 || j.Threads != 10 || !j.Direct ||
		j.Tree.Depth != 3 || j.Tree.Width != 10 || j.Tree.Files != 30 || j.Tree.FileSize != 20*units.MiB || j.Tree.Dir != "vdbench-4k" {
		t.Errorf("phases %s\ntree %+v", strings.Join(got, " "), *j.Tree)
	}
	if r.Path != "/mnt/jfs" {
		t.Errorf("path %s", r.Path)
	}
}

// --scale shrinks files, sizes (to a multiple of the transfer) and times,
// never the shape or the transfers.
func TestScale(t *testing.T) {
	r, err := Read([]Source{example(t, "local-big")}, Options{Scale: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	tr := r.Job.Tree
	if tr.Files != 1 || tr.FileSize != 10*units.MiB || tr.Depth != 1 || tr.Width != 1 {
		t.Errorf("tree %+v", *tr)
	}
	if p := r.Job.Phases[0]; p.Duration != 1200*time.Millisecond || p.XferSize != units.MiB || p.Interval != time.Second {
		t.Errorf("phase %+v", p)
	}
	r, err = Read([]Source{example(t, "local-small")}, Options{Scale: 0.001})
	if err != nil {
		t.Fatal(err)
	}
	if tr := r.Job.Tree; tr.Files != 2 || tr.FileSize != 128*units.KiB || tr.Width != 20 {
		t.Errorf("tree %+v", *tr)
	}
	if p := r.Job.Phases[0]; p.Duration != 120*time.Millisecond || p.Interval != 120*time.Millisecond {
		t.Errorf("phase %+v", p)
	}
}

// The syntax: defaults, comments, continuations, blanks as separators,
// lists and wildcards, $variables, vdbench's defaults and units.
func TestSyntax(t *testing.T) {
	text := `* a comment
/ another
# and another
fsd=default,depth=2,width=3
fsd=fsd1,anchor=/mnt/x/$dir,files=4,
   size=1m
fwd=default,xfersize=64k threads=2
fwd=w1,fsd=fsd1,operation=write,fileio=random
fwd=w2,fsd=(fsd1),rdpct=25
fwd=other,fsd=fsd1,operation=create
rd=default,elapsed=2m,interval=5
rd=r1,fwd=w*,fwdrate=(100,max),format=yes,warmup=10
rd=R.2,fwd=(other)
  ,elapsed=1
rd=r3,fwd=w1,forxfersize=(4k,8k),maxdata=1m`
	r, err := read(t, text, Options{Vars: map[string]string{"dir": "tree"}})
	if err == nil || !strings.Contains(err.Error(), "p.vdb:12: rd=r1 runs 2 fwds at once (w1, w2)") {
		t.Fatalf("two fwds in one rd on one host: %v", err)
	}
	text = strings.Replace(text, "fwd=w*", "fwd=w1", 1)
	if r, err = read(t, text, Options{Vars: map[string]string{"dir": "tree"}}); err != nil {
		t.Fatal(err)
	}
	j := r.Job
	if tr := j.Tree; tr.Dir != "tree" || tr.Depth != 2 || tr.Width != 3 || tr.Files != 4 || tr.FileSize != units.MiB || tr.Format != "yes" {
		t.Errorf("tree %+v", *tr)
	}
	var got []string
	for _, p := range j.Phases {
		got = append(got, p.Name+":"+p.Op+":"+p.Access.String()+":"+p.Select.String()+":"+units.FormatBytes(p.XferSize)+
			":"+p.Duration.String()+":"+p.Warmup.String()+":"+p.Interval.String())
	}
	want := []string{
		"r1-format:format:sequential:sequential:1 MiB:0s:0s:5s",
		"r1-100:write:random:random:64 KiB:2m0s:10s:5s",
		"r1-max:write:random:random:64 KiB:2m0s:10s:5s",
		"r.2:create:sequential:random:64 KiB:0s:0s:1s",
		"r3-4kib:write:random:random:4 KiB:2m0s:0s:5s",
		"r3-8kib:write:random:random:8 KiB:2m0s:0s:5s",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("phases\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if j.Phases[1].Rate != 100 || j.Phases[2].Rate != 0 || j.Threads != 2 || j.Direct {
		t.Errorf("rates %g %g threads %d direct %v", j.Phases[1].Rate, j.Phases[2].Rate, j.Threads, j.Direct)
	}
	if j.Phases[4].Ops != 256 || j.Phases[5].Ops != 128 {
		t.Errorf("maxdata=1m: %d and %d operations", j.Phases[4].Ops, j.Phases[5].Ops)
	}
	if r.Path != "/mnt/x" || r.Hosts != nil {
		t.Errorf("path %s hosts %q", r.Path, r.Hosts)
	}
	if _, err := read(t, text, Options{}); err == nil || !strings.Contains(err.Error(), "p.vdb:5: $dir is not given") {
		t.Errorf("missing variable: %v", err)
	}
}

// hd= lines are the agents, system= with the agent's port unless given;
// hd=localhost alone runs here.
func TestHosts(t *testing.T) {
	base := "fsd=f,anchor=/m/t,depth=1,width=1,files=4,size=4k,shared=yes\nfwd=w,fsd=f\nrd=r,fwd=w,format=restart\n"
	for _, tc := range []struct {
		hd   string
		want []string
	}{
		{"", nil},
		{"hd=localhost\n", nil},
		{"hd=default,shell=vdbench,user=root,vdbench=/opt/v,jvms=2\nhd=a,system=10.0.0.1\nhd=b,system=node2:7790\n", []string{"10.0.0.1:7781", "node2:7790"}},
		{"hd=one,system=node1\n", []string{"node1:7781"}},
	} {
		r, err := read(t, tc.hd+base, Options{})
		if err != nil {
			t.Errorf("%q: %v", tc.hd, err)
			continue
		}
		if !reflect.DeepEqual(r.Hosts, tc.want) {
			t.Errorf("%q: hosts %q, want %q", tc.hd, r.Hosts, tc.want)
		}
		if len(tc.want) > 1 && (r.Job.Tree.Dir != "" || r.Job.Tree.Files != 2) {
			t.Errorf("%q: tree %+v: want each host's half of the files in its own directory", tc.hd, *r.Job.Tree)
		}
	}
}

// Every parameter fsbench cannot honour is refused by name, with its
// line, before anything runs.
func TestRefusals(t *testing.T) {
	const fsd = "fsd=f,anchor=/m/t,depth=1,width=1,files=4,size=4k\n"
	const fwd = "fwd=w,fsd=f\n"
	const rd = "rd=r,fwd=w\n"
	for _, tc := range []struct{ text, want string }{
		{"sd=sd1,lun=/dev/sdb\n", "p.vdb:1: sd=sd1: sd= defines block-device storage"},
		{"wd=wd1,sd=sd1\n", "wd= defines block-device storage"},
		{"hd=default,shell=ssh\nhd=a,system=x\n" + fsd + fwd + rd, "p.vdb:1: hd=a: shell=ssh: fsbench does not start agents over ssh: run `fsbench agent` on each host"},
		{"hd=a,system=x,shell=rsh\n" + fsd + fwd + rd, "fsbench does not start agents over rsh"},
		{"hd=a,system=x,clients=4\n", "hd=a: clients= is not supported"},
		{"fsd=f,anchor=/m/t,depth=1,width=1,files=4,size=(4k,50,8k,50)\n", "size=(4k,50,8k,50): a list of sizes (a mix) is not supported"},
		{"fsd=f,anchor=/m/t,depth=1,width=1,files=4,size=4k,distribution=all\n", "distribution=all: fsbench's tree has files in the lowest level only"},
		{"fsd=f,anchor=/m/t,depth=1,width=1,files=4,size=4k,openflags=o_sync\n", "o_sync is not supported"},
		{"fsd=f,anchor=/m/t,depth=1,width=1,files=4,size=4k,total_size=1g\n", "fsd=f: total_size= is not supported"},
		{"fsd=f,anchor=/m/t,depth=1,width=1,files=4,size=4k,workingsetsize=1g\n", "workingsetsize= is not supported"},
		{"fsd=f,anchor=/m/t,depth=1,width=1,files=4\n", "fsd=f: size= is required"},
		{"fsd=f,depth=1,width=1,files=4,size=4k\n", "anchor= is required"},
		{fsd + "fwd=w,fsd=f,xfersize=(4k,50,64k,50)\n", "xfersize=(4k,50,64k,50): a list of sizes (a mix) is not supported"},
		{fsd + "fwd=w,fsd=f,skew=50\n", "fwd=w: skew= is not supported"},
		{fsd + "fwd=w,fsd=f,stopafter=10\n", "stopafter= is not supported"},
		{fsd + "fwd=w,fsd=f,operation=copy\n", "operation=copy: not supported"},
		{fsd + "fwd=w,fsd=f,operation=close\n", "operation=close: not supported"},
		{fsd + "fwd=w,fsd=f,fileio=(random,shared)\n", "fileio=(random,shared): want sequential or random"},
		{fsd + "fwd=w,fsd=f,operation=create,rdpct=50\n", "rdpct= mixes reads and writes"},
		{fsd + "fwd=w,fsd=f,frobnicate=1\n", "p.vdb:2: fwd=w: frobnicate= is not a parameter fsbench knows"},
		{fsd + fwd + "rd=r,fwd=w,forthreads=(1,2)\n", "rd=r: forthreads= is not supported"},
		{fsd + fwd + "rd=r,fwd=w,forwidth=(1,2)\n", "forwidth= is not supported"},
		{fsd + fwd + "rd=r,fwd=w,fwdrate=curve\n", "fwdrate=curve: want max or operations per second"},
		{fsd + fwd + "rd=r,fwd=w,distribution=exponential\n", "rd=r: distribution= is not supported"},
		{fsd + fwd + "rd=r,fwd=w,pause=5\n", "pause= is not supported"},
		{fsd + fwd + "rd=r,fwd=w,format=only\n", "format=only: want yes or restart or no"},
		{fsd + fwd + "rd=r,fwd=nope\n", "rd=r: fwd=nope names no fwd"},
		{fsd + fwd + "rd=r,fwd=w\nrd=s,fwd=w,format=yes\n", "rd=s: format=yes after the first rd"},
		{fsd + "fwd=w,fsd=f,operation=create\nrd=r,fwd=w,fwdrate=10\n", "fwdrate=10 with operation=create"},
		{fsd + "fwd=w,fsd=f,operation=create\nrd=r,fwd=w,maxdata=1m\n", "maxdata= counts bytes read and written"},
		{fsd + "fwd=w,fsd=f,threads=2\nfwd=v,fsd=f,threads=3\nrd=r,fwd=w\nrd=s,fwd=v\n", "threads of a run are fixed"},
		{fsd + "fwd=w,fsd=f\nfwd=v,fsd=f,openflags=o_direct\nrd=r,fwd=w\nrd=s,fwd=v\n", "openflags=o_direct on some runs only"},
		{fsd + "fsd=g,anchor=/m/u,depth=1,width=1,files=4,size=4k\nfwd=w,fsd=f\nfwd=v,fsd=g\nrd=r,fwd=w\nrd=s,fwd=v\n", "one tree per run"},
		{fsd + "fwd=w,fsd=(f,g)\n" + rd, "fwd=w works on 2 fsds"},
		{fsd + fwd + fwd + rd, "fwd=w is defined twice"},
		{"hd=a,system=x\nhd=b,system=y\n" + fsd + fwd + rd, "fsd=f is used by 2 hosts: give it shared=yes"},
		{"hd=a,system=x\nhd=b,system=y\n" + "fsd=f,anchor=/m/t,depth=1,width=1,files=4,size=4k,shared=yes\nfwd=w,fsd=f,host=a\nrd=r,fwd=w,format=yes\n", "rd=r runs nothing on hd=b"},
		{"hd=a,system=x\nhd=b,system=y\n" + "fsd=f,anchor=/m/t,depth=1,width=1,files=4,size=4k,shared=yes\nfwd=w,fsd=f,host=a\nfwd=v,fsd=f,host=b,threads=8\nrd=r,fwd=(w,v),format=yes\n", "fwd=w and fwd=v differ"},
		{"hd=a,system=x\nhd=b,system=y\n" + "fsd=f,anchor=/m/t,depth=1,width=1,files=4,size=4k,shared=yes\nfwd=w,fsd=f\nrd=r,fwd=w\n", "format=no on many hosts"},
		{fsd + "fwd=w,fsd=f,host=h9\n" + rd, "fwd=w: host=h9 is no hd="},
		{fsd + fwd + rd + "compratio=0.5\n", "compratio=0.5: want a ratio from 1 to 256"},
		{fsd + fwd + rd + "dedupunit=128k\n", "dedupunit=128k: fsbench's copies are 4 KiB blocks"},
		{fsd + fwd + rd + "include=other\n", "include= is not supported"},
		{"fsd=f,anchor=relative,depth=1,width=1,files=4,size=4k\n" + fwd + rd, "want an absolute path below the mount"},
		{fsd + fwd, "no rd= line"},
		{"nonsense\n", `"nonsense" is not keyword=value`},
	} {
		_, err := read(t, tc.text, Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %q", tc.text, err, tc.want)
		}
	}
}

// The job written as YAML reads back (jobfile.Parse) into the same job:
// agents run what the coordinator read.
func TestYAMLRoundTrip(t *testing.T) {
	for _, name := range []string{"local-big", "local-small", "jfs-test", "4k-test.cfg"} {
		r, err := Read([]Source{example(t, name)}, Options{Scale: 0.37, Anchor: "/mnt/jfs/x"})
		if err != nil {
			t.Fatal(err)
		}
		b, err := YAML(r.Job)
		if err != nil {
			t.Fatal(err)
		}
		back, err := jobfile.Parse(b, r.Job.File)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, b)
		}
		for i := range back.Phases {
			back.Phases[i].Line = r.Job.Phases[i].Line
		}
		back.Tree.Line = r.Job.Tree.Line
		if !reflect.DeepEqual(back, r.Job) {
			t.Errorf("%s: read back\n%+v\nwant\n%+v\n%s", name, back, r.Job, b)
		}
	}
}

// The reader never panics, and what it accepts is a valid job.
func FuzzRead(f *testing.F) {
	for _, name := range []string{"local-big", "local-small", "jfs-test", "4k-test.cfg"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "vdbench", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("fsd=f,anchor=/a/b,depth=1,width=1,files=1,size=1\nfwd=w,fsd=f\nrd=r,fwd=(w*),fwdrate=(1,max),forxfersize=(1k)\n ,elapsed=1s")
	f.Fuzz(func(t *testing.T, text string) {
		r, err := Read([]Source{{"f", []byte(text)}}, Options{Scale: 0.5})
		if err != nil {
			return
		}
		if err := r.Job.Validate(); err != nil {
			t.Errorf("accepted an invalid job: %v", err)
		}
		if _, err := YAML(r.Job); err != nil {
			t.Error(err)
		}
	})
}

// The manual's table of parameters is this package's: every parameter,
// with what fsbench does with it.
func TestManualTable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "vdbench.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, s := range Table {
		status := "supported"
		switch {
		case s.Ignored():
			status = "ignored"
		case !s.Supported():
			status = "refused"
		}
		kind := s.Kind + "="
		if s.Kind == "" {
			kind = "(general)"
		}
		row := "| " + kind + " | `" + s.Name + "=` | " + status + " | " + s.Why + " |"
		if !strings.Contains(doc, row) {
			t.Errorf("docs/vdbench.md lacks the row %s", row)
		}
	}
}

// A file without hd= lines run on given hosts (--hosts) is split over
// them as one with hd= lines is.
func TestGivenHosts(t *testing.T) {
	text := "fsd=f,anchor=/m/t,depth=1,width=1,files=5,size=4k,shared=yes\nfwd=w,fsd=f\nrd=r,fwd=w,format=restart\n"
	r, err := read(t, text, Options{Hosts: 2})
	if err != nil {
		t.Fatal(err)
	}
	if tr := r.Job.Tree; tr.Dir != "" || tr.Files != 3 || r.Hosts != nil {
		t.Errorf("tree %+v, hosts %q", *tr, r.Hosts)
	}
	if _, err := read(t, strings.Replace(text, ",shared=yes", "", 1), Options{Hosts: 2}); err == nil || !strings.Contains(err.Error(), "shared=yes") {
		t.Errorf("without shared=yes: %v", err)
	}
}

// Every parameter the table refuses is refused by name, on its line, with
// the table's reason; every one it ignores is accepted.
func TestEveryRefusal(t *testing.T) {
	lines := map[string]string{
		"hd":  "hd=h0,system=localhost",
		"fsd": "fsd=f,anchor=/m/t,depth=1,width=1,files=4,size=4k",
		"fwd": "fwd=w,fsd=f",
		"rd":  "rd=r,fwd=w",
		"":    "",
	}
	n := 0
	for _, s := range Table {
		if s.Supported() {
			continue
		}
		var text []string
		line := 0
		for i, kind := range []string{"hd", "fsd", "fwd", "rd", ""} {
			l := lines[kind]
			if kind == s.Kind {
				l = strings.TrimPrefix(l+","+s.Name+"=1", ",")
				line = i + 1
			}
			text = append(text, l)
		}
		_, err := read(t, strings.Join(text, "\n"), Options{})
		if s.Ignored() {
			if err != nil {
				t.Errorf("%s= %s: %v", s.Kind, s.Name, err)
			}
			continue
		}
		n++
		want := fmt.Sprintf("p.vdb:%d: ", line)
		if s.Kind != "" {
			want += s.Kind + "="
		}
		if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), s.Name+"= is not supported: "+s.Why) {
			t.Errorf("%s %s=: %v", s.Kind, s.Name, err)
		}
	}
	if n < 20 {
		t.Errorf("only %d refusals", n)
	}
}

// compratio=, dedupratio= and dedupunit=4k set the data the run writes.
func TestDataRatios(t *testing.T) {
	r, err := read(t, "compratio=2\ndedupratio=3.5\ndedupunit=4k\nfsd=f,anchor=/m/t,depth=1,width=1,files=4,size=4k\nfwd=w,fsd=f,operation=write\nrd=r,fwd=w,format=yes\n", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Job.Data != (pattern.Data{Compress: 2, Dedupe: 3.5}) {
		t.Errorf("data %+v", r.Job.Data)
	}
}
