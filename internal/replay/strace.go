package replay

import (
	"bytes"
	"math"
	"path"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// FormatStrace is the output of strace -f -ttt -T -y:
//
//	3760  1795570281.950820 openat(4</tmp/out>, "./a.txt", O_WRONLY|O_CREAT|O_EXCL, 0600) = 5</tmp/out/a.txt> <0.000059>
//
// the thread id, the start time, the call with its arguments (file
// descriptors followed by their paths), the result and the time spent.
const FormatStrace = "strace"

// strc is the state of an strace log being read.
type strc struct {
	f       *fsb
	names   map[string]*callKind // by call name
	last    *callKind            // kind's last answer
	args    []string             // the arguments of the call in progress
	buf     []byte               // a path being joined
	fds     map[uint64]*stFD     // by fdKey
	pending map[uint32][]byte    // a thread's unfinished call
	// cwd is each process's working directory, as its calls showed it
	// last (AT_FDCWD</w>, chdir, fchdir, or its parent's at its fork):
	// what a relative path of open, mkdir, rename, ... is below.
	// cwdPID and lastCwd are the last one set.
	cwd     map[uint32]string
	cwdPID  uint32
	lastCwd string
}

// fdKey is the key in fds of a thread's descriptor.
func fdKey(pid uint32, fd int) uint64 { return uint64(pid)<<32 | uint64(uint32(fd)) }

// stFD is an open file descriptor of the recording: its handle and the
// file position that read and write use.
type stFD struct {
	h    int32
	path string
	pos  int64
	// dups is how many more descriptors share it (dup2, fcntl's
	// F_DUPFD): the close of all but the last is a flush.
	dups int32
}

func newStrace(f *fsb) *strc {
	return &strc{f: f, fds: map[uint64]*stFD{}, pending: map[uint32][]byte{}, names: map[string]*callKind{},
		cwd: map[uint32]string{}}
}

// call is one parsed system call.
type call struct {
	pid   uint32
	start int64 // ns since the epoch
	name  string
	kind  *callKind // what the replay does of calls of the name
	args  []string
	ret   string // the result, with its path: "5</tmp/out/a.txt>"
	errno uint16
	lat   time.Duration
}

// parseStrace reads one line; ok is false for lines that are not a
// complete call (a signal, an exit, an unfinished call kept for its
// resumption). The call's arguments and result are strings over the
// line's bytes, valid while the log is: what keeps one copies it.
func (s *strc) parseStrace(line []byte) (c call, ok, bad bool) {
	pid, start, at, ok := straceHead(line)
	if !ok {
		return c, false, true
	}
	c.pid, c.start = pid, start
	body := line[at:]
	if bytes.HasPrefix(body, []byte("+++")) || bytes.HasPrefix(body, []byte("---")) {
		return c, false, false
	}
	if bytes.HasSuffix(body, []byte(unfinished)) {
		s.pending[c.pid] = append([]byte(nil), body[:len(body)-len(unfinished)]...)
		return c, false, false
	}
	if bytes.HasPrefix(body, []byte("<... ")) {
		k := bytes.Index(body, []byte(" resumed>"))
		head, have := s.pending[c.pid]
		if k < 0 || !have {
			return c, false, true
		}
		delete(s.pending, c.pid)
		body = append(head, body[k+len(" resumed>"):]...)
	}
	return c, s.parseCall(body, &c), false
}

// parseCall reads "name(args) = ret <lat>".
func (s *strc) parseCall(body []byte, c *call) bool {
	open, eq, ret, lt, lat, ok := callSpans(body)
	if !ok {
		return false
	}
	s.fill(c, body[:open], body[ret:lt], lat)
	if c.kind.args {
		s.args = splitArgs(s.args[:0], str(body[open+1:eq]))
		c.args = s.args
	}
	return true
}

// callSpans finds the parts of "name(args) = ret <lat>": the name is
// body[:open], the arguments body[open+1:eq], the result body[ret:lt].
// strace pads a short call with spaces before its " = " (to column 40):
// "rmdir(\"d/e\")    = 0 <0.000287>".
func callSpans(body []byte) (open, eq, ret, lt int, lat time.Duration, ok bool) {
	n := len(body)
	if n == 0 || body[n-1] != '>' {
		return 0, 0, 0, 0, 0, false
	}
	open = bytes.IndexByte(body, '(')
	lt = bytes.LastIndexByte(body[:n-1], '<') - 1 // no '<' in a latency
	if open <= 0 || lt < open || body[lt] != ' ' {
		return 0, 0, 0, 0, 0, false
	}
	eq = lastIndex(body[:lt], " = ")
	if eq <= open || lt < eq+3 {
		return 0, 0, 0, 0, 0, false
	}
	ret = eq + 3
	for eq--; eq > open && body[eq] == ' '; eq-- {
	}
	if body[eq] != ')' {
		return 0, 0, 0, 0, 0, false
	}
	lat, ok = seconds(body[lt+2 : n-1])
	return open, eq, ret, lt, lat, ok
}

// fill sets the call's name, result and errno from their parts of the
// line; its arguments are the caller's to set, when the replay reads
// them (kind.args).
func (s *strc) fill(c *call, name, ret []byte, lat time.Duration) {
	c.lat = lat
	c.kind = s.kind(name)
	c.name = c.kind.name
	r := str(ret)
	if strings.HasPrefix(r, "-1 ") {
		f := strings.Fields(r)
		c.errno = errOther
		if len(f) > 1 {
			if e, ok := errnoNames[f[1]]; ok {
				c.errno = e
			}
		}
		r = "-1"
	}
	c.ret = r
}

// fdPath reads "5</tmp/out/a.txt>" (or "AT_FDCWD</tmp>"): the number
// (-100 for AT_FDCWD) and the path, cleaned: a path that climbs with ".."
// stays below the run directory. A descriptor of a file removed while it
// is open, "5</tmp/out/a.txt>(deleted)", is read as fdDeleted does.
func fdPath(a string) (int, string, bool) {
	fd, p, _, ok := fdDeleted(a)
	return fd, p, ok
}

// fdDeleted is fdPath, and whether the descriptor's file was removed (or
// never had a name: O_TMPFILE's).
func fdDeleted(a string) (int, string, bool, bool) {
	a, deleted := strings.CutSuffix(a, "(deleted)")
	i := strings.IndexByte(a, '<')
	if i < 0 || !strings.HasSuffix(a, ">") {
		return 0, "", false, false
	}
	p := a[i+1 : len(a)-1]
	if strings.HasPrefix(p, "/") {
		p = path.Clean(p) // the kernel's paths are clean: no copy
	}
	if a[:i] == "AT_FDCWD" {
		return unix.AT_FDCWD, p, deleted, true
	}
	n, ok := integer(a[:i])
	return int(n), p, deleted, ok
}

// quoted reads a string argument.
func quoted(a string) (string, bool) {
	a = strings.TrimSuffix(a, "...")
	v, err := strconv.Unquote(a)
	return v, err == nil
}

// under resolves a path argument against its directory argument. The
// join is made in buf, and path.Clean keeps a clean path as it is: the
// result may be a string over buf, valid until its next use.
func under(buf *[]byte, dir, p string) string {
	if strings.HasPrefix(p, "/") {
		return path.Clean(p)
	}
	if dir == "" {
		return path.Clean(p)
	}
	*buf = append(append(append((*buf)[:0], dir...), '/'), p...)
	return path.Clean(str(*buf))
}

// replayable reports whether a path is a file of the workload: not a
// pipe, socket or the like, nor under /proc, /sys or /dev.
func replayable(p string) bool {
	return strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "/proc/") && !strings.HasPrefix(p, "/sys/") &&
		!strings.HasPrefix(p, "/dev/") && p != "/dev" && p != "/proc" && p != "/sys"
}

