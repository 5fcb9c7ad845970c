package sysio

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fsbench/fsbench/internal/testenv"
)

// TestLocalFS: tmpfs, ext4 and overlay (over tmpfs) are local; a FUSE
// mount (bindfs over tmpfs), proc and a path that does not exist are not.
func TestLocalFS(t *testing.T) {
	tmp := testenv.Tmpfs(t, "16m")
	ext4 := testenv.LoopExt4(t, "64m")
	fuse := testenv.Bindfs(t, tmp)
	for _, d := range []string{"lower", "upper", "work"} {
		if err := os.Mkdir(filepath.Join(tmp, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	overlay := testenv.MountFS(t, "overlay", "lowerdir="+tmp+"/lower,upperdir="+tmp+"/upper,workdir="+tmp+"/work")
	for _, c := range []struct {
		path string
		want bool
	}{
		{tmp, true},
		{ext4, true},
		{overlay, true},
		{fuse, false},
		{"/proc/self", false},
		{filepath.Join(tmp, "no", "such"), false},
	} {
		if got := LocalFS(c.path); got != c.want {
			t.Errorf("LocalFS(%s) = %v, want %v", c.path, got, c.want)
		}
	}
}
