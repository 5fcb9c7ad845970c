package objbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/fsbench/fsbench/pkg/object"
)

func getString(ctx context.Context, s object.Storage, key string, off, limit int64) (string, error) {
	rc, err := s.Get(ctx, key, off, limit)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 1<<20))
	return string(b), err
}

// withTestObject puts "hello" under testKey, runs fn and deletes it.
func (r *run) withTestObject(ctx context.Context, fn func() error) error {
	if err := r.store.Put(ctx, testKey, strings.NewReader(testData)); err != nil {
		return err
	}
	defer r.store.Delete(context.WithoutCancel(ctx), testKey) //nolint:errcheck // best effort; cleanup lists the prefix
	return fn()
}

func (r *run) checkCreate(ctx context.Context) error {
	// prepare made sure the bucket exists (creating it if it had to);
	// creating an existing bucket of ours must not be an error.
	if err := r.base.Create(ctx); err != nil {
		return fmt.Errorf("creating a bucket that already exists returns an error: %w", err)
	}
	return r.withTestObject(ctx, func() error { return nil })
}

func (r *run) checkPut(ctx context.Context) error {
	return r.withTestObject(ctx, func() error { return nil })
}

func (r *run) checkGet(ctx context.Context) error {
	return r.withTestObject(ctx, func() error {
		for _, limit := range []int64{-1, 5} {
			if d, err := getString(ctx, r.store, testKey, 0, limit); err != nil || d != testData {
				return fmt.Errorf("get (limit %d): expected %q, got %q, error: %v", limit, testData, d, err)
			}
		}
		return nil
	})
}

func (r *run) checkGetMissing(ctx context.Context) error {
	_, err := getString(ctx, r.store, "not_exists_file", 0, -1)
	switch {
	case err == nil:
		return errors.New("get of a missing object succeeded")
	case !errors.Is(err, object.ErrNotExist):
		return warnf("get of a missing object failed, but not with 'not found': %v", err)
	}
	return nil
}

func (r *run) checkHead(ctx context.Context) error {
	return r.withTestObject(ctx, func() error {
		o, err := r.store.Head(ctx, testKey)
		if err != nil {
			return err
		}
		if o.Key != testKey || o.Size != int64(len(testData)) {
			return fmt.Errorf("head: expected key %s of %d bytes, got %s of %d", testKey, len(testData), o.Key, o.Size)
		}
		return nil
	})
}

func (r *run) checkDelete(ctx context.Context) error {
	s := r.store
	if err := s.Put(ctx, testKey, strings.NewReader(testData)); err != nil {
		return err
	}
	if err := s.Delete(ctx, testKey); err != nil {
		return err
	}
	if _, err := s.Head(ctx, testKey); !errors.Is(err, object.ErrNotExist) {
		return fmt.Errorf("head after delete: expected 'not found', got %v", err)
	}
	if err := s.Delete(ctx, testKey); err != nil {
		return fmt.Errorf("deleting it again: %w", err)
	}
	return nil
}

func (r *run) checkDeleteMissing(ctx context.Context) error {
	if err := r.store.Delete(ctx, "not_exists_file"); err != nil {
		return fmt.Errorf("deleting a missing object returns an error: %w", err)
	}
	return nil
}

func (r *run) checkPartial(ctx context.Context) error {
	return r.withTestObject(ctx, func() error {
		for _, c := range []struct {
			off, limit int64
			want, what string
		}{
			{0, 1, "h", "the first byte"},
			{4, 1, "o", "the last byte"},
			{2, 3, "llo", "the last three bytes"},
			{2, 2, "ll", "two middle bytes"},
			{2, -1, "llo", "from an offset to the end"},
		} {
			if d, err := getString(ctx, r.store, testKey, c.off, c.limit); err != nil || d != c.want {
				return fmt.Errorf("get %s: expected %q, got %q, error: %v", c.what, c.want, d, err)
			}
		}
		// Ranges past the end differ between providers.
		if d, err := getString(ctx, r.store, testKey, 4, 2); err != nil {
			return warnf("a range that ends past the object's end fails: %v", cause(err))
		} else if d != "o" {
			return warnf("a range that ends past the object's end returns %q, not the last byte %q", d, "o")
		}
		if d, err := getString(ctx, r.store, testKey, 6, 2); err != nil {
			return warnf("a range that starts past the object's end is an error, not empty: %v", cause(err))
		} else if d != "" {
			return warnf("a range that starts past the object's end returns %q, not nothing", d)
		}
		return nil
	})
}

// cause is a store's error without the operation and key around it, for a
// check that names both itself.
func cause(err error) error {
	var oe *object.Error
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err
	}
	return err
}

// files drops directories, which file-system stores list.
func files(objs []object.Object) []object.Object {
	out := objs[:0:0]
	for _, o := range objs {
		if !o.IsDir {
			out = append(out, o)
		}
	}
	return out
}

func (r *run) checkList(ctx context.Context) error {
	s := r.store
	err := r.withTestObject(ctx, func() error {
		page, err := s.List(ctx, object.ListOptions{Limit: 10})
		if err != nil {
			return err
		}
		objs := files(page.Objects)
		if len(objs) != 1 {
			return fmt.Errorf("list should return 1 key, but got %d", len(objs))
		}
		if objs[0].Key != testKey || objs[0].Size != int64(len(testData)) {
			return fmt.Errorf("list returned %s of %d bytes, expected %s of %d", objs[0].Key, objs[0].Size, testKey, len(testData))
		}
		if d := time.Since(objs[0].Mtime); d > 30*time.Second || d < -30*time.Second {
			return fmt.Errorf("mtime of the key is %v away from now", d.Round(time.Second))
		}
		page, err = s.List(ctx, object.ListOptions{StartAfter: testKey, Limit: 10})
		if err != nil {
			return err
		}
		if n := len(files(page.Objects)); n != 0 {
			return fmt.Errorf("list after the last key should return nothing, but got %d", n)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// 100 keys come back in byte order.
	var keys []string
	for i := range 100 {
		keys = append(keys, fmt.Sprintf("hashKey%d", i))
	}
	defer r.deleteKeys(ctx, keys)
	if err := r.putKeys(ctx, keys); err != nil {
		return err
	}
	sort.Strings(keys)
	page, err := s.List(ctx, object.ListOptions{Prefix: "hashKey", Limit: 1000})
	if err != nil {
		return err
	}
	objs := files(page.Objects)
	if len(objs) != len(keys) {
		return fmt.Errorf("list returned %d of %d keys", len(objs), len(keys))
	}
	for i, o := range objs {
		if o.Key != keys[i] {
			return fmt.Errorf("the result for list is incorrect: key %d is %s, expected %s", i, o.Key, keys[i])
		}
	}
	return nil
}

// putKeys puts one byte under each key, with the run's threads.
func (r *run) putKeys(ctx context.Context, keys []string) error {
	return parallel(ctx, r.o.Threads, len(keys), func(i int) error {
		return r.store.Put(ctx, keys[i], strings.NewReader("x"))
	})
}

func (r *run) deleteKeys(ctx context.Context, keys []string) {
	ctx = context.WithoutCancel(ctx)
	_ = parallel(ctx, r.o.Threads, len(keys), func(i int) error {
		return r.store.Delete(ctx, keys[i])
	})
}

func keysOf(objs []object.Object) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.Key
	}
	return out
}
