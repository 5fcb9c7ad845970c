// Package storetest opens the stores the tests of pkg/object and its
// drivers run against: by driver name, or a bucket of the shared MinIO
// server of internal/testenv.
//
// It serves tests only.
package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/pkg/object"
)

// UniquePrefix keeps concurrent runs against one server apart.
func UniquePrefix() string {
	return fmt.Sprintf("conformance-%d/", time.Now().UnixNano())
}

// Open opens the store of driver typ at url, failing the test when it
// cannot; the store is closed when the test ends.
func Open(t testing.TB, typ, url string, cfg object.Config) object.Storage {
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

// MinIO opens a bucket of a shared MinIO server, creating it, and returns
// a view of it under a unique prefix.
func MinIO(t *testing.T, tls bool) object.Storage {
	m := testenv.SharedMinIO(t, tls)
	cfg := object.Config{AccessKey: m.AccessKey, SecretKey: object.NewSecret(m.SecretKey), CACertFile: m.CACert, Threads: 4}
	s := Open(t, "minio", m.URL("conformance"), cfg)
	if err := s.Create(context.Background()); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	return object.WithPrefix(s, UniquePrefix())
}
