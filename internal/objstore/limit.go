package objstore

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// limitError is the end of a time limit the run set itself: what it
// bounds and how long it is.
type limitError struct {
	what string
	d    time.Duration
}

func (e *limitError) Error() string { return fmt.Sprintf("%s, %v, ran out", e.what, e.d) }

// WithLimit is ctx bounded to d; an error that the end of the bound cut
// short is then named by Named.
func WithLimit(ctx context.Context, d time.Duration, what string) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, d, &limitError{what, d})
}

// Named adds to err, when ctx's own limit (from WithLimit) has run out,
// which limit that was: "context deadline exceeded" alone does not say.
func Named(ctx context.Context, err error) error {
	var le *limitError
	if err == nil || !errors.As(context.Cause(ctx), &le) {
		return err
	}
	return fmt.Errorf("%w (%v)", err, le)
}
