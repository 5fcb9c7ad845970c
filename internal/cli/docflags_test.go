package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fsbench/fsbench/internal/fiojob"
)

// TestDocsFlags: every fsbench command line shown in README and docs/
// (code blocks and inline code) and in the commands' examples uses flags its command has now, by their
// current names: a renamed flag kept only as a hidden former spelling
// (bench --workload FILE, report -o FILE) is reported too, since a new
// user copies what the guide shows.
func TestDocsFlags(t *testing.T) {
	root := docsRoot()
	pages, _ := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	pages = append(pages, filepath.Join("..", "..", "docs", "examples", "README.tpl.md"),
		filepath.Join("..", "..", "docs", "examples", "run.sh"))
	checked := 0
	for _, page := range pages {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		lines := docCommandLines(string(text))
		for _, line := range lines {
			for _, problem := range checkDocCommand(root, line) {
				t.Errorf("%s: %q: %s", filepath.Base(page), line, problem)
			}
		}
		checked += len(lines)
	}
	checked += checkHelpExamples(t, root)
	if checked < 100 {
		t.Errorf("only %d command lines found in the docs: the extraction is broken", checked)
	}
	t.Logf("%d command lines checked", checked)
}

// checkHelpExamples checks the command lines of every command's examples
// (--help and the reference show them) as TestDocsFlags checks the docs.
func checkHelpExamples(t *testing.T, root *cobra.Command) int {
	n := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		text := ""
		for _, l := range strings.Split(c.Example, "\n") {
			text += strings.TrimSpace(l) + "\n"
		}
		for _, line := range docCommandLines("```\n" + text + "```\n") {
			n++
			for _, problem := range checkDocCommand(root, line) {
				t.Errorf("example of %s: %q: %s", c.CommandPath(), line, problem)
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	return n
}

// TestCheckDocCommand: the checker finds what it is for (an unknown flag,
// a hidden former spelling, a flag of another command) and accepts current
// command lines, including probe's wrapped command.
func TestCheckDocCommand(t *testing.T) {
	root := docsRoot()
	for line, want := range map[string]string{
		"fsbench bench data -p 2 --big-file-size 1G -q":           "",
		"fsbench bench data --job mix.yaml":                       "",
		"fsbench train data -f job.yaml":                          "write --job",
		"fsbench bench data --workload mix.yaml":                  "hidden",
		"fsbench report run1.json -o page.html":                   "hidden",
		"fsbench profile x.log --interval 5 --op read":            "former form",
		"fsbench profile x.log --interval=0.5":                    "former form",
		"fsbench profile x.log --interval 0":                      "",
		"fsbench bench data --rw read --duration 30":              "former form",
		"fsbench stats /mnt/jfs --no-such-flag":                   "unknown",
		"fsbench train data --big-file-size 1G":                   "unknown",
		"fsbench probe --interval 1m bench /mnt/jfs --quick -p 2": "",
		"fsbench probe --interval 1m bench /mnt/jfs --model x":    "unknown",
		"fsbench compare a.json b.json --threshold=10% | tee out": "",
	} {
		got := strings.Join(checkDocCommand(root, line), "; ")
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%q: got %q, want a problem containing %q", line, got, want)
		}
	}
}

var (
	docInline  = regexp.MustCompile("`(fsbench [^`]+)`")
	docCommand = regexp.MustCompile(`(?:^|[\s$(/])(fsbench [a-z0-9].*)`)
)

// docCommandLines returns the fsbench command lines of a page: inline code
// spans and the lines of code blocks (joined where they end in a backslash).
func docCommandLines(text string) []string {
	var lines []string
	inBlock := false
	var cont string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inBlock = !inBlock
			continue
		}
		if !inBlock {
			for _, m := range docInline.FindAllStringSubmatch(l, -1) {
				lines = append(lines, m[1])
			}
			continue
		}
		l = cont + l
		if strings.HasSuffix(l, "\\") {
			cont = strings.TrimSuffix(l, "\\") + " "
			continue
		}
		cont = ""
		if m := docCommand.FindStringSubmatch(l); m != nil {
			lines = append(lines, m[1])
		}
	}
	return lines
}

