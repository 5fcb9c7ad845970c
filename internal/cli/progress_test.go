package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/cluster"
	"github.com/fsbench/fsbench/internal/testenv"
)

func checkGoldenFile(t *testing.T, golden, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s:\n--- got\n%s\n--- want\n%s", golden, got, want)
	}
}

func TestPlainProgress(t *testing.T) {
	var b strings.Builder
	writePlainProgress(&b, "Write big file", 1024, 1024, "blocks", 4*time.Second, true)
	writePlainProgress(&b, "randrw", 2000, -1, "ops", 5*time.Second, true)
	writePlainProgress(&b, "stat (2 hosts)", 40, 40, "files", 2*time.Second, false)
	want := "Write big file: 1024/1024 blocks in 4.00s (256 blocks/s)\nrandrw: 2000 ops in 5.00s (400 ops/s)\n" +
		"stat (2 hosts): 40/40 files in 2.00s\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestWaitLine(t *testing.T) {
	if got := waitDoneLine("cleaning up 12,000 files in /d", 2340*time.Millisecond); got != "cleaning up 12,000 files in /d... done in 2.3s\x1b[K" {
		t.Errorf("got %q", got)
	}
	long := "cleaning up 42 files in /tmp/TestBenchProgressTerminal1925465581/001/fsbench-vm-15907-30cc51ebae71"
	if got := shorten(long, 60); got != "cleaning up 42 files in /tmp...fsbench-vm-15907-30cc51ebae71" || len(got) != 60 {
		t.Errorf("shortened to %q (%d)", got, len(got))
	}
	if got := shorten("dropping caches", 60); got != "dropping caches" {
		t.Errorf("a short line changed: %q", got)
	}
}

// TestProgressSilenced: once fsbench quits at once (second Ctrl-C), a bar
// still running draws nothing more, however often it is polled, and a
// warning or error of the run still going is not printed either.
func TestProgressSilenced(t *testing.T) {
	var errb testenv.LockedBuffer
	app := &App{IO: IO{Err: &errb, ErrTTY: true, Getenv: func(string) string { return "" }}}
	var polls atomic.Int64
	p := app.StartProgress("create", -1, "ops", func() int64 { return polls.Add(1) })
	waitFor(t, "the bar to be drawn", func() bool { return strings.Contains(errb.String(), "create:") })
	app.silenceProgress()
	fmt.Fprintln(app.IO.Err, "fsbench: interrupted again: left behind X")
	seen := polls.Load()
	waitFor(t, "three more polls", func() bool { return polls.Load() >= seen+3 })
	app.Warnf("late warning")
	app.Infof("late info")
	p.Done()
	out := errb.String()
	i := strings.Index(out, "left behind X\n")
	if i < 0 || out[i:] != "left behind X\n" {
		t.Errorf("stderr after the left-behind line: %q", out)
	}
	if j := strings.Index(out, "fsbench: interrupted"); j < 1 || out[j-1] != '\n' {
		t.Errorf("the left-behind line does not start a line: %q", out)
	}
}

