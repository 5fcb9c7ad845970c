package cluster_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// --rate on three real agents is the total across them: the merged phase
// scheduled about rate x duration operations (done or missed), where
// each host running the whole rate would have scheduled three times as
// many; the result's rate parameter states the total.
func TestRateSplitAcrossHosts(t *testing.T) {
	root := t.TempDir()
	a, b, c := startAgent(t, root), startAgent(t, root), startAgent(t, root)
	const rate, seconds = 300, 2
	r := resultOf(t, coordinator(t, context.Background(), "bench", root, "--rw", "randread", "--file-size", "64K",
		"--xfer-size", "4K", "-p", "2", "--rate", "300", "--duration", "2s", "--hosts", hostsFlag(a, b, c), "-o", "json"))
	p := r.FindPhase("randread")
	if p == nil || len(p.Hosts) != 3 {
		t.Fatalf("randread on 3 hosts: %+v", p)
	}
	want := float64(rate * seconds)
	if got := float64(p.Ops + p.Missed); got < 0.75*want || got > 1.25*want {
		t.Errorf("%d operations done and %d missed on 3 hosts at --rate %d for %ds; want about %.0f in all (3 x %.0f if each host ran the whole rate)",
			p.Ops, p.Missed, rate, seconds, want, want)
	}
	for _, h := range p.Hosts {
		if h.Ops > int64(0.5*want) {
			t.Errorf("host %s did %d operations, more than its third of %.0f", h.Address, h.Ops, want)
		}
	}
	if got := r.Parameters.Get("rate"); fmt.Sprint(got) != fmt.Sprint(rate) {
		t.Errorf("parameter rate %v (%T), want the total %d", got, got, rate)
	}
}

// vdbench's fwdrate= over hd= hosts is the total across them, as in
// vdbench: two agents at fwdrate=200 for 2 s schedule about 400
// operations in all, not 800.
func TestVdbenchFwdrateSplitAcrossHosts(t *testing.T) {
	root := t.TempDir()
	a, b := startAgent(t, root), startAgent(t, root)
	parm := filepath.Join(t.TempDir(), "rate")
	text := fmt.Sprintf(`hd=h0,system=%s
hd=h1,system=%s
fsd=fsd1,anchor=%s,depth=1,width=2,files=2,size=64k,shared=yes
fwd=default,fsd=fsd1,operation=read,xfersize=4k,fileio=random,fileselect=random,threads=2
fwd=fwd1,host=h0
fwd=fwd2,host=h1
rd=rd1,fwd=fwd*,fwdrate=200,format=yes,elapsed=2,interval=1
`, a.addr, b.addr, filepath.Join(root, "vdbench"))
	if err := os.WriteFile(parm, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	r := resultOf(t, coordinator(t, context.Background(), "vdbench", "-f", parm, "-o", "json"))
	p := r.FindPhase("rd1")
	if p == nil || len(p.Hosts) != 2 {
		t.Fatalf("rd1 on 2 hosts: %+v", p)
	}
	if got := p.Ops + p.Missed; got < 300 || got > 500 {
		t.Errorf("%d operations done and %d missed at fwdrate=200 for 2 s on 2 hosts; want about 400 (800 if each host ran the whole rate)", p.Ops, p.Missed)
	}
	if got := r.Parameters.Get("rate"); fmt.Sprint(got) != "200" {
		t.Errorf("parameter rate %v, want the total 200", got)
	}
}

// Ranks launched by mpirun split --rate as hosts do: two ranks at
// --rate 200 for 2 s schedule about 400 operations in all.
func TestMpirunRateSplitAcrossRanks(t *testing.T) {
	root := t.TempDir()
	r := resultOf(t, mpirun(t, 2, "bench", root, "--rw", "randread", "--file-size", "64K", "--xfer-size", "4K",
		"-p", "1", "--rate", "200", "--duration", "2s", "-o", "json"))
	p := r.FindPhase("randread")
	if p == nil || len(p.Hosts) != 2 {
		t.Fatalf("randread on 2 ranks: %+v", p)
	}
	if got := p.Ops + p.Missed; got < 300 || got > 500 {
		t.Errorf("%d operations done and %d missed on 2 ranks at --rate 200 for 2 s; want about 400 (800 if each rank ran the whole rate)", p.Ops, p.Missed)
	}
	if got := r.Parameters.Get("rate"); fmt.Sprint(got) != "200" {
		t.Errorf("parameter rate %v, want the total 200", got)
	}
}
