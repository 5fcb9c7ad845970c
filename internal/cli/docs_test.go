package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestReferenceUpToDate fails when docs/reference or docs/man is not what
// the commands generate now: a flag or command changed without `make docs`.
func TestReferenceUpToDate(t *testing.T) {
	tmp := t.TempDir()
	if err := GenerateDocs(tmp); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"reference", "man"} {
		want := readTree(t, filepath.Join(tmp, sub))
		got := readTree(t, filepath.Join("..", "..", "docs", sub))
		for name, w := range want {
			if g, ok := got[name]; !ok {
				t.Errorf("docs/%s/%s is missing: run make docs", sub, name)
			} else if !bytes.Equal(g, w) {
				t.Errorf("docs/%s/%s is stale: run make docs", sub, name)
			}
		}
		for name := range got {
			if _, ok := want[name]; !ok {
				t.Errorf("docs/%s/%s describes no command: run make docs", sub, name)
			}
		}
	}
}

// TestGenerateDocsRemovesOldPages: a page of a command that is gone does
// not survive a regeneration.
func TestGenerateDocsRemovesOldPages(t *testing.T) {
	tmp := t.TempDir()
	stale := filepath.Join(tmp, "reference", "fsbench_gone.md")
	if err := os.MkdirAll(filepath.Dir(stale), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := GenerateDocs(tmp); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("stale page kept: %v", err)
	}
	if _, err := os.Stat(filepath.Join(tmp, "man", "fsbench-bench.1")); err != nil {
		t.Fatal(err)
	}
}

func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files
}