// pathArg is the path a call names: argument i, relative to the
// directory descriptor in argument i-1 when dirfd is set.
func (s *strc) pathArg(c *call, i int, dirfd bool) (string, bool) {
	if i >= len(c.args) {
		return "", false
	}
	p, ok := quoted(c.args[i])
	if !ok {
		return "", false
	}
	dir := "/"
	if dirfd {
		fd, d, ok := fdPath(c.args[i-1])
		if !ok {
			return "", false
		}
		dir = d
		if fd == unix.AT_FDCWD {
			s.setCwd(c.pid, d)
		}
	} else if !strings.HasPrefix(p, "/") {
		dir = s.cwdOf(c.pid)
	}
	if p == "" { // AT_EMPTY_PATH: the descriptor itself
		return path.Clean(dir), true
	}
	return under(&s.buf, dir, p), true
}

type pathCall struct {
	arg   int
	dirfd bool
	act   action
}

// pathCalls are the calls on a path: the argument of the path, whether a
// directory descriptor precedes it, and the replay's action.
var pathCalls = map[string]pathCall{
	"open": {0, false, actOpen}, "creat": {0, false, actOpen}, "openat": {1, true, actOpen},
	"stat": {0, false, actStat}, "lstat": {0, false, actStat}, "newfstatat": {1, true, actStat},
	"fstatat64": {1, true, actStat}, "statx": {1, true, actStat},
	"access": {0, false, actAccess}, "faccessat": {1, true, actAccess}, "faccessat2": {1, true, actAccess},
	"statfs": {0, false, actStatfs},
	"unlink": {0, false, actUnlink}, "unlinkat": {1, true, actUnlink}, "rmdir": {0, false, actRmdir},
	"mkdir": {0, false, actMkdir}, "mkdirat": {1, true, actMkdir},
	"rename": {0, false, actRename}, "renameat": {1, true, actRename}, "renameat2": {1, true, actRename},
	"truncate": {0, false, actTruncate},
}

