package s3_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/pkg/object"
	"github.com/fsbench/fsbench/pkg/object/internal/storetest"
	"github.com/fsbench/fsbench/pkg/object/s3"
)

// directStore opens the shared MinIO's bucket "direct" under a fresh
// prefix, and checks that object requests take the direct path; it
// returns the prefix too.
func directStore(t *testing.T, tls bool, edit func(*object.Config)) (object.Storage, *testenv.MinIO, string) {
	t.Helper()
	m := testenv.SharedMinIO(t, tls)
	cfg := object.Config{AccessKey: m.AccessKey, SecretKey: object.NewSecret(m.SecretKey), CACertFile: m.CACert, Threads: 2}
	if edit != nil {
		edit(&cfg)
	}
	s := storetest.Open(t, "minio", m.URL("direct"), cfg)
	if !s3.DirectPath(s) {
		t.Fatalf("%s: object requests go through the SDK", s)
	}
	if err := s.Create(context.Background()); err != nil && !errors.Is(err, object.ErrAccess) {
		t.Fatalf("create bucket: %v", err)
	}
	p := storetest.UniquePrefix()
	return object.WithPrefix(s, p), m, p
}

// checkOneLine fails unless err matches kind, names op and key (which a
// prefixed store shows with its prefix), holds
// one line and does not show secret.
func checkOneLine(t *testing.T, err, kind error, op, key, secret string) {
	t.Helper()
	msg := fmt.Sprint(err)
	if !errors.Is(err, kind) || !strings.HasPrefix(msg, op+" ") || !strings.Contains(msg, key+": ") || strings.Contains(msg, "\n") {
		t.Errorf("%s %s: err %q, want one line matching %v", op, key, msg, kind)
	}
	if secret != "" && strings.Contains(msg, secret) {
		t.Errorf("%s %s: the secret key is in %q", op, key, msg)
	}
}

// A wrong secret key is refused as wrong credentials, on every request of
// the direct path, and the message never shows the key.
func TestDirectWrongSecret(t *testing.T) {
	good, m, prefix := directStore(t, false, nil)
	ctx := context.Background()
	if err := good.Put(ctx, "k", strings.NewReader("data")); err != nil {
		t.Fatal(err)
	}
	const wrong = "wrong-secret-0123456789"
	bad := storetest.Open(t, "minio", m.URL("direct"), object.Config{AccessKey: m.AccessKey, SecretKey: object.NewSecret(wrong)})
	key := prefix + "k"
	_, err := bad.Get(ctx, key, 0, -1)
	checkOneLine(t, err, object.ErrAccess, "get", key, wrong)
	if !strings.Contains(fmt.Sprint(err), "SignatureDoesNotMatch") {
		t.Errorf("get: %v, want the store's code", err)
	}
	checkOneLine(t, bad.Put(ctx, key, strings.NewReader("x")), object.ErrAccess, "put", key, wrong)
	_, err = bad.Head(ctx, key)
	checkOneLine(t, err, object.ErrAccess, "head", key, wrong)
	checkOneLine(t, bad.Delete(ctx, key), object.ErrAccess, "delete", key, wrong)
	if o, err := good.Head(ctx, "k"); err != nil || o.Size != 4 {
		t.Errorf("after refused requests: %+v, %v", o, err)
	}
}

// A bucket that does not exist: ErrNoBucket, with its name.
func TestDirectUnknownBucket(t *testing.T) {
	m := testenv.SharedMinIO(t, false)
	bucket := fmt.Sprintf("absent-%d", time.Now().UnixNano())
	s := storetest.Open(t, "minio", m.URL(bucket), object.Config{AccessKey: m.AccessKey, SecretKey: object.NewSecret(m.SecretKey)})
	ctx := context.Background()
	_, err := s.Get(ctx, "k", 0, -1)
	checkOneLine(t, err, object.ErrNoBucket, "get", "k", m.SecretKey)
	if !strings.Contains(fmt.Sprint(err), bucket) {
		t.Errorf("get: %v does not name the bucket", err)
	}
	checkOneLine(t, s.Put(ctx, "k", strings.NewReader("x")), object.ErrNoBucket, "put", "k", m.SecretKey)
	checkOneLine(t, s.Delete(ctx, "k"), object.ErrNoBucket, "delete", "k", m.SecretKey)
}

// A missing key: not found on get and head, nothing on delete.
func TestDirectMissingKey(t *testing.T) {
	s, _, _ := directStore(t, false, nil)
	ctx := context.Background()
	_, err := s.Get(ctx, "missing/key", 0, -1)
	checkOneLine(t, err, object.ErrNotExist, "get", "missing/key", "")
	_, err = s.Get(ctx, "missing/key", 10, 5)
	checkOneLine(t, err, object.ErrNotExist, "get", "missing/key", "")
	_, err = s.Head(ctx, "missing/key")
	checkOneLine(t, err, object.ErrNotExist, "head", "missing/key", "")
	if err := s.Delete(ctx, "missing/key"); err != nil {
		t.Errorf("delete of a missing key: %v", err)
	}
}

