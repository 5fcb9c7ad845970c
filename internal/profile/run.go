package profile

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"
)

// Modes of a run, as Window.Mode names them.
const (
	ModeLive    = "live"
	ModeReplay  = "replay"
	ModeSummary = "summary"
)

// Options say how to read and show a log.
type Options struct {
	// Interval is the length of a window; 0 reads the whole log and shows
	// one summary over its span.
	Interval time.Duration
	// Live windows are of wall-clock time as the log grows (a mount's
	// access log, or --follow); otherwise windows follow the log's own
	// timestamps.
	Live   bool
	Filter Filter
	Sort   string // SortTotal (default), SortCount, SortAvg, SortP99
	Top    int    // rows per window; 0 for all
	JSON   bool   // one JSON object per window, one per line
	// Terminal clears the screen and redraws each window in place;
	// otherwise windows are printed one after another as plain blocks.
	Terminal bool
	Color    bool
	// Speed paces a replay: log seconds shown per wall-clock second; 0
	// replays as fast as the log can be read.
	Speed float64
	// Pause, in a paced replay, pauses and resumes at each receive (Enter
	// on a terminal).
	Pause <-chan struct{}
	// Location is the time zone of the log's timestamps (JuiceFS writes
	// local time); nil means time.Local.
	Location *time.Location
	// Source names the log in headers and JSON.
	Source string
}

// Run reads the log from in and writes windows to out until the log ends
// (replay, summary), or until ctx is cancelled or in ends (live). It
// returns ctx.Err() when cancelled. Lines that are not entries are counted
// and skipped, never fatal.
func Run(ctx context.Context, in io.Reader, out io.Writer, o Options) error {
	if o.Interval < 0 {
		return fmt.Errorf("interval %v is negative", o.Interval)
	}
	if o.Live && o.Interval == 0 {
		return errors.New("a live profile needs an interval above 0")
	}
	if o.Sort == "" {
		o.Sort = SortTotal
	}
	if err := CheckSort(o.Sort); err != nil {
		return err
	}
	if o.Location == nil {
		o.Location = time.Local
	}
	if !o.Terminal {
		o.Color = false
	}
	r := &run{ctx: ctx, o: &o, agg: newAggregator(o.Location, o.Filter), out: newDisplay(out, &o)}
	r.split.long = func() { r.agg.lines++; r.agg.skipped.Malformed++ }
	src := startReader(ctx, in)
	defer src.stop()
	var err error
	switch {
	case o.Live:
		return r.live(src)
	case o.Interval == 0:
		err = r.summary(src)
	default:
		err = r.replay(src)
	}
	if err == nil {
		err = r.noEntries()
	}
	return err
}

// noEntries is the error of a log read to its end that held lines and not
// one entry: another format, such as strace's, shown as an empty table
// with nothing to say why.
func (r *run) noEntries() error {
	bad := r.agg.skippedAll.Bad()
	if r.started || bad == 0 {
		return nil
	}
	return badInputf("%s: none of its %d lines is an access-log entry (JuiceFS's format, as fsbench bench --access-log writes it too); strace's output is read by fsbench replay",
		r.o.Source, r.agg.skippedAll.Total())
}

type run struct {
	ctx   context.Context
	o     *Options
	agg   *aggregator
	out   *display
	split splitter
	err   error // the first render or cancellation error of a replay

	// Replay: the current window is [start, end) in log time (ns);
	// started once an entry was read (in a summary too).
	started    bool
	start, end int64
}

func (r *run) time(ns int64) time.Time { return time.Unix(0, ns).In(r.o.Location) }

func (r *run) window(mode string, start, end time.Time) *Window {
	w := r.agg.window(mode, start, end, r.o.Sort, r.o.Top)
	w.Source = r.o.Source
	return w
}

// consume feeds every chunk of src to handle until src ends.
func (r *run) consume(src *chunkReader, handle func([]byte)) error {
	for {
		select {
		case chunk, ok := <-src.chunks:
			if !ok {
				if err := src.err; err != nil && !errors.Is(err, io.EOF) {
					return r.readError(err)
				}
				r.split.flush(handle)
				return r.err
			}
			r.split.feed(chunk, handle)
			src.recycle(chunk)
			if r.err != nil {
				return r.err
			}
		case <-r.ctx.Done():
			return r.ctx.Err()
		}
	}
}

