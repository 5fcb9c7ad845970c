// Command docgen writes fsbench's command reference (markdown and man
// pages) from its cobra commands: `go run ./internal/cli/docgen docs`.
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
