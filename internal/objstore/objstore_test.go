package objstore

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/pkg/object"
)

// body is a response body that records whether its end was seen before
// it was closed.
type body struct {
	r               io.Reader
	sawEOF, eofSeen bool
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.sawEOF = true
	}
	return n, err
}

func (b *body) Close() error { b.eofSeen = b.sawEOF; return nil }

// Close sees the end of a body read exactly to its length (io.ReadFull
// stops short of it), so that the connection can serve the next request.
func TestCloseSeesEOF(t *testing.T) {
	b := &body{r: strings.NewReader("0123456789")}
	buf := make([]byte, 10)
	if _, err := io.ReadFull(b, buf); err != nil {
		t.Fatal(err)
	}
	if err := Close(b); err != nil || !b.eofSeen {
		t.Errorf("closed with the end seen %v (%v)", b.eofSeen, err)
	}
}

// On a file-system store, Remove takes the run's directories too once
// they are empty: the host's prefix, then the run's above it when no
// other host's is left in it; a user's file beside them stays.
func TestRemoveParentsOnFileStore(t *testing.T) {
	dir := t.TempDir()
	s, err := object.Open(context.Background(), "file", dir, object.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for _, k := range []string{"run/host-0/a", "run/host-1/b", "mine"} {
		if err := s.Put(ctx, k, strings.NewReader("x")); err != nil {
			t.Fatal(err)
		}
	}
	if left, err := Remove(s, "run/host-0/", []string{"a"}, time.Minute); left != 0 {
		t.Fatalf("%d left: %v", left, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "run", "host-1", "b")); err != nil {
		t.Fatalf("the other host's object: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "run", "host-0")); !os.IsNotExist(err) {
		t.Fatalf("host-0's directory: %v", err)
	}
	if left, err := Remove(s, "run/host-1/", []string{"b"}, time.Minute); left != 0 {
		t.Fatalf("%d left: %v", left, err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 1 || ents[0].Name() != "mine" {
		t.Fatalf("left in the store: %v (%v)", ents, err)
	}
}
