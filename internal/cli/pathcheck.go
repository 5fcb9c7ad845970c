package cli

import (
	"errors"
	"io/fs"
	"os"

	"github.com/fsbench/fsbench/internal/sysio"
)

// checkRunDir refuses, as a usage error (exit 2, before any banner), a
// PATH to run in that is missing or not a directory; what says what the
// directory is for. With remote set (--hosts, a launcher), the agents and
// ranks check their own.
func checkRunDir(path, what string, remote bool) error {
	if remote {
		return nil
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Usagef("path %s: %v", path, sysio.PathCause(err))
	case err == nil && !st.IsDir():
		return Usagef("PATH %s is not a directory: give the directory to %s", path, what)
	}
	return nil
}
