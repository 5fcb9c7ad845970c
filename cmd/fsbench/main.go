// Command fsbench benchmarks and checks file systems and object stores.
package main

import (
	"os"

	"github.com/fsbench/fsbench/internal/cli"
)

func main() { os.Exit(cli.Main()) }
