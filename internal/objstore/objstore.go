// Package objstore holds the steps that every run working in an object
// store shares (objbench, train, checkpoint): opening the store within a
// bounded time, claiming a new key prefix of the run's own (creating the
// bucket when it is missing), and retrying what the store throttled.
//
// It runs no benchmark and deletes nothing but the keys a run wrote (and,
// on file and nfs stores, the directories they leave empty).
package objstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/fsbench/fsbench/internal/leftover"
	"github.com/fsbench/fsbench/pkg/object"
	_ "github.com/fsbench/fsbench/pkg/object/all" // every driver, for object.Open
)

// ErrBadInput is wrapped by Open's errors that the user fixes on the
// command line: an unknown storage type, a URL that does not parse.
var ErrBadInput = errors.New("bad input")

type badInput struct{ err error }

func (b *badInput) Error() string   { return b.err.Error() }
func (b *badInput) Unwrap() []error { return []error{ErrBadInput, b.err} }

// Timeout is the configuration's bound on every wait for the store, 10s
// when unset (as object.Open).
func Timeout(c object.Config) time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return 10 * time.Second
}

// Open opens the store with open within 3 x timeout; an error names that
// limit when it ran out, and wraps ErrBadInput for an unknown driver or a
// URL that does not parse. When ctx ends, the error is ctx's.
func Open(ctx context.Context, timeout time.Duration, open func(context.Context) (object.Storage, error)) (object.Storage, error) {
	octx, cancel := WithLimit(ctx, 3*timeout, "the limit on opening the store (3 x --timeout)")
	s, err := open(octx)
	err = Named(octx, err)
	cancel()
	var ce *object.ConfigError
	switch {
	case err == nil:
		return s, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, object.ErrUnknownDriver) || errors.As(err, &ce):
		return nil, &badInput{err}
	}
	return nil, err
}

// NewPrefix is a new key prefix of a run of the command: a name no other
// run and no user object has, ending in "/".
func NewPrefix(command string) string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("fsbench-%s-%s-%d-%s/", command, leftover.Label(host, "-", '-', 24), time.Now().Unix(), hex.EncodeToString(b[:]))
}

// Claim makes sure, within 3 x timeout and before anything is written,
// that the bucket exists and the credentials work, and that nothing is
// under prefix yet: a wrong secret, an unknown bucket or an unreachable
// endpoint fails here with one clear error. A missing bucket is created;
// created says so (the bucket is the user's to remove).
func Claim(ctx context.Context, base object.Storage, prefix string, timeout time.Duration) (created bool, err error) {
	pctx, cancel := WithLimit(ctx, 3*timeout, "the limit on reaching the store (3 x --timeout)")
	defer cancel()
	var page *object.ListPage
	throttled := 0
	err = RetryThrottled(pctx, func() (err error) {
		page, err = base.List(pctx, object.ListOptions{Prefix: prefix, Limit: 1})
		if errors.Is(err, object.ErrThrottled) {
			throttled++
		}
		return err
	})
	// Name the store rather than the prefix, which means nothing to the
	// user yet.
	var oe *object.Error
	if errors.As(err, &oe) {
		err = fmt.Errorf("%s: %w", base.String(), oe.Err)
	}
	err = Named(pctx, err)
	if err != nil && throttled > 0 {
		err = fmt.Errorf("%w; the store throttled %d of the attempts (503 SlowDown / 429)", err, throttled)
	}
	switch {
	case err == nil:
		if len(page.Objects)+len(page.Prefixes) > 0 {
			return false, fmt.Errorf("prefix %s is already in use", prefix)
		}
		return false, nil
	case errors.Is(err, object.ErrNoBucket):
		if cerr := base.Create(pctx); cerr != nil {
			return false, fmt.Errorf("%w, and creating it failed: %w", err, cerr)
		}
		return true, nil
	case errors.Is(err, object.ErrAccess) && !strings.Contains(err.Error(), "credentials"):
		return false, fmt.Errorf("%w (check the access key, secret key and their permissions)", err)
	}
	return false, err
}

// CreatedNote is the warning of a run whose Claim created base: a bucket,
// or a directory for a store in one. Either is left in place.
func CreatedNote(base object.Storage) string {
	what := "bucket"
	if strings.HasPrefix(base.String(), "file://") {
		what = "directory"
	}
	return fmt.Sprintf("created %s %s, which did not exist (it is left in place when the run ends)", what, base.String())
}

// Throttling: a request the store asked to slow down is tried again after
// a pause that doubles from ThrottleBase to ThrottleMax, at most
// MaxThrottleRetries times.
const (
	MaxThrottleRetries = 10
	ThrottleBase       = 50 * time.Millisecond
	ThrottleMax        = 2 * time.Second
)

// RetryThrottled runs op again while the store asks to slow down (HTTP
// 503 SlowDown or 429), after a pause that doubles from ThrottleBase to
// ThrottleMax, at most MaxThrottleRetries times, and not once ctx is
// done. It returns op's last error.
func RetryThrottled(ctx context.Context, op func() error) error {
	backoff := ThrottleBase
	for try := 0; ; try++ {
		err := op()
		if !errors.Is(err, object.ErrThrottled) || try >= MaxThrottleRetries {
			return err
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		backoff = min(2*backoff, ThrottleMax)
	}
}

// Close closes the body of a GET read to its expected end, after a last
// read that sees the end of the stream: an HTTP body closed before its end
// was seen closes its connection too, and the next request pays for a
// new one.
func Close(rc io.ReadCloser) error {
	_, err := io.Copy(io.Discard, io.LimitReader(rc, 64<<10))
	return errors.Join(err, rc.Close())
}

// Remove deletes the keys a run wrote under prefix of base, one by one
// (no listing: nothing else under the prefix or in the bucket can go), and
// on file-system stores the prefix's directory, once empty, and those of
// its parents within the prefix (a run on many hosts has "RUN/host-0/":
// the last host's removal of "RUN/" succeeds). It runs to its
// end after Ctrl-C too, within wait, and returns the first error and how
// many keys are left.
func Remove(base object.Storage, prefix string, keys []string, wait time.Duration) (left int, first error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for _, k := range keys {
		if err := base.Delete(ctx, prefix+k); err != nil {
			if left == 0 {
				first = err
			}
			left++
		}
	}
	if object.AsFileSystem(base) != nil {
		for dir := prefix; dir != ""; dir = parentDir(dir) {
			_ = base.Delete(ctx, dir) // a directory: removed only if empty
		}
	}
	return left, first
}

// parentDir is the directory key above dir ("a/b/" -> "a/"), or "".
func parentDir(dir string) string {
	i := strings.LastIndexByte(strings.TrimSuffix(dir, "/"), '/')
	return dir[:i+1]
}

// Leftover names what a run leaves behind under s (a store opened with
// its prefix) if it ends before its clean-up.
func Leftover(s object.Storage) string {
	if dir, ok := strings.CutPrefix(s.String(), "file://"); ok {
		return leftover.Dir(dir)
	}
	return leftover.Objects(s.String())
}
