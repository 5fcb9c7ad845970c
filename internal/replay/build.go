package replay

import (
	"strings"
	"time"

	"github.com/fsbench/fsbench/internal/metrics"
)

// node is a file or directory of the recording, as the builder follows
// it through the log.
type node struct {
	parent  int32
	name    string
	dir     bool
	seen    bool  // the log has said whether it exists
	exists  bool  // set through setExists
	kids    int32 // children that exist, for a directory
	created bool  // the log created it
	written bool  // the log changed its size: its size before no longer grows
	// entry is its index in Initial (implied false) or Implied, or -1.
	entry   int32
	implied bool
	path    string
	epoch   uint32 // of path
	id      int32  // path's index in Trace.paths; 0 until known
	use     uses
	// removed is the operation that removed it (unlink, or the rmdir of
	// its directory when the log lost its unlink), if hasRemoved.
	removed    ref
	hasRemoved bool
	handles    []int32 // opened on it
}

// uses are the operations of the streams that touched a node or a handle
// since its last change, and that change: what a later operation of
// another stream waits for.
type uses struct {
	last    ref // the last change
	hasLast bool
	reads   []ref // one per stream, the latest
}

// handle is an open file or directory of the recording.
type handle struct {
	use    uses
	node   int32
	closed bool
}

// builder turns recorded operations, in the log's order, into a Trace.
type builder struct {
	t        *Trace
	nodes    []node
	handles  []handle
	dentries map[dentry]int32
	streams  map[uint32]int32
	classes  map[string]int16
	epoch    uint32 // bumped by every rename, which may move paths below it
	first    int64
	last     int64
	any      bool
	// vacated are the names the log renamed a node away from: a later
	// use of one as existing, with nothing making it again, is the log
	// contradicting itself, not an entry that was there before it.
	vacated map[dentry]bool
	// deps are the operation in progress's: the latest position in each
	// stream it waits for (a few at most: a slice, not a map).
	deps []ref
	// pendingUses are the operation in progress's uses of nodes and
	// handles, applied when it is committed: a line the replay does not
	// perform leaves no use behind for a later one to wait on.
	pendingUses []pendingUse
	// lastPID and lastStream cache stream's last answer: a log's
	// consecutive lines are often of one pid.
	lastPID    uint32
	lastStream int32
	lastClass  int16 // class's last answer
	// known holds, plus one, the class of each of knownOps's names (0:
	// none yet).
	known [64]int16
	// lat records each class's recorded latencies while the log is read,
	// added to its Histogram once at the end: a Recorder counts a value
	// in a few instructions, where a Histogram's record costs more.
	lat []*metrics.Recorder
	// sizes holds, per recorded pid, how many lines of the log it has: a
	// bound on its stream's operations, so that each stream's slice is
	// allocated once rather than grown (and copied) as the log is read.
	sizes map[uint32]int32
	// base is the start of the log's first entry, as the first pass read
	// it: an operation's Start is kept relative to it, so that finish
	// only goes over the operations again when the first operation is
	// not that entry's (a skipped line, or strace's, whose times the
	// first pass does not read).
	base    int64
	hasBase bool             // base is set: else the first operation's start sets it
	ids     map[string]int32 // paths -> their index in Trace.paths
	// size and read are the bytes of the log and those read so far, when
	// the log is read while its lines are parsed (sizes unknown): what
	// grow projects a slice's length from.
	size, read int64
}

type dentry struct {
	parent int32
	name   string
}

// root is the node of the run directory.
const root = 0

func newBuilder(format string) *builder {
	b := &builder{
		t:          &Trace{Format: format, Skipped: Skipped{Unsupported: map[string]int64{}}},
		dentries:   map[dentry]int32{},
		streams:    map[uint32]int32{},
		classes:    map[string]int16{},
		lastStream: -1,
		lastClass:  -1,
		sizes:      map[uint32]int32{},
		ids:        map[string]int32{"": 0},
	}
	b.t.paths, b.t.more = []string{""}, []opMore{{}}
	b.nodes = append(b.nodes, node{parent: -1, dir: true, seen: true, exists: true, entry: -1})
	return b
}

