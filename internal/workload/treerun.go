package workload

import "errors"

// TreeRun is a tree through the phases of one run: it readies the tree for
// each phase and keeps the state in its marker current, so that a tree that
// a phase changed and did not finish is rebuilt by the next run rather than
// reused.
type TreeRun struct {
	Root  string
	Shape Shape
	Info  *TreeInfo // the marker's content, as last written
}

// OpenTreeRun opens the tree at root for a run (OpenTree).
func OpenTreeRun(root string, s Shape, seed uint64, rebuild bool) (*TreeRun, error) {
	info, err := OpenTree(root, s, seed, rebuild)
	if err != nil {
		return nil, err
	}
	return &TreeRun{Root: root, Shape: s, Info: info}, nil
}

// NewTreeRun starts a tree in root, a directory just made for it, as
// OpenTreeRun does where root is missing.
func NewTreeRun(root string, s Shape, seed uint64, _ bool) (*TreeRun, error) {
	t := &TreeRun{Root: root, Shape: s, Info: &TreeInfo{Shape: s, Seed: seed, State: TreeEmpty}}
	return t, WriteTreeInfo(root, t.Info)
}

// Complete reports whether every file of the tree is there at full size.
func (t *TreeRun) Complete() bool { return t.Info.State == TreeFormatted }

func (t *TreeRun) setState(state string, subdirs bool) error {
	t.Info.State, t.Info.Subdirs = state, subdirs
	return WriteTreeInfo(t.Root, t.Info)
}

// Ready makes the tree's directories if it has none yet. Every phase on
// the tree begins with it.
func (t *TreeRun) Ready() error {
	if t.Info.State != TreeEmpty {
		return nil
	}
	if err := MakeDirs(t.Root, t.Shape); err != nil {
		return err
	}
	return t.setState(TreeDirs, t.Info.Subdirs)
}

// NeedsFormat reports whether a phase of kind works on the tree's files
// while they are not all there: their creation (a format) must run first.
func (t *TreeRun) NeedsFormat(kind Kind) bool {
	switch kind {
	case Create, Mkdir, Rmdir, Readdir:
		return false
	}
	return !t.Complete()
}

// Clean empties a dirty tree and makes its directories again.
func (t *TreeRun) Clean() error {
	if t.Info.State != TreeDirty {
		return nil
	}
	if err := ClearTree(t.Root, t.Shape); err != nil {
		return err
	}
	if err := MakeDirs(t.Root, t.Shape); err != nil {
		return err
	}
	return t.setState(TreeDirs, false)
}

// ForPhase readies the tree for a phase of kind (after Ready, and after a
// format when NeedsFormat says so) and returns the names below Root that
// the phase works on, and done, to be called after the phase (complete: it
// ran to its end) to record what the phase left; done is nil for a phase
// that changes nothing. format marks a Create that fills the tree (a
// format phase) rather than one that creates files over none.
func (t *TreeRun) ForPhase(kind Kind, format bool) (names []string, done func(complete bool) error, err error) {
	switch kind {
	case Create:
		if err := t.Clean(); err != nil {
			return nil, nil, err
		}
		if t.Complete() && !format {
			return nil, nil, errors.New("the tree's files exist already: add an unlink phase before create, or set tree.format: yes")
		}
		return t.dirtyFiles(TreeFormatted)
	case Mkdir:
		if t.Info.Subdirs {
			return nil, nil, errors.New("the directories of an earlier mkdir phase exist: add an rmdir phase first")
		}
		done := t.after(t.Info.State, true)
		if err := t.setState(TreeDirty, true); err != nil {
			return nil, nil, err
		}
		return t.Shape.SubdirNames(), done, nil
	case Rmdir:
		if !t.Info.Subdirs {
			return nil, nil, errors.New("rmdir removes the directories of an earlier mkdir phase: add one before it")
		}
		return t.Shape.SubdirNames(), t.after(t.Info.State, false), nil
	case Readdir:
		return t.Shape.LeafDirs(), nil, nil
	case Unlink:
		return t.dirtyFiles(TreeDirs)
	case Rename:
		return t.dirtyFiles(TreeFormatted)
	}
	return t.Shape.FileNames(), nil, nil
}

// dirtyFiles marks the tree dirty while a shape-changing phase runs, so
// that an interrupted one is rebuilt by the next run rather than reused,
// and returns the files and what to record after: state when complete.
func (t *TreeRun) dirtyFiles(state string) ([]string, func(bool) error, error) {
	if err := t.setState(TreeDirty, t.Info.Subdirs); err != nil {
		return nil, nil, err
	}
	return t.Shape.FileNames(), t.after(state, t.Info.Subdirs), nil
}

// after records state in the tree's marker after a phase, or dirty when
// the phase did not complete.
func (t *TreeRun) after(state string, subdirs bool) func(bool) error {
	return func(complete bool) error {
		if !complete {
			state = TreeDirty
		}
		return t.setState(state, subdirs)
	}
}

// Remove removes the tree entirely (RemoveTree).
func (t *TreeRun) Remove() error { return RemoveTree(t.Root, t.Shape) }
