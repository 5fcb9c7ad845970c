package cli

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagMeanings says, for every flag name that commands spell with
// different help texts, what the name means in each command. A name has
// one meaning; twoMeanings lists the few that have two, and why.
var flagMeanings = map[string]map[string]string{
	"block-size":     all("size of each read, write or object", "bench", "objbench", "checkpoint"),
	"direct":         all("O_DIRECT", "bench", "checkpoint", "train"),
	"distribution":   all("distribution of random picks", "bench", "objbench", "train"),
	"compress-ratio": all("how the data written compresses", "bench", "objbench", "checkpoint", "train", "io500", "replay"),
	"dedupe-ratio":   all("how the data written repeats", "bench", "objbench", "checkpoint", "train", "io500", "replay"),
	"drop-caches": all("drop kernel caches before reading",
		"bench", "checkpoint", "io500", "replay", "train", "fio", "vdbench", "objbench"),
	"duration": {"bench": "how long each phase runs", "objbench": "how long each phase runs", "probe": "how long the probe runs"},
	"expect":   all("expectation", "bench", "objbench", "train", "checkpoint", "io500", "replay", "probe", "fio", "vdbench"),
	"files":    {"bench": "files per thread", "train": "former spelling of --dataset-files"},
	"html":     all("HTML report file", "bench", "objbench", "train", "checkpoint", "io500", "replay", "report", "fio", "vdbench", "show"),
	"interval": {"bench": "reporting interval", "objbench": "reporting interval", "fio": "reporting interval", "stats": "reporting interval",
		"profile": "reporting interval", "probe": "how often a round starts"},
	"json":            all("result as JSON", "bench", "objbench", "train", "checkpoint", "io500", "replay", "compare", "profile", "stats", "fio", "vdbench", "check", "show", "verify"),
	"job":             all("job file", "bench", "train", "vdbench"),
	"journal":         all("verification journal", "bench", "objbench", "verify"),
	"keep":            all("keep what the run made", "bench", "objbench", "train", "checkpoint", "io500", "replay", "fio"),
	"name":            all("host's name in metrics", "agent", "probe"),
	"metrics":         {"compare": "figures compared", "stats": "former spelling of --metrics-url"},
	"model":           all("model preset", "checkpoint", "train"),
	"no-space-check":  all("run though the amounts do not fit the free space", "io500"),
	"ops":             all("operation limit", "bench", "objbench"),
	"output":          {"bench": "format", "objbench": "format", "train": "format", "checkpoint": "format", "io500": "format", "replay": "format", "vdbench": "format", "compare": "format", "verify": "format", "profile": "format", "stats": "format", "check": "format", "show": "format", "report": "former spelling of --html"},
	"print-job":       all("print the job it would run, and exit", "train", "vdbench"),
	"part-size":       all("multipart part size", "checkpoint", "objbench"),
	"parts-in-flight": all("multipart parts at a time", "checkpoint", "objbench"),
	"quick":           all("smoke-test preset", "bench", "objbench", "train", "checkpoint", "io500", "replay", "fio", "vdbench"),
	"seed":            all("random seed", "objbench", "train"),
	"speed":           all("replay pace", "profile", "replay"),
	"threads":         all("parallel workers on each host", "bench", "objbench", "io500", "checkpoint", "train"),
	"threshold":       all("regression threshold", "bench", "objbench", "train", "checkpoint", "io500", "replay", "compare", "report", "fio", "vdbench", "check"),
	"token-file":      all("agents' token file", "bench", "objbench", "train", "checkpoint", "io500", "replay", "agent", "vdbench"),
	"verify":          all("check every byte read", "bench", "objbench", "io500"),
	"warmup":          all("time before measuring", "bench", "objbench"),
	"workload":        {"bench": "former spelling of --job", "train": "former spelling of --job", "objbench": "named object workload"},
}

// twoMeanings are the names with two meanings, and why that is safe.
var twoMeanings = map[string]string{
	"duration": "probe's own; the command probe runs takes its --duration after its name",
	"interval": "probe's own; the command probe runs takes its --interval after its name",
	"files":    "train's is hidden, a former spelling with a notice",
	"metrics":  "stats' is hidden, a former spelling with a notice",
	"output":   "report's is hidden, a former spelling with a notice",
	"workload": "bench's and train's are hidden, former spellings with a notice",
}

