package profile

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Open tells a mount point, a log file, a followed file and standard input
// apart, and says which mistakes are the user's.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	log := filepath.Join(dir, "a.log")
	os.WriteFile(log, []byte("line\n"), 0o644)
	gz := filepath.Join(dir, "x.gz")
	os.WriteFile(gz, []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0}, 0o644)

	for _, tt := range []struct {
		in   Input
		want string
	}{
		{Input{Target: filepath.Join(dir, "missing.log")}, "no such file"},
		{Input{Target: dir, Interval: time.Second}, "--access-log"},
		{Input{Target: gz, Follow: true, Poll: time.Millisecond}, "gzip-compressed"},
	} {
		_, err := Open(ctx, tt.in)
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Open(%+v) = %v; want a bad-input error with %q", tt.in, err, tt.want)
		}
	}

	for _, tt := range []struct {
		in     Input
		source string
		live   bool
	}{
		{Input{Target: log}, log, false},
		{Input{Target: "-", Stdin: strings.NewReader("line\n")}, "stdin", false},
		{Input{Target: "-", Follow: true, Stdin: strings.NewReader("line\n")}, "stdin", true},
	} {
		o, err := Open(ctx, tt.in)
		if err != nil {
			t.Fatalf("Open(%+v): %v", tt.in, err)
		}
		data, err := io.ReadAll(o)
		o.Close()
		if err != nil || string(data) != "line\n" || o.Source != tt.source || o.Live != tt.live {
			t.Errorf("Open(%+v) = %q (%v), source %q live %v; want %q live %v", tt.in, data, err, o.Source, o.Live, tt.source, tt.live)
		}
	}
}
