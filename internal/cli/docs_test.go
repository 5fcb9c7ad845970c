package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
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

// TestDocsLinks: the README stays a front page (under 250 lines), and
// every relative link in it and in docs/ names a file that exists.
func TestDocsLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(readme, []byte("\n")); n >= 250 {
		t.Errorf("README.md has %d lines; the front page stays under 250 (details go to docs/)", n)
	}
	pages, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	pages = append(pages, filepath.Join(root, "README.md"))
	link := regexp.MustCompile(`\]\(([^)#:]+)(#[^)]*)?\)`)
	for _, page := range pages {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllSubmatch(text, -1) {
			target := filepath.Join(filepath.Dir(page), string(m[1]))
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s links to %s, which does not exist", page, m[1])
			}
		}
	}
}
