package stats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fsbench/fsbench/internal/juicefs"
)

// JuiceFSSource reads the .stats file at the root of a JuiceFS mount: lines
// "name value" whose names the u, f, m, c, o and g sections use as they are.
type JuiceFSSource struct {
	MountPoint string
	file       string // the name that worked last
}

// Name implements Source.
func (j *JuiceFSSource) Name() string { return "juicefs" }

// Collect implements Source.
func (j *JuiceFSSource) Collect(_ context.Context, sm *Sample) error {
	names := juicefs.StatsFiles
	if j.file != "" {
		names = append([]string{j.file}, names...)
	}
	var errs []error
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(j.MountPoint, n))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		j.file = n
		for k, v := range juicefs.ParseStats(data) {
			sm.Set(k, v)
		}
		return nil
	}
	return fmt.Errorf("juicefs: read .stats of %s: %w", j.MountPoint, errors.Join(errs...))
}

// JuiceFSPID returns the pid of the JuiceFS client serving a mount, from
// the Pid field of its .config file, or 0.
func JuiceFSPID(mountPoint string) int {
	for _, n := range []string{".config", ".jfs.config"} {
		data, err := os.ReadFile(filepath.Join(mountPoint, n))
		if err != nil {
			continue
		}
		var c struct{ Pid int }
		if json.Unmarshal(data, &c) == nil && c.Pid > 0 {
			return c.Pid
		}
	}
	return 0
}
