package cli

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fsbench/fsbench/internal/report"
)

// Old spellings that scripts may still use: each still works, with a
// notice on stderr naming the new one, unless its meaning would be
// mistaken for what the spelling means in the other commands.

// deprecatedf prints a deprecation notice on stderr (not with -q).
func (a *App) deprecatedf(format string, args ...any) {
	if !a.Globals.Quiet {
		a.progressWrite(fmt.Sprintf("fsbench: deprecated: "+format+"\n", args...))
	}
}

// addOldOutputFlag keeps report's former -o/--output FILE, hidden: -o is
// the output format in every other command.
func addOldOutputFlag(app *App, cmd *cobra.Command, o *ReportOptions) {
	f := cmd.Flags()
	f.StringVarP(&o.oldOutput, "output", "o", "", "former spelling of --html")
	_ = f.MarkHidden("output")
}

// takeOldOutput takes report -o FILE as --html FILE, with a notice; a
// format name (-o json) is refused, since that is what -o means elsewhere
// and a page written to a file named "json" is not what was asked for.
func (o *ReportOptions) takeOldOutput(app *App, cmd *cobra.Command) error {
	f := cmd.Flags()
	if !f.Changed("output") {
		return nil
	}
	if f.Changed("html") {
		return Usagef("give the page's file once, with --html FILE (-o/--output is its former spelling)")
	}
	if v := o.oldOutput; slices.Contains(report.Formats(), v) || v == "html" {
		return Usagef("-o %s: report writes one HTML page, and -o is the output format in the other commands; give the page's file with --html FILE (or -O FILE)", v)
	}
	app.deprecatedf("report -o/--output FILE is now --html FILE (-O FILE); -o is the output format in the other commands")
	o.Output = o.oldOutput
	return nil
}

// noteOldSpellings, run before every command, names the old forms used
// on its command line: a duration (--interval, --duration, --warmup, ...)
// given as a plain number of seconds (stats' and profile's former
// --interval; a duration is the one form now).
func noteOldSpellings(app *App, cmd *cobra.Command) {
	noteJuicefsOnly(app, cmd)
	if f := cmd.Flags().Lookup(oldJobFlag); f != nil && f.Changed && f.Hidden {
		app.deprecatedf("%s --workload FILE is now --job FILE (or -f); --workload NAME is objbench's named workloads", cmd.Name())
	}
	if f := cmd.Flags().Lookup(oldMetricsURL); f != nil && f.Changed && f.Hidden {
		app.deprecatedf("stats --metrics URL is now --metrics-url URL; --metrics is compare's list of figures")
	}
	noteRenamed(app, cmd)
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if name, _ := pflag.UnquoteUsage(f); name != "DURATION" && f.Name != "interval" {
			return
		}
		v := strings.TrimSpace(f.Value.String())
		if secs, err := strconv.ParseFloat(v, 64); err == nil && secs > 0 && secs <= 1e9 {
			d := time.Duration(secs * float64(time.Second))
			app.deprecatedf("--%s %s: a number of seconds, read as %v; write a duration (--%s %v)", f.Name, v, d, f.Name, d)
		}
	})
}

// renamedFlags are the flags spelt anew so that one name means one thing
// in every command: -p/--threads is the parallel workers on each host
// (bench's threads, io500's, checkpoint's ranks, train's accelerators),
// --files bench's files per thread. The old spelling stays, hidden, and
// works with a notice; alias says it sets the new flag's value as given
// (checkpoint's --ranks counted all hosts together, and stays apart).
var renamedFlags = []struct {
	cmd, old, new string
	alias         bool
	notice        string
}{
	{"train", oldAccelerators, "threads", true, "train -n/--accelerators N is now -p/--threads N: -p is the parallel workers on each host in every command"},
	{"train", oldTrainFiles, "dataset-files", true, "train --files N is now --dataset-files N, the files of the whole dataset; --files is bench's files per thread"},
	{"checkpoint", oldRanks, "threads", false, "checkpoint --ranks N (the ranks on all hosts together) is now -p/--threads N/HOSTS, the ranks on each host: -p is the parallel workers on each host in every command"},
}

// Former names of renamedFlags.
const (
	oldAccelerators = "accelerators"
	oldTrainFiles   = "files"
	oldRanks        = "ranks"
)

// noteRenamed prints the notice of each old spelling of renamedFlags on
// cmd's command line and, for an alias, marks the new flag given, so
// that the command reads one name.
func noteRenamed(app *App, cmd *cobra.Command) {
	for _, r := range renamedFlags {
		if r.cmd != cmd.Name() {
			continue
		}
		f, n := cmd.Flags().Lookup(r.old), cmd.Flags().Lookup(r.new)
		if f == nil || !f.Changed || !f.Hidden || n == nil {
			continue
		}
		if n.Changed && !r.alias {
			continue // both spellings: the command refuses them together
		}
		app.deprecatedf("%s", r.notice)
		n.Changed = n.Changed || r.alias
	}
}

// oldMetricsURL is stats' former name of --metrics-url, kept hidden:
// --metrics is compare's list of figures.
const oldMetricsURL = "metrics"

// oldJobFlag is the former name of bench's and train's --job FILE, kept
// hidden: --workload is objbench's, and names a workload.
const oldJobFlag = "workload"

// oldFollow is the hidden flag that keeps profile's former -f (now
// --follow only: -f names a workload file in bench and train).
const oldFollow = "follow-shorthand"

func addOldFollowFlag(cmd *cobra.Command) {
	cmd.Flags().BoolP(oldFollow, "f", false, "former spelling of --follow")
	_ = cmd.Flags().MarkHidden(oldFollow)
}

// takeOldFollow takes profile -f as --follow, with a notice.
func (o *ProfileOptions) takeOldFollow(app *App, cmd *cobra.Command) {
	if on, _ := cmd.Flags().GetBool(oldFollow); on {
		o.Follow = true
		app.deprecatedf("profile -f is now --follow (-f names a workload file in bench and train)")
	}
}
