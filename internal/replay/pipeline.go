package replay

import (
	"bytes"
	"cmp"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/fsbench/fsbench/internal/accesslog"
)

// chunkBytes is about how much of a log one task of a pipelined load's
// first pass reads (a variable: tests make it small, to cut their logs
// into many chunks).
var chunkBytes = 256 << 10

// maxCarry bounds the lines carried from chunk to chunk (each chunk
// copies them once more): a log out of order by more than that is read
// again whole and sorted instead.
var maxCarry = 1 << 16

// chunk is one task of the first pass of a pipelined load: whole lines of
// the log, read into recs.
type chunk struct {
	off, end int   // data[off:end]
	recs     []rec // a buffer of the load's few, handed back once built
	// lead counts the lines before its first entry, which take the
	// completion time of the log's last entry before them (order's
	// rule) once the chunks before are known; the rest of recs are in
	// order of completion, sorted when the log's were not.
	lead     int
	hasEntry bool
	last     int64         // its last entry's completion, in the log's order
	panic    any           // what reading it panicked with
	done     chan struct{} // closed once it is read
}

// pipeline reads the lines of data and builds the trace from them while
// they are read: the first pass reads chunks of the log on the processors
// the second leaves (one at least), a few chunks ahead of the second, which builds from each
// chunk, in order of completion, as soon as it and the next are read,
// and hands its buffer back. The elapsed time is about the second pass's
// alone, and the first pass's records stay in a few buffers that the
// processor's caches hold rather than in memory of the log's size.
//
// A log is in order of completion but for neighbours (JuiceFS's, written
// as operations complete on many threads): the operations of a chunk
// that complete after the next chunk's first are carried over to it. A
// line that completes before one already built (fsbench's log, written
// in batches) stops the pipeline: it returns false, l then holding part
// of the log, for the caller to load it again through order, which sorts
// the whole log.
func (l *loader) pipeline(data []byte) bool {
	chunks := splitChunks(data, chunkBytes)
	procs := runtime.GOMAXPROCS(0)
	free := make(chan []rec, 2*procs+2)
	for range cap(free) {
		free <- nil
	}
	quit := make(chan struct{})
	var next atomic.Int64
	var wg sync.WaitGroup
	defer func() {
		close(quit)
		wg.Wait()
	}()
	// A reader on every processor as well made the second pass slower (it
	// lost its processor and its caches to them), not the load shorter.
	for range min(max(1, procs-1), len(chunks)) {
		wg.Go(func() { readChunks(data, chunks, &next, free, quit) })
	}
	l.b.size = int64(len(data))
	m := merger{l: l, data: data, built: math.MinInt64}
	lastEntry := int64(math.MinInt64) // in the log's order
	var prev *chunk
	for i := 0; i <= len(chunks); i++ {
		var c *chunk
		below := int64(math.MaxInt64) // the next chunk's first completion
		if i < len(chunks) {
			c = &chunks[i]
			<-c.done
			if c.panic != nil {
				panic(c.panic)
			}
			for k := range c.lead {
				c.recs[k].time = lastEntry
			}
			if c.hasEntry {
				lastEntry = c.last
			}
			if len(c.recs) > 0 {
				below = c.recs[0].time
			}
			if c.lead > 0 && c.lead < len(c.recs) {
				below = min(below, c.recs[c.lead].time)
			}
			if below < m.built {
				return false
			}
		}
		if prev != nil {
			m.build(prev, below)
			free <- prev.recs
			if len(m.carry) > maxCarry {
				return false
			}
		}
		prev = c
	}
	return true
}

// merger builds a pipelined load's lines in order of completion.
type merger struct {
	l     *loader
	data  []byte
	carry []rec // lines of chunks before, completed after the last built
	spare []rec
	built int64 // the completion of the last line built
}

// build builds, in order of completion, the lines of chunk c and those
// carried from before it that complete by upto, and carries the rest
// over. Three runs, each in order: the carried lines, c's lead lines and
// the rest of c; a tie goes to the earlier in the log.
func (m *merger) build(c *chunk, upto int64) {
	runs := [3][]rec{m.carry, c.recs[:c.lead], c.recs[c.lead:]}
	out := m.spare[:0]
	lead, rest := runs[1], runs[2]
	if len(m.carry) == 0 && (len(lead) == 0 || len(rest) == 0 || lead[len(lead)-1].time <= rest[0].time) {
		// The usual: c alone, in order (strace's lines are all lead).
		rs := c.recs
		k := 0
		for ; k < len(rs) && rs[k].time <= upto; k++ {
			m.l.line(m.data, &rs[k])
		}
		if k > 0 {
			m.built = rs[k-1].time
		}
		m.carry, m.spare = append(out, rs[k:]...), m.carry
		return
	}
	for {
		k := -1
		for j := range runs {
			if len(runs[j]) > 0 && (k < 0 || runs[j][0].time < runs[k][0].time) {
				k = j
			}
		}
		if k < 0 {
			break
		}
		if r := &runs[k][0]; r.time <= upto {
			m.l.line(m.data, r)
			m.built = r.time
		} else {
			out = append(out, *r)
		}
		runs[k] = runs[k][1:]
	}
	m.carry, m.spare = out, m.carry
}

// splitChunks cuts data into chunks of whole lines of about size bytes.
func splitChunks(data []byte, size int) []chunk {
	var cs []chunk
	for off := 0; off < len(data); {
		end := min(off+size, len(data))
		if k := bytes.IndexByte(data[end:], '\n'); k >= 0 && end < len(data) {
			end += k + 1
		} else {
			end = len(data)
		}
		cs = append(cs, chunk{off: off, end: end, done: make(chan struct{})})
		off = end
	}
	return cs
}

// readChunks reads the chunks of a pipelined load, the next one not yet
// taken each time, once it has a buffer for it, until none is left or the
// load stops (quit).
func readChunks(data []byte, chunks []chunk, next *atomic.Int64, free chan []rec, quit chan struct{}) {
	p, e := accesslog.NewParser(nil), &accesslog.Entry{}
	for {
		var buf []rec
		select {
		case buf = <-free:
		case <-quit:
			return
		}
		select {
		case <-quit:
			return
		default:
		}
		// The buffer before the chunk: the chunk the second pass waits
		// for always has one.
		i := int(next.Add(1) - 1)
		if i >= len(chunks) {
			return
		}
		c := &chunks[i]
		c.panic = reraise(func() { c.recs = readChunk(p, e, data, c, buf[:0]) })
		close(c.done)
	}
}

// readChunk reads the lines of chunk c into recs, its lines after its
// lead in order of completion.
func readChunk(p *accesslog.Parser, e *accesslog.Entry, data []byte, c *chunk, recs []rec) []rec {
	sorted := true
	c.lead, c.hasEntry, c.last = 0, false, math.MinInt64
	for off := c.off; off < c.end; {
		n, next := lineAt(data, off, c.end)
		recs = append(recs, rec{})
		r := &recs[len(recs)-1]
		r.off, r.n = off, uint32(min(n, maxLine+1))
		read(p, e, data[off:off+n:len(data)], r)
		switch {
		case r.kind == kindEntry || r.kind == kindLongEntry:
			if c.hasEntry && r.time < c.last {
				sorted = false
			}
			c.hasEntry, c.last = true, r.time
		case !c.hasEntry:
			c.lead++
		default:
			r.time = c.last // as order does: its place after the entry before
		}
		off = next
	}
	if !sorted {
		slices.SortStableFunc(recs[c.lead:], func(a, b rec) int { return cmp.Compare(a.time, b.time) })
	}
	return recs
}
