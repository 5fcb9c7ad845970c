package profile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// ErrBadInput is wrapped by the errors of Open that the user fixes by
// naming another input or other options.
var ErrBadInput = errors.New("bad input")

type badInput struct{ err error }

func (b *badInput) Error() string   { return b.err.Error() }
func (b *badInput) Unwrap() []error { return []error{ErrBadInput, b.err} }

func badInputf(format string, args ...any) error {
	return &badInput{fmt.Errorf(format, args...)}
}

// Input names what to profile.
type Input struct {
	// Target is a JuiceFS mount point (its access log is read live), a
	// log file (plain or gzip-compressed) or "-" for Stdin.
	Target string
	// Follow reads a log file or Stdin live as it grows, like tail -f.
	Follow bool
	// Interval is the window of the profile; 0 (a summary) does not fit a
	// live input.
	Interval time.Duration
	Stdin    io.Reader
	// Poll is how often a followed file is checked for growth.
	Poll time.Duration
}

// Opened is an open input: what to read, its name for headers, and
// whether it is live (read as it grows) or replayed.
type Opened struct {
	io.ReadCloser
	Source string
	Live   bool
}

// Open opens the input in's target names: a directory is a mount point
// whose access log is read live; "-" is in.Stdin; any other name is a log
// file, replayed, or read live with in.Follow.
func Open(ctx context.Context, in Input) (*Opened, error) {
	if in.Target == "-" {
		return openStdin(in)
	}
	st, err := os.Stat(in.Target)
	if err != nil {
		return nil, &badInput{fmt.Errorf("profile %w", err)}
	}
	if st.IsDir() {
		return openMount(in)
	}
	if in.Follow {
		if isGzip(in.Target) {
			return nil, badInputf("--follow: %s is gzip-compressed; a compressed log cannot be followed", in.Target)
		}
		r, err := Follow(ctx, in.Target, in.Poll)
		if err != nil {
			return nil, fmt.Errorf("follow %w", err)
		}
		return &Opened{r, in.Target, true}, nil
	}
	return openFile(in.Target)
}

func openStdin(in Input) (*Opened, error) {
	if in.Follow {
		return &Opened{io.NopCloser(in.Stdin), "stdin", true}, nil
	}
	r, err := Decompress(in.Stdin)
	if err != nil {
		return nil, fmt.Errorf("read stdin: %w", err)
	}
	return &Opened{io.NopCloser(r), "stdin", false}, nil
}

func openMount(in Input) (*Opened, error) {
	path, err := MountLog(in.Target)
	if errors.Is(err, ErrNotJuiceFS) {
		return nil, badInputf("%v; to profile any file system, log a benchmark: fsbench bench %s --access-log FILE, then fsbench profile FILE", err, in.Target)
	}
	if err != nil {
		return nil, err
	}
	if in.Interval == 0 {
		return nil, badInputf("--interval 0 is for log files: the access log of mount %s never ends", in.Target)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open access log: %w", err)
	}
	return &Opened{f, path, true}, nil
}

func openFile(path string) (*Opened, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &badInput{fmt.Errorf("open log: %w", err)} // as a missing one
	}
	r, err := Decompress(f)
	if err != nil {
		f.Close()
		return nil, &badInput{fmt.Errorf("read %s: %w", path, err)}
	}
	rc := struct {
		io.Reader
		io.Closer
	}{r, f}
	return &Opened{rc, path, false}, nil
}

func isGzip(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [2]byte
	n, _ := io.ReadFull(f, b[:])
	return n == 2 && b[0] == 0x1f && b[1] == 0x8b
}
