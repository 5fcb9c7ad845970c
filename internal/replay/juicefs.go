package replay

import (
	"bytes"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/accesslog"
)

// JuiceFS's access log names files by inode and (parent, name); handles
// by the fh the kernel was given. Its virtual files (.stats, .accesslog,
// .config, ...) have inodes from minInternal up.
const minInternal = 0x7FFFFFFF00000000

// virtualNames are the names of JuiceFS's virtual files in its root.
var virtualNames = map[string]bool{
	".stats": true, ".accesslog": true, ".config": true, ".trash": true, ".control": true,
	".jfs.stats": true, ".jfs.accesslog": true, ".jfs.config": true, ".jfs.trash": true, ".jfs.control": true,
}

// jfs is the state of a JuiceFS log being read.
type jfs struct {
	b    *builder
	inos map[uint64]int32 // inode -> node
	fhs  map[uint64]int32 // recorded fh -> handle
	dirs map[int32]int32  // node -> its directory handle
	// ino and fh are the last entries of inos and fhs used: a log's
	// consecutive lines often name one file and one handle.
	ino, fh last64
}

// last64 is one entry of a map of uint64 keys, while ok.
type last64 struct {
	k  uint64
	v  int32
	ok bool
}

// get is the value of k in m.
func (c *last64) get(m map[uint64]int32, k uint64) (int32, bool) {
	if c.ok && c.k == k {
		return c.v, true
	}
	v, ok := m[k]
	if ok {
		*c = last64{k, v, true}
	}
	return v, ok
}

// set sets k to v in m.
func (c *last64) set(m map[uint64]int32, k uint64, v int32) {
	m[k] = v
	*c = last64{k, v, true}
}

// del deletes k from m.
func (c *last64) del(m map[uint64]int32, k uint64) {
	delete(m, k)
	if c.k == k {
		c.ok = false
	}
}

func newJFS(b *builder) *jfs {
	return &jfs{b: b, inos: map[uint64]int32{1: root}, fhs: map[uint64]int32{}, dirs: map[int32]int32{}}
}

// fields splits a JuiceFS argument list "(a,b,c)" into its fields; names
// may hold commas, so callers join what they need.
// The fields are appended to dst[:0], which the caller reuses from line
// to line: splitting allocates nothing once dst is large enough.
func fields(dst [][]byte, args []byte) [][]byte {
	dst = dst[:0]
	if len(args) < 2 {
		return dst
	}
	args = args[1 : len(args)-1]
	// One pass over the bytes: the fields are short (numbers, mostly),
	// where a call of bytes.IndexByte per field costs more than it finds.
	start := 0
	for i, c := range args {
		if c == ',' {
			dst, start = append(dst, args[start:i]), i+1
		}
	}
	return append(dst, args[start:])
}

// num reads a decimal number without converting b to a string (which
// strconv would keep, and so allocate, for its error).
func num[T string | []byte](b T) (uint64, bool) {
	if len(b) == 0 || len(b) > 19 {
		if len(b) > 19 {
			v, err := strconv.ParseUint(string(b), 10, 64)
			return v, err == nil
		}
		return 0, false
	}
	var v uint64
	for i := range len(b) {
		if b[i] < '0' || b[i] > '9' {
			return 0, false
		}
		v = v*10 + uint64(b[i]-'0')
	}
	return v, true
}

// node is the node of an inode, named after it below the run directory
// when the log never gave it a name.
func (j *jfs) node(ino uint64) int32 {
	if n, ok := j.ino.get(j.inos, ino); ok {
		return n
	}
	n := j.b.child(root, "ino-"+strconv.FormatUint(ino, 10))
	j.ino.set(j.inos, ino, n)
	return n
}

// name binds ino to node n, (parent, name), as a lookup, create or mkdir
// result shows it.
func (j *jfs) name(ino uint64, n int32) int32 {
	if old, ok := j.ino.get(j.inos, ino); ok && old != n && !j.b.nodes[old].seen {
		// Named only by its inode so far, never used: the name wins.
		delete(j.b.dentries, dentry{root, j.b.nodes[old].name})
	}
	j.ino.set(j.inos, ino, n)
	return n
}

