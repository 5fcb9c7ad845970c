package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/fsbench/fsbench/internal/journal"
	"github.com/fsbench/fsbench/internal/objstore"
	"github.com/fsbench/fsbench/pkg/object"
)

// objectTarget opens the store a journal of objects names, as objbench
// does (credentials from the flags or the environment), once URL is that
// store.
func objectTarget(ctx context.Context, o *VerifyOptions, file string, j *journal.Journal) (journal.Target, func(), error) {
	if got := journalURL(j.Storage, o.Path); got != j.Header.Root {
		return nil, nil, Usagef("--journal %s records objects of the %s store %s, not %s: give that URL", file, j.Storage, j.Header.Root, got)
	}
	if o.storage != "" && o.storage != j.Storage {
		return nil, nil, Usagef("--storage %s, but --journal %s records objects of a %s store", o.storage, file, j.Storage)
	}
	cfg := o.cfg
	s, err := objstore.Open(ctx, objstore.Timeout(cfg), func(ctx context.Context) (object.Storage, error) {
		return object.Open(ctx, j.Storage, o.Path, cfg)
	})
	switch {
	case errors.Is(err, objstore.ErrBadInput):
		return nil, nil, Usagef("verify %s: %v", object.RedactURL(o.Path), err)
	case err != nil:
		return nil, nil, fmt.Errorf("verify %s: %w", object.RedactURL(o.Path), err)
	}
	return objReadBack{s}, func() { s.Close() }, nil
}

// objReadBack reads back objects of a store for journal.Verify.
type objReadBack struct{ s object.Storage }

func (t objReadBack) Open(ctx context.Context, key string) (journal.Object, error) {
	info, err := t.s.Head(ctx, key)
	if err != nil {
		return nil, err // wraps fs.ErrNotExist when the key is missing
	}
	return &objReadObject{ctx: ctx, s: t.s, key: key, size: info.Size}, nil
}

// objReadObject reads one object by ranged gets.
type objReadObject struct {
	ctx  context.Context
	s    object.Storage
	key  string
	size int64
}

func (o *objReadObject) Size() int64  { return o.size }
func (o *objReadObject) Close() error { return nil }

func (o *objReadObject) ReadAt(b []byte, off int64) (int, error) {
	if off >= o.size {
		return 0, io.EOF
	}
	rc, err := o.s.Get(o.ctx, o.key, off, int64(len(b)))
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	n, err := io.ReadFull(rc, b)
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	return n, err
}
