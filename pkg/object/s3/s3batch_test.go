package s3_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/pkg/object"
	"github.com/fsbench/fsbench/pkg/object/internal/storetest"
)

// DeleteKeys deletes the keys named, keys that need escaping in the XML
// body too, and nothing else; a missing key is not an error, and more
// than 1000 keys are refused before any request. Over HTTP and HTTPS.
func TestDeleteKeysMinIO(t *testing.T) {
	for _, tls := range []bool{false, true} {
		s := storetest.MinIO(t, tls)
		b := object.AsBatchDeleter(s)
		if b == nil {
			t.Fatal("no multi-object delete on MinIO")
		}
		ctx := context.Background()
		keys := []string{"a", "b&c <d>", "dir/e", "keep"}
		for _, k := range keys {
			if err := s.Put(ctx, k, strings.NewReader("x")); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.DeleteKeys(ctx, []string{"a", "b&c <d>", "dir/e", "never-made"}); err != nil {
			t.Fatalf("tls %v: %v", tls, err)
		}
		page, err := s.List(ctx, object.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var left []string
		for _, o := range page.Objects {
			left = append(left, o.Key)
		}
		if !slices.Equal(left, []string{"keep"}) {
			t.Errorf("tls %v: left %v, want [keep]", tls, left)
		}
		if err := b.DeleteKeys(ctx, make([]string, object.MaxBatchDelete+1)); err == nil {
			t.Error("1001 keys accepted")
		}
		if err := s.Delete(ctx, "keep"); err != nil {
			t.Fatal(err)
		}
	}
}