// resultIno reads the inode of a result ": (ino,[...])".
func resultIno(rest []byte) (uint64, bool) { return numBetween(rest, ": (", ',') }

// numBetween reads the number after the first open in rest, up to end.
func numBetween(rest []byte, open string, end byte) (uint64, bool) {
	i := bytes.Index(rest, []byte(open))
	if i < 0 {
		return 0, false
	}
	r := rest[i+len(open):]
	k := bytes.IndexByte(r, end)
	if k < 0 {
		return 0, false
	}
	return num(r[:k])
}

// resultSize reads the size, the last attribute, of a result
// ": (ino,[mode,nlink,uid,gid,atime,mtime,ctime,size])".
func resultSize(rest []byte) (int64, bool) {
	end := bytes.Index(rest, []byte("])"))
	if end < 0 {
		return 0, false
	}
	k := bytes.LastIndexByte(rest[:end], ',')
	if k < 0 {
		return 0, false
	}
	v, ok := num(rest[k+1 : end])
	return int64(v), ok
}

// resultNum reads a number result ": N", or ": (N)" as JuiceFS 1.4
// writes a read's.
func resultNum(rest []byte) (int64, bool) {
	r, ok := bytes.CutPrefix(rest, []byte(": "))
	if !ok {
		return 0, false
	}
	if k := bytes.IndexByte(r, ' '); k >= 0 {
		r = r[:k]
	}
	if len(r) > 2 && r[0] == '(' && r[len(r)-1] == ')' {
		r = r[1 : len(r)-1]
	}
	v, ok := num(r)
	return int64(v), ok
}

// fh reads the handle " [fh:N]".
func fh(rest []byte) (uint64, bool) { return numBetween(rest, "[fh:", ']') }

// virtual reports whether the entry is about one of JuiceFS's virtual
// files: an inode from minInternal up, or a virtual name in the root.
func virtual(a *jargs, op string) bool {
	if len(a.f) == 0 {
		return false
	}
	v, ok := a.num(0)
	if ok && v >= minInternal {
		return true
	}
	switch op {
	case "lookup", "create", "mknod", "mkdir", "unlink", "rmdir", "rename":
		return len(a.f) > 1 && string(a.f[0]) == "1" && virtualNames[string(a.f[1])]
	}
	return false
}

// add adds one entry; false when it is not one the replay performs.
func (j *jfs) add(e *accesslog.Entry, a *jargs, p *pending) bool {
	if len(a.f) == 0 {
		return false
	}
	ino, ok := a.num(0)
	if !ok {
		return false
	}
	switch p.name {
	case "lookup", "unlink", "rmdir", "create", "mkdir", "mknod":
		return j.named(e, a.f, ino, p)
	case "rename":
		return j.rename(a, p)
	case "getattr", "access", "statfs", "open", "opendir", "readdir", "releasedir":
		return j.byInode(e, a, ino, p)
	case "read", "write", "flush", "release", "fsync":
		return j.byHandle(e, a, ino, p)
	}
	return false
}