// Ranges return exactly their bytes, cut at the end of the object; keys
// that need escaping round-trip, over HTTP and HTTPS, signed or not.
func TestDirectRangesAndKeys(t *testing.T) {
	data := make([]byte, 300<<10)
	for i := range data {
		data[i] = byte(i*7 + i>>8)
	}
	for _, c := range []struct {
		tls, sign bool
	}{{false, false}, {true, false}, {false, true}} {
		t.Run(fmt.Sprintf("tls=%v,sign=%v", c.tls, c.sign), func(t *testing.T) {
			s, _, _ := directStore(t, c.tls, func(cfg *object.Config) { cfg.SignPayload = c.sign })
			for _, key := range []string{"plain", "dir/with space+plus%&=?#", "ünïcødé/ключ", "trailing/"} {
				checkRanges(t, s, key, data)
			}
		})
	}
}

func checkRanges(t *testing.T, s object.Storage, key string, data []byte) {
	ctx := context.Background()
	if err := s.Put(ctx, key, bytes.NewReader(data)); err != nil {
		t.Fatalf("put %q: %v", key, err)
	}
	n := int64(len(data))
	for _, r := range [][2]int64{{0, -1}, {0, 1}, {1, 4095}, {4096, 65536}, {n - 10, -1}, {n - 10, 100}, {n / 2, 0}, {0, n}} {
		rc, err := s.Get(ctx, key, r[0], r[1])
		if err != nil {
			t.Errorf("get %q %v: %v", key, r, err)
			continue
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		end := n
		if r[1] >= 0 {
			end = min(n, r[0]+r[1])
		}
		if err != nil || !bytes.Equal(got, data[r[0]:end]) {
			t.Errorf("get %q %v: %d bytes, want %d (%v)", key, r, len(got), end-r[0], err)
		}
	}
	if _, err := s.Get(ctx, key, n, 10); err == nil {
		t.Errorf("get %q past its end: no error", key)
	}
	o, err := s.Head(ctx, key)
	if err != nil || o.Size != n || o.Mtime.IsZero() || time.Since(o.Mtime) > time.Hour || o.IsDir != strings.HasSuffix(key, "/") {
		t.Errorf("head %q: %+v, %v", key, o, err)
	}
	if err := s.Delete(ctx, key); err != nil {
		t.Errorf("delete %q: %v", key, err)
	}
	if _, err := s.Head(ctx, key); !errors.Is(err, object.ErrNotExist) {
		t.Errorf("head %q after delete: %v", key, err)
	}
}

// The first byte of a big object arrives before its last: a get returns
// at the headers and streams the body.
func TestDirectTTFB(t *testing.T) {
	s, _, _ := directStore(t, false, nil)
	ctx := context.Background()
	if err := s.Put(ctx, "big", bytes.NewReader(make([]byte, 32<<20))); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	for range 3 {
		t0 := time.Now()
		rc, err := s.Get(ctx, "big", 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		m, err := rc.Read(buf)
		ttfb := time.Since(t0)
		rest, err2 := io.Copy(io.Discard, rc)
		latency := time.Since(t0)
		rc.Close()
		if err != nil || err2 != nil || int64(m)+rest != 32<<20 {
			t.Fatalf("read %d+%d bytes: %v %v", m, rest, err, err2)
		}
		if ttfb > latency {
			t.Errorf("first %d bytes after %v, all after %v", m, ttfb, latency)
		}
	}
}

// Cancelling the context in the middle of a get ends its reads promptly
// with the context's error.
func TestDirectCancelMidGet(t *testing.T) {
	s, _, _ := directStore(t, false, nil)
	if err := s.Put(context.Background(), "big", bytes.NewReader(make([]byte, 64<<20))); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rc, err := s.Get(ctx, "big", 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	buf := make([]byte, 32<<10)
	if _, err := io.ReadFull(rc, buf); err != nil {
		t.Fatal(err)
	}
	cancel()
	t0 := time.Now()
	var n int64
	for err == nil {
		var m int
		m, err = rc.Read(buf)
		n += int64(m)
	}
	if !errors.Is(err, context.Canceled) || time.Since(t0) > 5*time.Second || n >= 64<<20-32<<10 {
		t.Errorf("after cancel: %d more bytes in %v, err %v", n, time.Since(t0), err)
	}
	if !strings.HasPrefix(err.Error(), "get ") {
		t.Errorf("error %q does not name the operation", err)
	}
	// The store still works for other requests.
	if _, err := s.Head(context.Background(), "big"); err != nil {
		t.Errorf("head after a cancelled get: %v", err)
	}
}

// A listing through the direct path gives back keys as they were put
// (control characters and escapes included), with sizes and times, page
// by page.
func TestDirectList(t *testing.T) {
	s, _, _ := directStore(t, false, nil)
	ctx := context.Background()
	keys := []string{"l/a b", "l/c%2Fd", "l/e\x01f", "l/sub/g", "l/ü+&=?"}
	for i, k := range keys {
		if err := s.Put(ctx, k, bytes.NewReader(make([]byte, i))); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	opt := object.ListOptions{Prefix: "l/", Limit: 2}
	for {
		page, err := s.List(ctx, opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Objects {
			got = append(got, o.Key)
			if o.Mtime.IsZero() || o.Size != int64(slices.Index(keys, o.Key)) {
				t.Errorf("%q: %+v", o.Key, o)
			}
		}
		if !page.Truncated {
			break
		}
		opt.StartAfter = page.Next
	}
	if !slices.Equal(got, keys) {
		t.Errorf("listed %q, want %q", got, keys)
	}
	page, err := s.List(ctx, object.ListOptions{Prefix: "l/", Delimiter: "/"})
	if err != nil || len(page.Objects) != 4 || !slices.Equal(page.Prefixes, []string{"l/sub/"}) {
		t.Errorf("with a delimiter: %+v, %v", page, err)
	}
}
