package replay

import (
	"math"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// What strace's reader follows of the calls it does not replay (a
// descriptor's position and copies, a process's working directory), and
// what it reads of some calls' arguments.

// setCwd records that process pid is in directory d (a string over the
// line, copied when kept).
func (s *strc) setCwd(pid uint32, d string) {
	if pid == s.cwdPID && d == s.lastCwd {
		return
	}
	if old, ok := s.cwd[pid]; ok && old == d {
		s.cwdPID, s.lastCwd = pid, old
		return
	}
	d = strings.Clone(d)
	s.cwd[pid], s.cwdPID, s.lastCwd = d, pid, d
}

// cwdOf is process pid's working directory: the last any process showed
// when pid has shown none (a process forked where strace shows the
// child's calls before the fork's return), or "/".
func (s *strc) cwdOf(pid uint32) string {
	if d, ok := s.cwd[pid]; ok {
		return d
	}
	if s.lastCwd != "" {
		return s.lastCwd
	}
	return "/"
}

// follow follows a call that is not replayed but changes what later
// calls mean: lseek, chdir, fchdir and the calls that make a process.
func (s *strc) follow(c *call) {
	switch c.kind.follow {
	case followSeek:
		s.seek(c)
		return
	case followFork:
		if child, ok := integer(c.ret); ok && child > 0 && child <= math.MaxUint32 {
			if _, known := s.cwd[uint32(child)]; !known {
				s.cwd[uint32(child)] = s.cwdOf(c.pid)
			}
		}
		return
	}
	if c.errno != 0 || len(c.args) == 0 {
		return
	}
	if c.kind.follow == followDup {
		s.dup(c)
		return
	}
	if c.kind.follow == followFchdir {
		if _, d, ok := fdPath(c.args[0]); ok && strings.HasPrefix(d, "/") {
			s.setCwd(c.pid, d)
		}
		return
	}
	if d, ok := s.pathArg(c, 0, false); ok {
		s.setCwd(c.pid, d)
	}
}

// dup follows dup, dup2, dup3 and fcntl's F_DUPFD: the new descriptor
// shares the old one's handle and position, and the file it held before
// is no longer its.
func (s *strc) dup(c *call) {
	if c.name == "fcntl" && (len(c.args) < 2 || !strings.HasPrefix(c.args[1], "F_DUPFD")) {
		return
	}
	oldFD, _, ok1 := fdPath(c.args[0])
	newFD, _, ok2 := fdPath(c.ret)
	if !ok1 || !ok2 || oldFD == newFD {
		return
	}
	key := fdKey(c.pid, newFD)
	if d := s.fds[key]; d != nil && d.dups > 0 {
		d.dups--
	}
	delete(s.fds, key)
	if d := s.fds[fdKey(c.pid, oldFD)]; d != nil {
		d.dups++
		s.fds[key] = d
	}
}

// seek follows lseek's new position; lseek itself is not replayed.
func (s *strc) seek(c *call) {
	if len(c.args) == 0 {
		return
	}
	fd, _, ok := fdPath(c.args[0])
	if d := s.fds[fdKey(c.pid, fd)]; ok && d != nil {
		if v, err := strconv.ParseInt(c.ret, 10, 64); err == nil && v >= 0 {
			d.pos = v
		}
	}
}

// statDir reports whether a stat's arguments after its path (or its
// descriptor) show a directory: {st_mode=S_IFDIR|0755, ...} (statx's
// stx_mode).
func statDir(args []string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, "{") && strings.Contains(a, "_mode=S_IFDIR") {
			return true
		}
	}
	return false
}

// renameFlags reads renameat2's flags, "RENAME_NOREPLACE".
func renameFlags(a string) int32 {
	var v int32
	for _, f := range strings.Split(a, "|") {
		switch f {
		case "RENAME_NOREPLACE":
			v |= unix.RENAME_NOREPLACE
		case "RENAME_EXCHANGE":
			v |= unix.RENAME_EXCHANGE
		case "RENAME_WHITEOUT":
			v |= unix.RENAME_WHITEOUT
		}
	}
	return v
}
