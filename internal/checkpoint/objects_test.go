package checkpoint

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/pkg/object"
	"github.com/fsbench/fsbench/pkg/object/objecttest"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// checkpointTo writes and reads back a checkpoint of 4 ranks in shards
// of two parts and a piece, and checks the phases, the rows, and that the
// store is as it was; then with Keep, that exactly the 4 shards stay.
func checkpointTo(t *testing.T, kind, url string, cfg object.Config) {
	s := objecttest.UserStore(t, kind, url, cfg)
	m, _ := FindModel("llama3-8b")
	o := Options{Path: url, Storage: kind, Object: cfg, Model: m, Ranks: 4, Size: 4 * (10*units.MiB + 8*units.KiB),
		PartSize: 5 * units.MiB, PartsInFlight: 2}
	var res report.Result
	if err := Run(context.Background(), o, &res); err != nil {
		t.Fatal(err)
	}
	shard := 10*units.MiB + 8*units.KiB
	for _, name := range []string{"write", "read"} {
		p := res.FindPhase(name)
		if p == nil || p.Bytes != 4*shard || p.Errors != 0 || p.Items != 4 || len(p.Ranks) != 4 {
			t.Fatalf("%s: %+v", name, p)
		}
		for i, row := range p.Ranks {
			want := i
			if name == "read" {
				want = (i + 1) % 4
			}
			if row.Rank != i || row.Shard != want || row.Bytes != shard || row.Incomplete || row.Errors != 0 {
				t.Errorf("%s row %d: %+v", name, i, row)
			}
		}
	}
	if res.Target.Storage != kind || strings.Contains(res.Target.URL, "minioadmin") {
		t.Errorf("target %+v", res.Target)
	}
	objecttest.CheckUntouched(t, s)
	o.Keep = true
	if err := Run(context.Background(), o, &report.Result{}); err != nil {
		t.Fatal(err)
	}
	keys := objecttest.Keys(t, s)
	if len(keys) != 5 || !strings.HasSuffix(keys[0], "/"+ShardName(0)) || !strings.HasSuffix(keys[3], "/"+ShardName(3)) {
		t.Fatalf("kept %v, want the 4 shards", keys)
	}
	for _, k := range keys[:4] {
		if err := s.Delete(context.Background(), k); err != nil {
			t.Fatal(err)
		}
	}
	_ = s.Delete(context.Background(), keys[0][:strings.Index(keys[0], "/")+1])
	objecttest.CheckUntouched(t, s)
}

func TestObjectsMinIO(t *testing.T) {
	m := testenv.SharedMinIO(t, false)
	cfg := object.Config{AccessKey: m.AccessKey, SecretKey: object.NewSecret(m.SecretKey)}
	checkpointTo(t, "minio", m.URL("ckpt-"+time.Now().Format("150405000000")), cfg)
}

func TestObjectsNFS(t *testing.T) {
	n := testenv.SharedNFS(t)
	sub := "ckpt-" + time.Now().Format("150405.000000000")
	if err := os.Mkdir(n.Export+"/"+sub, 0o777); err != nil {
		t.Fatal(err)
	}
	checkpointTo(t, "nfs", n.URL(sub), object.Config{})
}

func TestObjectsFile(t *testing.T) {
	checkpointTo(t, "file", t.TempDir(), object.Config{})
}

// A shard that differs from what was written fails its read-back, with
// the byte where it differs.
func TestObjectsReadBackVerifies(t *testing.T) {
	s := objecttest.UserStore(t, "file", t.TempDir(), object.Config{})
	plan, _ := NewPlan(4*8*units.MiB, 4)
	part, _ := plan.Split(0, 1)
	x := &objRun{run: &run{o: Options{PartSize: 5 * units.MiB, PartsInFlight: 2}, plan: plan, part: part, res: &report.Result{}},
		store: s, reads: s, pat: pattern.New(7), written: make([]bool, 4)}
	for i := range 4 {
		if _, err := x.upload(context.Background(), i); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := x.readBack(context.Background(), 0); err != nil || n != plan.Shard {
		t.Fatalf("intact shard: %d bytes, %v", n, err)
	}
	// Rank 0 reads rank 1's shard: change one byte of its second part.
	key := ShardName(1)
	rc, err := s.Get(context.Background(), key, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(rc)
	rc.Close()
	data[6*units.MiB+3] ^= 1
	if err := s.Put(context.Background(), key, strings.NewReader(string(data))); err != nil {
		t.Fatal(err)
	}
	_, err = x.readBack(context.Background(), 0)
	if err == nil || !strings.Contains(err.Error(), "differs from what was written at byte 6291459") {
		t.Errorf("corrupt shard: %v", err)
	}
}
