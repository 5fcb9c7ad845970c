package objbench

// objbench --journal and fsbench verify against a real MinIO: every
// acknowledged put holds; an object deleted, overwritten or brought back
// behind fsbench's back is named and fails the check; MinIO killed in the
// middle of the puts keeps every put it acknowledged.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/journal"
	"github.com/fsbench/fsbench/internal/testenv"
)

// journalRecords reads the journal: the keys of its puts and of its
// acknowledged deletes.
func journalRecords(t *testing.T, path string) (put, deleted []string) {
	t.Helper()
	j, err := journal.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !j.Objects() {
		t.Fatalf("%s: not a journal of objects", path)
	}
	for _, r := range j.Records {
		switch r.Type {
		case journal.Write:
			put = append(put, r.Path)
		case journal.Delete:
			deleted = append(deleted, r.Path)
		}
	}
	return put, deleted
}

// verifyStore runs fsbench verify on the journal and url and checks its
// exit code and that no secret is in its output.
func verifyStore(t *testing.T, env []string, secret, jpath, url string, want int) runOut {
	t.Helper()
	out := fsbench(t, env, "verify", "--journal", jpath, url)
	if out.Code != want {
		t.Fatalf("verify: exit %d, want %d\n%s%s", out.Code, want, out.Stdout, out.Stderr)
	}
	if strings.Contains(out.Stdout+out.Stderr, secret) {
		t.Fatalf("verify printed the secret key:\n%s%s", out.Stdout, out.Stderr)
	}
	return out
}

// TestJournalObjects: a mixed workload's puts and deletes journalled, all
// held; then an object deleted, one overwritten and a deleted one put back
// behind fsbench's back: exit 3, each key named.
func TestJournalObjects(t *testing.T) {
	m, env := minioEnv(t, false)
	bucket, s := userBucket(t, m, "objbench-journal")
	jpath := filepath.Join(t.TempDir(), "obj.journal")
	out := fsbench(t, env, "objbench", "--storage", "minio", m.URL(bucket), "--workload", "mixed", "--objects", "40",
		"--ops", "200", "--obj-size-dist", "1K:1,20K:1", "-p", "4", "--keep", "--journal", jpath)
	if out.Code != 0 || !strings.Contains(out.Stderr, "fsbench verify --journal "+jpath+" "+m.URL(bucket)) {
		t.Fatalf("objbench: exit %d\n%s", out.Code, out.Stderr)
	}
	if raw, err := os.ReadFile(jpath); err != nil || bytes.Contains(raw, []byte(m.SecretKey)) {
		t.Fatalf("journal: %v, or it holds the secret key", err)
	}
	put, deleted := journalRecords(t, jpath)
	if len(put) < 40 || len(deleted) == 0 {
		t.Fatalf("journal: %d puts, %d deletes; want at least 40 and 1", len(put), len(deleted))
	}
	held := verifyStore(t, env, m.SecretKey, jpath, m.URL(bucket), 0)
	if !strings.HasPrefix(held.Stdout, "verify: all held: ") {
		t.Fatalf("verify of the intact store:\n%s", held.Stdout)
	}
	live := liveKeys(put, deleted)
	ctx := context.Background()
	gone, changed, back := live[0], live[1], deleted[0]
	if err := s.Delete(ctx, gone); err != nil {
		t.Fatal(err)
	}
	info, err := s.Head(ctx, changed)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, changed, bytes.NewReader(bytes.Repeat([]byte("x"), int(info.Size)))); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, back, strings.NewReader("back")); err != nil {
		t.Fatal(err)
	}
	bad := verifyStore(t, env, m.SecretKey, jpath, m.URL(bucket), 3)
	for _, want := range []string{"lost  " + gone, "unexpected  " + changed, "unexpected  " + back, "3 durable writes did not hold"} {
		if !strings.Contains(collapse(bad.Stdout+bad.Stderr), want) {
			t.Errorf("verify after the planted losses: %q not named\n%s%s", want, bad.Stdout, bad.Stderr)
		}
	}
	t.Logf("verify after the planted losses:\n%s%s", bad.Stdout, bad.Stderr)
	checkJSONFindings(t, env, jpath, m.URL(bucket), 3)
}

