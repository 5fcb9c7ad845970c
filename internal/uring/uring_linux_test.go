package uring

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// roundTrip writes n blocks at depth through ring r, in a shuffled order,
// reads them back the same way and checks every byte.
func roundTrip(t *testing.T, r *Ring, arena []byte, depth, n, bs int, flags int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f")
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|flags, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	order := make([]int, n)
	for i := range order {
		order[i] = (i*7 + 3) % n // n is not a multiple of 7
	}
	fill := func(b []byte, blk int) {
		for i := range b {
			b[i] = byte(blk*31 + i*7)
		}
	}
	for _, write := range []bool{true, false} {
		owner := make([]int, depth) // block each slot holds
		free := make([]int, 0, depth)
		for i := range depth {
			free = append(free, i)
		}
		next, done := 0, 0
		for done < n {
			for next < n && len(free) > 0 {
				slot := free[len(free)-1]
				free = free[:len(free)-1]
				b := arena[slot*bs : (slot+1)*bs]
				if write {
					fill(b, order[next])
				} else {
					clear(b)
				}
				owner[slot] = order[next]
				if !r.Prep(write, fd, b, int64(order[next]*bs), uint64(slot)) {
					t.Fatalf("queue full with %d free slots", len(free)+1)
				}
				next++
			}
			if err := r.Enter(1, 0); err != nil {
				t.Fatal(err)
			}
			r.Reap(func(data uint64, res int32) {
				slot := int(data)
				if res != int32(bs) {
					t.Fatalf("write %v block %d: result %d, want %d", write, owner[slot], res, bs)
				}
				if !write {
					want := make([]byte, bs)
					fill(want, owner[slot])
					if !bytes.Equal(arena[slot*bs:(slot+1)*bs], want) {
						t.Fatalf("block %d read back differs", owner[slot])
					}
				}
				free = append(free, slot)
				done++
			})
		}
	}
}

func TestRoundTrip(t *testing.T) {
	const depth, bs = 16, 4096
	runtime.LockOSThread() // the rings' one submitter
	defer runtime.UnlockOSThread()
	for i, fixed := range []bool{false, true, false, true} {
		r, err := New(depth, i >= 2)
		if err != nil {
			t.Fatal(err)
		}
		arena, err := unix.Mmap(-1, 0, depth*bs, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			t.Fatal(err)
		}
		if fixed && !r.RegisterBuffer(arena) {
			t.Fatal("register buffer refused")
		}
		if err := r.Start(); err != nil {
			t.Fatal(err)
		}
		// O_DIRECT where the file system takes it (not tmpfs).
		roundTrip(t, r, arena, depth, 1000, bs, 0)
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		unix.Munmap(arena)
	}
}

// TestOneSubmitter: on a kernel with DEFER_TASKRUN (6.1) a deferred ring
// starts disabled, refuses Enter until Start, and then takes it only from the
// thread that started it.
func TestOneSubmitter(t *testing.T) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		t.Fatal(err)
	}
	var major, minor int
	fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &major, &minor)
	plain, err := New(4, false)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if plain.NeedsStart() {
		t.Error("a ring not deferred waits for Start")
	}
	r, err := New(4, true)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if want := major > 6 || major == 6 && minor >= 1; r.NeedsStart() != want {
		t.Fatalf("kernel %d.%d: NeedsStart %v, want %v", major, minor, r.NeedsStart(), want)
	}
	if !r.NeedsStart() {
		return
	}
	if err := r.Enter(0, 0); err == nil {
		t.Error("Enter before Start: no error")
	}
	started := make(chan error)
	go func() {
		runtime.LockOSThread() // ends with the goroutine, and its thread with it
		started <- r.Start()
	}()
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := r.Enter(1, 0); !errors.Is(err, unix.EEXIST) {
		t.Errorf("Enter from another thread than the submitter: %v, want EEXIST", err)
	}
}

func TestWhy(t *testing.T) {
	for _, c := range []struct {
		err      error
		disabled string
		want     string
	}{
		{unix.EPERM, "2", "kernel.io_uring_disabled=2"},
		{unix.EPERM, "1", "io_uring_group"},
		{unix.EPERM, "0", "seccomp"},
		{unix.EPERM, "", "seccomp"},
		{unix.ENOSYS, "0", "not implemented"},
	} {
		if got := why(c.err, c.disabled); !strings.Contains(got, c.want) {
			t.Errorf("why(%v, %q) = %q, want it to mention %q", c.err, c.disabled, got, c.want)
		}
	}
	err := explain(unix.EPERM)
	if !errors.Is(err, ErrUnavailable) || !strings.HasSuffix(err.Error(), "; use --ioengine sync") || strings.Contains(err.Error(), "\n") {
		t.Errorf("explain: %q", err)
	}
}

// A held wait (SetHold) keeps its P while the kernel waits: Go counts
// its goroutine as running Go code, where the usual entry counts it in a
// system call. It does not keep the world from stopping: the signal Go
// sends to stop it for a garbage collection ends the wait. The read
// waited for, from an empty pipe, completes only after the collection. A
// wait that kept the world from stopping would hang the collection, and
// the test with it (to go test's -timeout): while the world is stopping,
// no timer of this process fires.
func TestHeldWait(t *testing.T) {
	for _, hold := range []bool{true, false} {
		base := notInGo()
		w := startPipeWait(t, hold)
		if got, want := notInGo()-base, map[bool]uint64{true: 0, false: 1}[hold]; got != want {
			t.Errorf("hold %v: %d more goroutines outside Go code during the wait, want %d", hold, got, want)
		}
		runtime.GC()
		select {
		case res := <-w.done:
			t.Fatalf("hold %v: the wait ended with result %d before anything was written", hold, res)
		default:
		}
		unix.Write(w.pipe[1], []byte{1})
		if res := <-w.done; res != 1 {
			t.Errorf("hold %v: read from the pipe: result %d, want 1", hold, res)
		}
	}
}

type pipeWait struct {
	pipe [2]int
	done chan int32
}

// startPipeWait starts a goroutine that reads a byte from an empty pipe
// through a ring and waits for the completion, and returns once that
// goroutine's thread is in io_uring_enter.
func startPipeWait(t *testing.T, hold bool) *pipeWait {
	w := &pipeWait{done: make(chan int32, 1)}
	if err := unix.Pipe(w.pipe[:]); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(w.pipe[0]); unix.Close(w.pipe[1]) })
	r, err := New(1, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	r.SetHold(hold)
	buf := make([]byte, 1)
	r.Prep(false, w.pipe[0], buf, -1, 7)
	tid := make(chan int)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := r.Start(); err != nil {
			t.Error(err)
		}
		tid <- unix.Gettid()
		res := int32(-1)
		for {
			if err := r.Enter(1, 0); err != nil {
				t.Error(err)
				break
			}
			if r.Reap(func(_ uint64, got int32) { res = got }) > 0 {
				break
			}
		}
		w.done <- res
	}()
	inEnter := fmt.Sprintf("%d ", unix.SYS_IO_URING_ENTER)
	sysfile := fmt.Sprintf("/proc/self/task/%d/syscall", <-tid)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		if b, _ := os.ReadFile(sysfile); strings.HasPrefix(string(b), inEnter) {
			return w
		}
		if time.Now().After(deadline) {
			t.Fatal("the waiting thread never entered io_uring_enter")
		}
	}
}

// notInGo is how many goroutines Go counts as outside Go code (in system
// calls).
func notInGo() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines/not-in-go:goroutines"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
