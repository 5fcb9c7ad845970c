package replay

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
)

// TestLoadPipelined: each golden log, cut into chunks of a line or a few
// (so that the second pass waits for the first, and the first for the
// buffers the second hands back), builds the trace kept in
// testdata/golden: pipelined when its lines are out of order only between
// neighbours (JuiceFS's sample), and read again whole at the first line
// that completes before one already built (fsbench's, written in
// batches; the unsorted log cut into lines).
func TestLoadPipelined(t *testing.T) {
	defer func(n int) { chunkBytes = n }(chunkBytes)
	for name, data := range goldenLogs(t) {
		want, err := os.ReadFile(filepath.Join("testdata", "golden", name+".0-1.txt"))
		if err != nil {
			t.Fatal(err)
		}
		for _, size := range []int{1, 100, 1000, 1 << 20} {
			t.Run(fmt.Sprintf("%s/%d", name, size), func(t *testing.T) {
				chunkBytes = size
				l := newLoader()
				ok := l.pipeline(bytes.Clone(data))
				switch name {
				case "gen-fsbench-unsorted": // in one chunk, sorted there
					if size == 1 && ok || size == 1<<20 && !ok {
						t.Fatalf("unsorted log pipelined: %v", ok)
					}
				case "fsbench-bench": // fsbench's batches: out of order
				default:
					if !ok {
						t.Fatal("pipeline gave up")
					}
				}
				if ok {
					if got := dumpTrace(l.b.finish(), nil); got != string(want) {
						t.Fatalf("pipelined parse differs from the golden one:\n%s", got)
					}
				}
				if got := dumpTrace(loadPart(bytes.Clone(data), 0, 1)); got != string(want) {
					t.Fatalf("parse differs from the golden one:\n%s", got)
				}
			})
		}
	}
}

// TestGrow: a stream's operations grown while the log is read keep their
// values, and the room made for more follows the share of the log read
// so far, up to sixteen times as many.
func TestGrow(t *testing.T) {
	b := newBuilder("")
	ops := make([]Op, 1000)
	for i := range ops {
		ops[i].Start = int64(i)
	}
	b.size, b.read = 4000, 1000 // a quarter read: three times as many to come
	grown := grow(b, ops)
	if len(grown) != len(ops) || cap(grown) != 1000+3000+3000/8 {
		t.Fatalf("len %d cap %d, want 1000 and %d", len(grown), cap(grown), 1000+3000+3000/8)
	}
	for i := range grown {
		if grown[i].Start != int64(i) {
			t.Fatalf("op %d: start %d", i, grown[i].Start)
		}
	}
	b.read = b.size // all read: a little more room
	if g := grow(b, ops); cap(g) != 1000+1000/4+256 {
		t.Fatalf("cap %d at the end of the log", cap(g))
	}
	b.read = 10 // a four-hundredth read: no more than sixteen times as many
	if g := grow(b, ops); cap(g) != 1000+16000 {
		t.Fatalf("cap %d early in the log", cap(g))
	}
	paths := grow(b, []string{"a", "b"}) // any slice, grown the same way
	if len(paths) != 2 || paths[1] != "b" || cap(paths) != 2+256 {
		t.Fatalf("%q, cap %d", paths, cap(paths))
	}
}

// TestKnownOps: each operation the replay performs has a slot of its own,
// where it is found; other names are not.
func TestKnownOps(t *testing.T) {
	for _, n := range opNames {
		if s := knownOp([]byte(n)); s < 0 || knownOps[s] != n {
			t.Errorf("%s: slot %d", n, s)
		}
	}
	for _, n := range []string{"", "r", "setxattr", "reads", "Open"} {
		if s := knownOp([]byte(n)); s >= 0 {
			t.Errorf("%q found in slot %d", n, s)
		}
	}
}

// TestOpSize: an operation takes 56 bytes, its fields with a byte of
// padding; a line's record, 112.
func TestOpSize(t *testing.T) {
	if n := unsafe.Sizeof(Op{}); n != 56 {
		t.Fatalf("Op is %d bytes, want 56", n)
	}
	if n := unsafe.Sizeof(rec{}); n != 112 {
		t.Fatalf("rec is %d bytes, want 112", n)
	}
}

// TestLoadCarryBound: lines that complete after all the lines that follow
// them are carried from chunk to chunk up to maxCarry; past it the
// pipeline gives up, and the load reads the log again whole, to the same
// trace.
func TestLoadCarryBound(t *testing.T) {
	defer func(n, c int) { chunkBytes, maxCarry = n, c }(chunkBytes, maxCarry)
	lines := strings.SplitAfter(string(genLog(FormatJuiceFS, 100)), "\n")
	// The first ten lines complete last, each before the one above it:
	// each is carried until the end.
	for k := range 10 {
		lines[k] = fmt.Sprintf("2026.11.21 21:00:01.%06d", 10-k) + lines[k][len("2026.11.21 21:00:00.000000"):]
	}
	data := []byte(strings.Join(lines, ""))
	chunkBytes = 1
	whole := newLoader()
	whole.ordered(bytes.Clone(data), 0, 1)
	want := dumpTrace(whole.b.finish(), nil)
	for _, c := range []int{100, 5} {
		maxCarry = c
		l := newLoader()
		if ok := l.pipeline(bytes.Clone(data)); ok != (c == 100) {
			t.Fatalf("carry bound %d: pipelined %v", c, ok)
		}
		if got := dumpTrace(loadPart(bytes.Clone(data), 0, 1)); got != want {
			t.Fatalf("carry bound %d: parse differs from the sorted one:\n%s", c, got)
		}
	}
}
