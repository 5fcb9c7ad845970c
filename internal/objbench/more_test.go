package objbench

// Tests of the multipart and versioned workloads and of --endpoints,
// through the binary, against real MinIO servers.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/pkg/object"
	"github.com/fsbench/fsbench/pkg/object/objecttest"
)

// runJSON runs the binary, which must succeed, and reads its result.
func runJSON(t *testing.T, env []string, args ...string) *report.Result {
	t.Helper()
	r := fsbench(t, env, append(args, "--json")...)
	if r.Code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.Code, r.Stderr)
	}
	res, err := report.ReadJSON(strings.NewReader(r.Stdout))
	if err != nil {
		t.Fatalf("stdout is not a JSON result: %v\n%s", err, r.Stdout)
	}
	return res
}

// row returns the result's row called name.
func row(t *testing.T, res *report.Result, name string) report.PhaseResult {
	t.Helper()
	for _, p := range res.Phases {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no row %s in %+v", name, res.Phases)
	return report.PhaseResult{}
}

// checkRow checks a row's count of operations, errors and latencies.
func checkRow(t *testing.T, p report.PhaseResult, ops int64) {
	t.Helper()
	if p.Ops != ops || p.Errors != 0 || p.Latency.Count != ops || p.Histogram == "" {
		t.Errorf("row %s: %d operations (%d errors), %d latencies; want %d, no error", p.Name, p.Ops, p.Errors, p.Latency.Count, ops)
	}
}

// runPrefix is the prefix of the run whose objects s keeps (--keep).
func runPrefix(t *testing.T, s object.Storage) string {
	t.Helper()
	for _, k := range objecttest.Keys(t, s) {
		if strings.HasPrefix(k, "fsbench-objbench-") {
			return k[:strings.Index(k, "/")+1]
		}
	}
	t.Fatal("no object of the run was kept")
	return ""
}

// readAll reads key of s whole.
func readAll(t *testing.T, s object.Storage, key string) []byte {
	t.Helper()
	rc, err := s.Get(context.Background(), key, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Objects uploaded in parts read back byte for byte; the whole objects,
// the parts and the completions each have their row.
func TestMultipartWorkloadMinIO(t *testing.T) {
	m, env := minioEnv(t, false)
	bucket, s := userBucket(t, m, "multipart")
	res := runJSON(t, env, "objbench", "--storage", "minio", m.URL(bucket), "--workload", "multipart", "--objects", "5",
		"--obj-size", "12M", "--part-size", "5M", "--parts-in-flight", "2", "-p", "2", "--seed", "7", "--keep")
	checkRow(t, row(t, res, "multipart"), 5)
	checkRow(t, row(t, res, "multipart-part"), 15) // 5 + 5 + 2 MiB
	checkRow(t, row(t, res, "multipart-complete"), 5)
	if b := row(t, res, "multipart-part").Bytes; b != 5*12<<20 {
		t.Errorf("parts moved %d bytes, want %d", b, 5*12<<20)
	}
	prefix := runPrefix(t, s)
	run := object.WithPrefix(s, prefix)
	pat, keys := pattern.New(7), objecttest.Keys(t, run)
	if len(keys) != 5 {
		t.Fatalf("kept objects %v, want 5", keys)
	}
	for _, k := range keys {
		want := make([]byte, 12<<20)
		pat.Fill(want, pat.ID(k), 0)
		if got := readAll(t, run, k); !bytes.Equal(got, want) {
			t.Errorf("object %s: %d bytes read back differ from the upload", k, len(got))
		}
		if err := run.Delete(context.Background(), k); err != nil {
			t.Fatal(err)
		}
	}
	checkPrecious(t, s)
}

// versionsOf lists every version under s, by key.
func versionsOf(t *testing.T, s object.Storage) map[string][]object.Version {
	t.Helper()
	out := map[string][]object.Version{}
	opt := object.VersionListOptions{}
	for range 100 {
		page, err := object.AsVersioner(s).ListVersions(context.Background(), opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range page.Versions {
			out[v.Key] = append(out[v.Key], v)
		}
		if !page.Truncated {
			break
		}
		opt.KeyMarker, opt.VersionMarker = page.NextKey, page.NextVersion
	}
	return out
}

// versionedBucket is a bucket of the test's, with versioning on and the
// user's object in it.
func versionedBucket(t *testing.T, m *testenv.MinIO) object.Storage {
	s := openMinIO(t, m, fmt.Sprintf("versioned-%d", time.Now().UnixNano()%1e9))
	if err := object.AsVersioner(s).EnableVersioning(context.Background()); err != nil {
		t.Fatal(err)
	}
	putPrecious(t, s)
	return s
}

// The versioned workload puts, gets and deletes versions: each kept key
// has at most keepVersions versions, the newest ones, and the counts add
// up; a run without --keep leaves no version behind, and the user's
// object keeps its one version.
func TestVersionedWorkloadMinIO(t *testing.T) {
	m, env := minioEnv(t, false)
	s := versionedBucket(t, m)
	args := []string{"objbench", "--storage", "minio", s.String(), "--workload", "versioned", "--objects", "4", "--obj-size", "8K", "-p", "2"}
	res := runJSON(t, env, append(args, "--ops", "40", "--keep")...)
	for _, n := range []string{"versioned", "version-put", "version-get"} {
		checkRow(t, row(t, res, n), 40)
	}
	deletes := row(t, res, "version-delete").Ops
	vs := versionsOf(t, object.WithPrefix(s, runPrefix(t, s)))
	total := 0
	for key, list := range vs {
		total += len(list)
		if len(list) > keepVersions || !strings.HasPrefix(key, "ver/") {
			t.Errorf("key %s has %d versions, want at most %d", key, len(list), keepVersions)
		}
	}
	if len(vs) != 4 || int64(total) != 4+40-deletes || deletes == 0 {
		t.Errorf("%d keys, %d versions after 44 puts and %d deletes", len(vs), total, deletes)
	}
	purge(t, object.WithPrefix(s, runPrefix(t, s)))
	runJSON(t, env, append(args, "--ops", "10")...)
	if left := versionsOf(t, s); len(left) != 1 || len(left["precious/data.bin"]) != 1 {
		counts := map[string]int{}
		for k, l := range left {
			counts[k] = len(l)
		}
		t.Errorf("after a run the bucket holds versions of %v (key: count), want only the user's object", counts)
	}
	checkPrecious(t, s)
}

// purge deletes every version under s.
func purge(t *testing.T, s object.Storage) {
	for _, list := range versionsOf(t, s) {
		for _, v := range list {
			if err := object.AsVersioner(s).DeleteVersion(context.Background(), v.Key, v.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// A bucket of the user's without versioning is not changed: the workload
// fails with one line that says why.
func TestVersionedLeavesUserBucketAlone(t *testing.T) {
	m, env := minioEnv(t, false)
	_, s := userBucket(t, m, "plain")
	r := fsbench(t, env, "objbench", "--storage", "minio", s.String(), "--workload", "versioned", "--objects", "4")
	if r.Code == 0 || !strings.Contains(r.Stderr, "changes no setting of a bucket it did not create") {
		t.Errorf("exit %d, stderr %q; want a failure saying the bucket is left alone", r.Code, r.Stderr)
	}
	if on, err := object.AsVersioner(s).VersioningEnabled(context.Background()); err != nil || on {
		t.Errorf("versioning of the user's bucket: %v, %v; want off", on, err)
	}
	checkPrecious(t, s)
}

// Mistakes in the new flags are usage errors: exit 2 and one line.
func TestMoreBadInput(t *testing.T) {
	m, env := minioEnv(t, false)
	url := m.URL("badinput")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--endpoints", "127.0.0.1:9000", "--workload", "put"}, `invalid endpoint "127.0.0.1:9000": no scheme`},
		{[]string{"--endpoints", "http://h:9000/bucket", "--workload", "put"}, "the bucket and prefix come from the store URL"},
		{[]string{"--workload", "multipart", "--part-size", "1M"}, "below the store's minimum part size, 5 MiB"},
		{[]string{"--workload", "multipart", "--parts-in-flight", "0"}, "--parts-in-flight must be between 1 and 256 (got 0)"},
		{[]string{"--workload", "put", "--part-size", "8M"}, "--part-size goes with --workload multipart"},
	} {
		r := fsbench(t, env, append([]string{"objbench", "--storage", "minio", url}, c.args...)...)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line saying %q", c.args, r.Code, r.Stderr, c.want)
		}
	}
	if r := fsbench(t, nil, "objbench", t.TempDir(), "--endpoints", "http://h:1"); r.Code != 2 || !strings.Contains(r.Stderr, "it is for s3, minio and cos") {
		t.Errorf("--endpoints on a directory: exit %d, stderr %q", r.Code, r.Stderr)
	}
}

// Through the two nodes of a distributed MinIO, each endpoint serves half
// the requests of a workload, in rows of its own.
func TestEndpointsDistributedMinIO(t *testing.T) {
	c := testenv.NewMinIOCluster(t, 2)
	env := []string{"ACCESS_KEY=" + c.AccessKey, "SECRET_KEY=" + c.SecretKey}
	res := runJSON(t, env, "objbench", "--storage", "minio", c.URL("nodes"), "--endpoints", strings.Join(c.Endpoints, ","),
		"--workload", "multipart", "--objects", "6", "--obj-size", "11M", "--part-size", "5M", "-p", "2")
	p := row(t, res, "multipart")
	checkRow(t, p, 6)
	// 6 objects: a create, 3 parts and a complete each.
	const requests = 6 * 5
	if len(p.Endpoints) != 2 {
		t.Fatalf("endpoint rows %+v, want 2", p.Endpoints)
	}
	for i, e := range p.Endpoints {
		if e.Endpoint != c.Endpoints[i] || e.Requests != requests/2 || e.Errors != 0 || e.Bytes == 0 || e.MeanMs <= 0 {
			t.Errorf("endpoint row %+v; want %s with %d requests, bytes and time", e, c.Endpoints[i], requests/2)
		}
	}
}
