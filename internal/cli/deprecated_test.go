package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportOutputFlag: report's page is --html FILE (-O FILE); the former
// -o FILE still writes it, with a notice; -o json, what -o means in every
// other command, is refused instead of writing a page named json.
func TestReportOutputFlag(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	in := reportFixture("bench.json")
	for _, c := range []struct {
		args   []string
		page   string
		code   int
		stderr string
	}{
		{[]string{"--html", "a.html"}, "a.html", 0, ""},
		{[]string{"-O", "b.html"}, "b.html", 0, ""},
		{[]string{"-o", "c.html"}, "c.html", 0, "fsbench: deprecated: report -o/--output FILE is now --html FILE (-O FILE)"},
		{[]string{"--output", "d.html"}, "d.html", 0, "fsbench: deprecated: report -o/--output FILE is now --html FILE"},
		{[]string{"-o", "json"}, "", ExitUsage, "fsbench: -o json: report writes one HTML page, and -o is the output format in the other commands; give the page's file with --html FILE"},
		{[]string{"-o", "table"}, "", ExitUsage, "-o table: report writes one HTML page"},
		{[]string{"-o", "e.html", "--html", "f.html"}, "", ExitUsage, "give the page's file once, with --html FILE"},
	} {
		code, _, stderr := runCLI(t, append([]string{"report", in}, c.args...)...)
		if code != c.code || !strings.Contains(stderr, c.stderr) {
			t.Errorf("report %v: exit %d, stderr %q; want %d and %q", c.args, code, stderr, c.code, c.stderr)
		}
		if c.page != "" {
			if b, err := os.ReadFile(c.page); err != nil || !strings.Contains(string(b), "<html") {
				t.Errorf("report %v: no page in %s: %v", c.args, c.page, err)
			}
		}
	}
	for _, name := range []string{"json", "table", "e.html", "f.html"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("a refused command line wrote %s", name)
		}
	}
	if h := helpOf(t, 0, "report"); strings.Contains(h, "--output") || !strings.Contains(h, "-O, --html FILE") {
		t.Errorf("report --help shows -o/--output, or not -O, --html FILE:\n%s", h)
	}
}

// TestIntervalOneType: --interval is a duration in every command; a plain
// number of seconds (the former form of stats and profile) still works,
// with a notice naming the duration it is read as.
func TestIntervalOneType(t *testing.T) {
	log := filepath.Join(t.TempDir(), "empty.log")
	if err := os.WriteFile(log, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args   []string
		notice string
	}{
		{[]string{"profile", log, "--interval", "2s"}, ""},
		{[]string{"profile", log, "--interval", "0"}, ""},
		{[]string{"profile", log, "--interval", "1.5"}, "fsbench: deprecated: --interval 1.5: a number of seconds, read as 1.5s; write a duration (--interval 1.5s)\n"},
		{[]string{"stats", t.TempDir(), "--count", "1", "--interval", "100ms", "-o", "json"}, ""},
		{[]string{"stats", t.TempDir(), "--count", "1", "--interval", "0.1", "-o", "json"}, "fsbench: deprecated: --interval 0.1: a number of seconds, read as 100ms; write a duration (--interval 100ms)\n"},
	} {
		code, _, stderr := runCLI(t, c.args...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", c.args, code, stderr)
		}
		if got := firstLineWith(stderr, "deprecated"); got != c.notice {
			t.Errorf("%v: notice %q, want %q", c.args, got, c.notice)
		}
	}
	for _, name := range []string{"bench", "objbench", "profile", "stats"} {
		h := helpOf(t, 0, name)
		if !strings.Contains(h, "--interval DURATION") {
			t.Errorf("%s --help: --interval is not a DURATION", name)
		}
	}
	if code, _, stderr := runCLI(t, "profile", log, "--interval", "soon"); code != ExitUsage || !strings.Contains(stderr, `--interval "soon": want a duration`) {
		t.Errorf("--interval soon: exit %d, %q", code, stderr)
	}
}