// child is the node at name in parent now, made (not yet seen) if the
// log has not named it before.
func (b *builder) child(parent int32, name string) int32 {
	if !plainName(name) {
		name = escapeName(name)
	}
	k := dentry{parent, name}
	if n, ok := b.dentries[k]; ok {
		return n
	}
	name = strings.Clone(name) // name may be a passing string over a line
	n := b.newNode(parent, name)
	b.dentries[dentry{parent, name}] = n
	return n
}

func (b *builder) newNode(parent int32, name string) int32 {
	b.nodes = push(b, b.nodes, node{parent: parent, name: name, entry: -1})
	return int32(len(b.nodes) - 1)
}

// pathOf is the node's path below the run directory.
func (b *builder) pathOf(n int32) string {
	nd := &b.nodes[n]
	if n == root {
		return ""
	}
	if nd.path == "" || nd.epoch != b.epoch {
		nd.path = b.pathOf(nd.parent) + "/" + nd.name
		nd = &b.nodes[n]
		nd.epoch, nd.id = b.epoch, 0
	}
	return nd.path
}

// pathID is the index in Trace.paths of the node's path now.
func (b *builder) pathID(n int32) int32 {
	p := b.pathOf(n)
	nd := &b.nodes[n]
	if n == root {
		return 0
	}
	if nd.id == 0 {
		id, ok := b.ids[p]
		if !ok {
			id = int32(len(b.t.paths))
			b.ids[p] = id
			b.t.paths = push(b, b.t.paths, p)
		}
		nd.id = id
	}
	return nd.id
}

// unlinkName takes the node away from its name (unlink, rmdir, the
// target of a rename). The name keeps the node, which no longer exists:
// a later use of the name that finds it is a line the log lost.
func (b *builder) unlinkName(n int32) { b.setExists(n, false) }

// move gives node n the name to in parent, replacing what was there.
func (b *builder) move(n, parent int32, name string) {
	k := dentry{parent, name}
	if old, ok := b.dentries[k]; ok && old != n {
		b.setExists(old, false)
	}
	b.setExists(n, false)
	nd := &b.nodes[n]
	if from := (dentry{nd.parent, nd.name}); b.dentries[from] == n {
		delete(b.dentries, from)
		if b.vacated == nil {
			b.vacated = map[dentry]bool{}
		}
		b.vacated[from] = true
	}
	nd.parent, nd.name = parent, name
	b.dentries[k] = n
	b.setExists(n, true)
	b.epoch++
}

// newHandle is a new handle of the recording, on node n.
func (b *builder) newHandle(n int32) int32 {
	b.handles = push(b, b.handles, handle{node: n})
	if n >= 0 {
		b.nodes[n].handles = append(b.nodes[n].handles, int32(len(b.handles)-1))
	}
	return int32(len(b.handles) - 1)
}

// pending is a recorded operation being added: the Op, the stream's id,
// the class's name, and what it touches.
type pending struct {
	op     Op
	pid    uint32
	name   string
	end    int64         // recorded completion, ns since the epoch
	done   int64         // bytes the recording moved (read, write)
	lat    time.Duration // recorded latency
	failed bool
}

// stream returns the index of the stream of pid, and the position the
// next operation takes in it.
func (b *builder) stream(pid uint32) (int32, int32) {
	if b.lastStream >= 0 && pid == b.lastPID {
		return b.lastStream, int32(len(b.t.Streams[b.lastStream].Ops))
	}
	s, ok := b.streams[pid]
	if !ok {
		s = int32(len(b.t.Streams))
		b.streams[pid] = s
		b.t.Streams = append(b.t.Streams, Stream{ID: pid, Ops: make([]Op, 0, b.sizes[pid])})
	}
	b.lastPID, b.lastStream = pid, s
	return s, int32(len(b.t.Streams[s].Ops))
}

// pendingUse is a use of node or handle i by the operation at r, kept
// until the operation is committed.
type pendingUse struct {
	r      ref
	i      int32
	handle bool
	change bool
}

// touch collects in b.deps what the operation at r, using u (changing
// it when change is set), must wait for; the use itself is recorded in
// u when the operation is committed (applyUses).
func (b *builder) touch(u *uses, r ref, change bool) {
	if u.hasLast && u.last.stream != r.stream {
		b.dep(u.last)
	}
	if change {
		for _, x := range u.reads {
			if x.stream != r.stream {
				b.dep(x)
			}
		}
	}
}

