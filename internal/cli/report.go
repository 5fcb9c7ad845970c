package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/compare"
	"github.com/fsbench/fsbench/internal/history"
	"github.com/fsbench/fsbench/internal/htmlreport"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/units"
)

// ReportOptions are the flags of `fsbench report`.
type ReportOptions struct {
	Files  []string
	Output string // a file, or "-" for stdout

	oldOutput string // -o/--output FILE, the deprecated spelling of --html
	htmlreport.Options
	// History is --history: add the trend of the results' series in it.
	History string

	threshold string
}

func newReportCmd(app *App) *cobra.Command {
	return newReportCmdWith(app, nil)
}

// newReportCmdWith builds the command; runF replaces the run in tests of
// flag parsing.
func newReportCmdWith(app *App, runF func(context.Context, *ReportOptions) error) *cobra.Command {
	o := &ReportOptions{}
	cmd := &cobra.Command{
		Use:   "report RESULT.json [MORE.json ...]",
		Short: "Turn results into one self-contained HTML page with charts and tables",
		Long: `Turn one or more JSON results (saved with --json or --result-file) into one
HTML page: a header per run, throughput per phase, latency percentile curves
from the stored histograms, throughput and p99 over time, per-host figures,
functional checks, expectations, errors and warnings. Every chart has its
numbers in a table beneath it.

With several results, the first is the baseline: the others are compared
with it as "fsbench compare" does, and changes beyond --threshold are marked.
Results of different commands (bench and objbench) are shown side by side,
but not compared.

The page is one file that loads nothing from anywhere: no script, font,
style sheet or image; it can be mailed, attached to a CI run or opened
offline. It follows the reader's light or dark preference and prints.

With --history DIR|URL, the page ends with a Trend section: each figure of
the results' series in that history (see fsbench history), every run a
point linked to its result, segment medians and change points marked.`,
		Example: `  fsbench report result.json --html report.html
  fsbench report last-week.json today.json -O compare.html --threshold 5%
  fsbench report a.json b.json c.json -O - > report.html
  fsbench report today.json --history ci-history -O report.html`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return Usagef("%s expects one or more result files (got none)", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Files = args
			if err := o.takeOldOutput(app, cmd); err != nil {
				return err
			}
			if err := o.resolve(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runReport(cmd.Context(), app, o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "html", "O", "report.html", "write the page to `FILE`; - for stdout")
	addOldOutputFlag(app, cmd, o)
	f.StringVar(&o.threshold, "threshold", "10%", "changes beyond this `PERCENT` count as more than noise (regressions, improvements)")
	f.StringVar(&o.Options.Title, "title", "", "the page's `TITLE` (default: fsbench report)")
	f.StringVar(&o.History, "history", "", historyHelp)
	return cmd
}

func (o *ReportOptions) resolve() error {
	t, err := compare.ParseThreshold(o.threshold)
	if err != nil {
		return Usagef("--threshold: %v", err)
	}
	o.Options.Threshold = t
	o.Options.Version = Version
	if err := history.CheckWhere(o.History); err != nil {
		return Usagef("--history: %v", err)
	}
	if o.Output == "" {
		return Usagef("--html: want a file name, or - for stdout")
	}
	if o.Output == "-" {
		return nil
	}
	if err := checkDir("--html", o.Output); err != nil {
		return err
	}
	ins := make([]fileArg, len(o.Files))
	for i, f := range o.Files {
		ins[i] = fileArg{path: f}
	}
	return checkOutputs([]fileArg{{"html", o.Output}}, ins)
}

// checkDir checks, before the run, that an output file can be written
// where it is named: its directory exists and takes files (not on a
// read-only mount, not forbidden to this user), and the name is not a
// directory.
func checkDir(flag, path string) error {
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return Usagef("%s %s: directory %s does not exist", flag, path, dir)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return Usagef("%s %s is a directory: name the file to write", flag, path)
	}
	if err := unix.Access(dir, unix.W_OK); err != nil {
		return Usagef("%s %s: cannot write in %s: %v", flag, path, dir, err)
	}
	return nil
}

func runReport(ctx context.Context, app *App, o *ReportOptions) error {
	results := make([]*report.Result, len(o.Files))
	for i, f := range o.Files {
		r, err := readResult(f)
		if err != nil {
			return err
		}
		results[i] = r
	}
	if cmds := commandsOf(results); len(cmds) > 1 {
		app.Warnf("the results are of different commands (%s): they are shown side by side, not compared", strings.Join(cmds, ", "))
	}
	if o.History != "" {
		trend, err := reportTrend(ctx, app, o.History, o.Output, results)
		if err != nil {
			return err
		}
		o.Options.Trend = trend
	}
	var b bytes.Buffer
	if err := htmlreport.WriteOptions(&b, results, reportNames(o.Files), o.Options); err != nil {
		return err
	}
	if o.Output == "-" {
		_, err := app.IO.Out.Write(b.Bytes())
		return err
	}
	if err := writeFileAtomic(o.Output, b.Bytes()); err != nil {
		return err
	}
	app.Infof("Wrote %s (%s, %s)", o.Output, units.Count(len(results), "result"), units.FormatBytes(int64(b.Len())))
	return nil
}

func commandsOf(results []*report.Result) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range results {
		if !seen[r.Command] {
			seen[r.Command] = true
			out = append(out, r.Command)
		}
	}
	return out
}

// reportNames labels results by their file names, without ".json"; a
// name that two files share is given in full.
func reportNames(files []string) []string {
	out := make([]string, len(files))
	count := map[string]int{}
	for i, f := range files {
		out[i] = strings.TrimSuffix(filepath.Base(f), ".json")
		count[out[i]]++
	}
	for i, f := range files {
		if count[out[i]] > 1 {
			out[i] = f
		}
	}
	return out
}

// writeFileAtomic writes data to path through a temporary file, so that a
// failed write leaves no half page behind.
func writeFileAtomic(path string, data []byte) error {
	if err := sysio.WriteFileAtomic(path, "", data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