func (r *run) readError(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if Damaged(err) {
		return &badInput{fmt.Errorf("read %s: %w: the compressed log is cut short or damaged", r.o.Source, err)}
	}
	return fmt.Errorf("read %s: %w", r.o.Source, err)
}

// Damaged reports whether err is a compressed log's fault, not the
// reading's: it ends early or fails its checks. The user names another
// log, as for one that cannot be opened.
func Damaged(err error) bool {
	var corrupt flate.CorruptInputError
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, gzip.ErrChecksum) ||
		errors.Is(err, gzip.ErrHeader) || errors.As(err, &corrupt)
}

// summary counts the whole log into one window spanning its first to its
// last counted entry. Whole lines are counted in parallel, on up to
// GOMAXPROCS (at most 4) goroutines, each with its own aggregator; the
// line that spans two chunks is counted here.
func (r *run) summary(src *chunkReader) error {
	workers := min(runtime.GOMAXPROCS(0), 4)
	handle := func(line []byte) {
		if e := r.agg.parse(line); e != nil {
			r.agg.add(e)
		}
	}
	var err error
	if workers < 2 {
		err = r.consume(src, handle)
	} else {
		err = r.consumeParallel(src, handle, workers)
	}
	// Interrupted (Ctrl-C on a log that does not end, such as a mount's
	// access log on standard input): show what was counted so far.
	interrupted := err != nil && r.ctx.Err() != nil
	if err != nil && !interrupted {
		return err
	}
	a := r.agg
	w := r.window(ModeSummary, r.time(a.first), r.time(a.latest))
	r.started = w.Entries+w.Filtered > 0
	if w.Entries == 0 {
		w.Start, w.End, w.Seconds = time.Time{}, time.Time{}, 0
	}
	w.Last, w.Interrupted = true, interrupted
	if rerr := r.out.render(w); rerr != nil {
		return rerr
	}
	return err
}

func (r *run) consumeParallel(src *chunkReader, handle func([]byte), workers int) error {
	type job struct{ buf, lines []byte }
	jobs := make(chan job, workers)
	aggs := make([]*aggregator, workers)
	var wg sync.WaitGroup
	for i := range aggs {
		a := newAggregator(r.o.Location, r.o.Filter)
		aggs[i] = a
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				b := j.lines
				for len(b) > 0 {
					k := bytes.IndexByte(b, '\n')
					if e := a.parse(b[:k]); e != nil {
						a.add(e)
					}
					b = b[k+1:]
				}
				src.recycle(j.buf)
			}
		}()
	}
	finish := func() {
		close(jobs)
		wg.Wait()
		for _, a := range aggs {
			r.agg.merge(a)
		}
	}
	for {
		select {
		case chunk, ok := <-src.chunks:
			if !ok {
				finish()
				if err := src.err; err != nil && !errors.Is(err, io.EOF) {
					return r.readError(err)
				}
				r.split.flush(handle)
				return nil
			}
			// The first line completes the one held from the last chunk;
			// the last one, if unfinished, is held for the next. Both are
			// copied or counted before the chunk goes to a worker, which
			// recycles it.
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				r.split.feed(chunk, handle)
				src.recycle(chunk)
				continue
			}
			r.split.feed(chunk[:i+1], handle)
			j := bytes.LastIndexByte(chunk, '\n')
			r.split.feed(chunk[j+1:], handle)
			if j > i {
				jobs <- job{chunk, chunk[i+1 : j+1]}
			} else {
				src.recycle(chunk)
			}
		case <-r.ctx.Done():
			finish()
			return r.ctx.Err()
		}
	}
}

