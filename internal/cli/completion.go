package cli

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fsbench/fsbench/internal/checkpoint"
	"github.com/fsbench/fsbench/internal/jobfile"
	"github.com/fsbench/fsbench/internal/objbench"
	"github.com/fsbench/fsbench/internal/profile"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/train"
	"github.com/fsbench/fsbench/pkg/object"
)

// completeFunc is what cobra calls to complete a flag's value or an
// argument.
type completeFunc = cobra.CompletionFunc

// words completes from a fixed list, each word with its description
// when one is given ("word\tdescription").
func words(list ...string) completeFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return list, cobra.ShellCompDirectiveNoFileComp
	}
}

// wordsOf completes from a list computed when asked.
func wordsOf(list func() []string) completeFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return list(), cobra.ShellCompDirectiveNoFileComp
	}
}

// files completes file names, those ending in one of exts when given.
func files(exts ...string) completeFunc {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(exts) == 0 {
			return nil, cobra.ShellCompDirectiveDefault
		}
		return exts, cobra.ShellCompDirectiveFilterFileExt
	}
}

// dirs completes directory names.
func dirs(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveFilterDirs
}

// trainModels are the models of train's presets (MODEL-ACCELERATOR).
func trainModels() []string { return train.PresetModels() }

// trainAccelerators are the accelerators of the presets of the model the
// command line names, or of the default model.
func trainAccelerators(c *cobra.Command) []string {
	if f := c.Flags().Lookup("model"); f != nil {
		return train.PresetAccelerators(f.Value.String())
	}
	return nil
}

// storages are objbench's --storage types, with their descriptions.
func storages() []string {
	var out []string
	for _, d := range object.Drivers() {
		out = append(out, d.Name+"\t"+d.Description)
	}
	return out
}

// flagCompletions complete flag values by flag name, in every command
// that has the flag; commandFlagCompletions, by command and flag, win.
var flagCompletions = map[string]completeFunc{
	"rw":      benchOps,
	"storage": wordsOf(storages),
	"accelerator-type": func(c *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return trainAccelerators(c), cobra.ShellCompDirectiveNoFileComp
	},
	"drop-caches":      words("auto", "always", "never"),
	"ioengine":         words("sync", "io_uring"),
	"launcher":         words("auto", "none", "mpi", "slurm", "k8s"),
	"file-select":      words("seq", "random"),
	"sort":             wordsOf(func() []string { return profile.SortKeys }),
	"addressing":       withFlag("storage", words("auto", "path", "virtual")),
	"data-packet-type": words("random", "timestamp"),
}

var commandFlagCompletions = map[string]map[string]completeFunc{
	"train":      {"model": wordsOf(trainModels), "job": files("yaml", "yml"), "drop-caches": words("auto", "never")},
	"checkpoint": {"model": wordsOf(checkpoint.ModelNames)},
	"bench":      {"output": wordsOf(report.Formats), "job": files("yaml", "yml")},
	"objbench":   {"output": wordsOf(report.Formats), "workload": wordsOf(objbench.WorkloadNames)},
	"replay":     {"output": wordsOf(report.Formats)},
	"compare":    {"output": words("table", "json")},
	"stats":      {"output": words("table", "json", "csv")},
	"profile":    {"output": words("table", "json")},
	"report":     {"html": files("html")},
}

// benchOps completes --rw: the operations that need a tree only once the
// tree's flags are on the command line.
func benchOps(c *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	tree := c.Flags().Changed("depth") || c.Flags().Changed("width")
	var out []string
	for _, op := range jobfile.Ops() {
		if tree || !jobfile.NeedsTree(op) {
			out = append(out, op)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// withFlag completes with fn only once the flag named is on the command
// line: a flag that goes only with another offers nothing before it.
func withFlag(name string, fn completeFunc) completeFunc {
	return func(c *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if f := c.Flags().Lookup(name); f != nil && !f.Changed {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return fn(c, args, prefix)
	}
}

// completionOf is how a flag of c completes its value, or nil for the
// shell's default (file names).
func completionOf(c *cobra.Command, f *pflag.Flag) completeFunc {
	if fn := commandFlagCompletions[c.Name()][f.Name]; fn != nil {
		return fn
	}
	if fn := flagCompletions[f.Name]; fn != nil {
		return fn
	}
	if f.Value.Type() == "bool" {
		return nil
	}
	if len(f.Annotations[fileAnnotation]) > 0 || strings.HasSuffix(f.Name, "-file") {
		return files()
	}
	return nil
}

// argCompletions complete each command's arguments: the directory it
// benchmarks, the results or logs it reads; nothing past the last.
var argCompletions = map[string]completeFunc{
	"bench":      nth(dirs),
	"train":      nth(dirs),
	"checkpoint": nth(dirs),
	"stats":      nth(dirs),
	"profile":    nth(files()),
	"compare":    nth(files("json"), files("json")),
	"report":     files("json"),
	"replay":     nth(files(), dirs),
}

// nth completes the i-th argument with fns[i], and none past them.
func nth(fns ...completeFunc) completeFunc {
	return func(c *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) >= len(fns) {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return fns[len(args)](c, args, prefix)
	}
}
