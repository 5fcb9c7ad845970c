package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Flag groups of --help, in the order shown. A flag not in flagGroups is
// listed under otherGroup, the flags every command has under globalGroup.
const (
	commonGroup  = "Common flags"
	workGroup    = "Workload flags"
	outputGroup  = "Output and CI flags"
	hostsGroup   = "Many hosts flags"
	storageGroup = "Storage and credentials flags"
	otherGroup   = "Other flags"
	globalGroup  = "Global flags"
)

var groupOrder = []string{commonGroup, workGroup, storageGroup, outputGroup, hostsGroup, otherGroup, globalGroup}

// flagGroups puts flags in groups by name, the same in every command.
var flagGroups = map[string]string{}

func init() {
	for group, names := range map[string][]string{
		commonGroup: {"threads", "block-size", "big-file-size", "small-file-size", "small-file-count", "direct",
			"quick", "model", "accelerators", "accelerator-type", "ranks", "size", "objects",
			"big-object-size", "small-object-size", "small-objects", "storage", "workload", "job", "help", "epochs"},
		workGroup: {"files", "dataset-files", "duration", "keep", "verify", "fsync", "drop-caches", "rw", "xfer-size", "file-size", "ops", "rate", "depth", "width", "file-select", "distribution", "compress-ratio", "dedupe-ratio", "read-pct",
			"warmup", "tree-dir", "read-existing", "sample", "access-log", "journal", "batch-size", "compute-time",
			"prefetch", "read-threads", "gen-threads", "samples-per-file", "sample-size", "sample-size-stdev",
			"print-job", "dataset", "obj-size", "part-size", "parts-in-flight", "autoterm", "autoterm-dur",
			"autoterm-pct", "list-existing", "skip-functional-tests", "speed", "interval", "tree-format",
			"batch", "mix", "obj-size-dist", "range", "seed", "find-max", "ioengine", "iodepth", "data-packet-type",
			"ior-easy-transfers", "ior-easy-xfer", "ior-hard-segments", "mdtest-easy-files", "mdtest-hard-files", "stonewall",
			"slo", "curve"},
		outputGroup: {"repeat", "output", "json", "result-file", "html", "history", "expect", "expect-file", "baseline", "threshold",
			"baseline-metrics", "au-threshold", "metrics-listen", "strict"},
		hostsGroup: {"hosts", "hosts-file", "token-file", "tls-ca", "read-others", "prefix-hosts",
			"launcher", "world-size", "rendezvous", "rendezvous-timeout"},
		storageGroup: {"access-key", "secret-key", "secret-key-file", "session-token", "session-token-file",
			"region", "addressing", "ca-cert", "insecure", "checksum", "storage-class", "timeout", "retries",
			"prefix", "anonymous", "endpoints", "sign-payload"},
	} {
		for _, n := range names {
			flagGroups[n] = group
		}
	}
}

// groupedCommands are the commands whose help lists their flags in
// groups; the others have few enough flags for one list.
var groupedCommands = map[string]bool{"bench": true, "objbench": true, "train": true, "checkpoint": true,
	"io500": true, "replay": true}

// flagSection is one group of flags with its title.
type flagSection struct {
	Title string
	Flags *pflag.FlagSet
}

// flagSections splits c's flags into the groups its help shows them in:
// for a grouped command, by flagGroups; else its own flags and the
// global ones.
func flagSections(c *cobra.Command) []flagSection {
	sets := map[string]*pflag.FlagSet{}
	add := func(group string, f *pflag.Flag) {
		if f.Hidden {
			return
		}
		if sets[group] == nil {
			sets[group] = pflag.NewFlagSet(group, pflag.ContinueOnError)
			sets[group].SortFlags = c.Flags().SortFlags
		}
		sets[group].AddFlag(shownFlag(f))
	}
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		group := commonGroup
		if groupedCommands[c.Name()] {
			group = otherGroup
			if g, ok := flagGroups[f.Name]; ok {
				group = g
			}
		}
		add(group, f)
	})
	c.InheritedFlags().VisitAll(func(f *pflag.Flag) { add(globalGroup, f) })
	var out []flagSection
	for _, g := range groupOrder {
		if sets[g] != nil {
			title := g
			if !groupedCommands[c.Name()] && g == commonGroup {
				title = "Flags"
			}
			out = append(out, flagSection{title, sets[g]})
		}
	}
	return out
}

// shownValue is a flag's value as help shows it: its default unquoted,
// like every other flag's.
type shownValue struct{ pflag.Value }

func (shownValue) Type() string { return "value" }

// shownList is a list flag's value as help shows it: of no type pflag
// knows, so that its empty default ("") is not printed as "(default )".
type shownList struct{ pflag.Value }

// shownFlag is a copy of f for help, with its default shown as
// showDefault writes it.
func shownFlag(f *pflag.Flag) *pflag.Flag {
	cp := *f
	showDefault(&cp)
	return &cp
}

