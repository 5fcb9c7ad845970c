package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/fsbench/fsbench/internal/sysio"
)

// pathAnswer bounds the first look at the PATH a command runs in: a
// storage that does not answer it (a hung NFS server, a stopped FUSE
// daemon) ends the run with one line naming PATH, exit 1, instead of
// holding it for as long as the storage stalls.
const pathAnswer = 30 * time.Second

// statPath is os.Stat of PATH, for pathAnswer at most: the error then
// says the storage did not answer (sysio.ErrStalled).
func statPath(path string) (os.FileInfo, error) {
	st, err := sysio.StatWithin(pathAnswer, path)
	if errors.Is(err, sysio.ErrStalled) {
		return nil, fmt.Errorf("path %s: %w within %v", path, sysio.ErrStalled, pathAnswer)
	}
	return st, err
}

// missingPath refuses, as a usage error (exit 2), a PATH to run in that
// does not exist: checked first thing in the run, before any banner, as
// train, stats and profile do; a PATH whose storage does not answer is an
// error (exit 1). With remote set (--hosts, a launcher, a store's URL),
// the agents, ranks or store check their own.
func missingPath(path string, remote bool) error {
	if remote {
		return nil
	}
	_, err := statPath(path)
	switch {
	case errors.Is(err, sysio.ErrStalled):
		return err
	case errors.Is(err, fs.ErrNotExist):
		return Usagef("path %s: %v", path, sysio.PathCause(err))
	}
	return nil
}
