package io500

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// Entries whose type the file system does not give (DT_UNKNOWN, as some
// give for every entry) are stat'ed to tell a directory from a file;
// "." and ".." are not entries.
func TestFindUnknownTypes(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "f.01"), make([]byte, 3901), 0o644)
	os.WriteFile(filepath.Join(dir, "f.02"), make([]byte, 3901), 0o644)
	var b []byte
	for _, e := range []struct {
		name string
		typ  byte
	}{{".", unix.DT_DIR}, {"..", unix.DT_DIR}, {"sub", unix.DT_UNKNOWN}, {"f.01", unix.DT_UNKNOWN}, {"f.02", unix.DT_REG}, {"gone.01", unix.DT_UNKNOWN}} {
		rec := make([]byte, (19+len(e.name)+1+7)/8*8)
		binary.NativeEndian.PutUint16(rec[16:], uint16(len(rec)))
		rec[18] = e.typ
		copy(rec[19:], e.name)
		b = append(b, rec...)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	f := &finder{m: Match{Name: "*01*", Size: 3901}}
	var c FindResult
	subdirs := f.entries(fd, dir, b, nil, &c)
	if len(subdirs) != 1 || subdirs[0] != dir+"/sub" || c.Scanned != 4 || c.Found != 1 || c.Errors != 1 {
		t.Errorf("subdirs %v, %+v: want sub, 4 looked at, f.01 found, gone.01 an error", subdirs, c)
	}
}
