package profile

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe to read while Run writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls cond for up to 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestFollow appends to a log while a live profile follows it: what was
// there before is not counted, lines written in two pieces are counted
// once, damaged lines are skipped, truncation starts over, and
// cancellation ends the run.
func TestFollow(t *testing.T) {
	sample := strings.SplitAfter(string(readSample(t)), "\n")
	path := filepath.Join(t.TempDir(), "access.log")
	if err := os.WriteFile(path, []byte(strings.Join(sample[:100], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in, err := Follow(ctx, path, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, in, &out, Options{Live: true, Interval: 100 * time.Millisecond, JSON: true, Source: path})
	}()
	count := func() (entries, skipped int64, ws []Window) {
		ws = windows(t, out.String())
		for _, w := range ws {
			entries += w.Entries
			skipped += w.Skipped.Malformed
		}
		return
	}
	waitFor(t, "the first window", func() bool { return len(windows(t, out.String())) > 0 })

	// 200 lines, the 101st written in two pieces with a pause between.
	appendTo(t, path, strings.Join(sample[100:200], ""))
	half := len(sample[200]) / 2
	appendTo(t, path, sample[200][:half])
	time.Sleep(150 * time.Millisecond)
	appendTo(t, path, sample[200][half:]+strings.Join(sample[201:300], "")+"garbage\n")
	waitFor(t, "200 entries", func() bool { e, s, _ := count(); return e == 200 && s == 1 })

	// Truncate and write again: the follower starts over.
	if err := os.WriteFile(path, []byte(strings.Join(sample[300:310], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "210 entries", func() bool { e, _, _ := count(); return e == 210 })

	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop when cancelled")
	}
	_, _, ws := count()
	for _, w := range ws {
		if w.Mode != ModeLive || w.Source != path || w.End.Before(w.Start) {
			t.Errorf("window %+v", w)
		}
	}
}

// TestLiveStreamEnds: a live profile of a stream (stdin) ends when the
// stream does, with a last window.
func TestLiveStreamEnds(t *testing.T) {
	var out bytes.Buffer
	err := Run(context.Background(), bytes.NewReader(readSample(t)), &out, Options{Live: true, Interval: time.Hour, JSON: true})
	if err != nil {
		t.Fatal(err)
	}
	ws := windows(t, out.String())
	if len(ws) != 1 || ws[0].Entries != 550 || !ws[0].Last {
		t.Fatalf("windows = %+v", ws)
	}
	if err := Run(context.Background(), strings.NewReader(""), &out, Options{Live: true}); err == nil {
		t.Error("live with interval 0 accepted")
	}
}

func TestMountLog(t *testing.T) {
	if _, err := MountLog(t.TempDir()); !errors.Is(err, ErrNotJuiceFS) {
		t.Errorf("MountLog(tempdir) = %v, want ErrNotJuiceFS", err)
	}
}

// TestSummaryInterrupted: a summary of a stream that does not end (a
// mount's access log piped in) shows what it read when cancelled.
func TestSummaryInterrupted(t *testing.T) {
	for _, procs := range []int{1, 2} {
		old := runtime.GOMAXPROCS(procs)
		pr, pw := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		var out syncBuffer
		done := make(chan error, 1)
		go func() { done <- Run(ctx, pr, &out, Options{JSON: true, Location: time.UTC}) }()
		pw.Write(readSample(t))
		time.Sleep(100 * time.Millisecond)
		cancel()
		err := <-done
		pw.Close()
		runtime.GOMAXPROCS(old)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run = %v", err)
		}
		ws := windows(t, out.String())
		if len(ws) != 1 || !ws[0].Interrupted || ws[0].Entries != 550 {
			t.Fatalf("GOMAXPROCS %d: windows %+v", procs, ws)
		}
	}
}
