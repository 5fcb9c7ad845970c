package replay

import (
	"bytes"
	"path"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/accesslog"
)

// fsb is the state of a log fsbench wrote (--access-log) being read: its
// files are named by absolute paths, which the replay keeps below its run
// directory, and its handles by the path a stream opened.
type fsb struct {
	b     *builder
	open  map[streamPath]int32 // a stream's open handle of a path
	paths map[string]int32     // path -> node, for the paths seen
	// lastPath and lastNode are node's last answer, while lastOK: a
	// path of paths and its node (a log's consecutive lines often name
	// one file).
	lastPath string
	lastNode int32
	lastOK   bool
	// opened holds, per stream, the handle of the path it opened last
	// while it is open (the entry of open): its reads and writes follow.
	opened []openPath
	// paths2 and rest are pathArgs's, reused from line to line.
	paths2 []string
	rest   [][]byte
}

type streamPath struct {
	stream int32
	path   string
}

type openPath struct {
	path string
	h    int32
	ok   bool
}

func newFSB(b *builder) *fsb {
	return &fsb{b: b, open: map[streamPath]int32{}, paths: map[string]int32{"": root, "/": root}}
}

// isPathArgs reports whether an argument list starts with a path (fsbench's
// form) rather than an inode (JuiceFS's).
func isPathArgs(args []byte) bool {
	return len(args) > 1 && (args[1] == '/' || args[1] == '"')
}

// pathArgs splits fsbench's arguments "(path[,x,y])" or "(old,new)" into
// the path(s) and the rest of the fields, appended to f's buffers (valid
// until the next call; an unquoted path is a string over the line).
func (f *fsb) pathArgs(args []byte) (paths []string, rest [][]byte, ok bool) {
	paths, rest = f.paths2[:0], f.rest[:0]
	a := args[1 : len(args)-1]
	for len(a) > 0 && len(paths) < 2 {
		var p string
		if a[0] == '"' {
			q, err := strconv.QuotedPrefix(str(a))
			if err != nil {
				return nil, nil, false
			}
			if p, err = strconv.Unquote(q); err != nil {
				return nil, nil, false
			}
			a = a[len(q):]
		} else if a[0] == '/' {
			k := bytes.IndexByte(a, ',')
			if k < 0 {
				k = len(a)
			}
			p, a = str(a[:k]), a[k:]
		} else {
			break
		}
		if strings.HasPrefix(p, "/") {
			p = path.Clean(p) // "/a/../../x" is "/x": below the run directory
		}
		paths = append(paths, p)
		if len(a) > 0 && a[0] == ',' {
			a = a[1:]
		}
	}
	if len(paths) == 0 {
		return nil, nil, false
	}
	for len(a) > 0 { // as bytes.Split(a, ","), without allocating
		k := bytes.IndexByte(a, ',')
		if k < 0 {
			rest = append(rest, a)
			break
		}
		rest, a = append(rest, a[:k]), a[k+1:]
		if len(a) == 0 {
			rest = append(rest, a)
		}
	}
	f.paths2, f.rest = paths, rest
	return paths, rest, true
}

// node is the node of an absolute path, its parents made as needed. The
// path may be a passing string (over a line, or a buffer): the map keeps
// a copy.
func (f *fsb) node(path string) int32 {
	if f.lastOK && path == f.lastPath {
		return f.lastNode
	}
	n, ok := f.paths[path]
	if !ok {
		path = strings.Clone(path)
		n = f.newNode(path)
	} else if nd := &f.b.nodes[n]; nd.path == path {
		path = nd.path // a string of the builder's, not over a line
	} else {
		return n
	}
	f.lastPath, f.lastNode, f.lastOK = path, n, true
	return n
}

// forget takes path out of paths.
func (f *fsb) forget(path string) {
	delete(f.paths, path)
	f.lastOK = false
}

// setOpen records h as stream s's open handle of path, a string of its
// own.
func (f *fsb) setOpen(s int32, path string, h int32) {
	f.open[streamPath{s, path}] = h
	for int(s) >= len(f.opened) {
		f.opened = append(f.opened, openPath{})
	}
	f.opened[s] = openPath{path, h, true}
}

// openOf is stream s's open handle of path.
func (f *fsb) openOf(s int32, path string) (int32, bool) {
	if int(s) < len(f.opened) {
		if o := f.opened[s]; o.ok && o.path == path {
			return o.h, true
		}
	}
	h, ok := f.open[streamPath{s, path}]
	return h, ok
}

// closeOpen takes stream s's open handle of path out of open.
func (f *fsb) closeOpen(s int32, path string) {
	delete(f.open, streamPath{s, path})
	if int(s) < len(f.opened) && f.opened[s].path == path {
		f.opened[s].ok = false
	}
}

// newNode is node for a path of the map's own, not yet in it.
func (f *fsb) newNode(path string) int32 {
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return root
	}
	parent, ok := f.paths[path[:i]]
	if !ok {
		parent = f.newNode(path[:i])
	}
	n := f.b.child(parent, path[i+1:])
	f.paths[path] = n
	return n
}

