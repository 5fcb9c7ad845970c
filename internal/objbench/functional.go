package objbench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/fsbench/fsbench/internal/objstore"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/pkg/object"
)

// Categories of the functional checks: JuiceFS's two, and one for the
// checks fsbench adds.
const (
	catBasic = "basic"
	catSync  = "sync"
	catExtra = "extra"
)

// warning marks a check outcome that is a known difference between
// providers rather than a failure.
type warning struct{ err error }

func (w warning) Error() string { return w.err.Error() }
func (w warning) Unwrap() error { return w.err }

func warnf(format string, args ...any) error { return warning{fmt.Errorf(format, args...)} }

// check is one functional check.
type check struct {
	category, name string
	timeout        time.Duration
	fn             func(ctx context.Context) error
}

// maxReason bounds the reason kept for a check (a store's error can carry
// a whole response body); the table shortens it further without -v.
const maxReason = 1000

// functional runs the checks, in JuiceFS's order, then fsbench's own.
func (r *run) functional(ctx context.Context) {
	for _, c := range r.checks() {
		if ctx.Err() != nil {
			return
		}
		cctx, cancel := objstore.WithLimit(ctx, c.timeout, "the check's time limit")
		err := objstore.Named(cctx, c.fn(cctx))
		cancel()
		if ctx.Err() != nil {
			return // interrupted: the check did not run to its end
		}
		res := r.grade(c, err)
		r.res.Checks = append(r.res.Checks, res)
		if r.o.Hooks.Check != nil {
			r.o.Hooks.Check(res)
		}
	}
}

// grade is the outcome of a check that returned err: passed, not
// supported, a warning (a known difference between providers, or the
// store asking us to slow down: not a wrong answer) or failed.
func (r *run) grade(c check, err error) report.Check {
	res := report.Check{Category: c.category, Name: c.name, Status: report.CheckPass}
	var w warning
	switch {
	case err == nil:
	case errors.Is(err, object.ErrNotSupported):
		res.Status = report.CheckNotSupport
	case errors.Is(err, object.ErrThrottled), errors.As(err, &w):
		res.Status, res.Reason = report.CheckWarning, r.short(err)
	default:
		res.Status, res.Reason = report.CheckFailed, r.short(err)
	}
	return res
}

// short is the reason shown for a failed check: one line, keys without
// the run's prefix, bounded.
func (r *run) short(err error) string {
	s := strings.ReplaceAll(err.Error(), r.prefix, "")
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxReason {
		s = s[:maxReason] + "..."
	}
	return s
}

const (
	testKey  = "put_test_file"
	testData = "hello"
)

// checks are the functional checks, in JuiceFS's order, then fsbench's own.
func (r *run) checks() []check {
	const t = 30 * time.Second
	return []check{
		{catBasic, "create a bucket", t, r.checkCreate},
		{catBasic, "put an object", t, r.checkPut},
		{catBasic, "get an object", t, r.checkGet},
		{catBasic, "get non-exist", t, r.checkGetMissing},
		{catBasic, "get partial object", t, r.checkPartial},
		{catBasic, "head an object", t, r.checkHead},
		{catBasic, "delete an object", t, r.checkDelete},
		{catBasic, "delete non-exist", t, r.checkDeleteMissing},
		{catBasic, "list objects", 2 * t, r.checkList},
		{catSync, "special key", t, r.checkSpecialKey},
		{catSync, "put a big object", 10 * t, r.checkBigObject},
		{catSync, "put an empty object", t, r.checkEmpty},
		{catSync, "multipart upload", 4 * t, r.checkMultipart},
		{catSync, "change owner/group", t, r.fsCheck(r.checkChown)},
		{catSync, "change permission", t, r.fsCheck(r.checkChmod)},
		{catSync, "change mtime", t, r.fsCheck(r.checkMtime)},
		{catExtra, "overwrite an object", t, r.checkOverwrite},
		{catExtra, "list with delimiter", t, r.checkDelimiter},
		{catExtra, "list in pages", 2 * t, r.checkPaging},
		{catExtra, "abort multipart upload", t, r.checkAbort},
	}
}

// parallel runs fn(0..n-1) on at most threads goroutines and returns the
// first error.
func parallel(ctx context.Context, threads, n int, fn func(i int) error) error {
	g, _ := errgroup.WithContext(ctx)
	g.SetLimit(threads)
	for i := range n {
		g.Go(func() error { return fn(i) })
	}
	return g.Wait()
}