// use records in u that the operation at r used it.
func use(u *uses, r ref, change bool) {
	if change {
		u.last, u.hasLast, u.reads = r, true, u.reads[:0]
		return
	}
	for i := range u.reads {
		if u.reads[i].stream == r.stream {
			u.reads[i].pos = r.pos
			return
		}
	}
	u.reads = append(u.reads, r)
}

// applyUses records the committed operation's uses, in their order.
func (b *builder) applyUses() {
	for _, p := range b.pendingUses {
		if p.handle {
			use(&b.handles[p.i].use, p.r, p.change)
		} else {
			use(&b.nodes[p.i].use, p.r, p.change)
		}
	}
	b.pendingUses = b.pendingUses[:0]
}

// abandon forgets what the line in progress collected: it is not an
// operation of the replay's.
func (b *builder) abandon() {
	b.deps = b.deps[:0]
	b.pendingUses = b.pendingUses[:0]
}

func (b *builder) dep(x ref) {
	for i := range b.deps {
		if b.deps[i].stream == x.stream {
			b.deps[i].pos = max(b.deps[i].pos, x.pos)
			return
		}
	}
	b.deps = append(b.deps, x)
}

// touchNode and touchHandle touch a node or a handle.
func (b *builder) touchNode(n int32, r ref, change bool) {
	if n >= 0 {
		b.touch(&b.nodes[n].use, r, change)
		b.pendingUses = append(b.pendingUses, pendingUse{r: r, i: n, change: change})
	}
}
func (b *builder) touchHandle(h int32, r ref, change bool) {
	if h >= 0 {
		b.touch(&b.handles[h].use, r, change)
		b.pendingUses = append(b.pendingUses, pendingUse{r: r, i: h, handle: true, change: change})
	}
}

// commit appends the operation to its stream, with the dependencies
// collected since the last commit, and counts it in its class.
func (b *builder) commit(p *pending, s int32) {
	op := &p.op // p's: the operation is copied once, into its stream
	op.depLo = int32(len(b.t.deps))
	for _, d := range b.deps {
		b.t.deps = push(b, b.t.deps, d)
		b.t.Streams[d.stream].Ops[d.pos].signal = true
	}
	op.depHi = int32(len(b.t.deps))
	b.deps = b.deps[:0]
	b.applyUses()
	op.class = b.class(p.name)
	c := &b.t.Classes[op.class]
	if p.failed {
		c.Failed++
	} else {
		c.Ops++
		c.Bytes += p.done
		b.lat[op.class].Record(p.lat)
	}
	start := p.end - int64(p.lat)
	if !b.any || start < b.first {
		b.first = start
	}
	if !b.any || p.end > b.last {
		b.last = p.end
	}
	b.any = true
	if !b.hasBase {
		b.base, b.hasBase = start, true
	}
	op.Start = start - b.base // made relative to the first operation in finish
	st := &b.t.Streams[s]
	st.Ops = push(b, st.Ops, *op)
}

func (b *builder) class(name string) int16 {
	if b.lastClass >= 0 && b.t.Classes[b.lastClass].Name == name {
		return b.lastClass // a log's lines often repeat an operation
	}
	k := knownOp(name)
	if k >= 0 && b.known[k] > 0 {
		b.lastClass = b.known[k] - 1
		return b.lastClass
	}
	if c, ok := b.classes[name]; ok {
		b.lastClass = c
		return c
	}
	c := int16(len(b.t.Classes))
	b.classes[name] = c
	b.t.Classes = append(b.t.Classes, Class{Name: name, Latency: metrics.NewHistogram()})
	b.lat = append(b.lat, new(metrics.Recorder))
	if k >= 0 {
		b.known[k] = c + 1
	}
	b.lastClass = c
	return c
}

// more is what op has besides its own fields, made for it the first time.
// The pointer holds until the next call.
func (b *builder) more(op *Op) *opMore {
	if op.more == 0 {
		op.more = int32(len(b.t.more))
		b.t.more = push(b, b.t.more, opMore{})
	}
	return &b.t.more[op.more]
}

