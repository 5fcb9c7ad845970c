package cli

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// helpOf is `fsbench ARGS --help` drawn at cols columns (0: not a
// terminal).
func helpOf(t *testing.T, cols int, args ...string) string {
	t.Helper()
	app, out, errb := testApp(nil)
	app.IO.Cols = cols
	if code := Run(context.Background(), app, append(args, "--help")); code != 0 {
		t.Fatalf("%v --help: exit %d: %s", args, code, errb)
	}
	return out.String()
}

// TestHelpFits: every command's help fits 80 columns when stdout is no
// terminal, and a terminal's width when it is one; the commands with many
// flags list them in groups, after the usage line and the examples.
// TestHelpNoEmptyDefault: a repeatable flag without a default shows no
// "(default )" in any command's help (nor in the reference made from it).
func TestHelpNoEmptyDefault(t *testing.T) {
	app, _, _ := testApp(nil)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c.Runnable() {
			path := strings.Fields(c.CommandPath())[1:]
			if h := helpOf(t, 0, path...); strings.Contains(h, "(default )") {
				t.Errorf("%s --help shows an empty default:\n%s", c.CommandPath(), h)
			}
		}
	}
	walk(NewRoot(app))
}

func TestHelpFits(t *testing.T) {
	for _, args := range [][]string{{}, {"bench"}, {"objbench"}, {"train"}, {"checkpoint"}, {"stats"}, {"profile"},
		{"replay"}, {"compare"}, {"report"}, {"agent"}} {
		for _, cols := range []int{0, 100} {
			width := cols
			if width == 0 {
				width = 80
			}
			h := helpOf(t, cols, args...)
			if n := longHelpLines(h, width); n > 0 {
				t.Errorf("%v --help at %d columns: %d lines wider:\n%s", args, width, n, h)
			}
		}
	}
	for _, name := range []string{"bench", "objbench", "train", "checkpoint"} {
		h := helpOf(t, 0, name)
		var at []int
		for _, title := range []string{"Usage:", "Examples:", "Common flags:", "Workload flags:", "Output and CI flags:", "Many hosts flags:", "Global flags:"} {
			i := strings.Index(h, "\n"+title+"\n")
			if i < 0 {
				t.Errorf("%s --help has no section %q", name, title)
			}
			at = append(at, i)
		}
		if !slices.IsSorted(at) {
			t.Errorf("%s --help: sections out of order (%v)", name, at)
		}
		if strings.Contains(h, "\nOther flags:\n") {
			t.Errorf("%s --help: a flag is in no group:\n%s", name, h[strings.Index(h, "\nOther flags:\n"):])
		}
	}
	if h := helpOf(t, 0, "objbench"); !strings.Contains(h, "\nStorage and credentials flags:\n") || !regexp.MustCompile(`(?m)^Storage and credentials flags:\n(.+\n)*\s+--secret-key-file FILE`).MatchString(h) {
		t.Errorf("objbench --help has no storage and credentials group with --secret-key-file")
	}
}

// TestHelpExamplesPaste: an example wider than the screen is broken before
// a flag with a backslash, never inside quotes.
func TestHelpExamplesPaste(t *testing.T) {
	ex := "  fsbench bench /mnt/jfs -p 4 --quick --expect 'write-big>=200MiB/s' --expect 'stat.p99<5ms' -o junit > junit.xml"
	got := wrapExamples(ex, 79)
	want := "  fsbench bench /mnt/jfs -p 4 --quick --expect 'write-big>=200MiB/s' \\\n      --expect 'stat.p99<5ms' -o junit > junit.xml"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	quoted := "  fsbench bench /x --expect 'a b c d e f g h i j k l m n o p q r s t u v w x y z a b c d e f g h i j k l m'"
	for _, l := range strings.Split(wrapExamples(quoted, 40), "\n") {
		if strings.Count(l, "'")%2 == 1 && strings.HasSuffix(l, "\\") {
			t.Errorf("broken inside quotes: %q", l)
		}
	}
}

