package sysio

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Mount is one line of /proc/self/mountinfo.
type Mount struct {
	ID         int
	Parent     int
	Major      int
	Minor      int
	Root       string // root of the mount within its file system
	MountPoint string
	Options    string // per-mount options (ro, nosuid, ...)
	FSType     string // e.g. ext4, fuse.juicefs, nfs4
	Source     string // e.g. /dev/vda, JuiceFS:myjfs, server:/export
	SuperOpts  string // per-superblock options
}

// ReadOnly reports whether the mount is mounted read-only.
func (m Mount) ReadOnly() bool {
	for _, o := range strings.Split(m.Options, ",") {
		if o == "ro" {
			return true
		}
	}
	return false
}

// ParseMountInfo parses the contents of a mountinfo file. Malformed lines
// are skipped: the kernel does not write them, and a partial view is more
// useful than none.
//
// prometheus/procfs has a mountinfo parser, but it fails the whole table
// on one malformed line, keeps the \040-style escapes in paths (a mount
// point with a space would match no path), and turns the options into a
// map, which loses the order the result records them in.
func ParseMountInfo(data []byte) []Mount {
	var out []Mount
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		if m, ok := parseMountLine(sc.Text()); ok {
			out = append(out, m)
		}
	}
	return out
}

// parseMountLine parses e.g.
// 36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw,errors=continue
func parseMountLine(line string) (Mount, bool) {
	fields := strings.Fields(line)
	sep := -1
	for i, f := range fields {
		if f == "-" && i >= 6 {
			sep = i
			break
		}
	}
	if sep < 0 || len(fields) < sep+3 {
		return Mount{}, false
	}
	var m Mount
	var err error
	if m.ID, err = strconv.Atoi(fields[0]); err != nil {
		return Mount{}, false
	}
	if m.Parent, err = strconv.Atoi(fields[1]); err != nil {
		return Mount{}, false
	}
	maj, min, ok := strings.Cut(fields[2], ":")
	if !ok {
		return Mount{}, false
	}
	if m.Major, err = strconv.Atoi(maj); err != nil {
		return Mount{}, false
	}
	if m.Minor, err = strconv.Atoi(min); err != nil {
		return Mount{}, false
	}
	m.Root = unescapeOctal(fields[3])
	m.MountPoint = unescapeOctal(fields[4])
	m.Options = fields[5]
	m.FSType = fields[sep+1]
	m.Source = unescapeOctal(fields[sep+2])
	if len(fields) > sep+3 {
		m.SuperOpts = fields[sep+3]
	}
	return m, true
}

// unescapeOctal undoes the kernel's \040-style escaping of spaces, tabs,
// newlines and backslashes in mountinfo paths.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// MountOf returns the mount that contains path: the entry with the longest
// mount point that is a prefix of the resolved path. Later entries win over
// earlier ones with the same mount point (they are mounted on top).
func MountOf(mounts []Mount, path string) (Mount, bool) {
	var best Mount
	found := false
	for _, m := range mounts {
		if !within(path, m.MountPoint) {
			continue
		}
		if !found || len(m.MountPoint) >= len(best.MountPoint) {
			best, found = m, true
		}
	}
	return best, found
}

func within(path, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// ProcRoot is where the proc file system is read from; tests point it at a
// fixture tree.
var ProcRoot = "/proc"

// FindMount resolves path (following symlinks) and returns the mount that
// holds it, read from ProcRoot/self/mountinfo.
func FindMount(path string) (Mount, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Mount{}, err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	data, err := os.ReadFile(filepath.Join(ProcRoot, "self", "mountinfo"))
	if err != nil {
		return Mount{}, fmt.Errorf("read mount table: %w", err)
	}
	m, ok := MountOf(ParseMountInfo(data), abs)
	if !ok {
		return Mount{}, fmt.Errorf("no mount contains %s", abs)
	}
	return m, nil
}
