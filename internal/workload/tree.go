package workload

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/sysio"
)

// Shape is a vdbench-style file tree: Width directories in each directory
// down to Depth levels, and Files files of FileSize bytes in each of the
// Width^Depth leaf directories. Depth 2, width 3, files 4 is 9 leaves and 36
// files.
type Shape struct {
	Depth    int   `json:"depth"`
	Width    int   `json:"width"`
	Files    int   `json:"files"`
	FileSize int64 `json:"file_size"`
}

// MaxTreeFiles bounds the files of one tree (names are held in memory).
const MaxTreeFiles = 50_000_000

// Validate checks the shape.
func (s Shape) Validate() error {
	switch {
	case s.Depth < 0:
		return fmt.Errorf("tree depth must not be negative (got %d)", s.Depth)
	case s.Width < 1:
		return fmt.Errorf("tree width must be at least 1 (got %d)", s.Width)
	case s.Files < 1:
		return fmt.Errorf("files per directory must be at least 1 (got %d)", s.Files)
	case s.FileSize < 0:
		return fmt.Errorf("file size must not be negative")
	}
	n := int64(s.Files)
	for i := 0; i < s.Depth; i++ {
		n *= int64(s.Width)
		if n > MaxTreeFiles {
			return fmt.Errorf("tree of depth %d, width %d and %d files per directory has more than %d files", s.Depth, s.Width, s.Files, MaxTreeFiles)
		}
	}
	return nil
}

// Leaves is the number of leaf directories, Width^Depth.
func (s Shape) Leaves() int {
	n := 1
	for i := 0; i < s.Depth; i++ {
		n *= s.Width
	}
	return n
}

// NumFiles is the number of files, Leaves x Files.
func (s Shape) NumFiles() int { return s.Leaves() * s.Files }

func pad(i, n int) string {
	d := len(strconv.Itoa(n))
	s := strconv.Itoa(i)
	for len(s) < d {
		s = "0" + s
	}
	return s
}

// Dirs lists the tree's directories below its root, parents before their
// children, as paths relative to the root.
func (s Shape) Dirs() []string {
	var out []string
	level := []string{""}
	for d := 0; d < s.Depth; d++ {
		var next []string
		for _, parent := range level {
			for i := 1; i <= s.Width; i++ {
				next = append(next, filepath.Join(parent, "d"+pad(i, s.Width)))
			}
		}
		out = append(out, next...)
		level = next
	}
	return out
}

// LeafDirs lists the leaf directories relative to the root ("." for a tree
// of depth 0).
func (s Shape) LeafDirs() []string {
	if s.Depth == 0 {
		return []string{"."}
	}
	d := s.Dirs()
	return d[len(d)-s.Leaves():]
}

// FileNames lists the files relative to the root, leaf by leaf.
func (s Shape) FileNames() []string { return s.entries("f") }

// SubdirNames lists the directories that mkdir and rmdir phases create and
// remove: as many in each leaf as there are files, named m0001 and so on.
func (s Shape) SubdirNames() []string { return s.entries("m") }

func (s Shape) entries(prefix string) []string {
	leaves := s.LeafDirs()
	out := make([]string, 0, len(leaves)*s.Files)
	for _, l := range leaves {
		for i := 1; i <= s.Files; i++ {
			out = append(out, filepath.Join(l, prefix+pad(i, s.Files)))
		}
	}
	return out
}

// TreeMarker is the name of the file that marks a directory as an fsbench
// tree and describes it. fsbench reuses, rebuilds or removes a directory
// only when this file is in it.
const TreeMarker = ".fsbench-tree.json"

// Tree states recorded in the marker.
const (
	TreeEmpty     = "empty"     // the root and marker only
	TreeDirs      = "dirs"      // directories made, no files
	TreeFormatted = "formatted" // directories and every file at full size
	TreeDirty     = "dirty"     // a phase changed it; rebuilt before reuse
)

// TreeInfo is the content of the marker file.
type TreeInfo struct {
	Tool  string `json:"tool"`
	Shape Shape  `json:"shape"`
	Seed  uint64 `json:"seed"` // of the data pattern: verify works across runs
	// Data is the ratios its files were written with (pattern.Data).
	Data  pattern.Data `json:"data,omitzero"`
	State string       `json:"state"` // TreeEmpty, TreeDirs, TreeFormatted or TreeDirty
	// Subdirs is set while the directories of a mkdir phase exist.
	Subdirs bool `json:"subdirs,omitempty"`
}

// ErrNotOurs is returned for a directory that exists without fsbench's
// marker: fsbench neither uses nor removes it.
var ErrNotOurs = errors.New("exists and was not created by fsbench (no " + TreeMarker + "); refusing to use or remove it")