// liveKeys are the keys put and not deleted.
func liveKeys(put, deleted []string) []string {
	gone := map[string]bool{}
	for _, k := range deleted {
		gone[k] = true
	}
	var live []string
	for _, k := range put {
		if !gone[k] {
			live = append(live, k)
		}
	}
	return live
}

// collapse turns runs of spaces into two, as the table's columns.
func collapse(s string) string {
	for strings.Contains(s, "   ") {
		s = strings.ReplaceAll(s, "   ", "  ")
	}
	return s
}

// checkJSONFindings checks verify -o json counts n durable findings.
func checkJSONFindings(t *testing.T, env []string, jpath, url string, n int) {
	t.Helper()
	out := fsbench(t, env, "verify", "--journal", jpath, url, "-o", "json")
	var got struct {
		Findings []journal.Finding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out.Stdout), &got); err != nil || len(got.Findings) != n || out.Code != 3 {
		t.Errorf("verify -o json: exit %d, %v, %d findings; want 3 and %d\n%s", out.Code, err, len(got.Findings), n, out.Stdout)
	}
}

// TestJournalObjectsBadInput: a journal of objects given another store or
// a directory, a journal of files given a URL: exit 2, one line.
func TestJournalObjectsBadInput(t *testing.T) {
	m, env := minioEnv(t, false)
	bucket, _ := userBucket(t, m, "objbench-jbad")
	dir := t.TempDir()
	jpath := filepath.Join(dir, "obj.journal")
	if out := fsbench(t, env, "objbench", "--storage", "minio", m.URL(bucket), "--workload", "put", "--objects", "5",
		"--obj-size", "4K", "--journal", jpath); out.Code != 2 || !strings.Contains(out.Stderr, "--journal needs --keep") {
		t.Fatalf("objbench --journal without --keep: exit %d\n%s", out.Code, out.Stderr)
	}
	if out := fsbench(t, env, "objbench", "--storage", "minio", m.URL(bucket), "--workload", "put", "--objects", "5",
		"--obj-size", "4K", "--keep", "--journal", jpath); out.Code != 0 {
		t.Fatalf("objbench: exit %d\n%s", out.Code, out.Stderr)
	}
	fjpath := filepath.Join(dir, "files.journal")
	w, err := journal.Create(fjpath, dir, 1, 1)
	if err != nil || w.Close() != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ j, url, want string }{
		{jpath, m.URL(bucket + "-other"), "records objects of the minio store " + m.URL(bucket)},
		{jpath, dir, "records objects of the minio store"},
		{fjpath, m.URL(bucket), "records files below " + dir},
	} {
		out := verifyStore(t, env, m.SecretKey, c.j, c.url, 2)
		if lines := strings.Split(strings.TrimSpace(out.Stderr), "\n"); len(lines) != 1 || !strings.Contains(lines[0], c.want) || !strings.HasPrefix(lines[0], "fsbench: ") {
			t.Errorf("verify --journal %s %s: %q, want one line with %q", filepath.Base(c.j), c.url, out.Stderr, c.want)
		}
	}
}

