package workload

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/sysio"
)

// TreeFile is a regular file of the tree: its path relative to the
// root and its size when the tree was listed.
type TreeFile struct {
	Name string
	Size int64
}

// Listing is what listing an existing tree found.
type Listing struct {
	Files []TreeFile
	// Entries left out: symbolic links (never followed), other
	// non-regular files (devices, FIFOs, sockets), and directories or
	// files that could not be listed or examined.
	Symlinks, Special, Unreadable int
}

// Skipped says which entries the listing left out, or "".
func (l *Listing) Skipped() string {
	var parts []string
	if l.Symlinks+l.Special > 0 {
		parts = append(parts, fmt.Sprintf("%d symbolic links (not followed) and %d special files (devices, FIFOs, sockets)", l.Symlinks, l.Special))
	}
	if l.Unreadable > 0 {
		parts = append(parts, fmt.Sprintf("%d entries that could not be listed or examined (permissions?)", l.Unreadable))
	}
	if parts == nil {
		return ""
	}
	return "not read: " + strings.Join(parts, "; ")
}

// ListTree lists the regular files below root, in path order, without
// following symbolic links. Directories are opened with O_NOATIME where
// the kernel allows it, so that listing them leaves their access times
// alone too.
func ListTree(ctx context.Context, root string) (*Listing, error) {
	l := &Listing{}
	if err := l.walk(ctx, root, ""); err != nil {
		return nil, fmt.Errorf("list %s: %w", root, err)
	}
	return l, nil
}

// walk lists directory rel of root; only a failure to read root itself,
// or cancellation, is an error.
func (l *Listing) walk(ctx context.Context, root, rel string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := ReadDirNoAtime(filepath.Join(root, rel))
	if err != nil {
		if rel == "" {
			return err
		}
		l.Unreadable++
		return nil
	}
	for _, d := range entries {
		name := filepath.Join(rel, d.Name())
		switch t := d.Type(); {
		case t.IsDir():
			if err := l.walk(ctx, root, name); err != nil {
				return err
			}
		case t&fs.ModeSymlink != 0:
			l.Symlinks++
		case !t.IsRegular():
			l.Special++
		default:
			if info, err := d.Info(); err == nil {
				l.Files = append(l.Files, TreeFile{Name: name, Size: info.Size()})
			} else {
				l.Unreadable++
			}
		}
	}
	return nil
}

// ReadDirNoAtime reads the entries of directory path, sorted by name,
// opening it with O_NOATIME, or plainly where the kernel refuses that.
func ReadDirNoAtime(path string) ([]fs.DirEntry, error) {
	fd, err := sysio.OpenNoAtime(path, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	return entries, nil
}