// fdCalls are the calls on a file descriptor.
var fdCalls = map[string]action{
	"read": actRead, "write": actWrite, "pread64": actRead, "pwrite64": actWrite,
	"close": actClose, "fsync": actFsync, "fdatasync": actFsync, "getdents64": actReadDir, "fstat": actStat,
	"ftruncate": actTruncate,
}

// add adds one call; false when it is not one the replay performs (or a
// call on something that is not a file of the workload: virtual is then
// set).
func (s *strc) add(c *call, p *pending) (added, virtual bool) {
	if spec, ok := c.kind.path, c.kind.onPath; ok {
		pth, ok := s.pathArg(c, spec.arg, spec.dirfd)
		if !ok {
			return false, false
		}
		if !replayable(pth) {
			return false, true
		}
		return s.onPath(c, p, spec.act, pth), false
	}
	act, ok := c.kind.act, c.kind.onFD
	if c.kind.follow != followNone {
		s.follow(c)
	}
	if !ok || len(c.args) == 0 {
		return false, false
	}
	fd, pth, deleted, ok := fdDeleted(c.args[0])
	if !ok || !replayable(pth) {
		return false, ok
	}
	if deleted && s.fds[fdKey(c.pid, fd)] == nil {
		return false, true // a file removed before the recording: nothing to replay it on
	}
	return s.onFD(c, p, act, fd, pth, deleted), false
}

// integer reads a decimal number as strconv.ParseInt does: num's, and
// what num does not read (a sign) through ParseInt.
func integer(a string) (int64, bool) {
	if v, ok := num(a); ok && v <= math.MaxInt64 {
		return int64(v), true
	}
	v, err := strconv.ParseInt(a, 10, 64)
	return v, err == nil
}

// errnoNames maps errno names (ENOENT) to their values.
var errnoNames = func() map[string]uint16 {
	m := map[string]uint16{}
	for e := unix.Errno(1); e < 256; e++ {
		if n := unix.ErrnoName(e); n != "" {
			m[n] = uint16(e)
		}
	}
	return m
}()

