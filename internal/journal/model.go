package journal

import "sort"

// model is what the journal says each file should hold now: for each file
// still there, the live pieces of its writes (a piece a later write covered
// is dead) and the sums each piece's range held before (for stale content).
type model struct {
	files    map[string]*fileState
	deleted  map[string]int64 // path -> time of its delete, for files not there any more
	writes   int
	unsynced int // writes no fsync or syncfs covers
}

type fileState struct {
	cells  map[int64][]*piece // by Off/Cell
	writes []*write
	open   []*write // writes not yet covered by a sync
}

type write struct {
	path    string
	off, n  int64
	at      int64
	durable bool
	live    []*piece
}

type piece struct {
	off, n int64
	sum    uint32
	known  bool     // the write's content was known to the journal
	old    []uint32 // sums of earlier writes of exactly this range
	dead   bool
	w      *write
}

// build replays the records in time order.
func build(recs []Record) *model {
	m := &model{files: map[string]*fileState{}, deleted: map[string]int64{}}
	for i := range recs {
		m.apply(&recs[i])
	}
	return m
}

func (m *model) file(path string) *fileState {
	f := m.files[path]
	if f == nil {
		f = &fileState{cells: map[int64][]*piece{}}
		m.files[path] = f
		delete(m.deleted, path)
	}
	return f
}

func (m *model) apply(r *Record) {
	switch r.Type {
	case Write:
		m.write(r)
	case Sync:
		if f := m.files[r.Path]; f != nil {
			f.sync(r.T)
		}
	case SyncAll:
		for _, f := range m.files { // syncfs: the whole file system
			f.sync(r.T)
		}
	case Created:
		m.drop(r.Path)
		m.file(r.Path)
	case Delete:
		if m.drop(r.Path) {
			m.deleted[r.Path] = r.T
		}
	case Rename:
		if f := m.files[r.Path]; f != nil {
			m.drop(r.To)
			delete(m.files, r.Path)
			m.files[r.To] = f
			for _, w := range f.writes {
				w.path = r.To
			}
		}
	}
}

// drop forgets a file's content; it reports whether there was one.
func (m *model) drop(path string) bool {
	f := m.files[path]
	if f == nil {
		return false
	}
	for _, w := range f.writes {
		for _, p := range w.live {
			p.dead = true
		}
	}
	delete(m.files, path)
	return true
}

// sync makes the file's writes acknowledged before t durable.
func (f *fileState) sync(t int64) {
	keep := f.open[:0]
	for _, w := range f.open {
		if w.at <= t {
			w.durable = true
		} else {
			keep = append(keep, w)
		}
	}
	f.open = keep
}

func (m *model) write(r *Record) {
	f := m.file(r.Path)
	w := &write{path: r.Path, off: r.Off, n: r.Len, at: r.T}
	i := 0
	Pieces(r.Off, r.Len, func(o, l int64) {
		p := &piece{off: o, n: l, w: w, known: len(r.Sums) > 0}
		if p.known {
			p.sum = r.Sums[i]
		}
		i++
		f.place(p)
		w.live = append(w.live, p)
	})
	f.writes = append(f.writes, w)
	f.open = append(f.open, w)
	m.writes++
}

// place puts p in its cell: a piece of the same range becomes its history,
// one it overlaps dies.
func (f *fileState) place(p *piece) {
	c := p.off / Cell
	kept := f.cells[c][:0]
	for _, q := range f.cells[c] {
		switch {
		case q.off == p.off && q.n == p.n:
			if q.known && q.sum != p.sum {
				p.old = append(q.old, q.sum)
			} else {
				p.old = q.old
			}
			q.dead = true
		case q.off < p.off+p.n && p.off < q.off+q.n:
			q.dead = true
		default:
			kept = append(kept, q)
		}
	}
	f.cells[c] = append(kept, p)
}

// paths are the files the model expects, in order.
func (m *model) paths() []string {
	ps := make([]string, 0, len(m.files))
	for p := range m.files {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}

// liveWrites are f's writes with pieces still live, by offset.
func (f *fileState) liveWrites() []*write {
	var ws []*write
	for _, w := range f.writes {
		live := w.live[:0]
		for _, p := range w.live {
			if !p.dead {
				live = append(live, p)
			}
		}
		w.live = live
		if len(live) > 0 {
			ws = append(ws, w)
		}
	}
	sort.SliceStable(ws, func(a, b int) bool { return ws[a].off < ws[b].off })
	return ws
}
