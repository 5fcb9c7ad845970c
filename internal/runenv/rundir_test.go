package runenv

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Removing a run directory names the wait with what it holds, and an
// empty one (its tree already removed) is no wait at all: no "cleaning up
// 0 files".
func TestRemoveNamesItsWait(t *testing.T) {
	for _, files := range []int{0, 2} {
		var waits []string
		o := Options{Hooks: Hooks{Wait: func(what string) func() {
			waits = append(waits, what)
			return func() {}
		}}}
		d, err := MakeRunDir(o, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		for i := range files {
			if err := os.WriteFile(filepath.Join(d.Path(), "f"+string(rune('0'+i))), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		d.Remove(func(f string, a ...any) { t.Errorf(f, a...) })
		want := []string(nil)
		if files > 0 {
			want = []string{"cleaning up 2 files in " + d.Path()}
		}
		if !slices.Equal(waits, want) {
			t.Errorf("%d files: waits %q, want %q", files, waits, want)
		}
		if _, err := os.Stat(d.Path()); !os.IsNotExist(err) {
			t.Errorf("%d files: the run directory is still there (%v)", files, err)
		}
	}
}
