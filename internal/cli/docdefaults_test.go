package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestDocsDefaults: every default a guide states for a flag, in a form a
// reader takes at its word, is the binary's: the "default" column of a
// flag table (a `value` or off/on) and "(default VALUE)" right after a
// flag in the prose. The flag belongs to the command of the section it is
// in (a heading naming `fsbench CMD`, or CMD alone); where that command
// has no such flag, any command's flag of that name with that default
// will do.
func TestDocsDefaults(t *testing.T) {
	root := docsRoot()
	pages, _ := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	checked := 0
	for _, page := range pages {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docDefaults(root, string(text)) {
			checked++
			if p := checkDocDefault(root, d); p != "" {
				t.Errorf("%s:%d: %s", filepath.Base(page), d.line, p)
			}
		}
	}
	if checked < 40 {
		t.Errorf("only %d stated defaults found in the docs: the extraction is broken", checked)
	}
	t.Logf("%d stated defaults checked", checked)
}

// TestCheckDocDefault: the checker refuses a stale default (stats'
// interval as a plain number, a block size that is another's) and takes
// the binary's in its usual spellings.
func TestCheckDocDefault(t *testing.T) {
	root := docsRoot()
	for text, want := range map[string]string{
		"# `fsbench stats`\n| flag | default | meaning |\n|---|---|---|\n| `--interval SECONDS` | `1` | x |\n":         "is 1s",
		"# `fsbench stats`\n| flag | default | meaning |\n|---|---|---|\n| `--interval DURATION` | `1s` | x |\n":       "",
		"## profile\n| flag | default | meaning |\n|---|---|---|\n| `--interval SECONDS` | `2` | x |\n":                "is 2s",
		"# `fsbench bench`\n| flag | default | meaning |\n|---|---|---|\n| `--block-size SIZE` | `4M` | x |\n":         "is 1M",
		"# `fsbench bench`\n| flag | default | meaning |\n|---|---|---|\n| `--direct` | on | x |\n":                    "is false",
		"# `fsbench bench`\n| flag | default | meaning |\n|---|---|---|\n| `-p`, `--threads N` | `1` | x |\n":          "",
		"# `fsbench objbench`\n| flag | default | meaning |\n|---|---|---|\n| `-p`, `--threads N` | `1` | x |\n":       "is 4",
		"# `fsbench objbench`\nparts, `--parts-in-flight` of them at a time (default 4), each\n":                       "",
		"# `fsbench objbench`\nlonger than `--autoterm-dur` (default 15 s), there are\n":                               "",
		"# `fsbench objbench`\nlonger than `--autoterm-dur` (default 20 s), there are\n":                               "is 15s",
		"# `fsbench train`\n| `--model MODEL` | the preset (default resnet50) |\n":                                     "",
		"# `fsbench train`\n| `--seed N` | seed of the shuffles (default 7) |\n":                                       "is 1",
		"# `fsbench bench`\n| flag | default | meaning |\n|---|---|---|\n| `--schema LETTERS` | every section | x |\n": "",
	} {
		ds := docDefaults(root, text)
		var got []string
		for _, d := range ds {
			if p := checkDocDefault(root, d); p != "" {
				got = append(got, p)
			}
		}
		if want != "" && len(ds) == 0 {
			t.Errorf("%q: no default found", text)
		}
		if g := strings.Join(got, "; "); (want == "") != (g == "") || !strings.Contains(g, want) {
			t.Errorf("%q: got %q, want a problem containing %q", text, g, want)
		}
	}
}

// docDefault is one default a page states: the flags it is stated for,
// the value, the command of the section, and the line.
type docDefault struct {
	flags []string
	value string
	cmd   *cobra.Command
	line  int
}

var (
	docFlagName    = regexp.MustCompile("`-{1,2}([a-zA-Z][a-zA-Z0-9-]*)")
	docTableValue  = regexp.MustCompile("^(?:`([^`\\s]+)`|(off|on))$")
	docProseFlag   = regexp.MustCompile("`--([a-z][a-z0-9-]*)[^`]*`([^`(]{0,60})\\(default `?([^;)`]+?)`?[;)]")
	docHeadingCmd  = regexp.MustCompile("`fsbench ([a-z0-9]+)")
	docProseSingle = regexp.MustCompile(`^[\w.:/%][-\w.:/%]*( ?(s|ms|m|h|MiB|KiB|GiB))?$`)
)

