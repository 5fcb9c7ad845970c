package objstore

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// An error cut short by a limit the run set names that limit; one cut
// short by the user (the parent cancelled) is left as it is.
func TestNamedLimit(t *testing.T) {
	ctx, cancel := WithLimit(context.Background(), time.Millisecond, "the check's time limit")
	defer cancel()
	<-ctx.Done()
	err := Named(ctx, fmt.Errorf("put k: %w", context.DeadlineExceeded))
	if want := "put k: context deadline exceeded (the check's time limit, 1ms, ran out)"; err.Error() != want || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%v, want %q", err, want)
	}
	parent, stop := context.WithCancel(context.Background())
	ctx, cancel = WithLimit(parent, time.Hour, "the check's time limit")
	defer cancel()
	stop()
	if err := Named(ctx, context.Canceled); err != context.Canceled {
		t.Errorf("interrupted: %v", err)
	}
	if Named(ctx, nil) != nil {
		t.Error("no error became one")
	}
}
