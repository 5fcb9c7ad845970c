package file_test

import (
	"context"
	"errors"
	"testing"

	"github.com/fsbench/fsbench/pkg/object"
	"github.com/fsbench/fsbench/pkg/object/file"
)

// A store without the capability (a directory) says so through a prefixed
// view.
func TestDeleteKeysFileNotSupported(t *testing.T) {
	f, err := file.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := object.WithPrefix(f, "p/")
	if b, ok := s.(object.BatchDeleter); ok {
		if err := b.DeleteKeys(context.Background(), []string{"x"}); !errors.Is(err, object.ErrNotSupported) {
			t.Errorf("file store: %v, want not supported", err)
		}
	}
}
