//go:build !linux

package train

// memoryBytes is the host's memory, 0 when unknown.
func memoryBytes() int64 { return 0 }
