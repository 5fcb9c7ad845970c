// Command docgen writes fsbench's command reference (markdown and man
// pages) from its cobra commands: `go run ./internal/cli/docgen docs`.
//
// It writes nothing but docs/reference and docs/man under the directory it
// is given, and holds no text of its own: every word comes from the commands.
package main

import (
	"fmt"
	"os"

	"github.com/fsbench/fsbench/internal/cli"
)

func main() {
	dir := "docs"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	if err := cli.GenerateDocs(dir); err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
}
