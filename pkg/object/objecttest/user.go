package objecttest

import (
	"context"
	"io"
	"sort"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/pkg/object"
)

// The user's object that UserStore puts and CheckUntouched looks for.
const (
	UserKey  = "precious/data.bin"
	userData = "user data, keep"
)

// UserStore opens the store of the driver kind at url, creates its bucket
// and puts an object of the user's in it, which a run must leave alone
// (CheckUntouched). The store is closed when the test ends.
func UserStore(t testing.TB, kind, url string, cfg object.Config) object.Storage {
	t.Helper()
	s, err := object.Open(context.Background(), kind, url, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Create(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(context.Background(), UserKey, strings.NewReader(userData)); err != nil {
		t.Fatal(err)
	}
	return s
}

// Keys lists every object of s (directories left out), sorted.
func Keys(t testing.TB, s object.Storage) []string {
	t.Helper()
	var keys []string
	opt := object.ListOptions{}
	for {
		page, err := s.List(context.Background(), opt)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Objects {
			if !o.IsDir {
				keys = append(keys, o.Key)
			}
		}
		if !page.Truncated {
			sort.Strings(keys)
			return keys
		}
		opt.StartAfter = page.Next
	}
}

// CheckUntouched fails t unless s holds the user's object of UserStore,
// as it was, and nothing else.
func CheckUntouched(t testing.TB, s object.Storage) {
	t.Helper()
	if keys := Keys(t, s); len(keys) != 1 || keys[0] != UserKey {
		t.Errorf("after the run the store holds %v, want only %s", keys, UserKey)
	}
	rc, err := s.Get(context.Background(), UserKey, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if b, _ := io.ReadAll(rc); string(b) != userData {
		t.Errorf("the user's object now holds %q", b)
	}
}
