package schema_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/pkg/schema"
)

// TestVerifyOutputValidates validates `fsbench verify -o json` of a real
// journalled run against verify.schema.json, intact (exit 0) and with a
// file removed behind it (exit 3).
func TestVerifyOutputValidates(t *testing.T) {
	s := compile(t, "verify.schema.json", schema.Verify)
	bin := testenv.Binary(t)
	dir, j := t.TempDir(), filepath.Join(t.TempDir(), "j")
	if out, err := exec.Command(bin, "bench", dir, "-p", "1", "--big-file-size", "4M", "--small-file-count", "4", "--small-file-size", "8K",
		"--fsync", "--keep", "--journal", j, "-q").CombinedOutput(); err != nil {
		t.Fatalf("bench: %v\n%s", err, out)
	}
	for _, want := range []int{0, 3} {
		out, err := exec.Command(bin, "verify", "--journal", j, dir, "-o", "json").Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if code != want {
			t.Fatalf("verify: exit %d, want %d: %v\n%s", code, want, err, out)
		}
		if err := validate(t, s, "verify", out); err != nil {
			t.Errorf("verify (exit %d) does not match verify.schema.json: %v\n%s", code, err, out)
		}
		if want == 0 {
			small, _ := filepath.Glob(filepath.Join(dir, "*", "small.0.1"))
			if len(small) != 1 || os.Remove(small[0]) != nil {
				t.Fatalf("small.0.1: %v", small)
			}
		}
	}
}