// add adds one entry; false when it is not one the replay performs.
func (f *fsb) add(e *accesslog.Entry, p *pending) bool {
	paths, rest, ok := f.pathArgs(e.Args)
	if !ok || !strings.HasPrefix(paths[0], "/") {
		return false
	}
	b := f.b
	n := f.node(paths[0])
	s, pos := b.stream(p.pid)
	r := ref{s, pos}
	op := &p.op
	op.path = b.pathID(n)
	parent := b.nodes[n].parent
	switch p.name {
	case "create", "mkdir":
		b.need(parent, true, op)
		b.touchNode(parent, r, false)
		op.act = actMkdir
		if p.name == "create" {
			op.act, op.flags = actCreate, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY
			op.handle = f.openHandle(r, paths[0], p.failed)
		}
		if !p.failed {
			b.created(n, p.name == "mkdir")
		}
		b.touchNode(n, r, true)
	case "open":
		op.act, op.flags = actOpen, unix.O_RDWR
		f.needed(n, false, p)
		op.handle = f.openHandle(r, paths[0], p.failed)
		b.touchNode(n, r, false)
	case "read", "write", "fsync", "close":
		return f.byHandle(e, rest, paths[0], n, p, s, r)
	case "unlink", "rmdir":
		if n == root {
			return false // the replay's own directory is not removed (as not renamed)
		}
		op.act = actUnlink
		if p.name == "rmdir" {
			op.act = actRmdir
		}
		f.needed(n, p.name == "rmdir", p)
		if !p.failed {
			if p.name == "rmdir" {
				b.emptied(n, op, r)
			}
			b.removedBy(n, r)
			b.unlinkName(n)
			f.forget(paths[0])
		}
		b.touchNode(parent, r, false)
		b.touchNode(n, r, true)
	case "rename":
		if len(paths) < 2 {
			return false
		}
		return f.rename(paths, n, p, s, r)
	case "stat", "chmod", "utime", "readdir":
		op.act = fsbMeta[p.name]
		f.needed(n, p.name == "readdir", p)
		b.touchNode(n, r, p.name != "stat" && p.name != "readdir")
	default:
		return false
	}
	b.commit(p, s)
	return true
}

// needed says that n exists when the operation succeeded.
func (f *fsb) needed(n int32, dir bool, p *pending) {
	if !p.failed {
		f.b.need(n, dir, &p.op)
	}
}

// openHandle is the handle an open or a create gave the stream.
func (f *fsb) openHandle(r ref, path string, failed bool) int32 {
	if failed {
		return -1
	}
	h := f.b.newHandle(f.paths[path])
	f.setOpen(r.stream, strings.Clone(path), h)
	f.b.touchHandle(h, r, true)
	return h
}

// byHandle adds read (path,size,off): done, write (path,size,off): done,
// fsync (path) and close (path), on the stream's handle of path.
func (f *fsb) byHandle(e *accesslog.Entry, rest [][]byte, path string, n int32, p *pending, s int32, r ref) bool {
	b := f.b
	op := &p.op
	if (p.name == "read" || p.name == "write") && len(rest) < 2 {
		return false
	}
	h, ok := f.openOf(s, path)
	if !ok {
		h = b.newHandle(n)
		f.setOpen(s, strings.Clone(path), h)
	}
	op.handle = h
	f.needed(n, false, p)
	change := false
	switch p.name {
	case "read", "write":
		size, ok1 := num(rest[0])
		off, ok2 := num(rest[1])
		if !ok1 || !ok2 {
			return false
		}
		op.act, op.Size, op.Off = actRead, int64(size), int64(off)
		p.done, _ = resultNum(e.Rest)
		if p.name == "write" {
			op.act, change = actWrite, true
			b.nodes[n].written = true
		} else {
			b.grow(n, op.Off+p.done)
		}
	case "fsync":
		op.act = actFsync
	case "close":
		op.act = actClose
		b.handles[h].closed = true
		f.closeOpen(s, path)
	}
	b.touchNode(n, r, change)
	b.touchHandle(h, r, p.name == "close")
	b.commit(p, s)
	return true
}

// rename adds rename (old,new).
func (f *fsb) rename(paths []string, n int32, p *pending, s int32, r ref) bool {
	b := f.b
	dst := f.node(paths[1])
	if n == root || dst == root {
		return false // the replay's own directory is not renamed
	}
	op := &p.op
	op.act = actRename
	b.renamed(op, n, dst, r, p.failed)
	if !p.failed {
		to, nd := b.nodes[dst].parent, b.nodes[dst]
		b.move(n, to, nd.name)
		f.forget(paths[0])
		f.paths[strings.Clone(paths[1])] = n
	}
	b.commit(p, s)
	return true
}

// fsbMeta are the actions of fsbench's metadata operations.
var fsbMeta = map[string]action{"stat": actStat, "chmod": actChmod, "utime": actUtime, "readdir": actListDir}
