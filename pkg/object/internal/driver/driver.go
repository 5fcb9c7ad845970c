// Package driver holds what the drivers of pkg/object share and the root
// package does not export: errors built the same way by every driver, the
// size of a request body, and the listing of a directory tree as an
// object store would list it (for the file-system drivers).
//
// Only the drivers of pkg/object may import it.
package driver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/fsbench/fsbench/pkg/object"
)

// OpErr records a failed operation on a key as an *object.Error; a nil err
// stays nil.
func OpErr(op, key string, err error) error {
	if err == nil {
		return nil
	}
	return &object.Error{Op: op, Key: key, Err: err}
}

// CtxErr returns the context's error, wrapped with op and key, when ctx
// is done; drivers call it before starting an operation.
func CtxErr(ctx context.Context, op, key string) error {
	if err := ctx.Err(); err != nil {
		return OpErr(op, key, err)
	}
	return nil
}

// kindError is an error that keeps a short message for people while
// matching a sentinel and the original error for errors.Is and errors.As.
type kindError struct {
	msg  string
	kind error // a sentinel of pkg/object, or nil
	err  error // the original error
}

func (e *kindError) Error() string   { return e.msg }
func (e *kindError) Unwrap() []error { return []error{e.kind, e.err} }

// WrapKind returns an error reading format and args that matches kind (a
// sentinel of pkg/object, or nil) and err.
func WrapKind(kind error, err error, format string, args ...any) error {
	return &kindError{msg: fmt.Sprintf(format, args...), kind: kind, err: err}
}

// Size returns the size of a request body, which is read from offset 0 to
// its end, and leaves it at offset 0.
func Size(r io.Seeker) (int64, error) {
	n, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, err
	}
	_, err = r.Seek(0, io.SeekStart)
	return n, err
}

// CheckKey refuses the keys a file-system driver must not map to a path:
// absolute ones, ones with a NUL byte, and ones with a . or .. component,
// which could leave the store's base directory.
func CheckKey(op, key string) error {
	if strings.HasPrefix(key, "/") || strings.Contains(key, "\x00") {
		return OpErr(op, key, errors.New("invalid key"))
	}
	for _, part := range strings.Split(key, "/") {
		if part == ".." || part == "." {
			return OpErr(op, key, errors.New("invalid key: . or .. component"))
		}
	}
	return nil
}

// RandomSuffix makes the names of temporary files unique.
func RandomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
