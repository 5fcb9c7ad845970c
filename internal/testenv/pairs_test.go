package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPairTable runs pairs.sh's pair_table (the table of the comparisons
// with a peer's own program) on runs made up for it: a phase in which
// fsbench is about twice as fast in every pair must get an interval
// around 2 that holds its ratio, one in which both sides ran the same
// figures in another order an interval that holds 1, and a table must
// be the same each time.
func TestPairTable(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		Unavailable(t, "python3: %v", err)
	}
	var b strings.Builder
	for i := range 8 {
		fmt.Fprintf(&b, "disk\t4\tfsbench\tfast\t%d\ndisk\t4\tior\tfast\t%d\n", 200+i*3%5, 100+i%4)
		fmt.Fprintf(&b, "disk\t4\tfsbench\tsame\t%d\ndisk\t4\tior\tsame\t%d\n", 10+i, 17-i)
	}
	out := filepath.Join(t.TempDir(), "runs.tsv")
	if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(RepoRoot(), "benchmarks", "scripts", "pairs.sh")
	table := func() string {
		got, err := exec.Command("bash", "-c", `source "$1" && pair_table "$2" ior IOR fs ranks`, "-", script, out).CombinedOutput()
		if err != nil {
			t.Fatalf("pair_table: %v\n%s", err, got)
		}
		return string(got)
	}
	got := table()
	rows := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) > 2 { // not the line under the header
			rows[cells[2]] = cells
		}
	}
	head := rows["phase"]
	if strings.Join(head, ",") != "fs,ranks,phase,unit,fsbench median,IOR median,ratio,95% interval,fsbench ahead" {
		t.Fatalf("header %q\n%s", head, got)
	}
	interval := func(phase string) (lo, hi float64) {
		r := rows[phase]
		if len(r) != len(head) {
			t.Fatalf("%s: row %q\n%s", phase, r, got)
		}
		if _, err := fmt.Sscanf(r[7], "%f-%f", &lo, &hi); err != nil {
			t.Fatalf("%s: interval %q: %v", phase, r[7], err)
		}
		return lo, hi
	}
	lo, hi := interval("fast")
	var ratio float64
	fmt.Sscanf(rows["fast"][6], "%f", &ratio)
	if ratio < 1.9 || ratio > 2.1 || lo < 1.9 || hi > 2.1 || lo >= hi || ratio < lo || ratio > hi || rows["fast"][8] != "8 of 8" {
		t.Errorf("fast: ratio %s, interval %g-%g, ahead %s; want about 2 inside a range about 2, 8 of 8", rows["fast"][6], lo, hi, rows["fast"][8])
	}
	if lo, hi := interval("same"); rows["same"][6] != "1.00" || lo >= 1 || hi <= 1 {
		t.Errorf("same: ratio %s, interval %g-%g; want 1.00 inside it", rows["same"][6], lo, hi)
	}
	if again := table(); again != got {
		t.Errorf("a second table differs:\n%s\n%s", got, again)
	}
}
