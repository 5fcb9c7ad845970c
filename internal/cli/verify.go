package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/journal"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/pkg/object"
)

// VerifyOptions are the flags of `fsbench verify`.
type VerifyOptions struct {
	Path string
	// Journals are the journal files, each --journal's (a pattern's
	// files, in order): one a host of a run on many hosts.
	Journals []string
	JSON     bool

	format string
	json   bool

	// The store's flags, for a journal of objects: the storage type comes
	// from the journal (--storage, when given, must agree).
	store   storeFlags
	storage string
	cfg     object.Config
}

func newVerifyCmd(app *App) *cobra.Command {
	return newVerifyCmdWith(app, nil)
}

// newVerifyCmdWith builds the command; runF replaces the run in tests of
// flag parsing.
func newVerifyCmdWith(app *App, runF func(context.Context, *VerifyOptions) error) *cobra.Command {
	o := &VerifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify --journal FILE [--journal FILE ...] PATH|URL",
		Short: "Read back every write a run's journal records and name each one lost, stale, torn or unexpected",
		Long: `Verify reads back everything a journal (fsbench bench --journal FILE --keep,
or fsbench objbench --workload NAME --journal FILE --keep) says the storage
acknowledged, after a crash, a killed client, a failover or a restart, and
checks it is still there: for each write or put, a fingerprint of every
4 KiB piece (the first and last 8 bytes of each 512-byte sector).

A journal of objects is verified against the store's URL as objbench was
given it; the storage type comes from the journal, and the store's flags
are objbench's (--access-key, --secret-key-file, --ca-cert, --region, ...),
with the credentials also from the environment (ACCESS_KEY, SECRET_KEY, the
provider's variables), never printed. A put the store acknowledged is durable: every one counts,
and so does a deleted object that is there again.

A write that does not hold is lost (its file is missing, ends before it,
or holds zeros there), stale (it holds what an earlier write put there),
torn (part new, part old or zeros) or unexpected (it holds what was never
written there; a deleted file that is back). Only writes an fsync covered
count: the unsynced tail (writes after their file's last fsync) is
checked and named, not counted, as a crash may rightly lose it.

A run on many hosts (--hosts) leaves one journal on each host, FILE.host-N:
gather them on one machine that reaches the shared PATH or URL and give
each with its own --journal, or all with one quoted pattern
(--journal '/root/jfs.journal.host-*'). Each is checked on its own and the
verdict counts them all.

Exit 0 when every durable write held, 3 when any did not, 2 for bad
input (no journal, not a journal, a journal of another directory or
store, a journal of files given a URL or one of objects a directory).
See docs/verify.md.`,
		Example: `  fsbench bench /mnt/jfs -p 4 --fsync --keep --journal /root/jfs.journal
  # ... kill the client, remount ...
  fsbench verify --journal /root/jfs.journal /mnt/jfs
  fsbench verify --journal /root/jfs.journal /mnt/jfs -o json > verify.json
  fsbench verify --journal '/root/jfs.journal.host-*' /mnt/jfs
  fsbench objbench --storage minio http://127.0.0.1:9000/bench --workload put --duration 5m --keep --journal /root/s3.journal
  fsbench verify --journal /root/s3.journal http://127.0.0.1:9000/bench`,
		Args: exactArgs(1, "one PATH or URL, the directory or store the journalled run wrote in"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Path = args[0]
			if err := o.resolve(); err != nil {
				return err
			}
			if err := o.resolveStore(app, cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runVerify(cmd.Context(), app, o)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.Journals, "journal", nil, "the journal `FILE` a run wrote with --journal; repeatable, or a quoted pattern such as 'FILE.host-*' for a run on many hosts")
	f.StringVarP(&o.format, "output", "o", "table", "output `FORMAT`: table or json")
	f.BoolVar(&o.json, "json", false, "shorthand for --output json")
	markFiles(f, fileIn, "journal")
	o.store.add(cmd, &o.storage, &o.cfg)
	return cmd
}

// resolveStore checks the store's flags, which apply to a journal of
// objects alone: given for a directory, they are refused.
func (o *VerifyOptions) resolveStore(app *App, cmd *cobra.Command) error {
	if !strings.Contains(o.Path, "://") {
		for _, n := range append([]string{"storage"}, storeFlagNames...) {
			if cmd.Flags().Changed(n) {
				return Usagef("--%s is for a journal of objects, verified against its store's URL, not a directory", n)
			}
		}
	}
	return o.store.resolve(app, cmd, o.Path)
}

func (o *VerifyOptions) resolve() error {
	if !strings.Contains(o.Path, "://") && !strings.Contains(o.Path, ":/") {
		if err := missingPath(o.Path, false); err != nil {
			return err
		}
	}
	if err := o.expandJournals(); err != nil {
		return err
	}
	if o.json {
		if o.format != "table" && o.format != "json" {
			return Usagef("--json and --output %s contradict each other", o.format)
		}
		o.format = "json"
	}
	switch o.format {
	case "table":
	case "json":
		o.JSON = true
	default:
		return Usagef("--output %q: verify writes table or json", o.format)
	}
	return nil
}

// expandJournals checks the --journal files and replaces a pattern that
// names no file itself by the files it matches.
func (o *VerifyOptions) expandJournals() error {
	if len(o.Journals) == 0 {
		return Usagef("verify needs --journal FILE: the journal of the run to check")
	}
	var files []string
	seen := map[string]bool{}
	for _, p := range o.Journals {
		if p == "" {
			return Usagef("--journal names no file")
		}
		matches := []string{p}
		if _, err := os.Lstat(p); err != nil && strings.ContainsAny(p, "*?[") {
			m, gerr := filepath.Glob(p)
			if gerr != nil {
				return Usagef("--journal %s: %v", p, gerr)
			}
			if len(m) == 0 {
				return Usagef("--journal %s matches no file", p)
			}
			matches = m
		}
		for _, f := range matches {
			if !seen[f] {
				seen[f] = true
				files = append(files, f)
			}
		}
	}
	o.Journals = files
	return nil
}

func runVerify(ctx context.Context, app *App, o *VerifyOptions) error {
	var s *journal.Summary
	for _, file := range o.Journals {
		one, host, err := verifyOne(ctx, app, o, file)
		if err != nil {
			return err
		}
		switch {
		case len(o.Journals) == 1:
			s = one
		case s == nil:
			s = &journal.Summary{}
			fallthrough
		default:
			s.Add(file, host, one)
		}
	}
	var err error
	if o.JSON {
		err = journal.WriteJSON(app.IO.Out, s)
	} else {
		err = journal.WriteTable(app.IO.Out, s)
	}
	if err != nil {
		return err
	}
	if n := s.Failed(); n > 0 {
		noun := "writes"
		if n == 1 {
			noun = "write"
		}
		return &expectationError{msg: fmt.Sprintf("%d durable %s did not hold (%d lost, %d stale, %d torn, %d unexpected)", n, noun, s.Lost, s.Stale, s.Torn, s.Unexpected)}
	}
	return nil
}

// verifyOne reads the journal file and verifies it against o.Path; host
// is where its run ran.
func verifyOne(ctx context.Context, app *App, o *VerifyOptions, file string) (s *journal.Summary, host string, err error) {
	j, err := journal.ReadFile(file)
	switch {
	case errors.Is(err, journal.ErrNotJournal):
		return nil, "", Usagef("--journal %v", err)
	case err != nil:
		return nil, "", Usagef("--journal %s: %v", file, sysio.PathCause(err))
	}
	t, done, err := verifyTarget(ctx, app, o, file, j)
	if err != nil {
		return nil, "", err
	}
	defer done()
	s, err = journal.Verify(ctx, j, t)
	if err != nil {
		return nil, "", fmt.Errorf("verify %s: %w", object.RedactURL(o.Path), err)
	}
	return s, j.Header.Host, nil
}

// verifyTarget is what the journal's run wrote in: the directory PATH,
// or the store at the URL for a journal of objects; done closes it.
func verifyTarget(ctx context.Context, app *App, o *VerifyOptions, file string, j *journal.Journal) (journal.Target, func(), error) {
	if j.Objects() {
		return objectTarget(ctx, o, file, j)
	}
	if strings.Contains(o.Path, "://") {
		return nil, nil, Usagef("--journal %s records files below %s, not objects of %s: give that directory", file, j.Header.Root, object.RedactURL(o.Path))
	}
	if err := sameRoot(o.Path, j.Header.Root); err != nil {
		return nil, nil, Usagef("--journal %s records writes below %s, not %s: give that directory", file, j.Header.Root, o.Path)
	}
	return journal.Dir(o.Path), func() {}, nil
}

var errOtherRoot = errors.New("another root")

// sameRoot tells whether path is the directory root names, as given or
// once links are followed.
func sameRoot(path, root string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if abs == root {
		return nil
	}
	a, errA := filepath.EvalSymlinks(abs)
	b, errB := filepath.EvalSymlinks(root)
	if errA == nil && errB == nil && a == b {
		return nil
	}
	return errOtherRoot
}
