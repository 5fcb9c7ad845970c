package main

import (
	"errors"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/fsbench/fsbench"

// layoutDoc holds the one table of packages and what each may import.
const layoutDoc = "docs/development.md"

// TestLayering checks every package's imports of fsbench's own packages
// against its row in the layout table of docs/development.md: the table
// lists every package, each imports only what its row names, and a row
// names only packages listed below it, so no package imports one above it
// and none imports itself through others.
func TestLayering(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, layoutDoc))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := parseLayout(string(doc))
	if err != nil {
		t.Fatalf("%s: %v", layoutDoc, err)
	}
	pkgs, err := modulePackages(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range checkLayering(rows, pkgs) {
		t.Error(msg)
	}
}

// layoutRow is one package's row: its path in the module and what it may
// import, as paths in the module.
type layoutRow struct {
	pkg     string
	imports []string
}

var (
	tableHeader = regexp.MustCompile(`^\|\s*package\s*\|\s*owns\s*\|\s*may import\s*\|$`)
	backticked  = regexp.MustCompile("`([^`]+)`")
)

// parseLayout reads the table that begins with the header "| package |
// owns | may import |", in its order (top of the program first). A row's
// first cell names the package; its last names what it may import, each
// in backticks as the package's path without "internal/" ("cli",
// "pkg/object"), or says "nothing".
func parseLayout(doc string) ([]layoutRow, error) {
	lines := strings.Split(doc, "\n")
	start := slices.IndexFunc(lines, func(l string) bool { return tableHeader.MatchString(strings.TrimSpace(l)) })
	if start < 0 {
		return nil, errors.New(`no table with the header "| package | owns | may import |"`)
	}
	var rows []layoutRow
	for _, l := range lines[start+2:] {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "|") {
			break
		}
		cells := strings.Split(strings.Trim(l, "|"), "|")
		name := backticked.FindStringSubmatch(cells[0])
		if len(cells) < 3 || name == nil {
			return nil, errors.New("row without a package in backticks and three cells: " + l)
		}
		row := layoutRow{pkg: name[1]}
		may := strings.TrimSpace(cells[len(cells)-1])
		for _, m := range backticked.FindAllStringSubmatch(may, -1) {
			row.imports = append(row.imports, modulePath(m[1]))
		}
		if len(row.imports) == 0 && may != "nothing" {
			return nil, errors.New(row.pkg + `: "may import" is neither packages in backticks nor "nothing": ` + may)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// modulePath is the path in the module of a package as the table's last
// column names it: "cli" is internal/cli, "pkg/object" stays.
func modulePath(name string) string {
	if strings.HasPrefix(name, "pkg/") || strings.HasPrefix(name, "cmd/") {
		return name
	}
	return "internal/" + name
}

// modulePackages maps each package of the module below root (by its path
// in the module) to the fsbench packages its non-test files import.
func modulePackages(root string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, top := range []string{"cmd", "internal", "pkg"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(dir string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			if base := d.Name(); base == "testdata" || strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") {
				return filepath.SkipDir
			}
			p, err := build.ImportDir(dir, 0)
			if _, none := err.(*build.NoGoError); none {
				return nil
			}
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(root, dir)
			if err != nil {
				return err
			}
			var own []string
			for _, imp := range p.Imports {
				if after, ok := strings.CutPrefix(imp, module+"/"); ok {
					own = append(own, after)
				}
			}
			out[filepath.ToSlash(rel)] = own
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkLayering returns what breaks the layering of pkgs (package ->
// its imports) against the table's rows, one message each.
func checkLayering(rows []layoutRow, pkgs map[string][]string) []string {
	var msgs []string
	place := map[string]int{}
	for i, r := range rows {
		if _, dup := place[r.pkg]; dup {
			msgs = append(msgs, r.pkg+" has two rows in "+layoutDoc)
		}
		place[r.pkg] = i
		if _, ok := pkgs[r.pkg]; !ok {
			msgs = append(msgs, r.pkg+" is in "+layoutDoc+" but is not a package of the module")
		}
	}
	for i, r := range rows {
		for _, imp := range r.imports {
			if j, ok := place[imp]; !ok || j <= i {
				msgs = append(msgs, r.pkg+" may import "+imp+" by "+layoutDoc+", which is not listed below it")
			}
		}
	}
	names := make([]string, 0, len(pkgs))
	for p := range pkgs {
		names = append(names, p)
	}
	slices.Sort(names)
	for _, p := range names {
		i, ok := place[p]
		if !ok {
			msgs = append(msgs, p+" is missing from the package table of "+layoutDoc+": add a row (what it owns, what it may import) where it sits among the layers")
			continue
		}
		for _, imp := range pkgs[p] {
			if !slices.Contains(rows[i].imports, imp) {
				msgs = append(msgs, p+" imports "+imp+", which its row in "+layoutDoc+" does not allow: name it there if it is below "+p+", else move the code")
			}
		}
	}
	return msgs
}

// checkLayering finds each way the layering can break.
func TestCheckLayeringCatches(t *testing.T) {
	rows := []layoutRow{
		{pkg: "internal/cli", imports: []string{"internal/bench", "internal/units"}},
		{pkg: "internal/bench", imports: []string{"internal/units", "internal/cli"}},
		{pkg: "internal/units"},
		{pkg: "internal/gone"},
	}
	pkgs := map[string][]string{
		"internal/cli":   {"internal/bench"},
		"internal/bench": {"internal/units", "internal/sysio"},
		"internal/units": nil,
		"internal/sysio": nil,
	}
	want := []string{
		"internal/gone is in",                    // a row of no package
		"internal/bench may import internal/cli", // a row that reaches up
		"internal/bench imports internal/sysio",  // an import its row does not name
		"internal/sysio is missing",              // a package without a row
	}
	got := checkLayering(rows, pkgs)
	if len(got) != len(want) {
		t.Fatalf("got %d messages, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(m string) bool { return strings.HasPrefix(m, w) }) {
			t.Errorf("no message %q in:\n%s", w, strings.Join(got, "\n"))
		}
	}
	if msgs := checkLayering(rows[:3], map[string][]string{"internal/cli": nil, "internal/bench": nil, "internal/units": nil}); len(msgs) != 1 {
		t.Errorf("only the upward row is wrong, got %q", msgs)
	}
}

func TestParseLayout(t *testing.T) {
	doc := "# x\n\n| package | owns | may import |\n| --- | --- | --- |\n" +
		"| `cmd/fsbench` | `main` | `cli` |\n| `internal/cli` | commands | `bench`, `pkg/object` |\n| `pkg/object` | stores | nothing |\n\nafter\n"
	rows, err := parseLayout(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0].pkg != "cmd/fsbench" || !slices.Equal(rows[0].imports, []string{"internal/cli"}) ||
		!slices.Equal(rows[1].imports, []string{"internal/bench", "pkg/object"}) || rows[2].imports != nil {
		t.Errorf("rows = %+v", rows)
	}
	if _, err := parseLayout(strings.Replace(doc, "nothing", "", 1)); err == nil {
		t.Error("an empty may-import cell is taken")
	}
	if _, err := parseLayout("no table"); err == nil {
		t.Error("a doc without the table is taken")
	}
}