// replay cuts the log into windows of its own time. Windows without any
// line are skipped, so a gap in the log costs no time. Entries older than
// the current window (a log written out of order) count in it.
func (r *run) replay(src *chunkReader) error {
	iv := int64(r.o.Interval)
	handle := func(line []byte) {
		if r.err != nil {
			return
		}
		e := r.agg.parse(line)
		if e == nil {
			return
		}
		if !r.started {
			r.start, r.end, r.started = e.Time, e.Time+iv, true
		}
		if e.Time >= r.end {
			if r.err = r.emit(false); r.err != nil {
				return
			}
			k := (e.Time - r.end) / iv
			r.start = r.end + k*iv
			r.end = r.start + iv
		}
		r.agg.add(e)
	}
	if err := r.consume(src, handle); err != nil {
		return err
	}
	return r.emit(true)
}

func (r *run) emit(last bool) error {
	if r.agg.lines == 0 && !last {
		return nil
	}
	w := r.window(ModeReplay, r.time(r.start), r.time(r.end))
	if !r.started {
		w.Start, w.End, w.Seconds = time.Time{}, time.Time{}, 0
	}
	w.Last = last
	if err := r.out.render(w); err != nil {
		return err
	}
	if last || r.o.Speed <= 0 {
		return nil
	}
	return r.wait(time.Duration(float64(r.o.Interval) / r.o.Speed))
}

// wait sleeps between the windows of a paced replay; a receive on Pause
// pauses until the next one.
func (r *run) wait(d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return r.ctx.Err()
		case <-t.C:
			return nil
		case <-r.o.Pause:
			if err := r.out.paused(); err != nil {
				return err
			}
			select {
			case <-r.ctx.Done():
				return r.ctx.Err()
			case <-r.o.Pause:
			}
			return nil
		}
	}
}

// live shows a window of wall-clock time every interval, counting the
// lines that arrive in it, until ctx is cancelled or the input ends.
func (r *run) live(src *chunkReader) error {
	handle := func(line []byte) {
		if e := r.agg.parse(line); e != nil {
			r.agg.add(e)
		}
	}
	tick := time.NewTicker(r.o.Interval)
	defer tick.Stop()
	start := time.Now()
	if r.o.Terminal {
		if err := r.out.waiting(start); err != nil {
			return err
		}
	}
	for {
		select {
		case chunk, ok := <-src.chunks:
			if !ok {
				r.split.flush(handle)
				w := r.window(ModeLive, start, time.Now())
				w.Last = true
				if err := r.out.render(w); err != nil {
					return err
				}
				if err := src.err; err != nil && !errors.Is(err, io.EOF) {
					return r.readError(err)
				}
				return nil
			}
			r.split.feed(chunk, handle)
			src.recycle(chunk)
		case now := <-tick.C:
			if err := r.out.render(r.window(ModeLive, start, now)); err != nil {
				return err
			}
			start = now
		case <-r.ctx.Done():
			return r.ctx.Err()
		}
	}
}

// chunkReader reads its input in a goroutine of its own, so that
// decompression overlaps parsing, and so that a read that blocks (a pipe,
// a terminal, a JuiceFS mount's access log) does not keep Ctrl-C from
// stopping the run.
type chunkReader struct {
	chunks chan []byte
	free   chan []byte
	quit   chan struct{}
	err    error // why the input ended; read after chunks is closed
}

const chunkBuffers = 4

func startReader(ctx context.Context, in io.Reader) *chunkReader {
	c := &chunkReader{
		chunks: make(chan []byte, chunkBuffers),
		free:   make(chan []byte, chunkBuffers),
		quit:   make(chan struct{}),
	}
	for i := 0; i < chunkBuffers; i++ {
		c.free <- make([]byte, readBufSize)
	}
	go func() {
		defer close(c.chunks)
		for {
			var buf []byte
			select {
			case buf = <-c.free:
			case <-c.quit:
				return
			case <-ctx.Done():
				c.err = ctx.Err()
				return
			}
			n, err := in.Read(buf[:cap(buf)])
			if n > 0 {
				select {
				case c.chunks <- buf[:n]:
				case <-c.quit:
					return
				case <-ctx.Done():
					c.err = ctx.Err()
					return
				}
			} else {
				c.free <- buf
			}
			if err != nil {
				c.err = err
				return
			}
		}
	}()
	return c
}

func (c *chunkReader) recycle(b []byte) { c.free <- b }

// stop ends the reading goroutine (unless it is blocked in a read, which
// it leaves when the read returns).
func (c *chunkReader) stop() { close(c.quit) }
