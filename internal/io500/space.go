package io500

import (
	"fmt"

	"github.com/fsbench/fsbench/internal/runenv"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/units"
)

// Need is the most the suite's files hold at once, on the file system all
// ranks share: ior-easy's file of every rank, ior-hard's shared file and
// mdtest-hard's files, all there until the delete phases (mdtest-easy's
// files are empty). The write phases stop at the stonewall, so a run
// writes this only when its amounts end first.
type Need struct {
	Ranks                   int
	Easy, Hard, MdHard, All int64
}

// NeedOf is what a run with o's amounts writes at most.
func NeedOf(o Options) Need {
	world := max(o.World, o.Threads)
	z, w := o.Sizes, int64(world)
	n := Need{Ranks: world}
	n.Easy = sysio.MulCapped(w, sysio.OnDisk(sysio.MulCapped(z.EasyXfer, int64(z.EasySegments))))
	n.Hard = sysio.OnDisk(sysio.MulCapped(sysio.MulCapped(w, int64(z.HardSegments)), HardXfer))
	n.MdHard = sysio.MulCapped(sysio.MulCapped(w, int64(z.HardFiles)), sysio.OnDisk(HardFileSize))
	n.All = sysio.AddCapped(sysio.AddCapped(n.Easy, n.Hard), n.MdHard)
	return n
}

// CheckSpace refuses (runenv.ErrBadInput), before anything is written, a
// run whose amounts do not fit in the free space of the file system at
// dir: a run that fills it fails late, and on a tmpfs fills the memory.
// IO500's standard amounts (about 10 TiB a rank) are meant to outlast the
// stonewall, which ends the writes: those are not refused, and the
// warning says what the run relies on. o.NoSpaceCheck skips the check,
// for given amounts the stonewall is known to end first.
func CheckSpace(dir string, o Options) (warning string, err error) {
	if o.NoSpaceCheck {
		return "", nil
	}
	n := NeedOf(o)
	free, short := sysio.Short(dir, n.All)
	switch {
	case !short:
		return "", nil
	case o.Sizes == Standard():
		return fmt.Sprintf("IO500's standard amounts are up to %s and %s has %s free: the stonewall (%s) must end the writes before they fill it; "+
			"smaller amounts (--ior-easy-transfers, --ior-hard-segments, --mdtest-hard-files) bound them",
			units.FormatBytes(n.All), dir, units.FormatBytes(free), o.Stonewall), nil
	}
	return "", runenv.BadInput(fmt.Errorf("io500 writes up to %s (%s: ior-easy %s, ior-hard %s, mdtest-hard %s) and %s has %s free; "+
		"give smaller amounts (--ior-easy-transfers, --ior-hard-segments, --mdtest-hard-files) or fewer ranks, "+
		"or --no-space-check if the stonewall ends the writes before they fill it",
		units.FormatBytes(n.All), units.Count(n.Ranks, "rank"), units.FormatBytes(n.Easy), units.FormatBytes(n.Hard),
		units.FormatBytes(n.MdHard), dir, units.FormatBytes(free)))
}
