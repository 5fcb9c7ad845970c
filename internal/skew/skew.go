// Package skew is how often each of n items (files, blocks of a file,
// objects) is accessed: the distribution a phase draws its random picks
// from, uniform or skewed as an application's hot set is, in fio's
// spellings (random_distribution): zipf:S, pareto:H, normal:SIGMA and
// zoned:A/B:..., and the measured share of the picks that fell in the
// hottest 1% and 10% of the items.
//
// It does no I/O and imports no package of fsbench's.
package skew

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Kind is a family of distributions.
type Kind int

// The families.
const (
	Uniform Kind = iota
	Zipf         // P(rank k) proportional to k^-S
	Pareto       // fio's pareto: a share H of the items takes 1-H of the picks
	Normal       // centred on the middle item, SIGMA percent of the items its deviation
	Zoned        // fio's zoned: A percent of the picks to the next B percent of the items, ...
)

// Zone is one part of a zoned distribution: Access percent of the picks
// go to Size percent of the items, uniformly among them.
type Zone struct {
	Access, Size float64
}

// Spec is a distribution as the user named it. The zero Spec is uniform.
type Spec struct {
	Kind  Kind
	Param float64 // Zipf: the exponent; Pareto: H; Normal: the deviation in percent of the items
	Zones []Zone  // Zoned
}

// IsUniform reports whether s picks every item alike.
func (s Spec) IsUniform() bool { return s.Kind == Uniform }

// String is s in the spelling Parse reads.
func (s Spec) String() string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	switch s.Kind {
	case Zipf:
		return "zipf:" + f(s.Param)
	case Pareto:
		return "pareto:" + f(s.Param)
	case Normal:
		return "normal:" + f(s.Param) + "%"
	case Zoned:
		parts := []string{"zoned"}
		for _, z := range s.Zones {
			parts = append(parts, f(z.Access)+"/"+f(z.Size))
		}
		return strings.Join(parts, ":")
	}
	return "uniform"
}

// Spelling is the form Parse reads, for messages.
const Spelling = "uniform, zipf:S (S > 0, not 1), pareto:H (0 < H < 1), normal:SIGMA% (0 < SIGMA <= 100) or zoned:A/B[:A/B...] (A% of accesses to B% of the items; each column sums to 100)"

// ErrSpec marks a distribution that Parse cannot read.
var ErrSpec = errors.New("bad distribution")

// Parse reads a distribution in fio's spellings: uniform (or random),
// zipf:S, pareto:H, normal:SIGMA or gauss:SIGMA (a percentage, % optional)
// and zoned:A/B:A/B:... . Its errors wrap ErrSpec and say what is wanted.
func Parse(text string) (Spec, error) {
	name, arg, hasArg := strings.Cut(strings.ToLower(strings.TrimSpace(text)), ":")
	bad := func(why string) (Spec, error) {
		return Spec{}, fmt.Errorf("%w %q: %s (want %s)", ErrSpec, text, why, Spelling)
	}
	switch name {
	case "uniform", "random":
		if hasArg {
			return bad("uniform takes no parameter")
		}
		return Spec{}, nil
	case "zoned":
		zones, err := parseZones(arg)
		if err != nil {
			return bad(err.Error())
		}
		return Spec{Kind: Zoned, Zones: zones}, nil
	}
	kinds := map[string]Kind{"zipf": Zipf, "pareto": Pareto, "normal": Normal, "gauss": Normal}
	k, ok := kinds[name]
	if !ok {
		return bad("unknown distribution")
	}
	x, err := strconv.ParseFloat(strings.TrimSuffix(arg, "%"), 64)
	if !hasArg || err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return bad(name + " needs a number")
	}
	switch {
	case k == Zipf && (x <= 0 || x == 1 || x > 100):
		return bad("the exponent must be above 0, not 1, at most 100")
	case k == Pareto && (x <= 0 || x >= 1):
		return bad("H must be between 0 and 1")
	case k == Normal && (x <= 0 || x > 100):
		return bad("the deviation must be a percentage above 0, at most 100")
	}
	return Spec{Kind: k, Param: x}, nil
}

// parseZones reads A/B:A/B:... ; each column sums to 100.
func parseZones(arg string) ([]Zone, error) {
	if arg == "" {
		return nil, errors.New("zoned needs zones")
	}
	var zones []Zone
	var access, size float64
	for _, part := range strings.Split(arg, ":") {
		a, b, ok := strings.Cut(part, "/")
		x, err1 := strconv.ParseFloat(a, 64)
		y, err2 := strconv.ParseFloat(b, 64)
		if !ok || err1 != nil || err2 != nil || !(x >= 0 && x <= 100) || !(y > 0 && y <= 100) {
			return nil, fmt.Errorf("zone %q is not ACCESS%%/SIZE%%", part)
		}
		zones = append(zones, Zone{x, y})
		access += x
		size += y
	}
	if math.Abs(access-100) > 1e-9 || math.Abs(size-100) > 1e-9 {
		return nil, fmt.Errorf("the zones' accesses sum to %g%% and their sizes to %g%%, not 100%%", access, size)
	}
	return zones, nil
}

// hottest orders the zones by density (share of accesses per share of
// items), hottest first: the order in which their items rank.
func hottest(zones []Zone) []int {
	idx := make([]int, len(zones))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		da, db := zones[a].Access/zones[a].Size, zones[b].Access/zones[b].Size
		switch {
		case da > db:
			return -1
		case da < db:
			return 1
		}
		return 0
	})
	return idx
}
