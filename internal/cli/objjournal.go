package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/journal"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/pkg/object"
)

// objJournalUsage is the help of objbench's --journal.
const objJournalUsage = "record every put (key, length, fingerprint) and delete of a --workload the store acknowledged in this new file, for fsbench verify to read back after a crash or restart of the store (needs --keep: the objects stay); " + journalHostsUsage

// resolveJournal checks --journal: a workload of single puts whose
// objects stay.
func (o *ObjbenchOptions) resolveJournal(cmd *cobra.Command) error {
	if !cmd.Flags().Changed("journal") {
		return nil
	}
	if o.JournalPath == "" {
		return Usagef("--journal names no file")
	}
	if err := o.CheckJournal(); err != nil {
		return &UsageError{Err: err}
	}
	return nil
}

// journalURL is the store's URL as the journal keeps it: without
// credentials, and a directory's absolute path for --storage file.
func journalURL(storage, url string) string {
	if storage == "file" && !strings.Contains(url, "://") {
		if abs, err := filepath.Abs(url); err == nil {
			return filepath.Clean(abs)
		}
	}
	return strings.TrimSuffix(object.RedactURL(url), "/")
}

// openJournal starts the journal of the run's puts and deletes and gives
// it to the run, or returns nil without --journal.
func (o *ObjbenchOptions) openJournal() (*journal.Writer, error) {
	if o.JournalPath == "" {
		return nil, nil
	}
	url := journalURL(o.Storage, o.URL)
	w, err := newJournal(o.JournalPath, o.journalConfine, func(f *os.File) (*journal.Writer, error) {
		return journal.CreateObjectsFile(f, o.Storage, url, o.Threads, o.Seed)
	})
	if err != nil {
		return nil, err
	}
	o.Journal = w
	return w, nil
}

// closeObjJournal writes out the journal and says how to check it; a
// failure is a warning that says the journal is incomplete.
func closeObjJournal(app *App, w *journal.Writer, o *ObjbenchOptions, res *report.Result) {
	if w == nil {
		return
	}
	if err := w.Close(); err != nil {
		app.Warnf("%v", err)
		res.Warnings = append(res.Warnings, err.Error())
		return
	}
	if !app.Globals.Quiet {
		fmt.Fprintf(app.IO.Err, "Journal: %s; the objects stay for: fsbench verify --journal %s %s\n",
			o.JournalPath, o.JournalPath, journalURL(o.Storage, o.URL))
	}
}