// showDefault writes f's default one way for every flag: durations as 2m
// rather than 2m0s, strings unquoted, an empty list not at all. It changes
// only how help shows f: its value's Set and String stay.
func showDefault(f *pflag.Flag) {
	switch {
	case f.DefValue == "[]":
		f.DefValue, f.Value = "", shownList{f.Value}
	case f.Value.Type() == "string":
		f.Value = shownValue{f.Value}
	}
	if d, err := time.ParseDuration(f.DefValue); err == nil && d != 0 {
		f.DefValue = shortDuration(d)
	}
}

// shortDuration is d as 2m or 1h30m rather than 2m0s or 1h30m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// usage is c's usage: the usage line, the examples right under it, the
// subcommands, and the flags in their groups, wrapped to width columns.
func usage(c *cobra.Command, width int) string {
	var b strings.Builder
	b.WriteString("Usage:")
	if c.Runnable() {
		b.WriteString("\n  " + c.UseLine())
	}
	if c.HasAvailableSubCommands() {
		b.WriteString("\n  " + c.CommandPath() + " [command]")
	}
	if c.HasExample() {
		b.WriteString("\n\nExamples:\n" + wrapExamples(c.Example, width-1))
	}
	if c.HasAvailableSubCommands() {
		b.WriteString("\n\nAvailable Commands:")
		for _, s := range c.Commands() {
			if s.IsAvailableCommand() || s.Name() == "help" {
				line := fmt.Sprintf("  %-*s %s", s.NamePadding(), s.Name(), s.Short)
				b.WriteString("\n" + wrapCommandLine(line, s.NamePadding()+3, width-1))
			}
		}
	}
	for _, sec := range flagSections(c) {
		b.WriteString("\n\n" + sec.Title + ":\n")
		b.WriteString(strings.TrimRight(sec.Flags.FlagUsagesWrapped(width-1), " \n"))
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(&b, "\n\nUse \"%s [command] --help\" for more information about a command.", c.CommandPath())
	}
	return b.String() + "\n"
}

// help is c's --help: the short line, the usage (with the examples), then
// the long description: what to type comes first, the explanation after.
func help(c *cobra.Command, width int) string {
	var b strings.Builder
	if c.Short != "" {
		b.WriteString(wrapText(c.Short, width-1) + "\n\n")
	}
	if c.Runnable() || c.HasSubCommands() {
		b.WriteString(usage(c, width))
	}
	if c.Long != "" {
		b.WriteString("\n" + wrapText(strings.TrimRight(c.Long, " \n"), width-1) + "\n")
	}
	return b.String()
}

// setHelp gives the root, and so every command, the grouped, wrapped help.
func setHelp(app *App, c *cobra.Command) {
	if c.HasParent() {
		return
	}
	c.SetUsageFunc(func(c *cobra.Command) error {
		_, err := fmt.Fprint(c.OutOrStderr(), usage(c, app.IO.cols()))
		return err
	})
	c.SetHelpFunc(func(c *cobra.Command, _ []string) {
		fmt.Fprint(c.OutOrStdout(), help(c, app.IO.cols()))
	})
}

// longHelpLines is how many lines of help are wider than width.
func longHelpLines(help string, width int) (n int) {
	for _, l := range strings.Split(help, "\n") {
		if len([]rune(l)) > width {
			n++
		}
	}
	return n
}

// wrapExamples breaks example command lines wider than width before a
// flag (else at a space), with a backslash, so that each still pastes
// into a shell as one command.
func wrapExamples(ex string, width int) string {
	var out []string
	for _, l := range strings.Split(ex, "\n") {
		for len(l) > width {
			cut := breakAt(l[:width-2], " -")
			if cut <= 8 {
				cut = breakAt(l[:width-2], " ")
			}
			if cut <= 8 {
				break // no room to break
			}
			out = append(out, l[:cut]+" \\")
			l = "      " + strings.TrimLeft(l[cut:], " ")
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// breakAt is the last index of sep in s outside single quotes, or -1.
func breakAt(s, sep string) int {
	for i := strings.LastIndex(s, sep); i > 0; i = strings.LastIndex(s[:i], sep) {
		if strings.Count(s[:i], "'")%2 == 0 {
			return i
		}
	}
	return -1
}

// wrapText wraps the lines of s wider than width at spaces; a line's
// continuation is indented as far as the line, and four columns more.
func wrapText(s string, width int) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		indent := l[:len(l)-len(strings.TrimLeft(l, " "))] + "    "
		for len([]rune(l)) > width {
			cut := strings.LastIndex(l[:width], " ")
			if cut <= len(indent) {
				break
			}
			out = append(out, strings.TrimRight(l[:cut], " "))
			l = indent + strings.TrimLeft(l[cut:], " ")
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// wrapCommandLine wraps a line of the command list, its continuation
// under the description's first column (col).
func wrapCommandLine(l string, col, width int) string {
	w := wrapText(l, width)
	return strings.ReplaceAll(w, "\n      ", "\n"+strings.Repeat(" ", col))
}