// ReadTreeInfo reads the marker of the tree at root. It returns an error
// wrapping fs.ErrNotExist when root does not exist, and ErrNotOurs when it
// exists without a marker.
func ReadTreeInfo(root string) (*TreeInfo, error) { return ReadTreeInfoBeneath(root, ".") }

// ReadTreeInfoBeneath is ReadTreeInfo of the tree at rel beneath base: a
// symbolic link on the way out of base is not followed.
func ReadTreeInfoBeneath(base, rel string) (*TreeInfo, error) {
	br, err := os.OpenRoot(base)
	if err != nil {
		return nil, err
	}
	defer br.Close()
	r, err := br.OpenRoot(rel)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	root := filepath.Join(base, rel)
	b, err := r.ReadFile(TreeMarker) // a link out of the tree is not followed
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s %w", root, ErrNotOurs)
	}
	if err != nil {
		return nil, err
	}
	var t TreeInfo
	if err := json.Unmarshal(b, &t); err != nil || t.Tool != "fsbench" {
		return nil, fmt.Errorf("%s: marker %s is not fsbench's: %w", root, TreeMarker, ErrNotOurs)
	}
	return &t, nil
}

// WriteTreeInfo writes the marker (atomically: a rename over the old one).
func WriteTreeInfo(root string, t *TreeInfo) error {
	t.Tool = "fsbench"
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	if err := sysio.WriteFileAtomic(filepath.Join(root, TreeMarker), "", append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write tree marker: %w", err)
	}
	return nil
}

// OpenTree prepares the tree at root for a run with the given shape, like
// vdbench's format=restart: a tree with fsbench's marker, the same shape
// and all its files is reused (its state and seed are returned); any other
// fsbench tree is emptied (see ClearTree) and started afresh with seed; a
// missing root is created (with its parents); anything else is refused.
// With rebuild set, even a matching tree is emptied (format=yes).
func OpenTree(root string, s Shape, seed uint64, rebuild bool) (*TreeInfo, error) {
	old, err := ReadTreeInfo(root)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(root, 0o755); err != nil {
			return nil, fmt.Errorf("create tree %s: %w", root, err)
		}
	case err != nil:
		return nil, err
	case !rebuild && old.Shape == s && old.State == TreeFormatted && !old.Subdirs:
		return old, nil
	default:
		if err := ClearTree(root, old.Shape); err != nil {
			return nil, err
		}
	}
	t := &TreeInfo{Shape: s, Seed: seed, State: TreeEmpty}
	return t, WriteTreeInfo(root, t)
}

// MakeDirs creates the tree's directories (those that do not exist yet),
// each beneath root (os.Root): a directory of the tree swapped for a
// symbolic link leads nothing out of it.
func MakeDirs(root string, s Shape) error {
	r, err := os.OpenRoot(root)
	if err != nil {
		return fmt.Errorf("open tree %s: %w", root, sysio.PathCause(err))
	}
	defer r.Close()
	for _, d := range s.Dirs() {
		if err := r.Mkdir(d, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("mkdir %s: %w", filepath.Join(root, d), sysio.PathCause(err))
		}
	}
	return nil
}

// ClearTree removes what a tree of shape s holds below root (files, the
// directories of mkdir phases, the tree's directories), leaving root and
// its marker. It removes only names the shape defines (and the leftovers
// of an interrupted rename phase); a directory still holding anything else
// is reported, not removed. Each name is removed beneath root (os.Root):
// a directory of the tree swapped for a symbolic link leads no removal
// out of it.
func ClearTree(root string, s Shape) error {
	if _, err := ReadTreeInfo(root); err != nil {
		return err
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return fmt.Errorf("clean up tree: open %s: %w", root, sysio.PathCause(err))
	}
	defer r.Close()
	rm := func(name string) error {
		err := r.Remove(name)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("clean up tree: remove %s: %w", filepath.Join(root, name), sysio.PathCause(err))
		}
		return nil
	}
	for _, f := range s.FileNames() {
		if err := rm(f); err != nil {
			return err
		}
		if err := rm(f + ".renamed"); err != nil {
			return err
		}
	}
	for _, d := range s.SubdirNames() {
		if err := rm(d); err != nil {
			return err
		}
	}
	dirs := s.Dirs()
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := rm(dirs[i]); err != nil {
			return err
		}
	}
	return nil
}

// RemoveTree removes a tree entirely: its content (ClearTree), its marker
// and its root directory.
func RemoveTree(root string, s Shape) error {
	if err := ClearTree(root, s); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(root, TreeMarker)); err != nil {
		return fmt.Errorf("clean up tree: %w", err)
	}
	if err := os.Remove(root); err != nil {
		return fmt.Errorf("clean up tree: %w", sysio.PathCause(err))
	}
	return nil
}
