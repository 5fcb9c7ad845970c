package objbench

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/internal/units"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// small returns options for a quick run against url.
func small(storage, url string) Options {
	o := Defaults()
	o.Storage, o.URL = storage, url
	o.BigObjectSize = 16 * units.MiB
	o.BlockSize = units.MiB
	o.SmallObjects = 20
	o.SmallObjectSize = 16 * units.KiB
	o.BigCheckSize = 8 * units.MiB
	o.Threads = 2
	return o
}

func checkResult(t *testing.T, res *report.Result, wantFS bool) {
	t.Helper()
	for _, c := range res.Checks {
		switch c.Status {
		case report.CheckFailed:
			t.Errorf("check %s/%s failed: %s", c.Category, c.Name, c.Reason)
		case report.CheckNotSupport:
			fsCheck := strings.HasPrefix(c.Name, "change")
			if fsCheck == wantFS {
				t.Errorf("check %s: not supported", c.Name)
			}
		}
	}
	if len(res.Checks) < 16 {
		t.Errorf("%d checks, want at least JuiceFS's 16", len(res.Checks))
	}
	var names []string
	for _, p := range res.Phases {
		names = append(names, p.Name)
		if p.Errors > 0 {
			t.Errorf("%s: %d errors: %v", p.Name, p.Errors, p.ErrorSamples)
		}
		fs := p.Name == "chmod" || p.Name == "chown" || p.Name == "chtimes"
		if fs && !wantFS {
			if p.Value.Unit != report.CheckNotSupport {
				t.Errorf("%s: value %v, want not support", p.Name, p.Value)
			}
			continue
		}
		if p.Ops == 0 || p.Value.Value <= 0 || p.Latency.Count != p.Ops {
			t.Errorf("%s: ops %d, value %v, latency samples %d", p.Name, p.Ops, p.Value, p.Latency.Count)
		}
	}
	want := "upload,download,put-small,get-small,list,head,delete,chmod,chown,chtimes"
	if got := strings.Join(names, ","); got != want {
		t.Errorf("phases %s, want %s", got, want)
	}
	if d := res.FindPhase("download"); d == nil || d.TTFB == nil || d.TTFB.Count != d.Ops {
		t.Errorf("download has no time to first byte per object")
	}
	if up, want := res.FindPhase("upload"), bigObjectSize(res); up == nil || up.Bytes != want || res.FindPhase("download").Bytes != want {
		t.Errorf("upload and download should move the big object's %d bytes", want)
	}
}

func TestRunFile(t *testing.T) {
	dir := t.TempDir()
	// Something of the user's that must survive.
	if err := os.WriteFile(filepath.Join(dir, "precious"), []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := &report.Result{}
	if err := Run(context.Background(), small("file", dir), res); err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkResult(t, res, true)
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "precious" {
		t.Errorf("after the run the directory holds %v, want only precious", ents)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "precious")); string(b) != "keep me" {
		t.Errorf("precious was changed: %q", b)
	}
}

func bigObjectSize(res *report.Result) int64 {
	switch v := res.Parameters.Get("big_object_size").(type) {
	case int64:
		return v
	case json.Number:
		n, _ := v.Int64()
		return n
	}
	return -1
}

// The items run in the order juicefs objbench runs them (small objects
// first, delete last) and are shown in the order of its table.
func TestItemOrder(t *testing.T) {
	o := small("file", t.TempDir())
	o.SkipFunctional = true
	var ran []string
	o.Hooks.ItemStart = func(title, _ string, _ int64, _ func() int64) { ran = append(ran, title) }
	res := &report.Result{}
	if err := Run(context.Background(), o, res); err != nil {
		t.Fatal(err)
	}
	want := "put small objects,get small objects,upload objects,download objects,list objects,head objects," +
		"update mtime,change permissions,change owner/group,delete objects"
	if got := strings.Join(ran, ","); got != want {
		t.Errorf("items ran as\n%s\nwant\n%s", got, want)
	}
	var shown []string
	for _, p := range res.Phases {
		shown = append(shown, p.Name)
	}
	if got := strings.Join(shown, ","); got != strings.Join(displayOrder, ",") {
		t.Errorf("items shown as %s, want %s", got, strings.Join(displayOrder, ","))
	}
}
