// Package uring is a minimal io_uring for reads and writes at a queue
// depth: one ring per worker, set up with the kernel's system calls
// (io_uring_setup, io_uring_enter, io_uring_register) and the rings mapped
// into memory. It knows two operations, a read and a write of one buffer
// at an offset, with optional registered buffers; submission and
// completion are batched by the caller (Prep queues, Enter submits and
// waits, Reap takes the completions).
//
// A Ring belongs to one goroutine at a time, and one that New defers to
// one thread: the one that calls Start, which must stay the one that calls
// Enter (runtime.LockOSThread). It is not safe for concurrent use.
//
// It imports no package of fsbench's and knows nothing of files or phases:
// the caller owns the buffers and the offsets.
package uring

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel's constants (include/uapi/linux/io_uring.h).
const (
	opRead       = 22 // IORING_OP_READ
	opWrite      = 23 // IORING_OP_WRITE
	opReadFixed  = 4  // IORING_OP_READ_FIXED
	opWriteFixed = 5  // IORING_OP_WRITE_FIXED

	offSQRing = 0
	offCQRing = 0x8000000
	offSQEs   = 0x10000000

	setupCoopTaskrun = 1 << 8  // IORING_SETUP_COOP_TASKRUN (5.19)
	setupClamp       = 1 << 4  // IORING_SETUP_CLAMP
	setupRDisabled   = 1 << 6  // IORING_SETUP_R_DISABLED (5.10)
	setupSingle      = 1 << 12 // IORING_SETUP_SINGLE_ISSUER (6.0)
	setupDefer       = 1 << 13 // IORING_SETUP_DEFER_TASKRUN (6.1)

	enterGetEvents = 1 << 0 // IORING_ENTER_GETEVENTS
	enterExtArg    = 1 << 3 // IORING_ENTER_EXT_ARG (5.11)

	featExtArg = 1 << 8 // IORING_FEAT_EXT_ARG

	registerBuffers   = 0 // IORING_REGISTER_BUFFERS
	unregisterBuffers = 1
	registerEnable    = 12 // IORING_REGISTER_ENABLE_RINGS
)

type sqringOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqringOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

type params struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqringOffsets
	cqOff                                                                  cqringOffsets
}

type sqe struct {
	opcode      uint8
	flags       uint8
	ioprio      uint16
	fd          int32
	off         uint64
	addr        uint64
	len         uint32
	rwFlags     uint32
	userData    uint64
	bufIndex    uint16
	personality uint16
	spliceFdIn  int32
	addr3       uint64
	pad         uint64
}

type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

type getEventsArg struct {
	sigmask   uint64
	sigmaskSz uint32
	minWait   uint32
	ts        uint64
}

// Ring is one io_uring instance.
type Ring struct {
	fd       int
	sqMem    []byte
	cqMem    []byte
	sqeMem   []byte
	sqes     []sqe
	sqHead   *uint32
	sqTail   *uint32
	sqMask   uint32
	cqHead   *uint32
	cqTail   *uint32
	cqMask   uint32
	cqes     []cqe
	tail     uint32 // next SQE's index, ahead of *sqTail until Enter
	queued   uint32 // prepared, not yet submitted
	extArg   bool
	fixed    []byte // the registered buffer, if any
	features uint32
	hold     bool // untimed calls keep the thread's P (SetHold)
	stopped  bool // set up disabled, until Start
}

// NeedsStart reports whether the ring waits for Start.
func (r *Ring) NeedsStart() bool { return r.stopped }

// Start enables a ring that New set up disabled, making the calling thread
// its only submitter: the caller has locked its goroutine to that thread
// (runtime.LockOSThread) and calls Enter from it alone. Buffers are
// registered before. On any other ring it does nothing.
func (r *Ring) Start() error {
	if !r.stopped {
		return nil
	}
	_, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerEnable, 0, 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("io_uring: enable the ring: %w", errno)
	}
	r.stopped = false
	return nil
}

// ErrUnavailable wraps every reason io_uring cannot be set up.
var ErrUnavailable = errors.New("io_uring is not available")

// DisabledPath is the sysctl that switches io_uring off.
var disabledPath = "/proc/sys/kernel/io_uring_disabled"

// New sets up a ring with room for entries operations in flight. With
// deferred, where the kernel has it (6.1), the ring is for one submitting
// thread and runs its completions when that thread waits for them
// (SINGLE_ISSUER and DEFER_TASKRUN, as fio sets up its rings): it starts
// disabled, and Start, on the submitting thread, enables it.
//
// Deferring pays at depth and costs at depth 1. Writes that the kernel
// cannot do without blocking (every buffered write on tmpfs) go to its
// io-wq workers, and each of their completions woke the submitter: 4 KiB
// random writes on tmpfs at depth 32 and 64 ran at 0.48 to 0.83 of fio's.
// Deferred, the wakes come in batches; but at depth 1, where every
// completion is waited for anyway, deferring cut the same writes from 72
// to 24 thousand a second (benchmarks/records/fio.md).
func New(entries uint32, deferred bool) (*Ring, error) {
	// The flags to try, the most a kernel may refuse first: deferred
	// needs 6.1, cooperative task running 5.19.
	tries := []uint32{setupCoopTaskrun | setupClamp, setupClamp}
	if deferred {
		tries = append([]uint32{setupCoopTaskrun | setupClamp | setupRDisabled | setupSingle | setupDefer}, tries...)
	}
	var p params
	var fd int
	var err error
	for _, flags := range tries {
		p = params{flags: flags}
		if fd, err = setup(entries, &p); err != unix.EINVAL {
			break
		}
	}
	if err != nil {
		return nil, explain(err)
	}
	r := &Ring{fd: fd, features: p.features, extArg: p.features&featExtArg != 0, stopped: p.flags&setupRDisabled != 0}
	if err := r.mapRings(&p); err != nil {
		r.Close()
		return nil, fmt.Errorf("io_uring: map the rings: %w", err)
	}
	return r, nil
}

