package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
)

// openPTY opens a pseudo-terminal of cols columns, raw (no "\n" made
// "\r\n"), and returns its two ends: what is written to tty is read from
// ptm.
func openPTY(t *testing.T, cols uint16) (ptm, tty *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		testenv.Unavailable(t, "no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ptm.Close() })
	if err := unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: cols}); err != nil {
		t.Fatalf("window size: %v", err)
	}
	if _, err := term.MakeRaw(int(tty.Fd())); err != nil {
		t.Fatalf("raw mode: %v", err)
	}
	return ptm, tty
}

// TestProgressBarPTY runs the binary with stderr on a pseudo-terminal of
// 80 columns and the result, as JSON, on a pipe: fsbench sees a terminal
// and its width by itself, and draws the timed phase's live bar and its
// last line within them; the last line's rate is the result's.
func TestProgressBarPTY(t *testing.T) {
	testenv.NeedsServer(t, "a timed phase that runs for a few seconds")
	ptm, tty := openPTY(t, 80)
	cmd := exec.Command(testenv.Binary(t), "bench", t.TempDir(), "-p", "2", "--rw", "randread", "--file-size", "8M",
		"--duration", "2s", "--json")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, tty
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close() // the child has its own: reading ends when it exits
	var screen bytes.Buffer
	if _, err := io.Copy(&screen, ptm); err != nil && !errors.Is(err, syscall.EIO) {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, screen.String())
	}
	s := screen.String()
	live := regexp.MustCompile(`\rrandread: +\d+% \[[=> ]+\] \[\d+s:\d+s\] \(\d+, [\d.]+ ops/s\)\x1b\[K`)
	last := regexp.MustCompile(`\rrandread: +100% \[=+\] \(\d+, ([\d.]+) ops/s\) in \d+s\x1b\[K\n`)
	if !live.MatchString(s) {
		t.Errorf("no live bar of the timed phase on the terminal:\n%q", s)
	}
	m := last.FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no last line of the timed phase on the terminal:\n%q", s)
	}
	for _, l := range regexp.MustCompile(`\r([^\r\n]*)\x1b\[K`).FindAllStringSubmatch(s, -1) {
		if len(l[1]) >= 80 {
			t.Errorf("a line of %d columns on a terminal of 80: %q", len(l[1]), l[1])
		}
	}
	r, err := report.ReadJSON(&out)
	if err != nil {
		t.Fatalf("stdout is not a result: %v", err)
	}
	for _, p := range r.Phases {
		if p.Title == "randread" && m[1] != formatRate(p.OpsPerSec) {
			t.Errorf("the last line says %s ops/s, the result %s", m[1], formatRate(p.OpsPerSec))
		}
	}
}
