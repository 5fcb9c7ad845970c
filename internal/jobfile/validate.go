package jobfile

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
)

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// Validate checks the job as a whole: what each phase asks is possible,
// with the tree or files it has. Parse calls it; a job built from flags
// must call it too. Errors carry the phase's line when it has one.
func (j *Job) Validate() error {
	errAt := func(line int, format string, args ...any) error {
		return &Error{j.File, line, fmt.Sprintf(format, args...)}
	}
	if len(j.Phases) == 0 {
		return errAt(0, "no phases")
	}
	if t := j.Tree; t != nil {
		if err := t.Shape.Validate(); err != nil {
			return errAt(t.Line, "tree: %v", err)
		}
		if t.Dir != "" {
			if strings.HasPrefix(t.Dir, "/") || t.Dir == "." || containsDotDot(t.Dir) {
				return errAt(t.Line, "tree.dir %q must be a relative path inside the benchmarked PATH, without ..", t.Dir)
			}
		}
	}
	seen := map[string]int{}
	written := false // a shared write comes before
	for i := range j.Phases {
		ph := &j.Phases[i]
		if !nameRE.MatchString(ph.Name) {
			return errAt(ph.Line, "phase name %q: want lower-case letters, digits, '.', '_' and '-' (it names the phase in results and --expect)", ph.Name)
		}
		if l, ok := seen[ph.Name]; ok {
			return errAt(ph.Line, "phase name %q is used twice (first at line %d)", ph.Name, l)
		}
		seen[ph.Name] = ph.Line
		if err := j.validatePhase(ph); err != nil {
			return errAt(ph.Line, "phase %s: %v", ph.Name, err)
		}
		if ph.Shared {
			if err := j.validateShared(ph, written); err != nil {
				return errAt(ph.Line, "phase %s: %v", ph.Name, err)
			}
			written = written || ph.Op == OpWrite
		}
	}
	return nil
}

func containsDotDot(p string) bool {
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return true
		}
	}
	return false
}

func (j *Job) validatePhase(ph *PhaseSpec) error {
	if _, ok := opKinds[ph.Op]; !ok {
		return fmt.Errorf("unknown operation %q (want one of %s)", ph.Op, strings.Join(Ops(), ", "))
	}
	if ph.XferSize == 0 {
		ph.XferSize = DefaultXferSize
	}
	if ph.XferSize > units.GiB {
		return fmt.Errorf("xfer_size %s is larger than 1 GiB", units.FormatBytes(ph.XferSize))
	}
	switch {
	case ph.Op == OpRW && ph.ReadPct < 0:
		ph.ReadPct = DefaultReadPct
	case ph.Op != OpRW && ph.ReadPct >= 0:
		return errors.New("read_pct applies to op rw (mixed reads and writes), e.g. op: rw, read_pct: 70 for vdbench's rdpct=70")
	}
	tree := j.Tree != nil
	if tree && ph.FileSize != 0 {
		return errors.New("file_size is the tree's (tree.file_size) when there is a tree")
	}
	if !tree {
		// Reads and writes need a size; metadata operations work on
		// empty files unless one is given.
		if ph.FileSize == 0 && ph.Data() {
			ph.FileSize = DefaultFileSize
		}
		if ph.Op == OpFormat {
			return errors.New("op format needs a tree; without one, files are laid out before the first read")
		}
		if NeedsTree(ph.Op) {
			return fmt.Errorf("op %s needs a tree (tree: depth, width, files)", ph.Op)
		}
	}
	if ph.Data() && j.fileSize(ph) == 0 {
		return fmt.Errorf("op %s needs files of more than 0 bytes (file_size)", ph.Op)
	}
	if ph.Warmup > 0 && ph.Duration == 0 {
		return errors.New("warmup needs a duration (it is excluded from a time-limited phase)")
	}
	if ph.eachFileOnce() && (!ph.OnePass() || ph.Rate > 0) {
		return fmt.Errorf("op %s does each file once: duration, ops and rate do not apply", ph.Op)
	}
	if !ph.Distribution.IsUniform() && !ph.Random() {
		return fmt.Errorf("distribution %s draws random picks: it needs access: random or select: random", ph.Distribution)
	}
	if ph.IODepth > 1 && ph.IOEngine != workload.IOUring {
		return fmt.Errorf("iodepth %d needs ioengine io_uring (the sync engine has one operation in flight per thread)", ph.IODepth)
	}
	if err := engine.CheckRate(ph.Rate, 1, ph.Ops, ph.Duration); err != nil {
		return err
	}
	if ph.Interval > 0 && ph.Interval < 10*time.Millisecond {
		return errors.New("interval must be at least 10ms")
	}
	return nil
}

// validateShared checks a phase on the shared file.
func (j *Job) validateShared(ph *PhaseSpec, written bool) error {
	switch {
	case j.Tree != nil:
		return errors.New("shared: true works on one file, not on a tree")
	case ph.Op != OpWrite && ph.Op != OpRead:
		return fmt.Errorf("shared: true applies to op read and op write, not %s", ph.Op)
	case ph.Access == workload.Random:
		return errors.New("shared: true lays out its transfers itself (segments, block_size); access: random does not apply")
	case !ph.OnePass() && ph.Duration == 0:
		return errors.New("shared: true is one pass of the segments, ended early by a duration (a stonewall); ops do not apply")
	case ph.Rate > 0 || ph.Warmup > 0:
		return errors.New("shared: true does not take a rate or a warm-up")
	case ph.Op == OpRead && !written:
		return errors.New("a shared read reads what a shared write before it wrote: add one")
	}
	if ph.Block == 0 {
		ph.Block = ph.XferSize
	}
	if ph.Block%ph.XferSize != 0 {
		return fmt.Errorf("block_size %d is not a multiple of xfer_size %d", ph.Block, ph.XferSize)
	}
	return nil
}
