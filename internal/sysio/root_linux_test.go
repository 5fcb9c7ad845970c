//go:build linux

package sysio

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRootStaysBeneath: through a Root, neither "..", nor an absolute
// name, nor a link (to a directory outside, or in the middle of a path)
// reaches outside it, with openat2 and with the walk that replaces it;
// RemoveAll and Empty remove a link, never what it points to.
func TestRootStaysBeneath(t *testing.T) {
	for _, walk := range []bool{false, true} {
		name := map[bool]string{false: "openat2", true: "walk"}[walk]
		t.Run(name, func(t *testing.T) {
			noOpenat2.Store(walk)
			defer noOpenat2.Store(false)
			base := t.TempDir()
			outside := filepath.Join(base, "outside")
			in := filepath.Join(base, "in")
			for _, d := range []string{outside, in, filepath.Join(in, "sub")} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(in, "link")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(in, "sub", "deep")); err != nil {
				t.Fatal(err)
			}
			r, err := OpenRoot(in)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for _, n := range []string{"../outside/secret", "link/secret", "sub/deep/secret", "link", "sub/../../outside/secret"} {
				if fd, err := r.Open(n, unix.O_RDONLY, 0); err == nil {
					unix.Close(fd)
					t.Errorf("open %s reached outside", n)
				}
			}
			if err := r.Mkdir("link/made", 0o755); err == nil {
				t.Error("mkdir link/made reached outside")
			}
			if fd, err := r.Open("link/new", unix.O_CREAT|unix.O_WRONLY, 0o644); err == nil {
				unix.Close(fd)
				t.Error("create link/new reached outside")
			}
			if err := r.Rename("link/secret", "stolen", 0); err == nil {
				t.Error("rename link/secret reached outside")
			}
			if err := r.Rmdir("."); err == nil {
				t.Error("the root itself was removed")
			}
			if fd, err := r.Open("/sub", unix.O_RDONLY|unix.O_DIRECTORY, 0); err != nil {
				t.Errorf("an absolute name is taken below the root: %v", err)
			} else {
				unix.Close(fd)
			}
			if err := r.MkdirAll("a/b/c", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := r.Empty("sub"); err != nil {
				t.Fatal(err)
			}
			if err := r.RemoveAll("link"); err != nil {
				t.Fatal(err)
			}
			if err := r.RemoveAll("a"); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(outside, "secret")); err != nil {
				t.Errorf("the file outside is gone: %v", err)
			}
			if ents, _ := os.ReadDir(in); len(ents) != 1 || ents[0].Name() != "sub" {
				t.Errorf("left in the root: %v", ents)
			}
		})
	}
}
