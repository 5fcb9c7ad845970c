package object_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/pkg/object"
	"github.com/fsbench/fsbench/pkg/object/objecttest"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// uniquePrefix keeps concurrent runs against one server apart.
func uniquePrefix(t *testing.T) string {
	return fmt.Sprintf("conformance-%d/", time.Now().UnixNano())
}

func openOrFail(t *testing.T, typ, url string, cfg object.Config) object.Storage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := object.Open(ctx, typ, url, cfg)
	if err != nil {
		t.Fatalf("Open %s %s: %v", typ, url, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformanceFile(t *testing.T) {
	s := openOrFail(t, "file", t.TempDir()+"/store", object.Config{})
	objecttest.Run(t, s)
}

// minioStore opens a bucket of a shared MinIO server, creating it.
func minioStore(t *testing.T, tls bool) object.Storage {
	m := testenv.SharedMinIO(t, tls)
	cfg := object.Config{AccessKey: m.AccessKey, SecretKey: object.NewSecret(m.SecretKey), CACertFile: m.CACert, Threads: 4}
	s := openOrFail(t, "minio", m.URL("conformance"), cfg)
	if err := s.Create(context.Background()); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	return object.WithPrefix(s, uniquePrefix(t))
}

func TestConformanceMinIO(t *testing.T) {
	objecttest.Run(t, minioStore(t, false))
}

func TestConformanceMinIOTLS(t *testing.T) {
	objecttest.Run(t, minioStore(t, true))
}

func TestConformanceNFS(t *testing.T) {
	n := testenv.SharedNFS(t)
	// The driver creates no base directory: it is made here, as a user
	// would before a run.
	if err := os.MkdirAll(filepath.Join(n.Export, "conformance"), 0o777); err != nil {
		t.Fatal(err)
	}
	s := openOrFail(t, "nfs", n.URL("conformance"), object.Config{})
	objecttest.Run(t, s)
}

// The S3 driver also serves plain "s3" against any endpoint, path-style.
func TestConformanceS3ProfileOnMinIO(t *testing.T) {
	m := testenv.SharedMinIO(t, false)
	cfg := object.Config{AccessKey: m.AccessKey, SecretKey: object.NewSecret(m.SecretKey), Getenv: func(string) string { return "" }}
	s := openOrFail(t, "s3", m.URL("conformance-s3"), cfg)
	objecttest.Run(t, object.WithPrefix(s, uniquePrefix(t)))
}
