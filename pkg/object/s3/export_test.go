package s3

import (
	"github.com/fsbench/fsbench/pkg/object"
)

// DirectPath reports whether s (an S3 store, perhaps behind a prefix)
// sends its object requests past the SDK's middleware.
func DirectPath(s object.Storage) bool {
	for {
		switch v := s.(type) {
		case *s3Store:
			return v.direct != nil
		case object.Wrapper:
			s = v.Unwrap()
		default:
			return false
		}
	}
}

// SDKPath makes s (an S3 store, perhaps behind a prefix) send every
// request through the SDK, as before the direct path, for comparisons.
func SDKPath(s object.Storage) {
	for {
		switch v := s.(type) {
		case *s3Store:
			v.direct = nil
			return
		case object.Wrapper:
			s = v.Unwrap()
		default:
			return
		}
	}
}
