package sysio

import (
	"path/filepath"
	"testing"

	"github.com/fsbench/fsbench/internal/testenv"
)

// TestLocalFS: tmpfs and ext4 are local; a FUSE mount (bindfs over
// tmpfs), proc and a path that does not exist are not.
func TestLocalFS(t *testing.T) {
	tmp := testenv.Tmpfs(t, "16m")
	ext4 := testenv.LoopExt4(t, "64m")
	fuse := testenv.Bindfs(t, tmp)
	for _, c := range []struct {
		path string
		want bool
	}{
		{tmp, true},
		{ext4, true},
		{fuse, false},
		{"/proc/self", false},
		{filepath.Join(tmp, "no", "such"), false},
	} {
		if got := LocalFS(c.path); got != c.want {
			t.Errorf("LocalFS(%s) = %v, want %v", c.path, got, c.want)
		}
	}
}
