package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/cluster"
	"github.com/fsbench/fsbench/internal/report"
)

// TestDataRatiosOtherWrites: what train's dataset generation (files, and
// objects in a directory store), io500's write phases and replay (its
// writes, and the files the log reads that it makes first) write in a
// temporary directory at --compress-ratio 2 compresses 1.9-2.1x with zstd
// at level 3 and LZ4, and at --dedupe-ratio 3 has 2.9-3.1x as many 4 KiB
// chunks as distinct ones; the result states the ratio.
func TestDataRatiosOtherWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	log := replayWritesLog(t)
	trainArgs := []string{"--dataset-files", "16", "--samples-per-file", "4", "--sample-size", "256K", "--batch-size", "2",
		"--compute-time", "1ms", "--epochs", "1", "--au-threshold", "0", "--drop-caches", "never"}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"train", append([]string{"train", "DIR"}, trainArgs...)},
		{"train-objects", append([]string{"train", "--storage", "file", "DIR/"}, trainArgs...)},
		{"io500", []string{"io500", "DIR", "-p", "2", "--quick", "--ior-easy-xfer", "1M", "--ior-easy-transfers", "8",
			"--ior-hard-segments", "100", "--mdtest-easy-files", "5", "--mdtest-hard-files", "20"}},
		{"replay", []string{"replay", log, "DIR", "--drop-caches", "never"}},
	} {
		for _, d := range []struct {
			kind string
			want float64
		}{{"compress", 2}, {"dedupe", 3}} {
			t.Run(c.name+"/"+d.kind, func(t *testing.T) {
				dir := t.TempDir()
				var args []string
				for _, a := range c.args {
					args = append(args, strings.Replace(a, "DIR", dir, 1))
				}
				args = append(args, "--keep", "--json", "-q", "--"+d.kind+"-ratio", strconv.FormatFloat(d.want, 'g', -1, 64))
				out, errs, code := runFsbench(t, args...)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errs)
				}
				checkRatioParam(t, out, d.kind, d.want)
				z, l, dd := ratios(t, dir)
				if d.kind == "compress" {
					within(t, "zstd-3", z, 2)
					within(t, "lz4", l, 2)
				} else {
					within(t, "4 KiB chunks over distinct ones", dd, 3)
				}
			})
		}
	}
}

// checkRatioParam fails unless the JSON result out states the kind's
// ratio as want, and its phases had no errors.
func checkRatioParam(t *testing.T, out, kind string, want float64) {
	t.Helper()
	var res report.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if r, err := strconv.ParseFloat(fmt.Sprint(res.Parameters.Get(kind+"_ratio")), 64); err != nil || math.Abs(r-want) > 0.05 {
		t.Errorf("parameter %s_ratio %v, want %g", kind, res.Parameters.Get(kind+"_ratio"), want)
	}
	for _, p := range res.Phases {
		if p.Errors != 0 {
			t.Errorf("phase %s: %d errors: %v", p.Name, p.Errors, p.ErrorSamples)
		}
	}
}