// waitFor polls cond until it holds, for up to a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestBenchProgressText runs bench into buffers as a log sees it: one
// line per phase with its count, time and rate; every wait named before
// the phase that follows it; and nothing on stdout but the result.
func TestBenchProgressText(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	app := &App{IO: IO{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}}
	code := Run(context.Background(), app, []string{"bench", dir, "-p", "2", "--big-file-size", "4M", "--small-file-count", "30", "--small-file-size", "4K", "--drop-caches", "always"})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	num := `\d+\.\d\ds \(\d+(\.\d+)? `
	want := []string{
		`^Benchmarking .* with 2 threads$`,
		`^Write big file: 8/8 blocks in ` + num + `blocks/s\)$`,
		`^flushing and dropping (caches|16 files from the page cache) before read-big\.\.\.$`,
		`^Read big file: 8/8 blocks in ` + num + `blocks/s\)$`,
		`^Write small file: 60/60 files in ` + num + `files/s\)$`,
		`^flushing and dropping (caches|60 files from the page cache) before read-small\.\.\.$`,
		`^Read small file: 60/60 files in `,
		`^flushing and dropping (caches|0 files from the page cache) before stat\.\.\.$`,
		`^Stat file: 60/60 files in `,
		`^cleaning up 62 files in ` + regexp.QuoteMeta(dir) + `/fsbench-[^ ]+\.\.\.$`,
	}
	lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
	i := 0
	for _, l := range lines {
		if i < len(want) && regexp.MustCompile(want[i]).MatchString(l) {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("stderr lacks, in order, a line matching %s:\n%s", want[i], errb.String())
	}
	if !strings.HasPrefix(out.String(), "Benchmark finished!\n") || strings.Contains(out.String(), "Benchmarking") || strings.Contains(out.String(), "blocks/s") {
		t.Errorf("stdout is not only the result:\n%s", out.String())
	}
}

// termWriter is one terminal behind stdout and stderr: what both write,
// in order.
type termWriter struct{ testenv.LockedBuffer }

// TestBenchProgressTerminal runs a timed workload phase and the default
// benchmark with stdout and stderr on one terminal: bars with a percent,
// a rate and the time left, a timed phase's bar counting its time, waits
// that end with their time, and "Benchmark finished!" at the start of a
// line of its own.
func TestBenchProgressTerminal(t *testing.T) {
	testenv.NeedsServer(t, "a timed phase that runs for a few seconds")
	dir := t.TempDir()
	for _, args := range [][]string{
		{"bench", dir, "-p", "2", "--big-file-size", "8M", "--small-file-count", "20"},
		{"bench", dir, "-p", "2", "--rw", "randread", "--file-size", "8M", "--duration", "2s"},
	} {
		var term termWriter
		app := &App{IO: IO{In: strings.NewReader(""), Out: &term, Err: &term, ErrTTY: true, OutTTY: true, Cols: 100,
			Getenv: func(k string) string { return map[string]string{"NO_COLOR": "1"}[k] }}}
		if code := Run(context.Background(), app, args); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, term.String())
		}
		s := term.String()
		if !strings.Contains(s, "\nBenchmark finished!\n") {
			t.Errorf("%v: \"Benchmark finished!\" does not start a line:\n%q", args, s)
		}
		for _, re := range []string{
			`\r[A-Za-z ]+: +\d+% \[=+\] \(\d+(/\d+)?, \d+(\.\d+)? (blocks|files|ops)/s\) in \d+s\x1b\[K\n`,
			`\rflushing and dropping [^\r\n]*\.\.\. done in \d+\.\ds\x1b\[K\n`,
			`\rcleaning up \d+ files? in [^\r\n]*\.\.\. done in \d+\.\ds\x1b\[K\n`,
		} {
			if !regexp.MustCompile(re).MatchString(s) {
				t.Errorf("%v: nothing on the terminal matches %q:\n%q", args, re, s)
			}
		}
		for _, l := range strings.Split(strings.ReplaceAll(s, "\r", "\n"), "\n") {
			if strings.HasSuffix(l, "\x1b[K") && len(strings.TrimSuffix(l, "\x1b[K")) >= 100 {
				t.Errorf("%v: a progress line wider than the terminal: %q", args, l)
			}
		}
		if args[3] == "--rw" && !regexp.MustCompile(`\rrandread: +\d+% \[[=> ]+\] \[\d+s:\d+s\] \(\d+, [\d.]+ ops/s\)\x1b\[K`).MatchString(s) {
			t.Errorf("the timed phase has no bar of its time:\n%q", s)
		}
	}
	// objbench's items with --duration: a bar of their time too.
	var term termWriter
	app := &App{IO: IO{In: strings.NewReader(""), Out: &term, Err: &term, ErrTTY: true, OutTTY: true, Cols: 100,
		Getenv: func(k string) string { return map[string]string{"NO_COLOR": "1"}[k] }}}
	args := []string{"objbench", "--storage", "file", t.TempDir(), "--skip-functional-tests", "--duration", "1s",
		"--small-objects", "10", "--big-object-size", "4M", "-p", "2"}
	if code := Run(context.Background(), app, args); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, term.String())
	}
	if !regexp.MustCompile(`\rput small objects: +\d+% \[[=> ]+\] \[\d+s:\d+s\] \(\d+, [\d.]+ objects/s\)\x1b\[K`).MatchString(term.String()) {
		t.Errorf("objbench's timed item has no bar of its time:\n%q", term.String())
	}
}

