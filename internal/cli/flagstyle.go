package cli

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The flags' look, in one place for every command: the placeholder of
// each flag's value (SIZE, DURATION, N, FILE, ...), the group it is listed
// in by --help, and the values shell completion offers. Commands declare
// their flags as they always have; styleCommands, run once the tree is
// built, reads these tables, so a flag added to a command later is shown
// in the "Other flags" group with a placeholder from its type.

// placeholders name the value of flags whose usage text has no
// `backquoted` name of its own, by flag name.
var placeholders = map[string]string{
	"output": "FORMAT", "drop-caches": "MODE", "data-packet-type": "TYPE", "addressing": "MODE", "checksum": "MODE",
	"result-file": "FILE", "access-log": "FILE", "journal": "FILE",
	"sample": "N", "model": "NAME", "storage": "TYPE", "accelerator-type": "TYPE",
	"storage-class": "CLASS", "region": "REGION", "access-key": "KEY", "secret-key": "KEY",
	"session-token": "TOKEN", "sort": "KEY", "schema": "LETTERS", "uid": "LIST", "gid": "LIST",
	"pid": "LIST", "op": "LIST", "path": "TEXT", "metrics": "URL", "metrics-url": "URL", "log-level": "LEVEL", "log-id": "ID", "pyroscope": "URL", "sc": "CLASS", "metric": "METRIC",
	"autoterm-pct": "PERCENT", "sample-size-stdev": "SIZE", "au-threshold": "PERCENT",
	"autoterm-dur": "DURATION", "expect": "EXPR", "world-size": "N", "timeout": "DURATION", "compute-time": "DURATION", "interval": "DURATION",
}

// placeholderOf is the name a flag's value is shown with in help: its
// usage's `backquoted` name, else the table's, else one from its name or
// type; "" leaves the flag as it is (switches, lists).
func placeholderOf(f *pflag.Flag) string {
	if name, _ := pflag.UnquoteUsage(f); strings.Contains(f.Usage, "`") {
		return name
	}
	if p, ok := placeholders[f.Name]; ok {
		return p
	}
	switch t := f.Value.Type(); {
	case t == "int" || t == "int64" || t == "uint" || t == "uint64" || t == "float64" || t == "count":
		return "N" // a count, whatever its name says (batch-size, samples-per-file)
	case strings.HasSuffix(f.Name, "-size") || f.Name == "size": // world-size is in the table
		return "SIZE"
	case strings.HasSuffix(f.Name, "-file") || len(f.Annotations[fileAnnotation]) > 0:
		return "FILE"
	case strings.HasSuffix(f.Name, "-dir"):
		return "DIR"
	case t == "duration":
		return "DURATION"
	}
	return ""
}

// namedValue is a flag's value shown in help under a placeholder: pflag
// names a value without a `backquoted` name in its usage by its type.
type namedValue struct {
	pflag.Value
	name string
}

func (v namedValue) Type() string { return v.name }

// styleCommands gives every flag of c and its subcommands its
// placeholder, group and completion, and their help its layout.
func styleCommands(app *App, c *cobra.Command) {
	if !c.HasParent() && c.PersistentPreRun == nil && c.PersistentPreRunE == nil {
		c.PersistentPreRun = func(cmd *cobra.Command, _ []string) { noteOldSpellings(app, cmd) }
	}
	c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) { namePlaceholder(c, f) })
	c.PersistentFlags().VisitAll(func(f *pflag.Flag) { namePlaceholder(c, f) })
	if c.ValidArgsFunction == nil {
		if fn, ok := argCompletions[c.Name()]; ok && c.HasParent() {
			c.ValidArgsFunction = fn
		}
	}
	setHelp(app, c)
	for _, s := range c.Commands() {
		styleCommands(app, s)
	}
}

// namedSlice is namedValue for a repeatable flag: still a slice to cobra
// and to the code that copies flags for agents.
type namedSlice struct {
	namedValue
	pflag.SliceValue
}

func namePlaceholder(c *cobra.Command, f *pflag.Flag) {
	if f.Value.Type() == "bool" || strings.Contains(f.Usage, "`") {
		return
	}
	p := placeholderOf(f)
	if p == "" {
		return
	}
	if sv, ok := f.Value.(pflag.SliceValue); ok {
		f.Value = namedSlice{namedValue{f.Value, p}, sv}
		return
	}
	f.Value = namedValue{f.Value, p}
}

// registerCompletions gives the flags of c and its subcommands their
// values for shell completion. Cobra keeps these in a map of its own for
// the life of the process, holding every flag and what its value points
// to, so they are registered only for a command line that completes: a
// probe builds a command tree every round.
func registerCompletions(c *cobra.Command) {
	c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
		if fn := completionOf(c, f); fn != nil {
			_ = c.RegisterFlagCompletionFunc(f.Name, fn)
		}
	})
	for _, s := range c.Commands() {
		registerCompletions(s)
	}
}