// stFlags reads open's flags, "O_WRONLY|O_CREAT|O_EXCL", keeping those
// that say how the file is used.
func stFlags(a string) int32 {
	var v int32
	for {
		f, rest, more := strings.Cut(a, "|")
		v |= openFlag(f)
		if !more {
			return v
		}
		a = rest
	}
}

// openFlag is the value of an open(2) flag that says how a file is used,
// by name; 0 for the others.
func openFlag(name string) int32 {
	switch name {
	case "O_WRONLY":
		return unix.O_WRONLY
	case "O_RDWR":
		return unix.O_RDWR
	case "O_CREAT":
		return unix.O_CREAT
	case "O_EXCL":
		return unix.O_EXCL
	case "O_TRUNC":
		return unix.O_TRUNC
	case "O_APPEND":
		return unix.O_APPEND
	case "O_DIRECTORY":
		return unix.O_DIRECTORY
	case "O_NOFOLLOW":
		return unix.O_NOFOLLOW
	case "O_PATH":
		return unix.O_PATH
	case "O_TMPFILE": // __O_TMPFILE|O_DIRECTORY: an unnamed file in the directory
		return unix.O_TMPFILE
	}
	return 0
}

// onPath adds a call on a path.
func (s *strc) onPath(c *call, p *pending, act action, pth string) bool {
	spec := c.kind.path
	b := s.f.b
	if _, resolved, deleted, ok := fdDeleted(c.ret); act == actOpen && ok && !deleted && replayable(resolved) {
		pth = resolved // the file a symbolic link led to
	}
	n := s.f.node(pth)
	st, pos := b.stream(c.pid)
	r := ref{st, pos}
	op := &p.op
	op.act, op.path = act, b.pathID(n)
	parent := b.nodes[n].parent
	b.touchNode(parent, r, false)
	switch act {
	case actOpen:
		return s.open(c, p, n, spec.arg+1, r)
	case actStat, actAccess, actStatfs:
		s.f.needed(n, act == actStat && statDir(c.args[spec.arg+1:]), p)
		b.touchNode(n, r, false)
	case actUnlink, actRmdir:
		if n == root {
			return false // the replay's own directory is not removed (as not renamed)
		}
		if c.name == "rmdir" || c.name == "unlinkat" && len(c.args) > 2 && strings.Contains(c.args[2], "AT_REMOVEDIR") {
			op.act = actRmdir
		}
		s.f.needed(n, op.act == actRmdir, p)
		if !p.failed {
			if op.act == actRmdir {
				b.emptied(n, op, r)
			}
			b.removedBy(n, r)
			b.unlinkName(n)
			s.f.forget(pth)
		}
		b.touchNode(n, r, true)
	case actMkdir:
		if !p.failed {
			b.need(parent, true, op)
			b.created(n, true)
		} else if op.errno == uint16(unix.EEXIST) {
			b.need(n, true, op)
		}
		b.touchNode(n, r, true)
	case actRename:
		pth = strings.Clone(pth) // pathArg's buffer makes the next path
		to, ok := s.pathArg(c, spec.arg+1+btoi(spec.dirfd), spec.dirfd)
		if !ok || !replayable(to) {
			return false
		}
		if c.name == "renameat2" && len(c.args) > 4 {
			op.flags = renameFlags(c.args[4])
		}
		return s.f.rename([]string{pth, to}, n, p, st, r)
	case actTruncate:
		if !s.truncate(c, p, spec.arg+1, n) {
			return false
		}
		b.touchNode(n, r, true)
	}
	b.commit(p, st)
	return true
}

// truncate reads the length of a truncate or ftruncate (its argument i)
// into the operation: what the file holds from then on is the log's, so
// later reads no longer tell its size before the recording.
func (s *strc) truncate(c *call, p *pending, i int, n int32) bool {
	if len(c.args) <= i {
		return false
	}
	size, ok := integer(c.args[i])
	if !ok || size < 0 {
		return false
	}
	p.op.Size = size
	if !p.failed {
		s.f.b.nodes[n].written = true
	}
	return true
}

