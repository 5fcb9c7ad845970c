package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// hasFlag reports whether c has the flag spelled s (--name or -x).
func hasFlag(c *cobra.Command, s string) bool {
	if name, ok := strings.CutPrefix(s, "--"); ok {
		return c.Flags().Lookup(name) != nil
	}
	return c.Flags().ShorthandLookup(s[1:]) != nil
}

// Every peer spelling, typed where it would be: refused (exit 2) with one
// line naming the peer and, where there is one, fsbench's equivalent. A
// command that has a flag of that spelling takes it as its own.
func TestPeerSpellingHints(t *testing.T) {
	peers := map[string][]string{
		"fio": {"--bs", "--numjobs", "--size", "--runtime", "--ramp_time", "--rwmixread", "--nrfiles", "--rate_iops",
			"--iodepth", "--ioengine", "--direct", "--time_based", "--filename", "--directory", "--name", "--group_reporting", "--rw"},
		"warp":     {"--concurrent", "--obj.size", "--obj.randsize", "--noclear", "--host", "--duration", "--access-key", "--secret-key"},
		"mdtest":   {"-n", "-z", "-b", "-I", "-F"},
		"IOR":      {"-t", "-b", "-s", "-F"},
		"elbencho": {"-t", "--size", "-n", "-N"},
		"vdbench":  {"-f"},
	}
	for peer, spellings := range peers {
		for _, s := range spellings {
			if !hasPeer(peerFlags[s], peer) {
				t.Errorf("%s: no hint for %s's spelling", s, peer)
			}
		}
	}
	app, _, _ := testApp(nil)
	root := NewRoot(app)
	dir := t.TempDir()
	tried := 0
	for _, name := range []string{"bench", "objbench", "train", "checkpoint", "io500"} {
		c, _, _ := root.Find([]string{name})
		for s, means := range peerFlags {
			if hasFlag(c, s) {
				continue
			}
			tried++
			for _, typed := range []string{s, s + "=4"} {
				code, _, msg := runCLI(t, name, dir, typed, "4")
				if code != ExitUsage || strings.Count(strings.TrimSpace(msg), "\n") != 0 || !strings.Contains(msg, "`"+s+"` is ") {
					t.Errorf("%s %s: exit %d, %q; want exit 2 and one line naming `%s`", name, typed, code, msg, s)
					continue
				}
				for _, m := range means {
					if !strings.Contains(msg, m.peer+"'s") {
						t.Errorf("%s %s: %q does not name %s", name, typed, msg, m.peer)
					}
					if eq, ok := m.here[name]; ok && eq != "" && !strings.Contains(msg, eq) {
						t.Errorf("%s %s: %q does not give fsbench's %s", name, typed, msg, eq)
					}
				}
			}
		}
	}
	if tried < 60 {
		t.Errorf("only %d spellings tried", tried)
	}
}

func hasPeer(means []peerMeaning, peer string) bool {
	for _, m := range means {
		if m.peer == peer {
			return true
		}
	}
	return false
}

// The forms that are not unknown flags: fio's engines on --ioengine, fio's
// --direct=1 where --direct is a flag, dd's operands as arguments, and a
// peer's file given to -f.
func TestPeerValuesAndFiles(t *testing.T) {
	dir := t.TempDir()
	vd := filepath.Join(t.TempDir(), "parm")
	fio := filepath.Join(t.TempDir(), "job.fio")
	if err := os.WriteFile(vd, []byte("* a vdbench file\nfsd=fsd1,anchor=/mnt,depth=1,width=2,files=4,size=4k\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fio, []byte("; fio\n[global]\nbs=4k\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", dir, "--ioengine", "libaio"}, "--ioengine libaio is fio's engine; here --ioengine is sync"},
		{[]string{"bench", dir, "--ioengine=posixaio", "--rw", "read"}, "--ioengine posixaio is fio's engine"},
		{[]string{"bench", dir, "bs=1M", "count=100"}, "`bs=` is dd's name; here it is `--xfer-size`"},
		{[]string{"objbench", dir, "count=100"}, "`count=` is dd's name; here it is `--ops`"},
		{[]string{"bench", dir, "-f", vd}, "is a vdbench parameter file; -f takes fsbench's workload file (YAML): run it with `fsbench vdbench " + vd + "`"},
		{[]string{"bench", dir, "-f", fio}, "is a fio job file; -f takes fsbench's workload file (YAML): run it with `fsbench fio " + fio + "`"},
	} {
		code, _, msg := runCLI(t, c.args...)
		if code != ExitUsage || !strings.Contains(msg, c.want) || strings.Count(strings.TrimSpace(msg), "\n") != 0 {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", c.args, code, msg, c.want)
		}
	}
	// fio's --direct=1 is bench's --direct.
	o, code, msg := parseBench(t, nil, dir, "--direct=1")
	if code != 0 || !o.Direct {
		t.Errorf("--direct=1: exit %d (%s)", code, msg)
	}
	// An unknown flag no peer spells stays cobra's error.
	if code, _, msg := runCLI(t, "bench", dir, "--no-such-flag"); code != ExitUsage || !strings.Contains(msg, "unknown flag: --no-such-flag") {
		t.Errorf("--no-such-flag: exit %d, %q", code, msg)
	}
}
