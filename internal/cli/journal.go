package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/journal"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/workload"
)

// journalUsage is the help of --journal.
const journalUsage = "record every acknowledged write, fsync and delete in this new file, for fsbench verify to read back after a crash or failover (needs --keep: the files stay); " + journalHostsUsage

// journalHostsUsage is what --journal does with --hosts.
const journalHostsUsage = "with --hosts each host writes its own, FILE.host-N on that host: give an absolute path beneath a directory each agent allows (--allow-root)"

// checkJournal refuses --journal where the files it records would not
// stay or the run writes none.
func checkJournal(cmd *cobra.Command, path string, keep bool) error {
	if !cmd.Flags().Changed("journal") {
		return nil
	}
	if path == "" {
		return Usagef("--journal names no file")
	}
	if !keep {
		return Usagef("--journal needs --keep: fsbench verify reads back the files the run writes, so they must stay")
	}
	return nil
}

// openJournal starts the journal of a run of workers workers below root,
// or returns nil when path is empty. confine, on an agent, must accept
// the journal's directory (newJournal).
func openJournal(path, root string, workers int, seed uint64, confine func(string) error) (*journal.Writer, error) {
	if path == "" {
		return nil, nil
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, Usagef("PATH %s: %v", root, err)
	}
	return newJournal(path, confine, func(f *os.File) (*journal.Writer, error) { return journal.CreateFile(f, abs, workers, seed) })
}

// newJournal makes the new journal file path and starts a journal in it.
// The file is made in its directory held open, never through a link as
// its last component; on an agent, confine checks that directory first,
// so that one of the path swapped for a link by another user after the
// job was taken does not lead the journal out of the allowed roots.
func newJournal(path string, confine func(string) error, start func(*os.File) (*journal.Writer, error)) (*journal.Writer, error) {
	var check func(string) error
	if confine != nil {
		check = func(dir string) error {
			if err := confine(dir); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			return nil
		}
	}
	f, err := sysio.CreateNew(path, 0o644, check)
	var w *journal.Writer
	if err == nil {
		w, err = start(f)
	}
	switch {
	case errors.Is(err, fs.ErrExist):
		return nil, Usagef("--journal %s exists: verify it with fsbench verify, or name a new file", path)
	case err != nil:
		return nil, Usagef("--journal: %v", err)
	}
	return w, nil
}

// closeJournal writes out the journal and says how to check it; a
// failure is a warning (the benchmark's figures stand) that says the
// journal is incomplete.
func closeJournal(app *App, w *journal.Writer, path, root string, warn func(string)) {
	if w == nil {
		return
	}
	if err := w.Close(); err != nil {
		app.Warnf("%v", err)
		warn(err.Error())
		return
	}
	if !app.Globals.Quiet {
		fmt.Fprintf(app.IO.Err, "Journal: %s; the files stay for: fsbench verify --journal %s %s\n", path, path, root)
	}
}

// tracers tells every tracer of the list.
type tracers []workload.Tracer

func (ts tracers) Trace(worker int, ev workload.Event) {
	for _, t := range ts {
		t.Trace(worker, ev)
	}
}

// joinTracers is one tracer for those set, or nil.
func joinTracers(ts ...workload.Tracer) workload.Tracer {
	var set tracers
	for _, t := range ts {
		if t != nil {
			set = append(set, t)
		}
	}
	switch len(set) {
	case 0:
		return nil
	case 1:
		return set[0]
	}
	return set
}
