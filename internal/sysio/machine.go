package sysio

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
)

// Machine names the running kernel: a digest of its boot ID under
// procRoot, the same for every process and container of one running
// kernel (which share one clock and one set of counters), or "" when it
// cannot be read.
func Machine(procRoot string) string {
	id, err := os.ReadFile(filepath.Join(procRoot, "sys", "kernel", "random", "boot_id"))
	id = bytes.TrimSpace(id)
	if err != nil || len(id) == 0 {
		return ""
	}
	sum := sha256.Sum256(id)
	return hex.EncodeToString(sum[:8])
}