// TestHostsProgressBar: the hosts' progress as their heartbeats tell it
// is one live bar per phase with the hosts' sum, its total set once every
// host knows its own, ended by the final count, without a rate of its
// own; a phase over before any heartbeat is still shown, at its end.
func TestHostsProgressBar(t *testing.T) {
	var errb testenv.LockedBuffer
	app := &App{IO: IO{Err: &errb, ErrTTY: true, Cols: 100, Getenv: func(string) string { return "" }}}
	h := &hostsProgress{app: app, hosts: 2}
	h.update(cluster.Progress{Phase: "write-big", Done: 3, Total: -1, Unit: "blocks"}, false)
	waitFor(t, "a bar of the hosts' count", func() bool {
		return regexp.MustCompile(`\r[-|/\\] write-big \(2 hosts\): +\(3, \d+ blocks/(s|min|hr)\) \[\d+s\]\x1b\[K`).MatchString(errb.String())
	})
	h.update(cluster.Progress{Phase: "write-big", Done: 12, Total: 32, Unit: "blocks"}, false)
	waitFor(t, "the bar's percent once the total is known", func() bool {
		return regexp.MustCompile(`\rwrite-big \(2 hosts\): +37% \[=+>? +\] \(12/32, \d+ blocks/(s|min|hr)\) \[\d+s:\d+s\]\x1b\[K`).MatchString(errb.String())
	})
	h.update(cluster.Progress{Phase: "write-big", Done: 32, Total: 32, Unit: "blocks"}, true)
	h.update(cluster.Progress{Phase: "read-big", Done: 32, Total: 32, Unit: "blocks"}, true)
	h.end()
	out := errb.String()
	// The final line gives no rate: the table gives it, over the hosts'
	// own times, which the coordinator's clock is not.
	for _, re := range []string{
		`\rwrite-big \(2 hosts\): +100% \[=+\] \(32/32 blocks\) in \d+s\x1b\[K\n`,
		`\rread-big \(2 hosts\): +100% \[=+\] \(32/32 blocks\) in \d+s\x1b\[K\n$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("no final line matching %q:\n%q", re, out)
		}
	}
}

// progressCase is one phase shown by a bar: what it counts, what its
// poll says while the bar is live, and what its result counts at the end.
type progressCase struct {
	name, title, unit string
	total             int64
	limit             time.Duration // a timed phase
	live              int64         // what poll returns
	done              int64         // the result's count, after the warm-up
	took              time.Duration // and its time
}

var progressCases = []progressCase{
	{"count", "Write big file", "blocks", 1000, 0, 450, 900, 3 * time.Second},
	{"interrupted", "Read small file", "files", 12000, 0, 290, 300, 95 * time.Second},
	{"timed", "randrw", "ops", -1, time.Hour, 1768, 2000, 5 * time.Second},
	{"unknown end", "create", "ops", -1, 0, 77, 77, 2 * time.Second},
	{"empty", "stat", "files", 0, 0, 0, 0, 0},
}

// runProgress shows c's phase on app's stderr: live until a line of it
// matches live (nil: not waited for), then ended with the result's figures.
func runProgress(t *testing.T, app *App, errb *testenv.LockedBuffer, c progressCase, live *regexp.Regexp) {
	t.Helper()
	poll := func() int64 { return c.live }
	p := app.startProgress(c.title, c.total, c.limit, c.unit, poll, time.Now())
	if live != nil {
		waitFor(t, c.name+"'s live bar "+live.String(), func() bool { return live.MatchString(errb.String()) })
	}
	p.measured(c.done, c.took)
	p.Done()
}

// TestProgressBarTerminal: on a terminal, the bar progressbar draws, live
// with its percent, count, rolling rate and [elapsed:left] (a spinner, the
// count, rate and elapsed time when the end is unknown; a bar of the time,
// then the operations and their rate, when the phase is timed), ended by
// a line of the phase's own figures: its count and rate as its result
// counts them (not the bar's clock), and the time it took.
func TestProgressBarTerminal(t *testing.T) {
	rate := `\d+ \w+/(s|min|hr)`
	live := map[string]string{
		"count":       `\rWrite big file:     45% \[========> +\] \(450/1000, ` + rate + `\) \[\d+s:\d+s\]\x1b\[K`,
		"interrupted": `\rRead small file:     2% \[ +\] \(290/12000, ` + rate + `\) \[\d+s:[\dhms]+\]\x1b\[K`,
		"timed":       `\rrandrw: +0% \[ +\] \[\d+s:[\dhms]+\] \(1768, [\d.]+ ops/s\)\x1b\[K`,
		"unknown end": `\r[-|/\\] create: +\(77, ` + rate + `\) \[\d+s\]\x1b\[K`,
		"empty":       `\r[-|/\\] stat: +\(0, 0 files/hr\) \[\d+s\]\x1b\[K`,
	}
	final := map[string]string{
		"count":       "Write big file:     90% [=================>  ] (900/1000, 300 blocks/s) in 3s",
		"interrupted": "Read small file:     2% [                    ] (300/12000, 3.16 files/s) in 1m35s",
		"timed":       "randrw:            100% [====================] (2000, 400 ops/s) in 5s",
		"unknown end": "create:            100% [====================] (77, 38.5 ops/s) in 2s",
		"empty":       "stat:              100% [====================] (0/0 files) in 0s",
	}
	for _, c := range progressCases {
		var errb testenv.LockedBuffer
		app := &App{IO: IO{Err: &errb, ErrTTY: true, Cols: 100, Getenv: func(string) string { return "" }}}
		runProgress(t, app, &errb, c, regexp.MustCompile(live[c.name]))
		out := errb.String()
		if want := "\r" + final[c.name] + "\x1b[K\n"; !strings.HasSuffix(out, want) {
			t.Errorf("%s: the last line is not %q:\n%q", c.name, want, out)
		}
		for _, l := range strings.Split(out, "\r") {
			if n := len(strings.TrimSuffix(l, "\x1b[K\n")); n >= 100 || strings.Contains(l, "\n") && !strings.HasSuffix(l, "\x1b[K\n") {
				t.Errorf("%s: a line of %d columns, or not ended by a clear: %q", c.name, n, l)
			}
		}
	}
}

// TestProgressBarNarrow: on a narrow terminal the bar narrows, then goes,
// and what is left is cut: no line reaches the last column.
func TestProgressBarNarrow(t *testing.T) {
	for _, cols := range []int{72, 50, 30} {
		for _, c := range progressCases {
			var errb testenv.LockedBuffer
			app := &App{IO: IO{Err: &errb, ErrTTY: true, Cols: cols, Getenv: func(string) string { return "" }}}
			runProgress(t, app, &errb, c, regexp.MustCompile(`\r.*`+regexp.QuoteMeta(c.title+":")))
			lines := strings.Split(strings.TrimSuffix(errb.String(), "\x1b[K\n"), "\x1b[K")
			for _, l := range lines {
				if l = strings.TrimPrefix(l, "\r"); len(l) >= cols || !strings.Contains(l, c.title+":") {
					t.Errorf("%d columns: %s: line of %d columns: %q", cols, c.name, len(l), l)
				}
			}
			last := strings.TrimPrefix(lines[len(lines)-1], "\r")
			switch {
			case cols == 72 && !regexp.MustCompile(`^\S.*: +\d+% \[[=> ]+\] \(`).MatchString(last):
				t.Errorf("72 columns: %s: the last line lost its bar: %q", c.name, last)
			case cols == 50 && c.name == "count" && last != "Write big file:  90% (900/1000, 300 blocks/s) in ":
				t.Errorf("50 columns: the last line is %q", last)
			}
		}
	}
}

// TestProgressPlain: when stderr is not a terminal, each phase is one line
// at its end, with its result's count, time and rate: no bar, carriage
// return or escape.
func TestProgressPlain(t *testing.T) {
	var errb testenv.LockedBuffer
	app := &App{IO: IO{Err: &errb, Cols: 100, Getenv: func(string) string { return "" }}}
	for _, c := range progressCases {
		runProgress(t, app, &errb, c, nil)
	}
	want := "Write big file: 900/1000 blocks in 3.00s (300 blocks/s)\n" +
		"Read small file: 300/12000 files in 95.00s (3.16 files/s)\n" +
		"randrw: 2000 ops in 5.00s (400 ops/s)\n" +
		"create: 77 ops in 2.00s (38.5 ops/s)\n" +
		"stat: 0/0 files in 0.00s\n"
	if got := errb.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestProgressBarAndInfo: a line printed while a bar is live (a host
// starting a phase, a warning) clears the bar's line and starts at its
// first column; the bar is drawn again below it.
func TestProgressBarAndInfo(t *testing.T) {
	var errb testenv.LockedBuffer
	app := &App{IO: IO{Err: &errb, ErrTTY: true, Cols: 100, Getenv: func(string) string { return "" }}}
	p := app.StartProgress("create", 100, "files", func() int64 { return 40 })
	bar := regexp.MustCompile(`\rcreate: +40% \[=+> +\] \(40/100, \d+ files/(s|min|hr)\) \[\d+s:\d+s\]\x1b\[K`)
	waitFor(t, "the bar", func() bool { return bar.MatchString(errb.String()) })
	app.Infof("write-big: starting on 2 hosts")
	waitFor(t, "the bar below the line", func() bool {
		out := errb.String()
		i := strings.Index(out, "\x1b[K\r\x1b[Kwrite-big: starting on 2 hosts\n")
		return i > 0 && bar.MatchString(out[i:])
	})
	p.Done()
}