// mustSay are differences a user must not miss: the help of the flag in
// that command says it.
var mustSay = map[string]map[string]string{
	"block-size": {"bench": "a bare number is MiB", "objbench": "a bare number is KiB"},
	"verify":     {"bench": "off by default", "objbench": "on by default", "io500": "off by default"},
	"threads": {"bench": "on each host", "objbench": "on each host", "io500": "ranks", "checkpoint": "ranks",
		"train": "accelerators"},
}

// shorthands are what each one-letter flag stands for: one flag name.
var shorthands = map[string]string{"p": "threads", "o": "output", "f": "job", "n": "accelerators", "l": "", "q": "quiet", "v": "verbose", "h": "help"}

func all(meaning string, commands ...string) map[string]string {
	m := map[string]string{}
	for _, c := range commands {
		m[c] = meaning
	}
	return m
}

// TestFlagMeanings walks every command's flags: a name spelt with
// different help texts must be in flagMeanings for each command, with one
// meaning unless twoMeanings says why; the differences in mustSay are in
// the help; a one-letter flag stands for one name.
func TestFlagMeanings(t *testing.T) {
	app, _, _ := testApp(nil)
	for _, p := range flagMeaningProblems(NewRoot(app)) {
		t.Error(p)
	}
}

// TestFlagMeaningsCatchesANewMeaning: the walk fails on a command that
// brings an existing name with a new help text, or a one-letter flag
// for another name.
func TestFlagMeaningsCatchesANewMeaning(t *testing.T) {
	for flag, want := range map[string]string{"xfer-size": "--xfer-size has different help texts", "keep": "--keep of newcmd is not in flagMeanings"} {
		app, _, _ := testApp(nil)
		root := NewRoot(app)
		c := &cobra.Command{Use: "newcmd"}
		c.Flags().String(flag, "", "something else entirely")
		c.Flags().BoolP("parallel", "p", false, "not threads")
		root.AddCommand(c)
		got := strings.Join(flagMeaningProblems(root), "\n")
		if !strings.Contains(got, want) || !strings.Contains(got, "newcmd -p is --parallel") {
			t.Errorf("--%s: problems %q; want %q and the -p one", flag, got, want)
		}
	}
}

// flagMeaningProblems is what TestFlagMeanings finds in root's tree.
func flagMeaningProblems(root *cobra.Command) []string {
	var problems []string
	errorf := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	usage := map[string]map[string]*pflag.Flag{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if usage[f.Name] == nil {
				usage[f.Name] = map[string]*pflag.Flag{}
			}
			usage[f.Name][c.Name()] = f
			want, ok := shorthands[f.Shorthand]
			if ok && want != "" && want != f.Name && !(f.Hidden && c.Name() == "profile" && f.Shorthand == "f") {
				errorf("%s -%s is --%s; -%s is --%s in the other commands", c.Name(), f.Shorthand, f.Name, f.Shorthand, want)
			}
		})
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	var names []string
	for n := range usage {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		texts := map[string]bool{}
		for _, f := range usage[name] {
			texts[f.Usage] = true
		}
		table, listed := flagMeanings[name]
		if len(texts) > 1 && !listed {
			errorf("--%s has different help texts in %v: say what it means in each, in flagMeanings", name, flagCommands(usage[name]))
			continue
		}
		meanings := map[string]bool{}
		for _, cmd := range flagCommands(usage[name]) {
			m, ok := table[cmd]
			if listed && !ok {
				errorf("--%s of %s is not in flagMeanings", name, cmd)
			}
			if ok {
				meanings[m] = true
			}
		}
		for cmd := range table {
			if usage[name][cmd] == nil {
				errorf("flagMeanings has --%s for %s, which has no such flag", name, cmd)
			}
		}
		if len(meanings) > 1 && twoMeanings[name] == "" {
			errorf("--%s has %d meanings (%v): one name, one meaning", name, len(meanings), meanings)
		}
		for cmd, say := range mustSay[name] {
			if f := usage[name][cmd]; f == nil || !strings.Contains(f.Usage, say) {
				errorf("%s --%s: its help must say %q", cmd, name, say)
			}
		}
	}
	return problems
}

func flagCommands(m map[string]*pflag.Flag) []string {
	var out []string
	for c := range m {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}
