//go:build !linux

package sysio

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"unsafe"
)

func addrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// AdviseHuge does nothing on this platform.
func AdviseHuge(buf []byte) {}

// DirectFlag is zero where the platform has no O_DIRECT open flag.
const DirectFlag = 0

// NoAtimeFlag is 0: there is no O_NOATIME on this platform.
const NoAtimeFlag = 0

// ProbeDirect reports that direct I/O is not available on this platform.
func ProbeDirect(dir, fsType string) (Alignment, error) {
	return Alignment{}, ErrDirectUnsupported
}

// OpenNoAtime opens path with flags: there is no O_NOATIME here.
func OpenNoAtime(path string, flags int) (int, error) {
	return syscall.Open(path, flags|syscall.O_CLOEXEC, 0)
}

// ProbeDirectRead reports that direct I/O is not available on this platform.
func ProbeDirectRead(root, name, fsType string) (Alignment, error) {
	return Alignment{}, ErrDirectUnsupported
}

// DropCaches is not available on this platform.
func DropCaches() error { return errors.New("drop caches: not supported on this platform") }

// SyncFS is not available on this platform.
func SyncFS(dir string) error {
	return errors.New("sync a file system: not supported on this platform")
}

// DropFileCache flushes a file; dropping its pages is not available here.
func DropFileCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// GetUsage is not available on this platform.
func GetUsage() Usage { return Usage{} }

// Kernel is not available on this platform.
func Kernel() string { return "" }

// OpenFileLimit is not known on this platform.
func OpenFileLimit() int { return 0 }

// RaiseOpenFileLimit does nothing here; the limit is unknown (0).
func RaiseOpenFileLimit(n int) int { return 0 }

// MemoryBytes is the host's memory: unknown (0) on this system.
func MemoryBytes() int64 { return 0 }

// LoadAverage is unknown (0) on this system.
func LoadAverage() float64 { return 0 }

// LocalFS is false on this platform: fsbench does not tell its file
// systems apart here.
func LocalFS(path string) bool { return false }

// CPUs: the CPUs the calling thread may run on; nil here, where the
// system does not say.
func CPUs() []int { return nil }

// RunOn: not supported here.
func RunOn(cpus []int) error {
	return errors.New("setting a thread's CPUs: not supported on this platform")
}

// PinDir makes directory rel below base if it is missing and returns its
// name: here it is not held open.
func PinDir(base, rel string) (name string, made bool, release func(), err error) {
	name = filepath.Join(base, rel)
	if _, err := os.Stat(name); errors.Is(err, os.ErrNotExist) {
		made = true
	}
	if err := os.MkdirAll(name, 0o755); err != nil {
		return "", false, nil, err
	}
	return name, made, func() {}, nil
}

// CreateNew makes the new file path (it must not exist) for writing and
// appending, once check, when set, accepts its directory's real path.
func CreateNew(path string, perm os.FileMode, check func(dir string) error) (*os.File, error) {
	if check != nil {
		dir, err := filepath.EvalSymlinks(filepath.Dir(path))
		if err == nil {
			err = check(dir)
		}
		if err != nil {
			return nil, err
		}
	}
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, perm)
}
