//go:build !linux

package io500

import (
	"errors"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// readDir reads one directory, counting into c, and returns its
// subdirectories.
func (f *finder) readDir(dir string, _ []byte, c *FindResult) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	var subdirs []string
	for {
		ents, err := d.ReadDir(1024)
		for _, e := range ents {
			c.Scanned++
			switch {
			case e.IsDir():
				subdirs = append(subdirs, filepath.Join(dir, e.Name()))
			case !f.nameMatches(e.Name()):
			case !f.needsStat():
				c.Found++
			default:
				var st unix.Stat_t
				if err := unix.Lstat(filepath.Join(dir, e.Name()), &st); err != nil {
					c.Errors++
				} else if f.statMatches(&st) {
					c.Found++
				}
			}
		}
		switch {
		case errors.Is(err, io.EOF):
			return subdirs, nil
		case err != nil:
			return subdirs, err
		}
	}
}
