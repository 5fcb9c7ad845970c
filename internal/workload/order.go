package workload

import (
	"math/rand/v2"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/skew"
)

// blockOrder is the order of a visit's blocks with random access: a
// permutation (every block once, as fio's and vdbench's random map), or,
// when the phase has a distribution (FilePhase.Skew), as many picks from
// it as the file has blocks, some twice (as fio without its random map).
type blockOrder struct {
	perm engine.Perm
	pick *skew.Sampler // nil: the permutation
}

// prepare readies the order for phase p: a new count of picks when it
// draws from a distribution.
func (o *blockOrder) prepare(p *FilePhase) {
	o.pick = nil
	if p.Access == Random && !p.Skew.IsUniform() {
		o.pick = skew.NewSampler(p.Skew, 1)
	}
}

// init starts the order of a visit to a file of blocks blocks.
func (o *blockOrder) init(blocks uint64, r *rand.Rand) {
	if o.pick != nil {
		o.pick.Reset(int(min(blocks, 1<<62)))
		return
	}
	o.perm.Init(blocks, r)
}

// next is the visit's next block.
func (o *blockOrder) next(r *rand.Rand) uint64 {
	if o.pick != nil {
		return uint64(o.pick.Pick(r))
	}
	return o.perm.Next()
}

// addBlockAccess adds to res how the workers' picks of blocks fell.
func (e *Runner) addBlockAccess(res *Result, p *FilePhase) {
	if res == nil || p.Access != Random || p.Skew.IsUniform() {
		return
	}
	var c skew.Counts
	for _, f := range e.files {
		if f.order.pick != nil {
			c.Add(f.order.pick.Take())
		}
	}
	// Files of one block each have nothing to skew within them: no line.
	if c.Draws > 0 && c.Items > 1 {
		res.Access = append(res.Access, engine.AccessReport(p.Skew, "blocks", c))
	}
}
