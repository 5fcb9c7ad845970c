package sysio

import (
	"errors"
	"io"
	"os"
	"path/filepath"
)

// PathCause is the error of a failed call on a path without the call and
// the path (*os.PathError's Err: "no such file or directory"), for a
// message that names the path itself; other errors are returned as they
// are.
func PathCause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// WriteFileAtomic writes data to path as WriteAtomic does.
func WriteFileAtomic(path, tmp string, data []byte, perm os.FileMode) error {
	return WriteAtomic(path, tmp, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteAtomic writes path whole: write fills a temporary file tmp (path
// with ".tmp" added when tmp is ""; it must be in path's directory), which
// is synced and renamed over path. A reader sees the old content or the
// new, never part of it, and a crash does not leave an empty file where
// the old one was. On failure the temporary file is removed and path is
// as it was.
func WriteAtomic(path, tmp string, perm os.FileMode, write func(io.Writer) error) error {
	if tmp == "" {
		tmp = path + ".tmp"
	} else if filepath.Dir(tmp) != filepath.Dir(path) {
		return &os.PathError{Op: "write", Path: tmp, Err: errors.New("temporary file not beside " + path)}
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	err = write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
