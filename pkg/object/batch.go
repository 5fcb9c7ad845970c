package object

import "context"

// MaxBatchDelete is the most keys one multi-object delete may name (S3's
// limit).
const MaxBatchDelete = 1000

// BatchDeleter is the capability of stores that delete several objects
// in one request (S3's DeleteObjects, POST ?delete).
type BatchDeleter interface {
	// DeleteKeys deletes up to MaxBatchDelete keys in one request. Keys
	// that do not exist are not an error; the first key the store could
	// not delete is, with how many it could not.
	DeleteKeys(ctx context.Context, keys []string) error
}

// AsBatchDeleter returns s's multi-object delete, or nil when s does not
// have it (a wrapper has it when the store below has it).
func AsBatchDeleter(s Storage) BatchDeleter {
	b, _ := capability[BatchDeleter](s)
	return b
}