// TestPlaceholders: every flag that takes a value names it in upper case
// (SIZE, DURATION, N, FILE, ...), never by a Go type.
func TestPlaceholders(t *testing.T) {
	app, _, _ := testApp(nil)
	root := NewRoot(app)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			name, _ := pflag.UnquoteUsage(f)
			if name == "" || f.Value.Type() == "bool" {
				return
			}
			if name != strings.ToUpper(name) || slices.Contains([]string{"STRING", "INT", "FLOAT", "FLOAT64"}, name) {
				t.Errorf("%s --%s shows its value as %q", c.Name(), f.Name, name)
			}
			counts := false
			if nv, ok := f.Value.(namedValue); ok {
				switch nv.Value.Type() {
				case "int", "int64", "uint", "uint64", "float64", "count":
					counts = true
				}
			}
			if counts && name != "N" && name != "PERCENT" {
				t.Errorf("%s --%s takes a number, shown as %q", c.Name(), f.Name, name)
			}
			if strings.HasSuffix(f.Name, "-size") && !counts && f.Name != "world-size" && name != "SIZE" { // these count
				t.Errorf("%s --%s is a size shown as %q", c.Name(), f.Name, name)
			}
		})
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}

// complete is `fsbench __complete ARGS`: the candidates, without the
// directive line.
func complete(t *testing.T, args ...string) []string {
	t.Helper()
	app, out, errb := testApp(nil)
	if code := Run(context.Background(), app, append([]string{"__complete"}, args...)); code != 0 {
		t.Fatalf("__complete %v: exit %d: %s", args, code, errb)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if !strings.HasPrefix(l, ":") {
			got = append(got, strings.SplitN(l, "\t", 2)[0])
		}
	}
	return got
}

// TestCompletion: values of the flags that take one of a list, and the
// kind of file an argument or a flag names.
func TestCompletion(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"train", "--model", ""}, []string{"cosmoflow", "resnet50", "unet3d"}},
		{[]string{"train", "/data", "--accelerator-type", ""}, []string{"a100", "h100"}},
		{[]string{"checkpoint", "/data", "--model", ""}, []string{"llama3-8b"}},
		{[]string{"objbench", "--storage", ""}, []string{"file", "minio", "nfs", "s3"}},
		{[]string{"objbench", "--workload", ""}, []string{"get", "put", "mixed"}},
		{[]string{"bench", "/data", "--rw", ""}, []string{"read", "randrw", "stat", "unlink"}},
		{[]string{"bench", "/data", "-o", ""}, []string{"table", "json", "csv", "junit"}},
		{[]string{"stats", "-o", ""}, []string{"table", "json", "csv"}},
		{[]string{"bench", "/data", "--drop-caches", ""}, []string{"auto", "always", "never"}},
		{[]string{"bench", "/data", "--ioengine", ""}, []string{"sync", "io_uring"}},
		{[]string{"bench", "/data", "--launcher", ""}, []string{"auto", "none", "mpi", "slurm", "k8s"}},
		{[]string{"train", "--storage", ""}, []string{"minio", "s3"}},
		{[]string{"bench", "/data", "--job", ""}, []string{"yaml", "yml"}},
		{[]string{"train", "/data", "--job", ""}, []string{"yaml", "yml"}},
		{[]string{"compare", ""}, []string{"json"}},
		{[]string{"report", "a.json", ""}, []string{"json"}},
	} {
		got := complete(t, c.args...)
		for _, w := range c.want {
			if !slices.Contains(got, w) {
				t.Errorf("__complete %q: %v lacks %q", c.args, got, w)
			}
		}
	}
	if got := complete(t, "bench", "/data", ""); len(got) != 0 {
		t.Errorf("bench takes one PATH; a second completes to %v", got)
	}
}