// named adds the operations on a name in a directory.
func (j *jfs) named(e *accesslog.Entry, f [][]byte, parentIno uint64, p *pending) bool {
	if len(f) < 2 {
		return false
	}
	b := j.b
	parent := j.node(parentIno)
	nameEnd := len(f)
	if p.name == "create" || p.name == "mkdir" || p.name == "mknod" {
		nameEnd = len(f) - 1 // the mode follows the name
		if p.name == "mknod" {
			nameEnd--
		}
		if nameEnd < 2 {
			return false
		}
	}
	name := joined(f[1:nameEnd])
	n := b.child(parent, name)
	s, pos := b.stream(p.pid)
	r := ref{s, pos}
	op := &p.op
	op.path = b.pathID(n)
	b.need(parent, true, op)
	b.touchNode(parent, r, false)
	switch p.name {
	case "lookup":
		op.act = actStat
		if !p.failed {
			if ino, ok := resultIno(e.Rest); ok {
				n = j.name(ino, n)
			}
			b.need(n, false, op)
			if size, ok := resultSize(e.Rest); ok {
				b.grow(n, size)
			}
		} else {
			b.nodes[n].seen = true
		}
		b.touchNode(n, r, false)
	case "create", "mknod", "mkdir":
		op.act, op.flags = actCreate, unix.O_CREAT|unix.O_EXCL|unix.O_RDWR
		if p.name == "mkdir" {
			op.act = actMkdir
		}
		if !p.failed {
			if ino, ok := resultIno(e.Rest); ok {
				n = j.name(ino, n)
			}
			b.created(n, p.name == "mkdir")
		} else if p.op.errno == uint16(unix.EEXIST) {
			b.need(n, p.name == "mkdir", op)
		}
		b.touchNode(n, r, true)
		if p.name == "create" {
			op.handle = j.openHandle(n, e.Rest, p.failed)
			b.touchHandle(op.handle, r, true)
		}
	default: // unlink, rmdir
		op.act = actUnlink
		if p.name == "rmdir" {
			op.act = actRmdir
		}
		if !p.failed {
			b.need(n, p.name == "rmdir", op)
			if p.name == "rmdir" {
				b.emptied(n, op, r)
			}
			b.removedBy(n, r)
			b.unlinkName(n)
		}
		b.touchNode(n, r, true)
	}
	b.commit(p, s)
	return true
}

// joined is the fields of a name that held commas, joined again: a
// string over the line for a name of one field (the usual), which
// builder.child copies if it keeps it.
func joined(f [][]byte) string {
	if len(f) == 1 {
		return str(f[0])
	}
	return string(bytes.Join(f, []byte{','}))
}

// openHandle is the handle an open or a create gave, -1 for a failure.
func (j *jfs) openHandle(n int32, rest []byte, failed bool) int32 {
	if failed {
		return -1
	}
	h := j.b.newHandle(n)
	if v, ok := fh(rest); ok {
		j.fh.set(j.fhs, v, h)
	}
	return h
}

// rename adds a rename (parent,name,newparent,newname,flags).
func (j *jfs) rename(a *jargs, p *pending) bool {
	f := a.f
	if len(f) < 5 {
		return false
	}
	// Names may hold commas: the new parent is the first field after the
	// first name that is a number followed by the new name.
	mid := -1
	for i := 2; i < len(f)-2; i++ {
		if _, ok := a.num(i); ok {
			mid = i
			break
		}
	}
	if mid < 0 {
		return false
	}
	pi, _ := a.num(0)
	npi, _ := a.num(mid)
	b := j.b
	from, to := j.node(pi), j.node(npi)
	name := string(bytes.Join(f[1:mid], []byte{','}))
	newName := string(bytes.Join(f[mid+1:len(f)-1], []byte{','}))
	n, dst := b.child(from, name), b.child(to, newName)
	s, pos := b.stream(p.pid)
	r := ref{s, pos}
	op := &p.op
	op.act, op.path = actRename, b.pathID(n)
	if fl, ok := a.num(len(f) - 1); ok {
		// rename2's flags: RENAME_NOREPLACE (mv's first try) is
		// replayed; RENAME_EXCHANGE and RENAME_WHITEOUT are not moves.
		op.flags = int32(fl & unix.RENAME_NOREPLACE)
	}
	b.renamed(op, n, dst, r, p.failed)
	if !p.failed {
		b.move(n, to, newName)
	}
	b.commit(p, s)
	return true
}

