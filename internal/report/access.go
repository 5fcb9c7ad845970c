package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
)

// Access is how the random picks of a phase fell on its items (files,
// blocks of a file, objects): the distribution they were drawn from, and
// the share of them that went to the hottest 1% and 10% of the items,
// measured and as the distribution has it.
type Access struct {
	Distribution string `json:"distribution"` // as --distribution spells it, e.g. zipf:1.2
	Of           string `json:"of"`           // files, blocks or objects
	// Items is how many items the picks were drawn from (per thread, as
	// each thread owns its files; the largest when they differ).
	Items int64 `json:"items"`
	Picks int64 `json:"picks"`
	// Top1Pct and Top10Pct are the measured percentages of the picks that
	// went to the hottest 1% and 10% of the items; Want1Pct and
	// Want10Pct the distribution's own.
	Top1Pct   float64 `json:"top1_pct"`
	Top10Pct  float64 `json:"top10_pct"`
	Want1Pct  float64 `json:"want1_pct"`
	Want10Pct float64 `json:"want10_pct"`
}

// writeAccess writes, under the table, how each skewed phase's picks fell.
func writeAccess(w io.Writer, r *Result) {
	for _, p := range r.Phases {
		for _, a := range p.Access {
			fmt.Fprintf(w, "Access of %s: %s over %d %s, %.1f%% of %d picks to the hottest 1%% (%.1f%% expected), %.1f%% to the hottest 10%% (%.1f%%)\n",
				p.Title, a.Distribution, a.Items, a.Of, a.Top1Pct, a.Picks, a.Want1Pct, a.Top10Pct, a.Want10Pct)
		}
	}
}

// DataParams are the parameters of content written at a compress ratio
// and a dedupe ratio (pattern.Data): none for the usual content.
func DataParams(compress, dedupe float64) Params {
	var ps Params
	for _, x := range []struct {
		key, label string
		v          float64
	}{{"compress_ratio", "CompressRatio", compress}, {"dedupe_ratio", "DedupeRatio", dedupe}} {
		if x.v > 1 {
			ps = append(ps, Param{Key: x.key, Label: x.label, Value: x.v, Display: strconv.FormatFloat(x.v, 'g', 4, 64)})
		}
	}
	return ps
}

// MergeAccess adds up the picks of the parts (hosts, or repeated runs)
// by distribution and kind of item: their counts summed, their shares
// weighted by their picks.
func MergeAccess(parts []PhaseResult) []Access {
	var out []Access
	for _, p := range parts {
		for _, a := range p.Access {
			i := slices.IndexFunc(out, func(o Access) bool { return o.Distribution == a.Distribution && o.Of == a.Of })
			if i < 0 {
				out = append(out, Access{Distribution: a.Distribution, Of: a.Of})
				i = len(out) - 1
			}
			o := &out[i]
			n, m := float64(o.Picks), float64(a.Picks)
			if n+m > 0 {
				mean := func(x, y float64) float64 { return math.Round((x*n+y*m)/(n+m)*100) / 100 }
				o.Top1Pct, o.Top10Pct = mean(o.Top1Pct, a.Top1Pct), mean(o.Top10Pct, a.Top10Pct)
				o.Want1Pct, o.Want10Pct = mean(o.Want1Pct, a.Want1Pct), mean(o.Want10Pct, a.Want10Pct)
			}
			o.Picks += a.Picks
			o.Items = max(o.Items, a.Items)
		}
	}
	return out
}
