package cluster

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/sysio"
)

// pinTarget opens target, a directory that allowed found under one of
// the agent's roots, beneath that root (openat2 RESOLVE_BENEATH): a
// symbolic link leading out of the root, there now or swapped in since
// the check, is refused. The job then reaches its directory through the
// descriptor, never by its name again.
func (a *Agent) pinTarget(target string) (int, error) {
	abs, err := filepath.Abs(target)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return -1, fmt.Errorf("path %s: %w", target, sysio.PathCause(err))
	}
	for _, root := range a.o.Roots {
		rr, err := filepath.EvalSymlinks(root)
		if err != nil {
			continue
		}
		rel, err := filepath.Rel(rr, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			continue
		}
		r, err := sysio.OpenRoot(rr)
		if err != nil {
			return -1, fmt.Errorf("--allow-root %s: %w", root, sysio.PathCause(err))
		}
		fd, err := r.Open(rel, unix.O_PATH|unix.O_DIRECTORY, 0)
		r.Close()
		if errors.Is(err, unix.EXDEV) || errors.Is(err, unix.ELOOP) {
			return -1, fmt.Errorf("path %s leads outside the allowed root %s through a symbolic link", target, root)
		}
		if err != nil {
			return -1, fmt.Errorf("path %s: %w", target, sysio.PathCause(err))
		}
		return fd, nil
	}
	return -1, fmt.Errorf("path %s is not under an allowed root (%s)", target, strings.Join(a.o.Roots, ", "))
}

// fdPath names the directory open as fd for the calls that take a name:
// the kernel resolves it to that directory whatever its name has become.
func fdPath(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

// makeBase makes the run's shared directory, RunName in the job's pinned
// directory (another host of the same run may have made it already), and
// opens it, refusing a symbolic link in its place: the run works in it
// through job.Base, a name that leads to that directory alone.
func (j *agentJob) makeBase() error {
	if j.dirFd < 0 {
		return nil
	}
	if err := unix.Mkdirat(j.dirFd, j.job.RunName, 0o755); err != nil && err != unix.EEXIST {
		return fmt.Errorf("create %s: %w", j.base, err)
	}
	fd, err := unix.Openat(j.dirFd, j.job.RunName, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.ENOTDIR || err == unix.ELOOP {
			return fmt.Errorf("open %s: not a directory (a symbolic link or a file stands in its place)", j.base)
		}
		return fmt.Errorf("open %s: %w", j.base, err)
	}
	j.baseFd = fd
	j.job.Base, j.job.Path = fdPath(fd), fdPath(j.dirFd)
	return nil
}

// removeBase removes the run's shared directory if it is empty (the last
// host's removal succeeds), from the pinned directory, and closes both.
func (j *agentJob) removeBase() {
	if j.baseFd >= 0 {
		_ = unix.Unlinkat(j.dirFd, j.job.RunName, unix.AT_REMOVEDIR)
	}
	j.closeDirs()
}

// closeDirs closes the job's pinned directories.
func (j *agentJob) closeDirs() {
	for _, fd := range []*int{&j.baseFd, &j.dirFd} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
}

// named is text with the run directory's descriptor path (job.Base) put
// back as PATH/RunName, the name its reader knows it by.
func (j *agentJob) named(text string) string {
	if j.job.Base == "" {
		return text
	}
	text = strings.ReplaceAll(text, j.job.Base, j.base)
	if j.job.Path == "" {
		return text
	}
	return strings.ReplaceAll(text, j.job.Path, filepath.Dir(j.base))
}
