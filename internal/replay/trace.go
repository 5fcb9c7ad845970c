// Package replay is `fsbench replay`: an access log (JuiceFS's, or the one
// fsbench writes with --access-log) read into one stream of recorded
// operations per recorded process or thread, its files mapped to files of
// a run directory of its own, and the streams run as one engine phase.
//
// Each stream keeps its recorded order. Across streams, an operation
// waits for the operations of other streams that the recording shows
// before it on the same file, directory or handle when one of the two
// changes it (a write before a read, a create before a write, the last
// write before a release): the dependencies that make a replay do what
// was recorded, without serialising the streams otherwise.
//
// It writes and removes nothing outside the run's own directory: the
// recorded paths are mapped into it, never used as they are.
package replay

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fsbench/fsbench/internal/metrics"
)

// action is what the replay does for one recorded operation.
type action uint8

const (
	actStat     action = iota // lookup, getattr, stat: fstatat without following
	actAccess                 // access: faccessat
	actCreate                 // create: open with O_CREAT, keeping the handle
	actOpen                   // open: open, keeping the handle
	actOpenDir                // opendir: open the directory, keeping the handle
	actRead                   // read: pread on the handle
	actWrite                  // write: pwrite on the handle
	actFlush                  // flush: close of a duplicate of the handle
	actClose                  // release, releasedir, close: close the handle
	actFsync                  // fsync on the handle
	actReadDir                // readdir on the handle: getdents
	actListDir                // fsbench's readdir of a path: open, read every entry, close
	actMkdir                  // mkdir
	actRmdir                  // rmdir
	actUnlink                 // unlink
	actRename                 // rename
	actStatfs                 // statfs
	actChmod                  // chmod to 0644
	actUtime                  // utimes to now
	actTruncate               // truncate to Size
	actNone
)

// Op is one recorded operation of a stream.
//
// Its fields are laid out without padding: 72 bytes. A million of them
// are written once each while the log is loaded, into memory touched for
// the first time, each page of it a fault: what the recording moved and
// how long it took are counted in the operation's class while it is
// built (pending), not kept in it.
type Op struct {
	act    action
	signal bool  // some operation of another stream waits for this one
	clear  bool  // rmdir: remove, untimed, what the log lost the removal of
	class  int16 // index in Trace.Classes
	// errno is the recorded failure, 0 for success; other is set when the
	// recorded status is an error text that names no errno.
	errno uint16
	flags int32 // open flags; renameat2's flags for a rename
	// handle is the index of the handle the operation uses or opens, -1
	// for none.
	handle int32
	// path indexes Trace.paths: an Op holds no pointer, so that the
	// collector never scans a trace's millions of them.
	path int32
	// more indexes Trace.more: what few operations have, kept apart so
	// that the millions of others take less memory; 0 for none.
	more      int32
	depLo     int32 // the operation's dependencies: Trace.deps[depLo:depHi]
	depHi     int32
	Size, Off int64
	Start     int64 // recorded start, ns since the recording's first operation
}

// opMore is what few operations have: Trace.more[Op.more].
type opMore struct {
	to int32 // a rename's target, in Trace.paths
	// prep is the index in Trace.Implied of a file or directory the
	// recording used without creating it, inside a directory it created:
	// made (untimed) just before the operation, its first use.
	prep    int32
	prepN   int32 // how many, from prep
	closeLo int32 // handles to close, untimed, first: Trace.closes[closeLo:closeHi]
	closeHi int32
}

// ref names one operation: its stream and its position there.
type ref struct{ stream, pos int32 }

// Stream is the operations one recorded process or thread did, in order.
type Stream struct {
	ID  uint32 // the recorded pid (or thread id)
	Ops []Op
}

// Entry is a file or directory the replay makes before a stream needs it:
// what the recording used without creating it.
type Entry struct {
	Path string // below the run directory, starting with "/"
	Dir  bool
	Size int64
}

// Class is one type of recorded operation: its name as recorded, and
// what the recording says of its successful operations.
type Class struct {
	Name string
	// Ops and Bytes count the recording's successful operations of the
	// class that the replay performs, Failed its recorded failures.
	Ops, Bytes, Failed int64
	// Latency holds the recorded latencies of the successful operations.
	Latency *metrics.Histogram
}

