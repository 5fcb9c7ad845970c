package cli

import (
	"errors"
	"io/fs"
	"os"

	"github.com/fsbench/fsbench/internal/sysio"
)

// missingPath refuses, as a usage error (exit 2), a PATH to run in that
// does not exist: checked first thing in the run, before any banner, as
// train, stats and profile do. With remote set (--hosts, a launcher, a
// store's URL), the agents, ranks or store check their own.
func missingPath(path string, remote bool) error {
	if remote {
		return nil
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return Usagef("path %s: %v", path, sysio.PathCause(err))
	}
	return nil
}
