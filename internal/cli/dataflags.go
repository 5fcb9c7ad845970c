package cli

import (
	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/pattern"
)

// dataFlags are --compress-ratio and --dedupe-ratio: what the data a
// command writes is like to storage that compresses or deduplicates.
type dataFlags struct {
	compress, dedupe string
}

func addDataFlags(cmd *cobra.Command, d *dataFlags) {
	f := cmd.Flags()
	f.StringVar(&d.compress, "compress-ratio", "1", "write data that compresses by `RATIO`: 2 (or 2:1, or 50% saved, fio's buffer_compress_percentage) halves it; "+
		"each 4 KiB block keeps 4096/RATIO random bytes, the rest zeros (default: incompressible)")
	f.StringVar(&d.dedupe, "dedupe-ratio", "1", "write data whose 4 KiB blocks repeat: `RATIO` of all blocks to the distinct ones, 3 (or 3:1, or 67% copies, fio's dedupe_percentage) "+
		"(default: no block repeats)")
}

// resolve reads the flags given into a pattern.Data.
func (d *dataFlags) resolve(cmd *cobra.Command) (pattern.Data, error) {
	var out pattern.Data
	for _, x := range []struct {
		name, v string
		dst     *float64
	}{{"compress-ratio", d.compress, &out.Compress}, {"dedupe-ratio", d.dedupe, &out.Dedupe}} {
		if !cmd.Flags().Changed(x.name) {
			continue
		}
		r, err := pattern.ParseRatio(x.v)
		if err != nil {
			return out, Usagef("--%s %v", x.name, err)
		}
		*x.dst = r
	}
	return out, nil
}
