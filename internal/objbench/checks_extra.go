package objbench

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fsbench/fsbench/pkg/object"
)

func (r *run) checkOverwrite(ctx context.Context) error {
	s := r.store
	const key = "overwrite_test_file"
	if err := s.Put(ctx, key, strings.NewReader("the first, longer version")); err != nil {
		return err
	}
	defer s.Delete(context.WithoutCancel(ctx), key) //nolint:errcheck
	if err := s.Put(ctx, key, strings.NewReader("second")); err != nil {
		return fmt.Errorf("overwrite: %w", err)
	}
	if d, err := getString(ctx, s, key, 0, -1); err != nil || d != "second" {
		return fmt.Errorf("after overwrite: got %q, error: %v", d, err)
	}
	return nil
}

func (r *run) checkDelimiter(ctx context.Context) error {
	keys := []string{"dl/a", "dl/b/1", "dl/b/2", "dl/c"}
	defer r.deleteKeys(ctx, keys)
	if err := r.putKeys(ctx, keys); err != nil {
		return err
	}
	page, err := r.store.List(ctx, object.ListOptions{Prefix: "dl/", Delimiter: "/", Limit: 100})
	if err != nil {
		return err
	}
	got := strings.Join(keysOf(files(page.Objects)), ",")
	pre := strings.Join(page.Prefixes, ",")
	if got != "dl/a,dl/c" || pre != "dl/b/" {
		return fmt.Errorf("list with delimiter: objects [%s] and prefixes [%s], expected [dl/a,dl/c] and [dl/b/]", got, pre)
	}
	return nil
}

func (r *run) checkPaging(ctx context.Context) error {
	var keys []string
	for i := range 25 {
		keys = append(keys, fmt.Sprintf("page/%03d", i))
	}
	defer r.deleteKeys(ctx, keys)
	if err := r.putKeys(ctx, keys); err != nil {
		return err
	}
	var got []string
	opt := object.ListOptions{Prefix: "page/", Limit: 10}
	for pages := 0; ; pages++ {
		if pages > 10 {
			return errors.New("paging does not end")
		}
		page, err := r.store.List(ctx, opt)
		if err != nil {
			return err
		}
		if len(page.Objects) > 10 {
			return fmt.Errorf("a page of %d keys, limit 10", len(page.Objects))
		}
		got = append(got, keysOf(files(page.Objects))...)
		if !page.Truncated {
			break
		}
		opt.StartAfter = page.Next
	}
	if strings.Join(got, ",") != strings.Join(keys, ",") {
		return fmt.Errorf("paged list returned %d keys, expected the %d put, in order", len(got), len(keys))
	}
	return nil
}
