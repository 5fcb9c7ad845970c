package workload

import "github.com/fsbench/fsbench/internal/pattern"

// ahead makes the next block of a file on a helper goroutine while the
// worker writes the current one, so that making data overlaps the I/O when
// a CPU is spare. Only one block is ever in the making; the helper touches
// a buffer only between start and wait, and stop waits for it, so the
// worker's buffers are its own again when the file is done.
type ahead struct {
	on      bool
	pending bool
	jobs    chan aheadJob
	ready   chan struct{}
}

type aheadJob struct {
	buf []byte
	off int64
}

// makeAhead starts a helper for a file of phase p, when the worker has a
// spare buffer, the file has more than one block and its blocks do not
// come from the worker's stream.
func (e *Runner) makeAhead(f *files, p *FilePhase, id uint64) *ahead {
	a := &ahead{}
	if f.spare == nil || p.FileSize <= p.BlockSize || f.stream != nil && pattern.IsStream(id) {
		return a
	}
	a.on = true
	a.jobs, a.ready = make(chan aheadJob, 1), make(chan struct{}, 1)
	go func() {
		for j := range a.jobs {
			e.pattern.Fill(j.buf[:min(p.BlockSize, p.FileSize-j.off)], id, j.off)
			a.ready <- struct{}{}
		}
	}()
	return a
}

func (a *ahead) start(buf []byte, off int64) {
	a.jobs <- aheadJob{buf, off}
	a.pending = true
}

func (a *ahead) wait() {
	<-a.ready
	a.pending = false
}

func (a *ahead) stop() {
	if !a.on {
		return
	}
	if a.pending {
		a.wait()
	}
	close(a.jobs)
}
