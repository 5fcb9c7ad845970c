package workload

import (
	"context"
	"errors"
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
// following symbolic links. Each directory is opened beneath root
// (os.Root), so that one swapped for a link out of the tree while it is
// listed leads the listing nowhere else, and with O_NOATIME where the
// kernel allows it, so that listing them leaves their access times alone
// too.
func ListTree(ctx context.Context, root string) (*Listing, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", root, sysio.PathCause(err))
	}
	defer r.Close()
	l := &Listing{}
	if err := l.walk(ctx, r, "."); err != nil {
		return nil, fmt.Errorf("list %s: %w", root, err)
	}
	return l, nil
}

// walk lists directory rel of r; only a failure to read r itself, or
// cancellation, is an error.
func (l *Listing) walk(ctx context.Context, r *os.Root, rel string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := readDirNoAtime(r, rel)
	if err != nil {
		if rel == "." {
			return err
		}
		l.Unreadable++
		return nil
	}
	for _, d := range entries {
		name := filepath.Join(rel, d.Name())
		switch t := d.Type(); {
		case t.IsDir():
			if err := l.walk(ctx, r, name); err != nil {
				return err
			}
		case t&fs.ModeSymlink != 0:
			l.Symlinks++
		case !t.IsRegular():
			l.Special++
		default:
			if info, err := r.Lstat(name); err == nil && info.Mode().IsRegular() {
				l.Files = append(l.Files, TreeFile{Name: name, Size: info.Size()})
			} else {
				l.Unreadable++
			}
		}
	}
	return nil
}

// readDirNoAtime reads the entries of directory rel beneath r, sorted by
// name, opening it with O_NOATIME, or plainly where the kernel refuses
// that.
func readDirNoAtime(r *os.Root, rel string) ([]fs.DirEntry, error) {
	f, err := r.OpenFile(rel, os.O_RDONLY|unix.O_DIRECTORY|sysio.NoAtimeFlag, 0)
	if errors.Is(err, unix.EPERM) && sysio.NoAtimeFlag != 0 {
		f, err = r.OpenFile(rel, os.O_RDONLY|unix.O_DIRECTORY, 0)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	return entries, nil
}
