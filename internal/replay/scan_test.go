package replay

import (
	"bytes"
	"math/big"
	"math/rand/v2"
	"regexp"
	"slices"
	"testing"
)

// TestNanos: nanos reads "DIGITS.DIGITS" to its exact value in
// nanoseconds, rounded down, and refuses anything else and what an int64
// does not hold.
func TestNanos(t *testing.T) {
	in := []string{"", ".", "5.", ".5", "0", "00.000", "1e5", "0x1p-2", "+1", "-1", "inf", "NaN", "1_0", "1..2",
		"1795570281.950820", "1795570281.950820123456", "9007199254740993.5", "0.0000000000000000000000001",
		"9223372036.854775807", "9223372036.854775808", "9223372037.0", "99999999999999999999.9", "1.2.3",
		" 1", "0.000059", "1.5 "}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		b := make([]byte, 1+r.IntN(24))
		for i := range b {
			b[i] = byte('0' + r.IntN(10))
		}
		if r.IntN(4) > 0 {
			b[r.IntN(len(b))] = '.'
		}
		in = append(in, string(b))
	}
	form := regexp.MustCompile(`^[0-9]+\.[0-9]+$`)
	for _, s := range in {
		want, wantOK := big.NewInt(0), false
		if q, ok := new(big.Rat).SetString(s); ok && form.MatchString(s) {
			q.Mul(q, big.NewRat(1e9, 1))
			want.Quo(q.Num(), q.Denom())
			wantOK = want.IsInt64()
		}
		got, ok := nanos([]byte(s))
		if ok != wantOK || ok && got != want.Int64() {
			t.Fatalf("nanos(%q) = %d, %v; want %v, %v", s, got, ok, want, wantOK)
		}
	}
}

// TestScanAsBytes: lastIndex and indexAngle find what bytes.LastIndex and
// bytes.Index find.
func TestScanAsBytes(t *testing.T) {
	lines := []string{"", "<", " <", "a <b <c", `read(3</a>, "x <y", 4) = 4 <0.1>`, ") = ) =  <", "x <unfinished ...>",
		`3 <unfinished ...> <unfinished ...>`, "<<< <un"}
	for _, l := range lines {
		for _, sep := range []string{" <", ") = ", " <unfinished ...>"} {
			if got, want := lastIndex([]byte(l), sep), bytes.LastIndex([]byte(l), []byte(sep)); got != want {
				t.Errorf("lastIndex(%q, %q) = %d, want %d", l, sep, got, want)
			}
			if sep[0] == ' ' && sep[1] == '<' {
				if got, want := indexAngle([]byte(l), sep), bytes.Index([]byte(l), []byte(sep)); got != want {
					t.Errorf("indexAngle(%q, %q) = %d, want %d", l, sep, got, want)
				}
			}
		}
	}
}

// splitArgs splits at the commas outside strings (escaped quotes
// included), brackets, braces and the paths strace shows in angles.
func TestSplitArgs(t *testing.T) {
	for in, want := range map[string][]string{
		`3</w/a,b>, "x\",y"..., 16384`:                               {`3</w/a,b>`, `"x\",y"...`, `16384`},
		`AT_FDCWD</w>, "/w/f", {st_mode=S_IFREG|0644, ...}, 0`:       {`AT_FDCWD</w>`, `"/w/f"`, `{st_mode=S_IFREG|0644, ...}`, `0`},
		`[{iov_base="a,b", iov_len=3}, {iov_base="", iov_len=0}], 2`: {`[{iov_base="a,b", iov_len=3}, {iov_base="", iov_len=0}]`, `2`},
		` 5 `: {`5`},
		``:    nil,
		`a,`:  {`a`, ``},
	} {
		if got := splitArgs(nil, in); !slices.Equal(got, want) {
			t.Errorf("splitArgs(%q) = %q, want %q", in, got, want)
		}
	}
}
