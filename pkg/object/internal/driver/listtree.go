package driver

import (
	"context"
	"sort"
	"strings"

	"github.com/fsbench/fsbench/pkg/object"
)

// DirEntry is one entry of a directory, for listing file-system stores.
type DirEntry struct {
	Name string
	Obj  object.Object // Key unset
}

// ReadDirFunc reads the directory at key dir ("" for the root, otherwise
// ending in "/"). A missing directory has no entries and no error.
type ReadDirFunc func(ctx context.Context, dir string) ([]DirEntry, error)

// ListTree lists a directory tree as an object store would: keys in byte
// order, directories as keys ending in "/". Sorting each directory by name
// with "/" appended to directory names makes a depth-first walk produce
// keys in byte order.
func ListTree(ctx context.Context, readDir ReadDirFunc, opt object.ListOptions) (*object.ListPage, error) {
	limit := opt.Limit
	if limit <= 0 {
		limit = object.DefaultListLimit
	}
	if opt.Delimiter != "" && opt.Delimiter != "/" {
		return nil, OpErr("list", opt.Prefix, object.ErrNotSupported)
	}
	l := &lister{ctx: ctx, readDir: readDir, opt: opt, limit: limit, page: &object.ListPage{}}
	start := opt.Prefix[:strings.LastIndex(opt.Prefix, "/")+1]
	if err := l.walk(start); err != nil && err != errPageFull {
		return nil, err
	}
	return l.page, nil
}

type lister struct {
	ctx     context.Context
	readDir ReadDirFunc
	opt     object.ListOptions
	limit   int
	page    *object.ListPage
	n       int
}

type pageFull struct{}

func (pageFull) Error() string { return "page full" }

var errPageFull error = pageFull{}

// add records key; it returns errPageFull when one more than the limit has
// been seen, which proves that the listing is truncated.
func (l *lister) add(key string, o object.Object, isPrefix bool) error {
	if l.n == l.limit {
		l.page.Truncated = true
		return errPageFull
	}
	l.n++
	l.page.Next = key
	if isPrefix {
		l.page.Prefixes = append(l.page.Prefixes, key)
		return nil
	}
	o.Key = key
	l.page.Objects = append(l.page.Objects, o)
	return nil
}

func (l *lister) walk(dir string) error {
	if err := l.ctx.Err(); err != nil {
		return OpErr("list", l.opt.Prefix, err)
	}
	ents, err := l.readDir(l.ctx, dir)
	if err != nil {
		return err
	}
	sortKey := func(e DirEntry) string {
		if e.Obj.IsDir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(ents, func(i, j int) bool { return sortKey(ents[i]) < sortKey(ents[j]) })
	prefix, after := l.opt.Prefix, l.opt.StartAfter
	for _, e := range ents {
		key := dir + sortKey(e)
		if !e.Obj.IsDir {
			if key > after && strings.HasPrefix(key, prefix) {
				if err := l.add(key, e.Obj, false); err != nil {
					return err
				}
			}
			continue
		}
		// A directory: its key, then what is inside, unless the prefix or
		// the start key rules the whole subtree out.
		inPrefix := strings.HasPrefix(key, prefix)
		if !inPrefix && !strings.HasPrefix(prefix, key) {
			continue
		}
		if l.opt.Delimiter != "" && inPrefix {
			if key > after {
				if err := l.add(key, e.Obj, true); err != nil {
					return err
				}
			}
			continue
		}
		if inPrefix && key > after {
			if err := l.add(key, e.Obj, false); err != nil {
				return err
			}
		}
		if key > after || strings.HasPrefix(after, key) {
			if err := l.walk(key); err != nil {
				return err
			}
		}
	}
	return nil
}
