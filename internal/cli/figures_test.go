package cli

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter/pkg/twwidth"

	"github.com/fsbench/fsbench/internal/report"
)

// finalLine is a phase's last progress line in a log (not a terminal):
// "list objects: 132/132 objects in 0.04s (3577 objects/s)".
var finalLine = regexp.MustCompile(`(?m)^(.+?): (\d+)(?:/\d+)? (\w+) in [\d.]+s \(([\d.]+) (\w+)/s\)$`)

// progressRate is one phase's last progress line: its unit and rate as
// printed.
type progressRate struct{ unit, rate string }

func lastLines(stderr string) map[string]progressRate {
	out := map[string]progressRate{}
	for _, m := range finalLine.FindAllStringSubmatch(stderr, -1) {
		out[m[1]] = progressRate{unit: m[3], rate: m[4]}
	}
	return out
}

// progressOf is the last progress line of phase p: the line of its title,
// or of the title's first word capitalised (train's "Train" for "Train
// resnet50").
func progressOf(lines map[string]progressRate, p *report.PhaseResult) (progressRate, bool) {
	if l, ok := lines[p.Title]; ok {
		return l, true
	}
	for title, l := range lines {
		if strings.HasPrefix(p.Title, title+" ") {
			return l, true
		}
	}
	return progressRate{}, false
}

// perOpCost reports whether p's COST is a time per operation: a unit of
// time per file, object, listing or operation, where one operation is
// one of them.
func perOpCost(p *report.PhaseResult) (us float64, ok bool) {
	switch p.Cost.Unit {
	case report.UnitMsPerList, report.UnitMsPerOp:
		return p.Cost.Value * 1e3, true
	case report.UnitMsPerFile, report.UnitMsPerObject:
		return p.Cost.Value * 1e3, p.Ops == p.Items
	case report.UnitSecondsPerFile:
		return p.Cost.Value * 1e6, p.Ops == p.Items
	}
	return 0, false
}

// checkFigures checks one run's result against its progress lines: every
// measured phase ended with a line whose rate is the table's figure, as
// the line rounds it (VALUE where the line counts what VALUE counts, the
// operations per second where VALUE is bytes), and a COST per operation
// sits between the phase's fastest and slowest operation. Every table
// the result makes fits 120 columns, and -v adds fio's latency lines.
func checkFigures(t *testing.T, name, stdout, stderr string) {
	t.Helper()
	r, err := report.ReadJSON(strings.NewReader(stdout))
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, stderr)
	}
	lines := lastLines(stderr)
	measured := 0
	for i := range r.Phases {
		p := &r.Phases[i]
		if p.Ops == 0 || p.Value.Unit == report.UnitNotSupported {
			continue
		}
		if us, ok := perOpCost(p); ok && p.Latency.Count > 0 && (us < p.Latency.Min || us > p.Latency.Max) {
			t.Errorf("%s: %q: COST %s outside the latencies' %.1f-%.1f us", name, p.Title, report.FormatMeasure(p.Cost), p.Latency.Min, p.Latency.Max)
		}
		if strings.HasPrefix(p.Title, " ") {
			continue // an operation of a mix: its progress is the mix's
		}
		measured++
		l, ok := progressOf(lines, p)
		if !ok {
			t.Errorf("%s: no last progress line for %q in\n%s", name, p.Title, stderr)
			continue
		}
		want := p.OpsPerSec
		switch l.unit {
		case "files", "objects", "samples":
			want = p.ItemsPerSec
		}
		if l.rate != formatRate(want) {
			t.Errorf("%s: %q: the progress line says %s %s/s, the result %s (%s %s)", name, p.Title, l.rate, l.unit,
				formatRate(want), report.FormatMeasure(p.Value), "in the table")
		}
		if p.Value.Unit == report.UnitFilesPerSec || p.Value.Unit == report.UnitObjectsPerSec || p.Value.Unit == report.UnitOpsPerSec {
			if l.rate != formatRate(p.Value.Value) {
				t.Errorf("%s: %q: the progress line's %s/s is not the table's %s", name, p.Title, l.rate, report.FormatMeasure(p.Value))
			}
		}
	}
	if measured == 0 {
		t.Fatalf("%s: no measured phase in\n%s", name, stdout)
	}
	for _, o := range []report.Options{{}, {Verbose: true}} {
		var b bytes.Buffer
		if err := report.WriteTable(&b, r, o); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(b.String(), "\n") {
			if (strings.HasPrefix(line, "|") || strings.HasPrefix(line, "+")) && twwidth.Width(line) > report.MaxColumns {
				t.Errorf("%s: a table line of %d columns:\n%s", name, twwidth.Width(line), b.String())
				break
			}
		}
		if o.Verbose && !strings.Contains(b.String(), "clat percentiles (") {
			t.Errorf("%s: no fio-style latency under the verbose table:\n%s", name, b.String())
		}
	}
}

// The last progress line of every phase gives the rate the table gives,
// over the same time, in every command that shows one; its COST lies
// within the latencies beside it; its tables fit 120 columns.
func TestProgressRateIsTheTables(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
	}{
		{"bench", []string{"bench", dir, "-p", "2", "--big-file-size", "4M", "--small-file-count", "5"}},
		{"bench workload", []string{"bench", dir, "--rw", "randread", "--xfer-size", "4k", "--file-size", "1M", "--ops", "500", "-p", "2"}},
		{"objbench", []string{"objbench", "file://" + dir + "/obj/", "-p", "2", "--big-object-size", "8M", "--block-size", "1M", "--small-objects", "20"}},
		{"objbench workload", []string{"objbench", "file://" + dir + "/objw/", "--workload", "mixed", "--objects", "20", "--obj-size", "4k", "--ops", "200", "-p", "2"}},
		{"checkpoint", []string{"checkpoint", dir, "-p", "2", "--size", "16M"}},
		{"train", []string{"train", dir, "--model", "resnet50", "--dataset-files", "3", "--epochs", "1", "--compute-time", "1ms"}},
		{"io500", []string{"io500", dir, "--quick", "-p", "2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := runFsbenchEnv(t, nil, append(c.args, "-o", "json")...)
			if code != 0 && code != ExitExpectation {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			checkFigures(t, c.name, stdout, stderr)
		})
	}
}
