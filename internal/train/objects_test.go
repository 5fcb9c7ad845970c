package train

import (
	"context"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/pkg/object"
	"github.com/fsbench/fsbench/pkg/object/objecttest"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// store is a store a test trains from, with a user's object the runs must
// leave alone.
type store struct {
	kind, url string
	cfg       object.Config
	s         object.Storage
}

func minioStore(t *testing.T) store {
	m := testenv.SharedMinIO(t, false)
	cfg := object.Config{AccessKey: m.AccessKey, SecretKey: object.NewSecret(m.SecretKey)}
	url := m.URL("train-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")) + "-" + time.Now().Format("150405.000000000")[7:])
	return openUserStore(t, "minio", url, cfg)
}

func openUserStore(t *testing.T, kind, url string, cfg object.Config) store {
	return store{kind, url, cfg, objecttest.UserStore(t, kind, url, cfg)}
}

func (st store) keys(t *testing.T) []string { return objecttest.Keys(t, st.s) }

func (st store) checkUntouched(t *testing.T) { objecttest.CheckUntouched(t, st.s) }

// checkRun: the run read every sample of its plan, whole, in both
// layouts, as on a file system (TestRunCounts).
func checkRun(t *testing.T, o Options, res *report.Result, gen bool) {
	t.Helper()
	samples, bytes := wantRead(t, o, o.Seed)
	tr := res.FindPhase("train")
	if tr == nil || tr.Items != samples || tr.Bytes != bytes || tr.Errors != 0 || tr.Incomplete {
		t.Fatalf("%d per object: train %+v, want %d samples, %d bytes", o.SamplesPerFile, tr, samples, bytes)
	}
	g := res.FindPhase("generate")
	ds := NewDataset("", o.Files, o.SamplesPerFile, o.SampleSize, o.SampleStdev, o.Seed, 1)
	if gen && (g == nil || g.Items != int64(o.Files) || g.Bytes != ds.Bytes || !strings.HasPrefix(g.LatencyOf, "put an object")) {
		t.Errorf("generate %+v, want %d objects of %d bytes", g, o.Files, ds.Bytes)
	}
	if !gen && g != nil {
		t.Errorf("a reused dataset was generated again")
	}
	if res.Training == nil || res.Training.AU <= 0 || !hasWaits(res.Training) {
		t.Errorf("training figures %+v", res.Training)
	}
}

// trainOn trains from st in both layouts (record objects read by ranged
// GETs, one object per sample), then keeps a dataset and trains on it
// again with Dataset; the store is left as it was.
func trainOn(t *testing.T, st store) {
	for _, perFile := range []int{10, 1} {
		o := small(st.url)
		o.Storage, o.Object, o.SamplesPerFile = st.kind, st.cfg, perFile
		if perFile == 1 {
			o.Files = 80
		}
		var res report.Result
		if err := Run(context.Background(), o, &res); err != nil {
			t.Fatalf("%d per object: %v", perFile, err)
		}
		checkRun(t, o, &res, true)
		if res.Target.Storage != st.kind || strings.Contains(res.Target.URL, "minioadmin") {
			t.Errorf("target %+v", res.Target)
		}
		st.checkUntouched(t)
	}
	o := small(st.url)
	o.Storage, o.Object, o.Keep = st.kind, st.cfg, true
	var res report.Result
	if err := Run(context.Background(), o, &res); err != nil {
		t.Fatal(err)
	}
	keys := st.keys(t)
	if len(keys) != o.Files+2 || !strings.HasSuffix(keys[0], "/"+markerName) {
		t.Fatalf("kept %v, want %d objects and the description", keys, o.Files)
	}
	prefix := keys[0][:strings.Index(keys[0], "/")]
	again := o
	again.Keep, again.Dataset = false, prefix
	res = report.Result{}
	if err := Run(context.Background(), again, &res); err != nil {
		t.Fatal(err)
	}
	checkRun(t, o, &res, false)
	if got := st.keys(t); !equal(got, keys) {
		t.Errorf("training on a kept dataset changed the store: %v, was %v", got, keys)
	}
	for _, k := range keys[:len(keys)-1] {
		if err := st.s.Delete(context.Background(), k); err != nil {
			t.Fatal(err)
		}
	}
	_ = st.s.Delete(context.Background(), prefix+"/")
	st.checkUntouched(t)
}

func equal(a, b []string) bool {
	sort.Strings(a)
	sort.Strings(b)
	return strings.Join(a, "\n") == strings.Join(b, "\n")
}

func TestObjectsMinIO(t *testing.T) { trainOn(t, minioStore(t)) }

func TestObjectsNFS(t *testing.T) {
	n := testenv.SharedNFS(t)
	sub := "train-" + time.Now().Format("150405.000000000")
	if err := os.Mkdir(n.Export+"/"+sub, 0o777); err != nil {
		t.Fatal(err)
	}
	trainOn(t, openUserStore(t, "nfs", n.URL(sub), object.Config{}))
}

func TestObjectsFile(t *testing.T) {
	trainOn(t, openUserStore(t, "file", t.TempDir(), object.Config{}))
}

// A dataset prefix without a description is a dataset of its objects, one
// sample each, read and never deleted.
func TestObjectsExisting(t *testing.T) {
	st := openUserStore(t, "file", t.TempDir(), object.Config{})
	for i := range 24 {
		k := "imgs/" + pad(i) + ".jpg"
		if err := st.s.Put(context.Background(), k, strings.NewReader(strings.Repeat("x", 1000+i))); err != nil {
			t.Fatal(err)
		}
	}
	before := st.keys(t)
	o := small(st.url)
	o.Storage, o.Dataset = "file", "imgs/"
	var res report.Result
	if err := Run(context.Background(), o, &res); err != nil {
		t.Fatal(err)
	}
	if p := res.FindPhase("train"); p == nil || p.Items != 2*int64(res.Training.Steps*4*3) {
		t.Errorf("train %+v", p)
	}
	if got := st.keys(t); !equal(got, before) {
		t.Errorf("the run changed the objects: %v", got)
	}
	o.Dataset = "nothing/"
	err := Run(context.Background(), o, &report.Result{})
	if err == nil || !strings.Contains(err.Error(), "holds no files") {
		t.Errorf("empty prefix: %v", err)
	}
}

// hasWaits: the training figures hold a histogram of the accelerators'
// waits.
func hasWaits(tr *report.Training) bool {
	h, err := tr.Waits()
	return err == nil && h != nil && h.Count() > 0
}
