package objbench

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/fsbench/fsbench/internal/units"
)

// SizeDist says how big the objects a workload writes are: one fixed
// size, log2-uniform between two bounds (every power of two between them
// equally likely, as warp's --obj.randsize), or weighted buckets of given
// sizes. Results are grouped by size class: the power-of-two bucket
// [2^k, 2^(k+1)) of a log2 distribution, or each bucket's size.
type SizeDist struct {
	// Log2: sizes are log2-uniform in [Min, Max). Otherwise, without
	// Buckets, every object is Min bytes.
	Log2     bool
	Min, Max int64
	Buckets  []SizeBucket
	total    int // sum of the bucket weights
}

// SizeBucket is one size of a weighted distribution.
type SizeBucket struct {
	Size   int64
	Weight int
}

// maxObjectSize bounds the size of one object of a workload.
const maxObjectSize = 5 * units.GiB

// FixedSize is the distribution of objects all n bytes.
func FixedSize(n int64) SizeDist { return SizeDist{Min: n, Max: n} }

// ParseSizeDist parses --obj-size-dist: "log2:MIN-MAX" (log2-uniform
// between the bounds) or "SIZE:WEIGHT,SIZE:WEIGHT,..." (weighted
// buckets), sizes as --block-size takes them (4K, 1MiB, ...).
func ParseSizeDist(s string) (SizeDist, error) {
	if rest, ok := strings.CutPrefix(s, "log2:"); ok {
		return parseLog2(rest)
	}
	var d SizeDist
	seen := map[int64]bool{}
	for _, part := range strings.Split(s, ",") {
		b, err := parseBucket(part)
		if err != nil {
			return SizeDist{}, err
		}
		if seen[b.Size] {
			return SizeDist{}, fmt.Errorf("size %s is given twice", units.FormatBytes(b.Size))
		}
		seen[b.Size] = true
		d.Buckets = append(d.Buckets, b)
		d.total += b.Weight
	}
	if d.total == 0 {
		return SizeDist{}, errors.New("the weights add up to 0")
	}
	d.Min, d.Max = d.Buckets[0].Size, d.Buckets[0].Size
	for _, b := range d.Buckets {
		d.Min, d.Max = min(d.Min, b.Size), max(d.Max, b.Size)
	}
	return d, nil
}

func parseLog2(s string) (SizeDist, error) {
	lo, hi, ok := strings.Cut(s, "-")
	if !ok {
		return SizeDist{}, fmt.Errorf("log2:%s: want log2:MIN-MAX, e.g. log2:1KiB-64MiB", s)
	}
	a, err := parseObjSize(lo)
	if err != nil {
		return SizeDist{}, err
	}
	b, err := parseObjSize(hi)
	if err != nil {
		return SizeDist{}, err
	}
	if a >= b {
		return SizeDist{}, fmt.Errorf("log2:%s: the lower bound must be below the upper bound", s)
	}
	return SizeDist{Log2: true, Min: a, Max: b}, nil
}

func parseBucket(s string) (SizeBucket, error) {
	size, weight, ok := strings.Cut(s, ":")
	if !ok {
		return SizeBucket{}, fmt.Errorf("%q: want SIZE:WEIGHT, e.g. 4KiB:50", s)
	}
	n, err := parseObjSize(size)
	if err != nil {
		return SizeBucket{}, err
	}
	w, err := strconv.Atoi(strings.TrimSpace(weight))
	if err != nil || w < 0 || w > 1_000_000 {
		return SizeBucket{}, fmt.Errorf("%q: the weight must be a whole number from 0 to 1000000", s)
	}
	return SizeBucket{Size: n, Weight: w}, nil
}

// parseObjSize parses one object size: more than 0, at most maxObjectSize.
func parseObjSize(s string) (int64, error) {
	n, err := units.ParseSizeIn(s, 0)
	if err != nil {
		return 0, err
	}
	if n <= 0 || n > maxObjectSize {
		return 0, fmt.Errorf("size %q: must be more than 0 and at most %s", s, units.FormatBytes(maxObjectSize))
	}
	return n, nil
}

// Draw draws one object size.
func (d *SizeDist) Draw(r *rand.Rand) int64 {
	switch {
	case d.Log2:
		lo, hi := math.Log2(float64(d.Min)), math.Log2(float64(d.Max))
		n := int64(math.Exp2(lo + r.Float64()*(hi-lo)))
		return min(max(n, d.Min), d.Max-1)
	case len(d.Buckets) > 0:
		k := r.IntN(d.total)
		for _, b := range d.Buckets {
			if k < b.Weight {
				return b.Size
			}
			k -= b.Weight
		}
	}
	return d.Min
}

// Classes names the size classes of the distribution, in increasing order
// of size.
func (d *SizeDist) Classes() []string {
	switch {
	case d.Log2:
		var out []string
		for k := log2Floor(d.Min); k <= log2Floor(d.Max-1); k++ {
			out = append(out, units.FormatBytes(1<<k)+"-"+units.FormatBytes(1<<(k+1)))
		}
		return out
	case len(d.Buckets) > 0:
		var out []string
		for _, b := range d.sorted() {
			out = append(out, units.FormatBytes(b.Size))
		}
		return out
	}
	return []string{units.FormatBytes(d.Min)}
}

// Class is the index, in Classes, of the class of an object of size n
// drawn from d.
func (d *SizeDist) Class(n int64) int {
	switch {
	case d.Log2:
		return log2Floor(n) - log2Floor(d.Min)
	case len(d.Buckets) > 0:
		k := 0
		for _, b := range d.Buckets {
			if b.Size < n {
				k++
			}
		}
		return k
	}
	return 0
}

// Largest is the size of the largest object d can draw.
func (d *SizeDist) Largest() int64 {
	switch {
	case d.Log2:
		return d.Max - 1
	case len(d.Buckets) > 0:
		return slices.MaxFunc(d.Buckets, bySize).Size
	}
	return d.Min
}

// sorted returns the buckets by increasing size.
func (d *SizeDist) sorted() []SizeBucket {
	out := slices.Clone(d.Buckets)
	slices.SortFunc(out, bySize)
	return out
}

func bySize(a, b SizeBucket) int { return cmp.Compare(a.Size, b.Size) }

func log2Floor(n int64) int { return bits.Len64(uint64(n)) - 1 }

// String is the distribution as --obj-size-dist takes it.
func (d SizeDist) String() string {
	switch {
	case d.Log2:
		return "log2:" + compactSize(d.Min) + "-" + compactSize(d.Max)
	case len(d.Buckets) > 0:
		parts := make([]string, len(d.Buckets))
		for i, b := range d.Buckets {
			parts[i] = compactSize(b.Size) + ":" + strconv.Itoa(b.Weight)
		}
		return strings.Join(parts, ",")
	}
	return compactSize(d.Min)
}

// compactSize renders a size without spaces ("64MiB") and exactly, so that
// it parses back to the same count: a size that is no whole number of KiB,
// MiB, ... is given in bytes ("7000B", not "6.84KiB").
func compactSize(n int64) string {
	s := strings.ReplaceAll(units.FormatBytes(n), " ", "")
	if back, err := units.ParseSize(s); err != nil || back != n {
		return strconv.FormatInt(n, 10) + "B"
	}
	return s
}
