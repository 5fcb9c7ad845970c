package object

import (
	"context"
	"sort"
	"strings"
)

// dirEntry is one entry of a directory, for listing file-system stores.
type dirEntry struct {
	name string
	obj  Object // Key unset
}

// readDirFunc reads the directory at key dir ("" for the root, otherwise
// ending in "/"). A missing directory has no entries and no error.
type readDirFunc func(ctx context.Context, dir string) ([]dirEntry, error)

// listTree lists a directory tree as an object store would: keys in byte
// order, directories as keys ending in "/". Sorting each directory by name
// with "/" appended to directory names makes a depth-first walk produce
// keys in byte order.
func listTree(ctx context.Context, readDir readDirFunc, opt ListOptions) (*ListPage, error) {
	limit := opt.Limit
	if limit <= 0 {
		limit = DefaultListLimit
	}
	if opt.Delimiter != "" && opt.Delimiter != "/" {
		return nil, opErr("list", opt.Prefix, ErrNotSupported)
	}
	l := &lister{ctx: ctx, readDir: readDir, opt: opt, limit: limit, page: &ListPage{}}
	start := opt.Prefix[:strings.LastIndex(opt.Prefix, "/")+1]
	if err := l.walk(start); err != nil && err != errPageFull {
		return nil, err
	}
	return l.page, nil
}

type lister struct {
	ctx     context.Context
	readDir readDirFunc
	opt     ListOptions
	limit   int
	page    *ListPage
	n       int
}

type pageFull struct{}

func (pageFull) Error() string { return "page full" }

var errPageFull error = pageFull{}

// add records key; it returns errPageFull when one more than the limit has
// been seen, which proves that the listing is truncated.
func (l *lister) add(key string, o Object, isPrefix bool) error {
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
		return opErr("list", l.opt.Prefix, err)
	}
	ents, err := l.readDir(l.ctx, dir)
	if err != nil {
		return err
	}
	sortKey := func(e dirEntry) string {
		if e.obj.IsDir {
			return e.name + "/"
		}
		return e.name
	}
	sort.Slice(ents, func(i, j int) bool { return sortKey(ents[i]) < sortKey(ents[j]) })
	prefix, after := l.opt.Prefix, l.opt.StartAfter
	for _, e := range ents {
		key := dir + sortKey(e)
		if !e.obj.IsDir {
			if key > after && strings.HasPrefix(key, prefix) {
				if err := l.add(key, e.obj, false); err != nil {
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
				if err := l.add(key, e.obj, true); err != nil {
					return err
				}
			}
			continue
		}
		if inPrefix && key > after {
			if err := l.add(key, e.obj, false); err != nil {
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
