package testenv

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
)

// VMFlags returns the VmFlags of the mapping of this process that holds
// addr, from /proc/self/smaps ("hg": advised to be backed by huge pages).
func VMFlags(t testing.TB, addr uintptr) []string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 {
			in = lo <= addr && addr < hi
			continue
		}
		if rest, ok := strings.CutPrefix(line, "VmFlags:"); ok && in {
			return strings.Fields(rest)
		}
	}
	t.Fatalf("no mapping holds %#x (%v)", addr, sc.Err())
	return nil
}