// Trace is a parsed log, ready to replay.
type Trace struct {
	Format  string // "juicefs" or "fsbench"
	Streams []Stream
	Classes []Class
	// Initial are made before the replay starts, outside its measured
	// time, in this order (parents first); Implied are made just before
	// their first use.
	Initial []Entry
	Implied []Entry
	Handles int // handles the operations use
	// Cleared counts the directories the log removed while they held
	// entries it lost the removal of: emptied, untimed, before their
	// rmdir.
	Cleared int
	// Span is the recording's time, from its first operation's start to
	// its last one's end.
	Span    time.Duration
	Skipped Skipped
	deps    []ref
	closes  []int32
	paths   []string // below the run directory; paths[0] is the run directory's ""
	more    []opMore // more[0] is empty, every Op's without more

	// contradiction, when not empty, says how the log contradicts itself:
	// the log's error, found while it was read.
	contradiction string
}

// extra is what the operation has besides its own fields: nothing (an
// empty opMore) for most.
func (t *Trace) extra(op *Op) *opMore { return &t.more[op.more] }

// Skipped counts the lines of a log that are not replayed, and why.
type Skipped struct {
	Lines     int64 // lines read
	Blank     int64 // blank and keep-alive lines
	Malformed int64 // lines that are not entries
	// Virtual counts the operations on JuiceFS's virtual files (.stats,
	// .accesslog, .config, ...): the client's, not the workload's.
	Virtual int64
	// Unsupported counts, per recorded operation, the entries of operations
	// the replay does not perform, or whose arguments it cannot read.
	Unsupported map[string]int64
	// Elsewhere counts, when the log is split across hosts, the lines of
	// the streams other hosts replay.
	Elsewhere int64
}

// UnsupportedNames lists the operations of Unsupported, most frequent
// first.
func (s *Skipped) UnsupportedNames() []string {
	names := make([]string, 0, len(s.Unsupported))
	for n := range s.Unsupported {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := s.Unsupported[names[i]], s.Unsupported[names[j]]
		return a > b || a == b && names[i] < names[j]
	})
	return names
}

// Ops counts the operations the trace replays.
func (t *Trace) Ops() int64 {
	var n int64
	for i := range t.Streams {
		n += int64(len(t.Streams[i].Ops))
	}
	return n
}

// opNames are the operations a replay performs, as the logs name them.
var opNames = []string{
	"lookup", "getattr", "access", "statfs", "create", "mknod", "mkdir", "unlink", "rmdir", "rename",
	"open", "opendir", "readdir", "releasedir", "read", "write", "flush", "release", "fsync",
	"stat", "close", "chmod", "utime",
}

// OpNames lists the operations a replay performs, as the logs name them.
func OpNames() []string { return append([]string(nil), opNames...) }

// noOps is the error of a log, or of a host's part of one, that holds no
// operation to replay: it says what its lines were instead.
func noOps(s *Skipped) error {
	var what []string
	add := func(n int64, say string) {
		if n > 0 {
			what = append(what, fmt.Sprintf("%d %s", n, say))
		}
	}
	add(s.Malformed, "in no format fsbench reads (JuiceFS's or fsbench's access log, strace -f -ttt -T -y)")
	add(s.Blank, "blank, or an exit, a signal or half a call in strace's output")
	add(s.Virtual, "on JuiceFS's virtual files or on what is not a file")
	var unsupported int64
	for _, n := range s.Unsupported {
		unsupported += n
	}
	if names := s.UnsupportedNames(); len(names) > 0 {
		add(unsupported, "of operations fsbench does not replay ("+strings.Join(names[:min(len(names), 3)], ", ")+")")
	}
	add(s.Elsewhere, "of streams other hosts replay")
	if len(what) == 0 {
		return errors.New("the log holds no operation to replay: it is empty")
	}
	lines := "lines"
	if s.Lines == 1 {
		lines = "line"
	}
	return fmt.Errorf("the log holds no operation to replay: of its %d %s, %s", s.Lines, lines, strings.Join(what, "; "))
}
