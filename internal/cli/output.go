package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/history"
	"github.com/fsbench/fsbench/internal/htmlreport"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/pkg/object"
)

// OutputOptions are the result flags shared by every benchmark command.
type OutputOptions struct {
	Format     report.Format
	format     string
	json       bool
	ResultFile string
	// HTML is a file to write the HTML report of the result to.
	HTML string
	// History is a history (a directory or URL) to keep the result in.
	History string
}

// addOutputFlags declares -o/--output, --json and --result-file.
func addOutputFlags(cmd *cobra.Command, o *OutputOptions) {
	f := cmd.Flags()
	f.StringVarP(&o.format, "output", "o", "table", "result format: "+joinFormats())
	f.BoolVar(&o.json, "json", false, "shorthand for --output json")
	f.StringVar(&o.ResultFile, "result-file", "", "also save the full result as JSON to this file")
	f.StringVar(&o.HTML, "html", "", "also write the result as a self-contained HTML report to `FILE` (see fsbench report)")
	markFiles(f, fileOut, "result-file", "html")
	f.StringVar(&o.History, "history", "", historyHelp)
}

func joinFormats() string {
	s := ""
	for i, f := range report.Formats() {
		if i > 0 {
			s += ", "
		}
		s += f
	}
	return s
}

// resolve checks the flags after parsing.
func (o *OutputOptions) resolve() error {
	if o.json {
		if o.format != "table" && o.format != "json" {
			return Usagef("--json and --output %s contradict each other", o.format)
		}
		o.format = "json"
	}
	f, err := report.ParseFormat(o.format)
	if err != nil {
		return &UsageError{Err: err}
	}
	o.Format = f
	if o.ResultFile != "" {
		if err := checkDir("--result-file", o.ResultFile); err != nil {
			return err
		}
	}
	if o.HTML != "" {
		if err := checkDir("--html", o.HTML); err != nil {
			return err
		}
	}
	if err := history.CheckWhere(o.History); err != nil {
		return Usagef("--history: %v", err)
	}
	return nil
}

// writeResult renders res to stdout in the chosen format and saves the JSON
// result file and the HTML report if asked.
func (a *App) writeResult(res *report.Result, o *OutputOptions) error {
	if res.CommandLine == "" {
		res.CommandLine = a.commandLine
	}
	if a.results != nil {
		a.results(res)
		return nil
	}
	if err := a.saveFiles(res, o); err != nil {
		return err
	}
	return report.Write(a.IO.Out, res, o.Format, report.Options{Color: a.Color(a.IO.OutTTY), Verbose: a.Globals.Verbose})
}

// writeFailed records a run's failure in its result and writes what was
// measured before it, so that a pipeline's JSON or JUnit shows the failure
// too; a table is only printed when some phase ran. It returns err.
func (a *App) writeFailed(res *report.Result, o *OutputOptions, err error) error {
	res.Error = err.Error()
	if a.results != nil {
		a.results(res)
		return err
	}
	if len(res.Phases) == 0 && len(res.Checks) == 0 && o.Format == report.FormatTable {
		if werr := a.saveFiles(res, o); werr != nil {
			a.Warnf("%v", werr)
		}
		return err
	}
	if werr := a.writeResult(res, o); werr != nil {
		a.Warnf("%v", werr)
	}
	return err
}

// saveFiles writes the JSON result file and the HTML report, if asked.
func (a *App) saveFiles(res *report.Result, o *OutputOptions) error {
	if o.ResultFile != "" {
		if err := saveJSON(o.ResultFile, res); err != nil {
			return err
		}
	}
	if o.History != "" {
		if err := a.keepInHistory(res, o.History); err != nil {
			return err
		}
	}
	if o.HTML == "" {
		return nil
	}
	var b bytes.Buffer
	opts := htmlreport.Options{Threshold: htmlreport.DefaultThreshold, Version: Version}
	if err := htmlreport.WriteOptions(&b, []*report.Result{res}, nil, opts); err != nil {
		return fmt.Errorf("--html %s: %w", o.HTML, err)
	}
	return writeFileAtomic(o.HTML, b.Bytes())
}

func saveJSON(path string, res *report.Result) error {
	err := sysio.WriteAtomic(path, "", 0o644, func(w io.Writer) error { return report.WriteJSON(w, res) })
	if err != nil {
		return fmt.Errorf("result file %s: %w", path, err)
	}
	return nil
}

// sizeArg is a size flag's text and where its parsed value goes.
type sizeArg struct {
	flag string
	text string
	dst  *int64
	// bare is the unit of a bare number: JuiceFS's, on the flags that are
	// juicefs bench's and objbench's. 0 (fsbench's own flags): a bare
	// number other than 0 is refused as ambiguous.
	bare int64
}

// parseSizes parses size flags; the first bad one is a usage error naming
// the flag.
func parseSizes(args ...sizeArg) error {
	for _, a := range args {
		n, err := a.parse()
		if err != nil {
			return err
		}
		*a.dst = n
	}
	return nil
}

// parse reads one size flag; its error is a usage error naming the flag.
func (a sizeArg) parse() (int64, error) {
	n, err := units.ParseSizeIn(a.text, a.bare)
	switch {
	case errors.Is(err, units.ErrBare):
		return 0, Usagef("--%s %s: %v", a.flag, strings.TrimSpace(a.text), err)
	case err != nil:
		return 0, Usagef("--%s: %v", a.flag, err)
	}
	return n, nil
}

// newResult starts a result with the fields every command fills the same way.
func newResult(command string) *report.Result {
	host, _ := os.Hostname()
	return &report.Result{
		SchemaVersion: report.SchemaVersion,
		Tool:          "fsbench",
		Version:       Version,
		Command:       command,
		StartedAt:     time.Now().UTC().Truncate(time.Millisecond),
		Host: report.Host{
			Name: host, OS: runtime.GOOS, Arch: runtime.GOARCH, Kernel: sysio.Kernel(), CPUs: runtime.NumCPU(),
		},
	}
}

// usageMeter measures the CPU and peak memory of this process over a run.
type usageMeter struct {
	t0 time.Time
	u0 sysio.Usage
}

func startUsage() usageMeter { return usageMeter{t0: time.Now(), u0: sysio.GetUsage()} }

func (m usageMeter) stop() report.Usage {
	u := sysio.GetUsage()
	wall := time.Since(m.t0).Seconds()
	cpu := 0.0
	if wall > 0 {
		cpu = (u.UserSec + u.SysSec - m.u0.UserSec - m.u0.SysSec) / wall * 100
	}
	return report.Usage{Seconds: wall, CPUPercent: cpu, PeakRSSBytes: u.MaxRSSBytes}
}

// secretFlags take a value that must never be shown.
var secretFlags = map[string]bool{"--secret-key": true, "--session-token": true}

// CommandLine is the command as typed, for a result, with secrets removed:
// the values of secret flags, and credentials in URLs.
func CommandLine(args []string) string {
	out := make([]string, 0, len(args)+1)
	out = append(out, "fsbench")
	hide := false
	for _, a := range args {
		switch {
		case hide:
			a, hide = "***", false
		case secretFlags[a]:
			hide = true
		case strings.Contains(a, "="):
			if name, _, _ := strings.Cut(a, "="); secretFlags[name] {
				a = name + "=***"
			}
		}
		if strings.Contains(a, "://") || strings.Contains(a, "@") {
			a = object.RedactURL(a)
		}
		if a == "" || strings.ContainsAny(a, " \t'\"$;&|<>*?") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out = append(out, a)
	}
	return strings.Join(out, " ")
}
