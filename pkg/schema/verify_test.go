package schema_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/pkg/schema"
)

// TestVerifyOutputValidates validates `fsbench verify -o json` of real
// journalled runs against verify.schema.json, of one journal and of two
// together (as of two hosts), intact (exit 0) and with a file removed
// behind it (exit 3).
func TestVerifyOutputValidates(t *testing.T) {
	s := compile(t, "verify.schema.json", schema.Verify)
	bin := testenv.Binary(t)
	dir, jdir := t.TempDir(), t.TempDir()
	j, j2 := filepath.Join(jdir, "j"), filepath.Join(jdir, "j2")
	for _, jf := range []string{j, j2} {
		if out, err := exec.Command(bin, "bench", dir, "-p", "1", "--big-file-size", "4M", "--small-file-count", "4", "--small-file-size", "8K",
			"--fsync", "--keep", "--journal", jf, "-q").CombinedOutput(); err != nil {
			t.Fatalf("bench: %v\n%s", err, out)
		}
	}
	for _, want := range []int{0, 3} {
		for _, args := range [][]string{{"--journal", j}, {"--journal", j, "--journal", j2}} {
			out, err := exec.Command(bin, append(append([]string{"verify"}, args...), dir, "-o", "json")...).Output()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			if code != want {
				t.Fatalf("verify %v: exit %d, want %d: %v\n%s", args, code, want, err, out)
			}
			if err := validate(t, s, "verify", out); err != nil {
				t.Errorf("verify %v (exit %d) does not match verify.schema.json: %v\n%s", args, code, err, out)
			}
		}
		if want == 0 {
			small, _ := filepath.Glob(filepath.Join(dir, "*", "small.0.1"))
			if len(small) != 2 || os.Remove(small[0]) != nil || os.Remove(small[1]) != nil {
				t.Fatalf("small.0.1: %v", small)
			}
		}
	}
}