func setup(entries uint32, p *params) (int, error) {
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(p)), 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// explain turns io_uring_setup's failure into an error that says why,
// and what to do instead.
func explain(err error) error {
	const hint = "; use --ioengine sync"
	if !errors.Is(err, unix.EPERM) && !errors.Is(err, unix.ENOSYS) {
		return fmt.Errorf("%w: io_uring_setup: %v%s", ErrUnavailable, err, hint)
	}
	return fmt.Errorf("%w: %s%s", ErrUnavailable, why(err, readDisabled()), hint)
}

// readDisabled is the value of kernel.io_uring_disabled, or "" when the
// kernel has no such setting.
func readDisabled() string {
	b, err := os.ReadFile(disabledPath)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// why says why io_uring_setup failed with err (EPERM or ENOSYS), given the
// kernel.io_uring_disabled setting.
func why(err error, disabled string) string {
	switch {
	case disabled == "2":
		return "the kernel has it switched off (sysctl kernel.io_uring_disabled=2)"
	case disabled == "1" && errors.Is(err, unix.EPERM):
		return "the kernel allows it only to the group kernel.io_uring_group (sysctl kernel.io_uring_disabled=1)"
	case errors.Is(err, unix.ENOSYS):
		return "io_uring_setup is not implemented: the kernel is built without io_uring, or a seccomp profile blocks it"
	}
	return "io_uring_setup is not permitted: a seccomp profile blocks it (as Docker's default profile does)"
}

func (r *Ring) mapRings(p *params) error {
	sqLen := int(p.sqOff.array + p.sqEntries*4)
	cqLen := int(p.cqOff.cqes + p.cqEntries*uint32(unsafe.Sizeof(cqe{})))
	var err error
	prot, flags := unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE
	if r.sqMem, err = unix.Mmap(r.fd, offSQRing, sqLen, prot, flags); err != nil {
		return err
	}
	if r.cqMem, err = unix.Mmap(r.fd, offCQRing, cqLen, prot, flags); err != nil {
		return err
	}
	sqeLen := int(p.sqEntries) * int(unsafe.Sizeof(sqe{}))
	if r.sqeMem, err = unix.Mmap(r.fd, offSQEs, sqeLen, prot, flags); err != nil {
		return err
	}
	sq, cq := unsafe.Pointer(&r.sqMem[0]), unsafe.Pointer(&r.cqMem[0])
	r.sqHead = (*uint32)(unsafe.Add(sq, p.sqOff.head))
	r.sqTail = (*uint32)(unsafe.Add(sq, p.sqOff.tail))
	r.sqMask = *(*uint32)(unsafe.Add(sq, p.sqOff.ringMask))
	r.cqHead = (*uint32)(unsafe.Add(cq, p.cqOff.head))
	r.cqTail = (*uint32)(unsafe.Add(cq, p.cqOff.tail))
	r.cqMask = *(*uint32)(unsafe.Add(cq, p.cqOff.ringMask))
	r.sqes = unsafe.Slice((*sqe)(unsafe.Pointer(&r.sqeMem[0])), p.sqEntries)
	r.cqes = unsafe.Slice((*cqe)(unsafe.Add(cq, p.cqOff.cqes)), p.cqEntries)
	// SQE i always sits at slot i of the indirection array.
	array := unsafe.Slice((*uint32)(unsafe.Add(sq, p.sqOff.array)), p.sqEntries)
	for i := range array {
		array[i] = uint32(i)
	}
	r.tail = atomic.LoadUint32(r.sqTail)
	return nil
}

// Close releases the ring. Operations still in flight finish in the
// kernel; their buffers must stay untouched until they do, so the caller
// reaps everything it submitted first.
func (r *Ring) Close() error {
	for _, m := range [][]byte{r.sqeMem, r.cqMem, r.sqMem} {
		if m != nil {
			_ = unix.Munmap(m)
		}
	}
	r.sqeMem, r.cqMem, r.sqMem = nil, nil, nil
	if r.fd < 0 {
		return nil
	}
	err := unix.Close(r.fd)
	r.fd = -1
	return err
}

// RegisterBuffer registers buf with the kernel, which then pins its pages
// once instead of at every operation; operations on parts of it use the
// fixed opcodes. It returns false when the kernel refuses (a memory lock
// limit, say): the ring works all the same, without.
func (r *Ring) RegisterBuffer(buf []byte) bool {
	if len(buf) == 0 {
		return false
	}
	iov := unix.Iovec{Base: &buf[0]}
	iov.SetLen(len(buf))
	_, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerBuffers, uintptr(unsafe.Pointer(&iov)), 1, 0, 0)
	if errno != 0 {
		return false
	}
	r.fixed = buf
	return true
}

