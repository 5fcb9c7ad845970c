package nfs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/pkg/object"
	"github.com/fsbench/fsbench/pkg/object/internal/storetest"
)

// A directory below the export that does not exist is an error naming it,
// and nothing is created on the server: a run creates only what it
// removes.
func TestNFSMissingDirectory(t *testing.T) {
	n := testenv.SharedNFS(t)
	if err := os.WriteFile(filepath.Join(n.Export, "a-file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(filepath.Join(n.Export, "a-file"))
	for _, sub := range []string{"no-such-dir", "no-such-dir/deeper", "a-file"} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		s, err := object.Open(ctx, "nfs", n.URL(sub), object.Config{Timeout: 5 * time.Second})
		cancel()
		if err == nil {
			s.Close()
			t.Errorf("%s: opened, want an error", sub)
			continue
		}
		if !errors.Is(err, object.ErrNoBucket) || !strings.Contains(err.Error(), filepath.Join(n.Export, sub)) {
			t.Errorf("%s: %v; want ErrNoBucket naming the path", sub, err)
		}
	}
	if _, err := os.Stat(filepath.Join(n.Export, "no-such-dir")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing directory was created: %v", err)
	}
}

// Create on an existing directory succeeds, and keys in new directories
// make those directories, which deleting the keys removes.
func TestNFSCreatesOnlyBelowBase(t *testing.T) {
	n := testenv.SharedNFS(t)
	base := filepath.Join(n.Export, "below-base")
	if err := os.MkdirAll(base, 0o777); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	s := storetest.Open(t, "nfs", n.URL("below-base"), object.Config{})
	ctx := context.Background()
	if err := s.Create(ctx); err != nil {
		t.Fatalf("Create on an existing directory: %v", err)
	}
	if err := s.Put(ctx, "d1/d2/k", strings.NewReader("v")); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"d1/d2/k", "d1/d2/", "d1/", ""} {
		if err := s.Delete(ctx, k); err != nil {
			t.Fatalf("Delete %q: %v", k, err)
		}
	}
	ents, err := os.ReadDir(base)
	if err != nil || len(ents) != 0 {
		t.Errorf("after deleting every key the base holds %v (%v); want it empty and still there", ents, err)
	}
}
