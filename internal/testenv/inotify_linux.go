package testenv

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// WatchOpens watches dir for opens and reads of it and of the files in it
// (inotify); the check it returns fails the test if any happened since,
// naming them. The kernel queues the events as the calls are made, so a
// check after the calls sees them all.
func WatchOpens(t testing.TB, dir string) (check func()) {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_OPEN|unix.IN_ACCESS|unix.IN_CLOSE_NOWRITE); err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		var buf [4096]byte
		n, err := unix.Read(fd, buf[:])
		if err == unix.EAGAIN {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		var events []string
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			events = append(events, fmt.Sprintf("%q(%#x)", strings.TrimRight(string(name), "\x00"), ev.Mask))
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
		t.Errorf("%s or a file in it was opened or read: %v", dir, events)
	}
}

// Flip exchanges the entries a and b (renameat2 RENAME_EXCHANGE) again
// and again until stop is called, which waits for the last exchange to
// end. The test is skipped where the file system cannot exchange.
func Flip(t testing.TB, a, b string) (stop func()) {
	t.Helper()
	if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
		t.Skipf("rename exchange: %v", err)
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-done:
				return
			default:
				_ = unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}