// Free is how many more operations can be prepared before Enter.
func (r *Ring) Free() int { return len(r.sqes) - int(r.tail-atomic.LoadUint32(r.sqHead)) }

// Prep queues a read (write false) or write of buf at off of fd, tagged
// with data, which its completion carries. It returns false when the
// submission queue is full. buf must stay untouched until the completion.
func (r *Ring) Prep(write bool, fd int, buf []byte, off int64, data uint64) bool {
	if r.Free() <= 0 {
		return false
	}
	s := &r.sqes[r.tail&r.sqMask]
	*s = sqe{fd: int32(fd), off: uint64(off), len: uint32(len(buf)), userData: data}
	s.opcode = opRead
	if write {
		s.opcode = opWrite
	}
	if len(buf) > 0 {
		s.addr = uint64(uintptr(unsafe.Pointer(&buf[0])))
		if r.within(buf) {
			s.opcode = opReadFixed
			if write {
				s.opcode = opWriteFixed
			}
		}
	}
	r.tail++
	r.queued++
	return true
}

// within reports whether buf lies inside the registered buffer.
func (r *Ring) within(buf []byte) bool {
	if r.fixed == nil {
		return false
	}
	lo := uintptr(unsafe.Pointer(&r.fixed[0]))
	p := uintptr(unsafe.Pointer(&buf[0]))
	return p >= lo && p+uintptr(len(buf)) <= lo+uintptr(len(r.fixed))
}

// SetHold makes Enter keep the calling thread's P of Go's scheduler in
// the calls that have no timeout, as a C program's thread would: the
// goroutine stays running while the kernel waits, so Go's scheduler has
// nothing to do around the call. Through the usual system call entry a
// blocking io_uring_enter costs about one more context switch per wait:
// at queue depth 1 on a local disk, 1.7 to 2.1 voluntary switches per
// read against fio's 1.0, most of them the runtime's monitor thread
// (sysmon) waking to watch the P in the system call; held, 1.0.
//
// Only for a goroutine that has a P to itself (GOMAXPROCS above the
// goroutines that hold one): a held P runs nothing else until the call
// returns. The wait for completions is interruptible, so the signal Go
// sends to stop the world (a garbage collection) or to preempt ends it
// early, and Enter returns as from any interrupted wait; timed waits
// always go through the usual entry.
func (r *Ring) SetHold(on bool) { r.hold = on }

// Holds reports whether SetHold is on.
func (r *Ring) Holds() bool { return r.hold }

// Enter submits what was prepared and waits until at least wait
// completions are ready, or until timeout has passed when timeout is more
// than zero (where the kernel supports that). An interrupted wait is
// simply over: the caller reaps what there is and asks again.
func (r *Ring) Enter(wait uint32, timeout time.Duration) error {
	if r.stopped {
		return errors.New("io_uring: the ring was not started")
	}
	atomic.StoreUint32(r.sqTail, r.tail)
	flags := uintptr(0)
	if wait > 0 {
		flags |= enterGetEvents
	}
	var n uintptr
	var errno unix.Errno
	switch {
	case wait > 0 && timeout > 0 && r.extArg:
		ts := unix.NsecToTimespec(int64(timeout))
		arg := getEventsArg{ts: uint64(uintptr(unsafe.Pointer(&ts)))}
		n, _, errno = unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(r.queued), uintptr(wait),
			flags|enterExtArg, uintptr(unsafe.Pointer(&arg)), unsafe.Sizeof(arg))
	case r.hold && timeout <= 0:
		n, _, errno = unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(r.queued), uintptr(wait), flags, 0, 0)
	default:
		n, _, errno = unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(r.queued), uintptr(wait), flags, 0, 0)
	}
	if errno == 0 {
		r.queued -= min(uint32(n), r.queued)
	}
	switch errno {
	case 0, unix.EINTR, unix.ETIME, unix.EAGAIN, unix.EBUSY:
		return nil
	}
	return fmt.Errorf("io_uring_enter: %w", errno)
}

// Reap calls fn with each completion ready (its data and result: bytes
// moved, or a negated errno) and returns how many there were.
func (r *Ring) Reap(fn func(data uint64, res int32)) int {
	head := atomic.LoadUint32(r.cqHead)
	tail := atomic.LoadUint32(r.cqTail)
	n := 0
	for ; head != tail; head++ {
		c := &r.cqes[head&r.cqMask]
		data, res := c.userData, c.res
		// Hand the slot back before fn, which may prepare more.
		atomic.StoreUint32(r.cqHead, head+1)
		fn(data, res)
		n++
	}
	return n
}