// replayWritesLog is a log (fsbench's format) in which one process
// writes four files of 2 MiB in 64 KiB writes and reads two files of
// 1 MiB that were there before it, of names as long.
func replayWritesLog(t *testing.T) string {
	var lines []string
	line := func(s string) { lines = append(lines, "2026.12.01 10:00:00.000000 [uid:0,gid:0,pid:7] "+s) }
	for f := range 4 {
		name := fmt.Sprintf("/data/out/f.%d", f)
		line("create (" + name + ") - OK <0.000100>")
		for off := 0; off < 2<<20; off += 64 << 10 {
			line(fmt.Sprintf("write (%s,65536,%d): 65536 - OK <0.000010>", name, off))
		}
		line("close (" + name + ") - OK <0.000001>")
	}
	for _, name := range []string{"/data/in/a.bin", "/data/in/b.bin"} {
		line("open (" + name + ") - OK <0.000100>")
		line("read (" + name + ",1048576,0): 1048576 - OK <0.000100>")
		line("close (" + name + ") - OK <0.000001>")
	}
	path := filepath.Join(t.TempDir(), "writes.log")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDataRatiosReachAgents: with --hosts, train's and io500's
// --compress-ratio and --dedupe-ratio go to the agents, whose run writes
// data at them and states them.
func TestDataRatiosReachAgents(t *testing.T) {
	for _, c := range []struct {
		command string
		build   func(*App) *cobra.Command
		args    []string
	}{
		{"train", func(app *App) *cobra.Command {
			return newTrainCmdWith(app, func(context.Context, *TrainOptions) error { return nil })
		}, []string{"--dataset-files", "16", "--samples-per-file", "4", "--sample-size", "256K", "--batch-size", "2",
			"--compute-time", "1ms", "--epochs", "1", "--keep", "--drop-caches", "never"}},
		{"io500", func(app *App) *cobra.Command {
			return newIO500CmdWith(app, func(context.Context, *IO500Options) error { return nil })
		}, []string{"--quick", "--ior-easy-xfer", "1M", "--ior-easy-transfers", "8", "--ior-hard-segments", "100",
			"--mdtest-easy-files", "5", "--mdtest-hard-files", "5", "--keep"}},
	} {
		t.Run(c.command, func(t *testing.T) {
			root := t.TempDir()
			app, _, _ := testApp(nil)
			var sent []string
			cmd := c.build(app)
			cmd.SetArgs(append([]string{root, "--hosts", "a:1", "--compress-ratio", "2", "--dedupe-ratio", "3:1"}, c.args...))
			cmd.RunE = func(cmd *cobra.Command, args []string) error {
				var err error
				sent, _, err = agentArgs(cmd, args)
				return err
			}
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			if s := strings.Join(sent, " "); !strings.Contains(s, "--compress-ratio=2") || !strings.Contains(s, "--dedupe-ratio=3:1") {
				t.Fatalf("agents get %q", s)
			}
			r := &agentRunner{app: app}
			p, err := r.Prepare(&cluster.Job{Command: c.command, Args: sent, RunName: "run", Index: 0, Hosts: 1}, nil, allowAll)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(root, "run"), 0o755); err != nil { // the agent makes it at prepare
				t.Fatal(err)
			}
			res, err := p.Run(context.Background(), func(context.Context, string) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			if res.Parameters.Get("compress_ratio") != 2.0 || res.Parameters.Get("dedupe_ratio") != 3.0 {
				t.Errorf("parameters %v", res.Parameters)
			}
			_, _, dd := ratios(t, root)
			within(t, "4 KiB chunks over distinct ones", dd, 3)
		})
	}
}

// TestDataRatiosOtherWritesBadInput: train on a kept dataset states the
// ratios it was written at, and refuses new ones; io500's timestamp
// content takes none; a bad ratio is one line and exit 2.
func TestDataRatiosOtherWritesBadInput(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	train := []string{"train", dir, "--dataset-files", "8", "--samples-per-file", "2", "--sample-size", "64K", "--batch-size", "2",
		"--compute-time", "1ms", "--epochs", "1", "--au-threshold", "0", "--drop-caches", "never", "--json", "-q"}
	if _, errs, code := runFsbench(t, append(train, "--keep", "--compress-ratio", "50%")...); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	kept, _ := filepath.Glob(filepath.Join(dir, "fsbench-*"))
	if len(kept) != 1 {
		t.Fatalf("kept datasets %v", kept)
	}
	out, errs, code := runFsbench(t, "train", dir, "--dataset", kept[0], "--batch-size", "2", "--compute-time", "1ms", "--epochs", "1",
		"--au-threshold", "0", "--drop-caches", "never", "--json", "-q")
	if code != 0 {
		t.Fatalf("train on the kept dataset: exit %d: %s", code, errs)
	}
	checkRatioParam(t, out, "compress", 2)
	log := replayWritesLog(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"train", dir, "--dataset", kept[0], "--dedupe-ratio", "2"}, "--dataset writes nothing: --compress-ratio and --dedupe-ratio shape a dataset generated"},
		{[]string{"train", dir, "--compress-ratio", "0.5"}, `fsbench: --compress-ratio "0.5": want a ratio from 1 to 256`},
		{[]string{"io500", dir, "--data-packet-type", "timestamp", "--compress-ratio", "2"}, "--data-packet-type timestamp writes one buffer again and again"},
		{[]string{"io500", dir, "--dedupe-ratio", "300"}, `fsbench: --dedupe-ratio "300": want a ratio from 1 to 256`},
		{[]string{"replay", log, dir, "--dedupe-ratio", "x"}, `fsbench: --dedupe-ratio "x"`},
	} {
		_, errs, code := runFsbench(t, c.args...)
		if code != 2 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2, one line with %q", c.args, code, errs, c.want)
		}
	}
}