// byInode adds the operations on an inode that open no file handle, or
// open or use a directory's.
func (j *jfs) byInode(e *accesslog.Entry, a *jargs, ino uint64, p *pending) bool {
	b := j.b
	n := j.node(ino)
	s, pos := b.stream(p.pid)
	r := ref{s, pos}
	op := &p.op
	op.path = b.pathID(n)
	if !p.failed || p.name != "getattr" {
		b.need(n, p.name != "getattr" && p.name != "access" && p.name != "open", op)
	}
	switch p.name {
	case "getattr":
		op.act = actStat
		if size, ok := resultSize(e.Rest); ok && !p.failed {
			b.grow(n, size)
		}
	case "access":
		op.act = actAccess
	case "statfs":
		op.act = actStatfs
	case "open":
		op.act, op.flags = actOpen, openFlags(a.f)
		op.handle = j.openHandle(n, e.Rest, p.failed)
		b.touchHandle(op.handle, r, true)
	case "opendir":
		op.act = actOpenDir
		if !p.failed {
			op.handle = b.newHandle(n)
			j.dirs[n] = op.handle
		}
		b.touchHandle(op.handle, r, true)
	case "readdir", "releasedir":
		op.act = actReadDir
		if p.name == "releasedir" {
			op.act = actClose
		}
		op.handle = j.dirHandle(n)
		if len(a.f) > 1 {
			v, _ := a.num(1)
			op.Size = int64(v)
		}
		b.touchHandle(op.handle, r, p.name == "releasedir")
		if p.name == "releasedir" {
			b.handles[op.handle].closed = true
			delete(j.dirs, n)
		}
	}
	b.touchNode(n, r, false)
	b.commit(p, s)
	return true
}

// dirHandle is the directory handle of node n: its last opendir's, or a
// new one (opened before its first use) when the recording opened it
// before it started.
func (j *jfs) dirHandle(n int32) int32 {
	if h, ok := j.dirs[n]; ok {
		return h
	}
	h := j.b.newHandle(n)
	j.dirs[n] = h
	return h
}

// openFlags keeps the flags of an open (ino,flags) that say how the file
// is used: access mode, O_APPEND, O_TRUNC.
func openFlags(f [][]byte) int32 {
	if len(f) < 2 {
		return unix.O_RDONLY
	}
	v, err := strconv.ParseUint(string(bytes.TrimPrefix(f[1], []byte("0x"))), 16, 32)
	if err != nil {
		return unix.O_RDONLY
	}
	return int32(v) & (unix.O_ACCMODE | unix.O_APPEND | unix.O_TRUNC)
}

// fhOf is the recorded file handle of an operation on one: read and
// write (ino,size,off,fh), flush (ino,fh,owner), release (ino,fh), fsync
// (ino,datasync,fh).
func fhOf(name string, a *jargs) (uint64, bool) {
	idx := 1 // flush, release
	switch name {
	case "read", "write":
		idx = 3
	case "fsync":
		idx = 2
	case "flush", "release":
	default:
		return 0, false
	}
	if a == nil || len(a.f) <= idx { // nil: a line with no JuiceFS fields
		return 0, false
	}
	return a.num(idx)
}

// byHandle adds the operations on a file handle: read (ino,size,off,fh),
// write (ino,size,off,fh), flush (ino,fh,owner), release (ino,fh), fsync
// (ino,datasync,fh).
func (j *jfs) byHandle(e *accesslog.Entry, a *jargs, ino uint64, p *pending) bool {
	v, ok := fhOf(p.name, a)
	if !ok {
		return false
	}
	b := j.b
	n := j.node(ino)
	h, ok := j.fh.get(j.fhs, v)
	if !ok {
		// Opened before the recording started: the replay opens it
		// before its first use.
		h = b.newHandle(n)
		j.fh.set(j.fhs, v, h)
	}
	s, pos := b.stream(p.pid)
	r := ref{s, pos}
	op := &p.op
	op.path, op.handle = b.pathID(n), h
	b.need(n, false, op)
	change := false
	switch p.name {
	case "read", "write":
		op.act = actRead
		size, _ := a.num(1)
		off, _ := a.num(2)
		op.Size, op.Off = int64(size), int64(off)
		if p.name == "write" {
			op.act, p.done, change = actWrite, op.Size, true
			b.nodes[n].written = true
		} else if done, ok := resultNum(e.Rest); ok {
			p.done = done
			b.grow(n, op.Off+done)
		}
	case "flush":
		op.act = actFlush
	case "fsync":
		op.act = actFsync
	case "release":
		op.act, change = actClose, true
		b.handles[h].closed = true
		j.fh.del(j.fhs, v)
	}
	b.touchNode(n, r, change)
	b.touchHandle(h, r, p.name == "release")
	b.commit(p, s)
	return true
}
