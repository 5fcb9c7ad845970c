package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// docsDate is the date written into the man pages: fixed, so that the
// generated reference changes only when a command or flag does.
var docsDate = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// docsRoot is the command tree as the reference describes it: help and
// completion included, no auto-generated footer, no values that depend
// on the machine that runs the generator.
func docsRoot() *cobra.Command {
	app := &App{IO: IO{In: &bytes.Buffer{}, Out: &bytes.Buffer{}, Err: &bytes.Buffer{}, Getenv: func(string) string { return "" }}}
	root := NewRoot(app)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	var mark func(c *cobra.Command)
	mark = func(c *cobra.Command) {
		c.DisableAutoGenTag = true
		c.LocalFlags().VisitAll(showDefault) // as --help shows them
		for _, s := range c.Commands() {
			mark(s)
		}
	}
	mark(root)
	return root
}

// GenerateDocs writes the command reference under dir: one markdown page
// per command in dir/reference and one man page per command in dir/man.
// `make docs` runs it; a test fails when the pages in the repository are
// not what it writes.
func GenerateDocs(dir string) error {
	md, man := filepath.Join(dir, "reference"), filepath.Join(dir, "man")
	for _, d := range []string{md, man} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		if err := removeGenerated(d); err != nil {
			return err
		}
	}
	if err := doc.GenMarkdownTree(docsRoot(), md); err != nil {
		return fmt.Errorf("markdown reference: %w", err)
	}
	header := &doc.GenManHeader{Title: "FSBENCH", Section: "1", Date: &docsDate, Source: "fsbench", Manual: "fsbench manual"}
	if err := doc.GenManTree(docsRoot(), header, man); err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	return nil
}

// removeGenerated deletes the pages a former run wrote, so that a
// command removed since leaves no page behind.
func removeGenerated(dir string) error {
	for _, pat := range []string{"fsbench*.md", "fsbench*.1"} {
		old, _ := filepath.Glob(filepath.Join(dir, pat))
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	return nil
}
