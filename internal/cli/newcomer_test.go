package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// guideMaxLines is the most a guide of docs/ holds: beyond it a page is
// split by task, and measurements go to benchmarks/records.
const guideMaxLines = 400

// TestNewcomerPath follows a newcomer from the README: it links the
// manual's index (docs/README.md), the index links every page of docs/,
// every page links a page of the command reference, and no guide is
// longer than guideMaxLines.
func TestNewcomerPath(t *testing.T) {
	root := filepath.Join("..", "..")
	if !linksTo(t, filepath.Join(root, "README.md"), "docs/README.md") {
		t.Errorf("README.md does not link the manual's index, docs/README.md")
	}
	index := filepath.Join(root, "docs", "README.md")
	pages, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if len(pages) < 20 {
		t.Fatalf("only %d pages in docs/: the search is broken", len(pages))
	}
	for _, page := range pages {
		name := filepath.Base(page)
		if name == "README.md" {
			continue
		}
		if !linksTo(t, index, name) {
			t.Errorf("docs/README.md does not list %s", name)
		}
		if !linksUnder(t, page, "reference/") {
			t.Errorf("docs/%s links no page of the command reference (docs/reference)", name)
		}
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(text, []byte("\n")); n > guideMaxLines {
			t.Errorf("docs/%s has %d lines, more than %d: split it by task or move its measurements to benchmarks/records", name, n, guideMaxLines)
		}
	}
	if !linksTo(t, filepath.Join(root, "benchmarks", "README.md"), "../docs/README.md") {
		t.Errorf("benchmarks/README.md does not link the manual's index")
	}
}

// TestLinksTo: the link finder takes a target with or without an anchor
// and refuses one that is only mentioned.
func TestLinksTo(t *testing.T) {
	page := filepath.Join(t.TempDir(), "p.md")
	text := "See [the index](docs/README.md#top) and reference/fsbench.md, unlinked.\n"
	if err := os.WriteFile(page, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if !linksTo(t, page, "docs/README.md") {
		t.Error("a link with an anchor not found")
	}
	if linksTo(t, page, "README.md") || linksUnder(t, page, "reference/") {
		t.Error("a target found that is not linked")
	}
}

// linksTo reports whether page links target exactly.
func linksTo(t *testing.T, page, target string) bool {
	t.Helper()
	for _, l := range pageLinks(t, page) {
		if l == target {
			return true
		}
	}
	return false
}

// linksUnder reports whether page links a file under dir.
func linksUnder(t *testing.T, page, dir string) bool {
	t.Helper()
	for _, l := range pageLinks(t, page) {
		if strings.HasPrefix(l, dir) {
			return true
		}
	}
	return false
}

func pageLinks(t *testing.T, page string) []string {
	t.Helper()
	text, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	var links []string
	for _, m := range link.FindAllSubmatch(text, -1) {
		links = append(links, string(m[1]))
	}
	return links
}