// TestJournalObjectsStoreKilled: MinIO killed while puts are under way,
// restarted on its data: every put the journal records (each one MinIO
// acknowledged) is there, whole.
func TestJournalObjectsStoreKilled(t *testing.T) {
	m := testenv.NewMinIO(t)
	bucket, s := userBucket(t, m, "objbench-jkill")
	jpath := filepath.Join(t.TempDir(), "kill.journal")
	p := startObjbench(t, m, bucket, "--workload", "put", "--objects", "100000", "--obj-size-dist", "4K:1,256K:1",
		"-p", "4", "--timeout", "5s", "--keep", "--journal", jpath)
	p.Await("puts under way", time.Minute, func() bool { return len(ours(t, s)) >= 50 })
	if err := m.Kill(); err != nil {
		t.Fatal(err)
	}
	code, _ := p.Wait(2 * time.Minute)
	if code != 1 {
		t.Fatalf("objbench after the store was killed: exit %d, want 1\n%s", code, p.Stderr())
	}
	if err := m.Restart(); err != nil {
		t.Fatal(err)
	}
	put, _ := journalRecords(t, jpath)
	env := []string{"ACCESS_KEY=" + m.AccessKey, "SECRET_KEY=" + m.SecretKey}
	out := verifyStore(t, env, m.SecretKey, jpath, m.URL(bucket), 0)
	// Objects listed before the kill include up to one put in flight per
	// thread, not yet acknowledged: not journalled.
	if len(put) < 50-4 || !strings.HasPrefix(out.Stdout, "verify: all held: ") {
		t.Fatalf("verify after the restart (%d puts journalled):\n%s%s", len(put), out.Stdout, out.Stderr)
	}
	t.Logf("%d acknowledged puts journalled before the kill: %s", len(put), strings.TrimSpace(out.Stdout))
	_ = os.Remove(jpath)
}

// TestJournalObjectsTLSFlags: a journal of objects on a MinIO over HTTPS
// with a self-signed certificate is verified with the store's flags, as
// objbench took them: the CA by --ca-cert, the credentials by
// --access-key and --secret-key-file (no environment). Without the CA the
// store is not trusted (exit 1, not a verdict); a --storage other than
// the journal's, or a store flag given for a directory, is bad input.
func TestJournalObjectsTLSFlags(t *testing.T) {
	m, env := minioEnv(t, true)
	bucket, _ := userBucket(t, m, "objbench-jtls")
	dir := t.TempDir()
	jpath := filepath.Join(dir, "obj.journal")
	if out := fsbench(t, env, "objbench", "--storage", "minio", m.URL(bucket), "--ca-cert", m.CACert, "--workload", "put",
		"--objects", "8", "--obj-size", "4K", "--keep", "--journal", jpath); out.Code != 0 {
		t.Fatalf("objbench: exit %d\n%s", out.Code, out.Stderr)
	}
	keyFile := filepath.Join(dir, "secret")
	if err := os.WriteFile(keyFile, []byte(m.SecretKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	creds := []string{"--access-key", m.AccessKey, "--secret-key-file", keyFile}
	out := fsbench(t, nil, append([]string{"verify", "--journal", jpath, m.URL(bucket), "--ca-cert", m.CACert}, creds...)...)
	if out.Code != 0 || !strings.HasPrefix(out.Stdout, "verify: all held: ") || strings.Contains(out.Stdout+out.Stderr, m.SecretKey) {
		t.Fatalf("verify with --ca-cert: exit %d\n%s%s", out.Code, out.Stdout, out.Stderr)
	}
	if out := fsbench(t, nil, append([]string{"verify", "--journal", jpath, m.URL(bucket)}, creds...)...); out.Code != 1 ||
		!strings.Contains(out.Stderr, "certificate") {
		t.Errorf("verify without the CA: exit %d, want 1 naming the certificate\n%s", out.Code, out.Stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{m.URL(bucket), "--storage", "s3", "--ca-cert", m.CACert}, "--storage s3, but --journal " + jpath + " records objects of a minio store"},
		{[]string{dir, "--region", "eu-west-1"}, "--region is for a journal of objects"},
	} {
		out := fsbench(t, env, append([]string{"verify", "--journal", jpath}, c.args...)...)
		if out.Code != 2 || !strings.Contains(out.Stderr, c.want) || strings.Count(out.Stderr, "\n") != 1 {
			t.Errorf("verify %v: exit %d, %q; want 2 and %q", c.args, out.Code, out.Stderr, c.want)
		}
	}
}
