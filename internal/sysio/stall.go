package sysio

import (
	"errors"
	"os"
	"time"
)

// ErrStalled is in the error of a call on storage that did not return in
// time: the storage did not answer (a hung NFS server, a stopped FUSE
// daemon, a disk minutes behind).
var ErrStalled = errors.New("the storage did not answer")

// Within runs f and returns its error, or ErrStalled once limit has
// passed without f returning. f is then left behind, still running: a
// call the file system has taken cannot be ended. It must therefore share
// nothing with its caller that the caller reads after ErrStalled.
func Within(limit time.Duration, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	t := time.NewTimer(max(limit, 0))
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return ErrStalled
	}
}

// StatWithin is os.Stat of path for limit at most: ErrStalled then, in
// an *os.PathError naming path.
func StatWithin(limit time.Duration, path string) (os.FileInfo, error) {
	type answer struct {
		fi  os.FileInfo
		err error
	}
	ch := make(chan answer, 1)
	if err := Within(limit, func() error {
		fi, err := os.Stat(path)
		ch <- answer{fi, err}
		return nil
	}); err != nil {
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	a := <-ch
	return a.fi, a.err
}
