package driver

import (
	"context"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/pkg/object"
)

// memDir is a directory tree for testing ListTree.
type memDir map[string][]DirEntry

func (m memDir) read(_ context.Context, dir string) ([]DirEntry, error) { return m[dir], nil }

func file(name string) DirEntry { return DirEntry{Name: name} }

func dir(name string) DirEntry { return DirEntry{Name: name, Obj: object.Object{IsDir: true}} }

func TestListTree(t *testing.T) {
	tree := memDir{
		"":       {file("b"), dir("a"), file("a-b"), file("a.c"), dir("z")},
		"a/":     {file("2"), file("1"), dir("sub")},
		"a/sub/": {file("x")},
		"z/":     {},
	}
	keys := func(p *object.ListPage) string {
		var out []string
		for _, o := range p.Objects {
			out = append(out, o.Key)
		}
		if len(p.Prefixes) > 0 {
			out = append(out, "|"+strings.Join(p.Prefixes, ","))
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		opt  object.ListOptions
		want string
		more bool
	}{
		// "a-b" < "a.c" < "a/" in byte order: the walk must agree.
		{object.ListOptions{}, "a-b a.c a/ a/1 a/2 a/sub/ a/sub/x b z/", false},
		// Listing from inside a directory does not show the directory itself.
		{object.ListOptions{Prefix: "a/"}, "a/1 a/2 a/sub/ a/sub/x", false},
		{object.ListOptions{Prefix: "a/s"}, "a/sub/ a/sub/x", false},
		{object.ListOptions{StartAfter: "a/2"}, "a/sub/ a/sub/x b z/", false},
		{object.ListOptions{StartAfter: "a/sub/x"}, "b z/", false},
		{object.ListOptions{Limit: 3}, "a-b a.c a/", true},
		{object.ListOptions{Delimiter: "/"}, "a-b a.c b |a/,z/", false},
		{object.ListOptions{Prefix: "a/", Delimiter: "/"}, "a/1 a/2 |a/sub/", false},
	} {
		p, err := ListTree(context.Background(), tree.read, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		if got := keys(p); got != c.want || p.Truncated != c.more {
			t.Errorf("%+v: %q (truncated %v), want %q (%v)", c.opt, got, p.Truncated, c.want, c.more)
		}
	}
}
