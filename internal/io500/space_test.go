package io500

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/runenv"
)

// TestNeedOf: every host's ranks count, ior-hard's shared file once, each
// mdtest-hard file a whole block; a need too large to count is capped,
// not wrapped to a small one that would pass.
func TestNeedOf(t *testing.T) {
	o := Options{Threads: 2, World: 6, Sizes: Sizes{EasyXfer: 1 << 20, EasySegments: 3, HardSegments: 40, EasyFiles: 100, HardFiles: 80}}
	n := NeedOf(o)
	hard := int64((6*40*HardXfer + 4095) / 4096 * 4096)
	if n.Ranks != 6 || n.Easy != 18<<20 || n.Hard != hard || n.MdHard != 6*80*4096 || n.All != 18<<20+hard+6*80*4096 {
		t.Errorf("need %+v", n)
	}
	o = Options{Threads: 4, Sizes: Standard()}
	if n := NeedOf(o); n.Ranks != 4 || n.Easy != 4*Standard().EasyXfer*int64(Standard().EasySegments) {
		t.Errorf("one host: %+v", n)
	}
	o.World = 1 << 20
	if n := NeedOf(o); n.All != math.MaxInt64 {
		t.Errorf("a million ranks of IO500's amounts: need %+v, want capped", n)
	}
}

// TestCheckSpaceRefuses: amounts given that are larger than any file
// system are refused as bad input, naming the flag that skips the check;
// with it, not. IO500's standard amounts, which the stonewall is to end,
// are warned of instead.
func TestCheckSpaceRefuses(t *testing.T) {
	big := Standard()
	big.EasySegments++
	o := Options{Threads: 1, World: 1 << 20, Sizes: big, Stonewall: DefaultStonewall}
	w, err := CheckSpace(t.TempDir(), o)
	if !errors.Is(err, runenv.ErrBadInput) || w != "" {
		t.Fatalf("err %v (warning %q), want bad input", err, w)
	}
	o.NoSpaceCheck = true
	if w, err := CheckSpace(t.TempDir(), o); err != nil || w != "" {
		t.Errorf("--no-space-check: %v, %q", err, w)
	}
	o.NoSpaceCheck, o.Sizes = false, Standard()
	if w, err := CheckSpace(t.TempDir(), o); err != nil || !strings.Contains(w, "the stonewall (5m0s) must end the writes") {
		t.Errorf("standard amounts: %v, warning %q", err, w)
	}
}