// rename sets op's target, path n.
func (b *builder) rename(op *Op, n int32) {
	to := b.pathID(n)
	b.more(op).to = to
}

// created says that the operation made node n.
// renamed adds what the rename op of n to dst needs and changes: their
// directories, made first when the log did not create them, and n itself
// when the rename succeeded. The caller moves n then.
func (b *builder) renamed(op *Op, n, dst int32, r ref, failed bool) {
	b.rename(op, dst)
	from, to := b.nodes[n].parent, b.nodes[dst].parent
	b.need(from, true, op)
	b.need(to, true, op)
	for _, x := range []int32{from, to, n, dst} {
		b.touchNode(x, r, true)
	}
	if !failed {
		b.need(n, false, op)
	}
}

func (b *builder) created(n int32, dir bool) {
	nd := &b.nodes[n]
	nd.seen, nd.created, nd.dir, nd.written = true, true, dir, true
	b.setExists(n, true)
}

// setExists records whether n exists, counting its parent's children.
func (b *builder) setExists(n int32, on bool) {
	nd := &b.nodes[n]
	if nd.exists == on || n == root {
		return
	}
	nd.exists = on
	if p := nd.parent; p >= 0 {
		if on {
			b.nodes[p].kids++
		} else {
			b.nodes[p].kids--
		}
	}
}

// emptied says that the operation removed directory n, which the log
// shows empty: entries it still holds in the log's view are what the log
// lost the removal of, and the replay removes them, untimed, first.
func (b *builder) emptied(n int32, op *Op, r ref) {
	if b.nodes[n].kids > 0 {
		op.clear = true
		b.t.Cleared++
		for k, c := range b.dentries {
			if k.parent == n && b.nodes[c].exists {
				b.setExists(c, false)
				b.removedBy(c, r)
			}
		}
	}
}

// removedBy says that the operation at r removed node n. It comes after
// the uses of the handles still open on n, which it may have to close
// (closeLost).
func (b *builder) removedBy(n int32, r ref) {
	b.nodes[n].removed, b.nodes[n].hasRemoved = r, true
	for _, h := range b.nodes[n].handles {
		if !b.handles[h].closed {
			b.touchHandle(h, r, true)
		}
	}
}

// closeLost closes, untimed, before the operation that removes its file,
// each handle the log never releases: the log lost its release, and a
// file system that keeps a removed file while it is open (FUSE's hidden
// files) would otherwise keep it in its directory.
func (b *builder) closeLost() {
	lost := map[ref][]int32{}
	for h := range b.handles {
		hd := &b.handles[h]
		if hd.closed || hd.node < 0 || !b.nodes[hd.node].hasRemoved {
			continue
		}
		r := b.nodes[hd.node].removed
		lost[r] = append(lost[r], int32(h))
	}
	for r, hs := range lost {
		lo := int32(len(b.t.closes))
		b.t.closes = append(b.t.closes, hs...)
		m := b.more(&b.t.Streams[r.stream].Ops[r.pos])
		m.closeLo, m.closeHi = lo, int32(len(b.t.closes))
	}
}

// grow makes a file the log did not create at least size bytes long,
// while the log has not changed it: what its reads and its attributes
// show of its size before the recording.
func (b *builder) grow(n int32, size int64) {
	nd := &b.nodes[n]
	if nd.written || nd.entry < 0 || nd.dir {
		return
	}
	e := &b.t.Initial
	if nd.implied {
		e = &b.t.Implied
	}
	if size > (*e)[nd.entry].Size {
		(*e)[nd.entry].Size = size
	}
}

// finish makes the operations' start times relative to the recording's
// first operation, and the trace's span.
func (b *builder) finish() *Trace {
	t := b.t
	if d := b.first - b.base; d != 0 {
		for i := range t.Streams {
			ops := t.Streams[i].Ops
			for j := range ops {
				ops[j].Start -= d
			}
		}
	}
	if b.any {
		t.Span = time.Duration(b.last - b.first)
	}
	for i := range t.Classes {
		t.Classes[i].Latency.Add(b.lat[i])
	}
	t.Handles = len(b.handles)
	b.closeLost()
	return t
}