// firstLineWith is the first line of s that holds sub, with its newline.
func firstLineWith(s, sub string) string {
	for _, l := range strings.SplitAfter(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// TestProfileFollowFlag: -f is a workload file in bench and train; in
// profile, following a log is --follow, and the former -f still follows,
// with a notice.
func TestProfileFollowFlag(t *testing.T) {
	o, code, msg := parseProfile(t, false, "x.log", "-f")
	if code != 0 || !o.Follow || !strings.Contains(msg, "fsbench: deprecated: profile -f is now --follow") {
		t.Errorf("profile -f: exit %d, follow %v, stderr %q", code, o != nil && o.Follow, msg)
	}
	if o, code, msg := parseProfile(t, false, "x.log", "--follow"); code != 0 || !o.Follow || msg != "" {
		t.Errorf("profile --follow: exit %d, stderr %q", code, msg)
	}
	if h := helpOf(t, 0, "profile"); strings.Contains(h, "-f, --follow") {
		t.Errorf("profile --help still offers -f")
	}
}

// TestDurationBareSeconds: every duration flag, not only --interval, names
// a bare number of seconds with a notice instead of taking it in silence.
func TestDurationBareSeconds(t *testing.T) {
	for _, c := range []struct {
		args   []string
		notice string
	}{
		{[]string{"/x", "--rw", "read", "--duration", "1"}, "fsbench: deprecated: --duration 1: a number of seconds, read as 1s; write a duration (--duration 1s)\n"},
		{[]string{"/x", "--rw", "read", "--duration", "10", "--warmup", "0.5"}, "fsbench: deprecated: --warmup 0.5: a number of seconds, read as 500ms; write a duration (--warmup 500ms)\n"},
		{[]string{"/x", "--rw", "read", "--duration", "1s"}, ""},
		{[]string{"/x", "--rw", "read", "--duration", "0"}, ""},
	} {
		o, code, msg := parseBench(t, nil, c.args...)
		if code != 0 || o.Job.Job == nil {
			t.Fatalf("%v: exit %d: %s", c.args, code, msg)
		}
		if c.notice != "" && !strings.Contains(msg, c.notice) || c.notice == "" && strings.Contains(msg, "deprecated") {
			t.Errorf("%v: stderr %q, want the notice %q", c.args, msg, c.notice)
		}
	}
}

// TestStatsMetricsURL: stats reads a Prometheus endpoint with --metrics-url;
// the former --metrics still works, with a notice, and is not in the help,
// where --metrics is compare's list of figures.
func TestStatsMetricsURL(t *testing.T) {
	for _, c := range []struct {
		flag, notice string
	}{
		{"--metrics-url", ""},
		{"--metrics", "fsbench: deprecated: stats --metrics URL is now --metrics-url URL; --metrics is compare's list of figures\n"},
	} {
		app, _, errb := testApp(nil)
		var got *StatsOptions
		code, msg := runParse(app, errb, newStatsCmdWith(app, func(_ context.Context, o *StatsOptions) error { got = o; return nil }),
			[]string{c.flag, "http://localhost:9567/metrics"})
		if code != 0 || got == nil || got.MetricsURL != "http://localhost:9567/metrics" {
			t.Fatalf("%s: exit %d (%s)", c.flag, code, msg)
		}
		if firstLineWith(msg, "deprecated") != c.notice {
			t.Errorf("%s: stderr %q, want notice %q", c.flag, msg, c.notice)
		}
	}
	if h := helpOf(t, 0, "stats"); !strings.Contains(h, "--metrics-url URL") || strings.Contains(h, "--metrics URL") {
		t.Errorf("stats --help:\n%s", h)
	}
}

// TestRenamedParallelism: -p/--threads is the parallel workers on each
// host in every command, and train's dataset-wide file count is
// --dataset-files. Each old spelling still works, with one notice line on
// stderr, and is not in the help; the new spelling prints none.
func TestRenamedParallelism(t *testing.T) {
	dir := t.TempDir()
	trainNotice := "fsbench: deprecated: train -n/--accelerators N is now -p/--threads N: -p is the parallel workers on each host in every command\n"
	filesNotice := "fsbench: deprecated: train --files N is now --dataset-files N, the files of the whole dataset; --files is bench's files per thread\n"
	for _, c := range []struct {
		args   []string
		notice string
	}{
		{[]string{"-p", "3", "--dataset-files", "84"}, ""},
		{[]string{"--threads", "3", "--dataset-files", "84"}, ""},
		{[]string{"-n", "3", "--dataset-files", "84"}, trainNotice},
		{[]string{"--accelerators", "3", "--dataset-files", "84"}, trainNotice},
		{[]string{"-p", "3", "--files", "84"}, filesNotice},
	} {
		o, code, msg := parseTrain(t, append([]string{dir, "--model", "unet3d"}, c.args...)...)
		if code != 0 || o.Accelerators != 3 || o.Files != 84 {
			t.Errorf("train %v: exit %d (%s), options %+v", c.args, code, msg, o)
			continue
		}
		if firstLineWith(msg, "deprecated") != c.notice || strings.Count(msg, "deprecated") > 1 {
			t.Errorf("train %v: stderr %q, want notice %q", c.args, msg, c.notice)
		}
	}
	// --files, once --dataset-files, counts for --quick's own choice too:
	// the quick preset does not replace what the old spelling gave.
	if o, code, msg := parseTrain(t, dir, "--model", "unet3d", "--quick", "--files", "30"); code != 0 || o.Files != 30 {
		t.Errorf("train --quick --files 30: exit %d (%s)", code, msg)
	}
	ranksNotice := "fsbench: deprecated: checkpoint --ranks N (the ranks on all hosts together) is now -p/--threads N/HOSTS, the ranks on each host: -p is the parallel workers on each host in every command\n"
	for _, c := range []struct {
		args   []string
		notice string
	}{
		{[]string{"-p", "6"}, ""},
		{[]string{"--threads", "6"}, ""},
		{[]string{"--ranks", "6"}, ranksNotice},
		{[]string{"--ranks", "0"}, "--ranks must be at least 1 (got 0)"},
		{[]string{"--ranks", "1"}, "-p/--threads must be at least 2 on one host"},
		{[]string{"--ranks", "6", "-p", "3"}, "give the ranks once"},
	} {
		if c.notice != "" && !strings.HasPrefix(c.notice, "fsbench: deprecated") {
			_, code, msg := parseCheckpoint(t, append([]string{dir}, c.args...)...)
			if code != ExitUsage || !strings.Contains(msg, c.notice) {
				t.Errorf("checkpoint %v: exit %d, %q; want exit 2 and %q", c.args, code, msg, c.notice)
			}
			continue
		}
		o, code, msg := parseCheckpoint(t, append([]string{dir}, c.args...)...)
		if code != 0 || o.ranks() != 6 {
			t.Errorf("checkpoint %v: exit %d (%s)", c.args, code, msg)
			continue
		}
		if firstLineWith(msg, "deprecated") != c.notice || strings.Count(msg, "deprecated") > 1 {
			t.Errorf("checkpoint %v: stderr %q, want notice %q", c.args, msg, c.notice)
		}
	}
	for cmd, old := range map[string][]string{"train": {"--accelerators", "-n,", "--files"}, "checkpoint": {"--ranks"}} {
		h := helpOf(t, 0, cmd)
		if !strings.Contains(h, "-p, --threads") {
			t.Errorf("%s --help has no -p, --threads:\n%s", cmd, h)
		}
		for _, s := range old {
			if strings.Contains(h, s+" ") {
				t.Errorf("%s --help shows the old %s:\n%s", cmd, s, h)
			}
		}
	}
}