func btoi(v bool) int {
	if v {
		return 1
	}
	return 0
}

// open adds an open, whose flags are argument fa, keeping the descriptor
// it returned.
func (s *strc) open(c *call, p *pending, n int32, fa int, r ref) bool {
	b := s.f.b
	op := &p.op
	flags := int32(unix.O_CREAT | unix.O_WRONLY | unix.O_TRUNC) // creat
	if c.name != "creat" {
		if fa >= len(c.args) {
			return false
		}
		flags = stFlags(c.args[fa])
	}
	op.flags = flags
	nd := &b.nodes[n]
	switch {
	case p.failed:
	case flags&unix.O_CREAT != 0 && !(nd.seen && nd.exists):
		op.act = actCreate
		b.need(nd.parent, true, op) // where it was made existed
		b.created(n, false)
	default:
		b.need(n, flags&unix.O_DIRECTORY != 0, op)
	}
	b.touchNode(n, r, op.act == actCreate || flags&unix.O_TRUNC != 0)
	if fd, _, ok := fdPath(c.ret); ok && !p.failed {
		op.handle = b.newHandle(n)
		s.fds[fdKey(c.pid, fd)] = &stFD{h: op.handle}
		b.touchHandle(op.handle, r, true)
	}
	b.commit(p, r.stream)
	return true
}

// onFD adds a call on a file descriptor.
func (s *strc) onFD(c *call, p *pending, act action, fd int, pth string, deleted bool) bool {
	b := s.f.b
	key := fdKey(c.pid, fd)
	d := s.fds[key]
	var n int32
	if d != nil {
		n = b.handles[d.h].node // the file opened, also once removed
	}
	if d == nil || !deleted && n != s.f.node(pth) {
		// Opened before the recording, or by another thread, or made
		// another file's by a call not replayed (dup2): the replay opens
		// it before its first use.
		n = s.f.node(pth)
		d = &stFD{h: b.newHandle(n)}
		s.fds[key] = d
	}
	st, pos := b.stream(c.pid)
	r := ref{st, pos}
	op := &p.op
	op.act, op.path, op.handle = act, b.pathID(n), d.h
	if act == actStat {
		op.handle = -1
	}
	if b.nodes[n].exists || !b.nodes[n].seen { // an open handle's removed file is not made again
		s.f.needed(n, act == actReadDir || act == actStat && statDir(c.args[1:]), p)
	}
	change := false
	switch act {
	case actRead, actWrite, actReadDir:
		if !s.transfer(c, p, d, n) {
			return false
		}
		change = act == actWrite
	case actTruncate:
		if !s.truncate(c, p, 1, n) {
			return false
		}
		change = true
	case actClose:
		delete(s.fds, key)
		if d.dups > 0 { // another descriptor keeps the file open
			d.dups--
			op.act = actFlush
			break
		}
		b.handles[d.h].closed = true
	}
	b.touchNode(n, r, change)
	b.touchHandle(d.h, r, act == actClose)
	b.commit(p, st)
	return true
}

// transfer fills a read's, a write's or a getdents64's size, offset and
// bytes done, and moves the descriptor's position.
func (s *strc) transfer(c *call, p *pending, d *stFD, n int32) bool {
	op := &p.op
	if len(c.args) < 3 {
		return false
	}
	size, ok := integer(c.args[2])
	if !ok {
		return false
	}
	done, _ := integer(c.ret)
	done = max(done, 0)
	off, positioned := d.pos, strings.HasPrefix(c.name, "p")
	if positioned {
		if len(c.args) < 4 {
			return false
		}
		if off, ok = integer(c.args[3]); !ok {
			return false
		}
	}
	op.Size, op.Off = size, off
	if op.act == actReadDir {
		return true
	}
	p.done = done
	if op.act == actWrite {
		op.Size = done
		s.f.b.nodes[n].written = true
	} else {
		s.f.b.grow(n, off+done)
	}
	if !positioned {
		d.pos += done
	}
	return true
}
