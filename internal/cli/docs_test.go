package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
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
// every relative link in it, in docs/ and in benchmarks/ names a file
// that exists and, with a #fragment, a heading of that file.
func TestDocsLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(readme, []byte("\n")); n >= 250 {
		t.Errorf("README.md has %d lines; the front page stays under 250 (details go to docs/)", n)
	}
	for _, page := range linkedPages(t, root) {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Dir(page)
		if filepath.Base(page) == "README.tpl.md" {
			dir = root // the template of the README, whose links are the README's
		}
		for _, m := range link.FindAllSubmatch(text, -1) {
			target := filepath.Join(dir, string(m[1]))
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s links to %s, which does not exist", page, m[1])
			} else if anchor := strings.TrimPrefix(string(m[2]), "#"); anchor != "" && strings.HasSuffix(target, ".md") && !headingAnchors(t, target)[anchor] {
				t.Errorf("%s links to %s#%s: no heading there has that anchor", page, m[1], anchor)
			}
		}
		for _, m := range inPage.FindAllSubmatch(text, -1) {
			if !headingAnchors(t, page)[string(m[1])] {
				t.Errorf("%s links to #%s: no heading of the page has that anchor", page, m[1])
			}
		}
	}
}

// linkedPages returns the markdown pages whose links are checked: the
// README, the manual (docs/*.md, docs/examples) and the benchmarks'
// results and records.
func linkedPages(t *testing.T, root string) []string {
	t.Helper()
	var pages []string
	for _, pattern := range []string{"README.md", "docs/*.md", "docs/examples/*.md", "benchmarks/*.md", "benchmarks/records/*.md"} {
		m, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(pattern)))
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, m...)
	}
	if len(pages) < 30 {
		t.Fatalf("only %d pages found under %s: the search is broken", len(pages), root)
	}
	return pages
}

var (
	link        = regexp.MustCompile(`\]\(([^)#:]+)(#[^)]*)?\)`)
	inPage      = regexp.MustCompile(`\]\(#([^)]+)\)`)
	headingLine = regexp.MustCompile(`^#{1,6}\s+(.+?)\s*#*\s*$`)
	notInSlug   = regexp.MustCompile(`[^\p{L}\p{N}_ -]`)
)

// headingAnchors returns the anchors GitHub gives the headings of a
// markdown page: lower case, punctuation dropped, blanks made hyphens,
// a repeated heading suffixed -1, -2, ...; headings in code blocks do
// not count.
func headingAnchors(t *testing.T, page string) map[string]bool {
	t.Helper()
	text, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	anchors, seen, fenced := map[string]bool{}, map[string]int{}, false
	for _, line := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
		}
		m := headingLine.FindStringSubmatch(line)
		if fenced || m == nil {
			continue
		}
		slug := strings.ReplaceAll(notInSlug.ReplaceAllString(strings.ToLower(m[1]), ""), " ", "-")
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

// TestHeadingAnchors: GitHub's anchors, as the link check computes them.
func TestHeadingAnchors(t *testing.T) {
	page := filepath.Join(t.TempDir(), "p.md")
	text := "# Many hosts: `fsbench agent` and `--hosts`\n## Faults\n```\n## Not a heading\n```\n## Faults\n### One file shared by every thread (N-1)\n"
	if err := os.WriteFile(page, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	got := headingAnchors(t, page)
	for _, want := range []string{"many-hosts-fsbench-agent-and---hosts", "faults", "faults-1", "one-file-shared-by-every-thread-n-1"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
	if got["not-a-heading"] || len(got) != 4 {
		t.Errorf("anchors %v: want exactly the four headings outside the code block", got)
	}
}
