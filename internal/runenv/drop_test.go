package runenv

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDropperMethods(t *testing.T) {
	var warnings []string
	warn := func(f string, a ...any) { warnings = append(warnings, f) }
	o := Options{DropCaches: DropAuto}
	for _, tc := range []struct {
		mode string
		skip bool
		root bool
		want string
		warn bool
	}{
		{DropAuto, false, true, "drop_caches", false},
		{DropAuto, false, false, "fadvise", true},
		{DropAlways, false, false, "drop_caches", false},
		{DropNever, false, true, "none", false},
		{DropAuto, true, true, "none", true},
	} {
		warnings = nil
		o.DropCaches, o.SkipDropCaches = tc.mode, tc.skip
		d := NewDropper(o, tc.root, warn)
		if d.method != tc.want || (len(warnings) > 0) != tc.warn {
			t.Errorf("%+v: method %s, warnings %v", tc, d.method, warnings)
		}
	}
	// The fadvise path works on our files and warns once, not per file,
	// when one cannot be dropped.
	dir := t.TempDir()
	f := filepath.Join(dir, "a")
	os.WriteFile(f, make([]byte, 1<<20), 0o644)
	warnings = nil
	o.DropCaches, o.SkipDropCaches = DropAuto, false
	d := NewDropper(o, false, warn)
	warnings = nil
	d.Drop("read", []string{f, filepath.Join(dir, "gone1"), filepath.Join(dir, "gone2")})
	if len(warnings) != 1 {
		t.Errorf("warnings = %v, want one", warnings)
	}
	// A failed global drop falls back to our files, with a warning.
	if os.Geteuid() != 0 {
		warnings = nil
		d := &Dropper{method: "drop_caches", warn: warn}
		d.Drop("read", []string{f})
		if d.method != "fadvise" || len(warnings) == 0 {
			t.Errorf("failed drop: method %s, warnings %v", d.method, warnings)
		}
	}
}