// TestCompletionValuesAccepted: every value that completion offers for a
// flag is taken by that flag: each word is fed back to the command's flag
// handling, which must accept it.
func TestCompletionValuesAccepted(t *testing.T) {
	dir := t.TempDir()
	log, old, new := dir+"/access.log", dir+"/old.json", dir+"/new.json"
	for _, f := range []string{log, old, new} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ok := func(context.Context, any) error { return nil }
	for _, c := range []struct {
		args []string
		cmd  func(*App) *cobra.Command
	}{
		{[]string{"bench", dir}, func(a *App) *cobra.Command {
			return newBenchCmdWith(a, func(ctx context.Context, o *BenchOptions) error { return ok(ctx, o) })
		}},
		{[]string{"bench", dir, "--depth", "1", "--width", "2"}, func(a *App) *cobra.Command {
			return newBenchCmdWith(a, func(ctx context.Context, o *BenchOptions) error { return ok(ctx, o) })
		}},
		{[]string{"train", dir, "--model", "unet3d"}, func(a *App) *cobra.Command {
			return newTrainCmdWith(a, func(ctx context.Context, o *TrainOptions) error { return ok(ctx, o) })
		}},
		{[]string{"train", dir, "--storage", "minio"}, func(a *App) *cobra.Command {
			return newTrainCmdWith(a, func(ctx context.Context, o *TrainOptions) error { return ok(ctx, o) })
		}},
		{[]string{"objbench", dir}, func(a *App) *cobra.Command {
			return newObjbenchCmdWith(a, func(ctx context.Context, o *ObjbenchOptions) error { return ok(ctx, o) })
		}},
		{[]string{"train", dir}, func(a *App) *cobra.Command {
			return newTrainCmdWith(a, func(ctx context.Context, o *TrainOptions) error { return ok(ctx, o) })
		}},
		{[]string{"checkpoint", dir}, func(a *App) *cobra.Command {
			return newCheckpointCmdWith(a, func(ctx context.Context, o *CheckpointOptions) error { return ok(ctx, o) })
		}},
		{[]string{"io500", dir}, func(a *App) *cobra.Command {
			return newIO500CmdWith(a, func(ctx context.Context, o *IO500Options) error { return ok(ctx, o) })
		}},
		{[]string{"replay", log, dir}, func(a *App) *cobra.Command {
			return newReplayCmdWith(a, func(ctx context.Context, o *ReplayOptions) error { return ok(ctx, o) })
		}},
		{[]string{"stats", dir}, func(a *App) *cobra.Command {
			return newStatsCmdWith(a, func(ctx context.Context, o *StatsOptions) error { return ok(ctx, o) })
		}},
		{[]string{"profile", log}, func(a *App) *cobra.Command {
			return newProfileCmdWith(a, func(ctx context.Context, o *ProfileOptions) error { return ok(ctx, o) })
		}},
		{[]string{"compare", old, new}, func(a *App) *cobra.Command {
			return newCompareCmdWith(a, func(ctx context.Context, o *CompareOptions) error { return ok(ctx, o) })
		}},
	} {
		app, _, _ := testApp(nil)
		var checked int
		c.cmd(app).Flags().VisitAll(func(f *pflag.Flag) {
			completeArgs := append(append([]string{}, c.args...), "--"+f.Name, "")
			for _, w := range complete(t, completeArgs...) {
				if strings.HasPrefix(w, "_") || w == "" {
					continue // cobra's own activeHelp and directives
				}
				if f.Name == "job" || f.Name == "html" || f.Name == "workload-file" {
					continue // file extensions, not values
				}
				checked++
				app, _, errb := testApp(nil)
				args := append(append([]string{}, c.args[1:]...), "--"+f.Name, w)
				if code, msg := runParse(app, errb, c.cmd(app), args); code != 0 {
					t.Errorf("%s %s: completion offers %q, the flag refuses it: exit %d: %s", c.args[0], "--"+f.Name, w, code, msg)
				}
			}
		})
		if checked == 0 && c.args[0] != "profile" {
			t.Errorf("%s: no completion value checked", c.args[0])
		}
	}
}

// TestHelpDefaults: every command's help writes defaults one way: no
// quotes, durations as 2m rather than 2m0s, no empty list; the commands
// with many flags list them in groups.
func TestHelpDefaults(t *testing.T) {
	odd := regexp.MustCompile(`\(default ("|\[\]|[^)]*[mh]0s)`)
	for _, c := range []string{"bench", "objbench", "train", "checkpoint", "io500", "replay", "stats", "profile",
		"compare", "report", "probe", "agent"} {
		h := helpOf(t, 0, c)
		if m := odd.FindString(h); m != "" {
			t.Errorf("%s --help: a default written otherwise: %q", c, m)
		}
		if n := strings.Count(h, "\n      --") + strings.Count(h, "\n  -"); n > 20 && !strings.Contains(h, "Common flags:") {
			t.Errorf("%s --help: %d flags in one list, not in groups", c, n)
		}
	}
}
