package cli

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// CPUProfileEnv names the variable that makes fsbench write a CPU profile
// of its whole run to a file, for `go tool pprof`: a way to see where a
// benchmark's client spends its time (docs/speed.md).
const CPUProfileEnv = "FSBENCH_CPUPROFILE"

// startCPUProfile starts profiling into path ("" does nothing) and returns
// the function that stops it and closes the file.
func startCPUProfile(path string) (func() error, error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", CPUProfileEnv, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: start CPU profile %s: %w", CPUProfileEnv, path, err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("%s: close %s: %w", CPUProfileEnv, path, err)
		}
		return nil
	}, nil
}