// docDefaults returns the defaults a page states in a recognizable form.
func docDefaults(root *cobra.Command, text string) []docDefault {
	var out []docDefault
	var section *cobra.Command
	defaultCol, fenced := -1, false
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
		}
		if fenced {
			continue
		}
		if strings.HasPrefix(l, "#") {
			if c := headingCommand(root, l); c != nil {
				section = c
			}
			defaultCol = -1
			continue
		}
		if !strings.HasPrefix(l, "|") {
			defaultCol = -1
		} else if cells := tableCells(l); defaultCol < 0 && len(cells) > 1 && strings.EqualFold(cells[0], "flag") {
			defaultCol = indexFold(cells, "default")
		} else if defaultCol > 0 && defaultCol < len(cells) {
			if m := docTableValue.FindStringSubmatch(cells[defaultCol]); m != nil {
				out = append(out, docDefault{flagNames(cells[0]), m[1] + m[2], section, i + 1})
			}
		}
		for _, m := range docProseFlag.FindAllStringSubmatch(l, -1) {
			if v := strings.TrimSpace(m[3]); docProseSingle.MatchString(v) {
				out = append(out, docDefault{[]string{m[1]}, v, section, i + 1})
			}
		}
	}
	return out
}

// headingCommand returns the command a heading names: `fsbench CMD`, or
// a heading that is a command's name alone.
func headingCommand(root *cobra.Command, heading string) *cobra.Command {
	name := strings.TrimSpace(strings.TrimLeft(heading, "#"))
	if m := docHeadingCmd.FindStringSubmatch(heading); m != nil {
		name = m[1]
	}
	c, rest := findDocCommand(root, []string{name})
	if c == nil || len(rest) > 0 {
		return nil
	}
	return c
}

func tableCells(line string) []string {
	cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

func indexFold(cells []string, want string) int {
	for i, c := range cells {
		if strings.EqualFold(c, want) {
			return i
		}
	}
	return -1
}

// flagNames returns the long flags a table's first cell names (a row for
// -p, --threads names threads).
func flagNames(cell string) []string {
	var names []string
	for _, m := range docFlagName.FindAllStringSubmatch(cell, -1) {
		if len(m[1]) > 1 {
			names = append(names, m[1])
		}
	}
	return names
}

// checkDocDefault returns what is wrong with one stated default.
func checkDocDefault(root *cobra.Command, d docDefault) string {
	for _, name := range d.flags {
		f := docFlag(root, d.cmd, name, d.value)
		if f == nil {
			continue // a flag of no command, or one of a peer's: TestDocsFlags's
		}
		if def, ok := shownDefault(f); ok && !sameDefault(d.value, def) && !sameDefault(d.value, f.DefValue) {
			return fmt.Sprintf("the default of --%s is stated as %q; the binary's is %s", name, d.value, def)
		}
		break // the first flag of a row is the one its default is for
	}
	return ""
}

var (
	usageDefault      = regexp.MustCompile(`default:? ([^\s);,:]+)`)
	usageDefaultAfter = regexp.MustCompile(`([a-z0-9]+) \([^()]*; default\)`)
)

// shownDefault returns the default --help shows for a flag: its value's
// default or, for a flag whose zero value means "decided at run time",
// the one its usage states; false when it shows none.
func shownDefault(f *pflag.Flag) (string, bool) {
	switch f.DefValue {
	case "", "0", "false", "[]", "0s":
	default:
		return f.DefValue, true
	}
	if m := usageDefault.FindStringSubmatch(f.Usage); m != nil {
		return m[1], true
	}
	if m := usageDefaultAfter.FindStringSubmatch(f.Usage); m != nil {
		return m[1], true
	}
	return f.DefValue, f.DefValue != ""
}

// docFlag returns the flag name of the section's command or, when that
// has none, of the command whose flag of that name has the value as its
// default (else of the first command that has the flag).
func docFlag(root, cmd *cobra.Command, name, value string) *pflag.Flag {
	if cmd != nil {
		if f := cmd.Flags().Lookup(name); f != nil {
			return f
		}
	}
	var first *pflag.Flag
	var walk func(c *cobra.Command) *pflag.Flag
	walk = func(c *cobra.Command) *pflag.Flag {
		if f := c.Flags().Lookup(name); f != nil && !f.Hidden {
			if def, _ := shownDefault(f); sameDefault(value, def) {
				return f
			}
			if first == nil {
				first = f
			}
		}
		for _, s := range c.Commands() {
			if f := walk(s); f != nil {
				return f
			}
		}
		return nil
	}
	if f := walk(root); f != nil {
		return f
	}
	return first
}

// sameDefault: a stated value and a flag's default are the same, spelled
// as a reader would (off for false, 15 s for 15s).
func sameDefault(stated, def string) bool {
	s := strings.ReplaceAll(stated, " ", "")
	switch s {
	case "off":
		s = "false"
	case "on":
		s = "true"
	}
	if s == def {
		return true
	}
	a, errA := time.ParseDuration(s)
	b, errB := time.ParseDuration(def)
	return errA == nil && errB == nil && a == b && s != "0"
}