// checkDocCommand returns what is wrong with the flags of one command line.
func checkDocCommand(root *cobra.Command, line string) []string {
	words := strings.Fields(line)
	cmd, rest := findDocCommand(root, words[1:])
	if cmd == nil {
		return nil
	}
	var problems []string
	for i, w := range rest {
		if strings.ContainsAny(w, "|;&>") && !strings.HasPrefix(w, "-") {
			break // a pipe or the next command
		}
		if p := checkDocInterval(rest[i:]); p != "" {
			problems = append(problems, p)
		}
		if cmd.Name() == "probe" {
			if sub, _ := findDocCommand(root, []string{w}); sub != nil {
				cmd = sub
				continue
			}
		}
		if p := checkDocFlag(cmd, w); p != "" {
			problems = append(problems, p)
		}
	}
	return problems
}

// checkDocInterval refuses a duration flag (--interval, --duration, ...)
// given a plain number of seconds other than 0: the former form, which
// now prints a deprecation notice.
func checkDocInterval(words []string) string {
	name, v, ok := strings.Cut(words[0], "=")
	if !ok {
		if len(words) < 2 {
			return ""
		}
		v = words[1]
	}
	switch name {
	case "--interval", "--duration", "--warmup", "--autoterm-dur", "--compute-time", "--stonewall":
	default:
		return ""
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs != 0 {
		return fmt.Sprintf("%s %s is the former form (a number of seconds): write a duration such as %gs", name, v, secs)
	}
	return ""
}

// findDocCommand follows words down the command tree while they name
// subcommands; nil when the first word names none (prose, not a command).
func findDocCommand(root *cobra.Command, words []string) (*cobra.Command, []string) {
	cmd := root
	for len(words) > 0 {
		var next *cobra.Command
		for _, c := range cmd.Commands() {
			if c.Name() == words[0] {
				next = c
			}
		}
		if next == nil {
			break
		}
		cmd, words = next, words[1:]
	}
	if cmd == root {
		return nil, nil
	}
	return cmd, words
}

var docFlagWord = regexp.MustCompile(`^(--?)([a-zA-Z][a-zA-Z0-9-]*)(=.*)?$`)

// checkDocFlag checks one word: a flag must exist on cmd (or be global)
// and not be a hidden former spelling.
func checkDocFlag(cmd *cobra.Command, w string) string {
	m := docFlagWord.FindStringSubmatch(strings.Trim(w, "\"'`,.)"))
	if m == nil {
		return ""
	}
	cmd.InitDefaultHelpFlag()
	flags := cmd.Flags()
	flags.AddFlagSet(cmd.InheritedFlags())
	f := flags.Lookup(m[2])
	if m[1] == "-" {
		if len(m[2]) != 1 {
			return "" // -1, -qv and the like: not checked
		}
		f = flags.ShorthandLookup(m[2])
	}
	switch {
	case f == nil && cmd.DisableFlagParsing && m[1] == "--" && fiojob.Takes(m[2]):
		return "" // fsbench fio reads fio's options itself
	case f == nil:
		return fmt.Sprintf("unknown flag %s for %s", m[1]+m[2], cmd.CommandPath())
	case f.Hidden:
		return fmt.Sprintf("%s of %s is a hidden former spelling: use the current name", m[1]+m[2], cmd.CommandPath())
	case m[1] == "-" && len(shorthandMeanings(cmd.Root())[m[2]]) > 1:
		return fmt.Sprintf("-%s means %s in different commands: write --%s", m[2],
			strings.Join(shorthandMeanings(cmd.Root())[m[2]], ", "), f.Name)
	}
	return ""
}

// shorthandMeanings maps each one-letter flag to the long names it stands
// or stood for across the commands, hidden former spellings included: a
// letter with two meanings (-f is a job file in bench and train, and was
// "follow" in profile) is written long in the docs.
func shorthandMeanings(root *cobra.Command) map[string][]string {
	meanings := map[string][]string{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Shorthand != "" && !slices.Contains(meanings[f.Shorthand], f.Name) {
				meanings[f.Shorthand] = append(meanings[f.Shorthand], f.Name)
			}
		})
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	return meanings
}
