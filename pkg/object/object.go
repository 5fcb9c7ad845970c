// Package object is fsbench's object-store layer: a small interface that
// every storage backend implements (S3 and S3-compatible stores, local or
// mounted directories, NFS servers), a registry of drivers, and the
// optional capabilities some backends have (multipart upload, file
// attributes).
//
// The drivers are packages of their own that register themselves when
// imported (pkg/object/s3, pkg/object/nfs, pkg/object/file); this package
// imports none of them. A program that opens stores by name imports them
// all at once:
//
//	import _ "github.com/fsbench/fsbench/pkg/object/all"
//
// Every blocking method takes a context first; cancelling it makes the call
// return promptly with an error that wraps the context's error.
//
// It imports none of the drivers, and no driver may depend on another.
package object

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// Storage is an object store, or a directory used as one. Keys are
// slash-separated and never start with a slash. Implementations are safe
// for concurrent use.
type Storage interface {
	// String describes the store as a URL, without any credentials.
	String() string

	// Create creates the bucket (or base directory). It returns nil when
	// the bucket already exists and belongs to the caller, so calling it
	// twice is not an error.
	Create(ctx context.Context) error

	// Put stores data under key, replacing an existing object atomically:
	// a reader sees the old or the new content, never a mix. data is read
	// from offset 0 to its end (its size is found by seeking); a driver may
	// read it more than once, to sign or to retry a request. A key ending
	// in "/" is a directory marker; file-system drivers create a
	// directory and ignore data.
	Put(ctx context.Context, key string, data io.ReadSeeker) error

	// Get returns a reader of the bytes of key from off, at most limit of
	// them, or to the end when limit < 0. A range that ends past the end of
	// the object is cut short at the end; an offset at or past the end is
	// an error on S3 (416 InvalidRange) and an empty reader on file
	// systems. The caller must Close the reader. A missing key is an error
	// wrapping ErrNotExist.
	Get(ctx context.Context, key string, off, limit int64) (io.ReadCloser, error)

	// Head returns the attributes of key, or an error wrapping ErrNotExist.
	Head(ctx context.Context, key string) (Object, error)

	// Delete removes key. Deleting a missing key is not an error. On file
	// systems, a key ending in "/" names a directory, which is removed
	// only if it is empty.
	Delete(ctx context.Context, key string) error

	// List returns up to opt.Limit objects whose keys start with
	// opt.Prefix and sort after opt.StartAfter, in byte order of their
	// keys. With a Delimiter, keys that contain it after the prefix are
	// rolled up into Prefixes. File-system drivers list directories as
	// keys ending in "/" with IsDir set.
	List(ctx context.Context, opt ListOptions) (*ListPage, error)

	// Close releases connections and other resources.
	Close() error
}

// Object is what Head and List tell about an object.
type Object struct {
	Key   string
	Size  int64
	Mtime time.Time
	IsDir bool
	// Mode, UID and GID are set by file-system drivers only.
	Mode     os.FileMode
	UID, GID int
	// StorageClass is set by object stores that report it.
	StorageClass string
}

// ListOptions select the keys a List call returns.
type ListOptions struct {
	Prefix     string
	StartAfter string
	Delimiter  string // "" or "/"
	Limit      int    // at most this many entries; <= 0 means 1000
}

// ListPage is one page of a listing.
type ListPage struct {
	Objects  []Object
	Prefixes []string // common prefixes, with a Delimiter
	// Truncated says that more keys follow; list again with StartAfter set
	// to Next.
	Truncated bool
	Next      string
}

// DefaultListLimit is the page size of List when none is given: what S3
// returns at most.
const DefaultListLimit = 1000

// MultipartUploader is implemented by stores that can upload one object in
// parts.
type MultipartUploader interface {
	// CreateMultipartUpload starts an upload of key.
	CreateMultipartUpload(ctx context.Context, key string) (*MultipartUpload, error)
	// UploadPart uploads part num (from 1) of an upload. Uploading the
	// same num again replaces that part.
	UploadPart(ctx context.Context, key, uploadID string, num int, data io.ReadSeeker) (Part, error)
	// CompleteUpload assembles the parts, in the order given, into key.
	CompleteUpload(ctx context.Context, key, uploadID string, parts []Part) error
	// AbortUpload discards an upload and its parts.
	AbortUpload(ctx context.Context, key, uploadID string) error
}

// MultipartUpload is an upload in progress.
type MultipartUpload struct {
	UploadID    string
	MinPartSize int64 // every part but the last must be at least this big
	MaxParts    int
}

// Part is an uploaded part.
type Part struct {
	Num  int
	Size int64
	ETag string
}

// FileSystem is implemented by stores that keep file attributes: owner,
// permissions and modification time.
type FileSystem interface {
	Chmod(ctx context.Context, key string, mode os.FileMode) error
	Chown(ctx context.Context, key string, uid, gid int) error
	Chtimes(ctx context.Context, key string, mtime time.Time) error
}

// Errors that callers test with errors.Is.
var (
	// ErrNotExist: the key does not exist. It is fs.ErrNotExist, so
	// os.IsNotExist-style checks work too.
	ErrNotExist = fs.ErrNotExist
	// ErrNotSupported: the store does not have this capability. Shown as
	// "not support", never as a failure.
	ErrNotSupported = errors.New("not supported")
	// ErrNoBucket: the bucket (or base directory) does not exist.
	ErrNoBucket = errors.New("bucket does not exist")
	// ErrThrottled: the store asked the client to slow down (HTTP 503
	// SlowDown or 429).
	ErrThrottled = errors.New("throttled")
	// ErrAccess: the credentials were refused or lack a permission.
	ErrAccess = errors.New("access denied")
)

// Error records a failed operation on a key, like fs.PathError.
type Error struct {
	Op  string // put, get, head, delete, list, create, ...
	Key string // may be empty (create, list of the whole store)
	Err error
}

func (e *Error) Error() string {
	if e.Key == "" {
		return e.Op + ": " + e.Err.Error()
	}
	return e.Op + " " + e.Key + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// notSupported is the error of a call on a capability the store lacks.
func notSupported(op, key string) error {
	return &Error{Op: op, Key: key, Err: ErrNotSupported}
}

// ConfigError is returned by Open when what it was given cannot work: a URL
// of the wrong form, an unknown option value, missing credentials. Nothing
// was contacted; the caller should fix its input.
type ConfigError struct{ msg string }

func (e *ConfigError) Error() string { return e.msg }

// ConfigErrorf returns a ConfigError reading format and args; drivers
// return it for input that cannot work.
func ConfigErrorf(format string, args ...any) error {
	return &ConfigError{msg: fmt.Sprintf(format, args...)}
}
