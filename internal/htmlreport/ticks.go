package htmlreport

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// niceTicks marks a linear axis at about five round values (1, 2, 2.5 or 5
// times a power of ten) labelled without needless decimals.
type niceTicks struct{}

func (niceTicks) Ticks(min, max float64) []plot.Tick {
	if !(max > min) {
		return []plot.Tick{{Value: min, Label: tickLabel(min, 1)}}
	}
	step := niceStep((max - min) / 5)
	var out []plot.Tick
	for v := math.Ceil(min/step) * step; v <= max+step*1e-9; v += step {
		out = append(out, plot.Tick{Value: v, Label: tickLabel(v, step)})
	}
	return out
}

// niceStep rounds a raw step up to 1, 2, 2.5 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if raw <= m*mag {
			return m * mag
		}
	}
	return 10 * mag
}

// tickLabel prints v with as many decimals as the step needs.
func tickLabel(v, step float64) string {
	if math.Abs(v) < step*1e-9 {
		v = 0
	}
	dec := 0
	if step < 1 {
		dec = int(math.Ceil(-math.Log10(step) - 1e-9))
	}
	if f := step * math.Pow10(dec); math.Abs(f-math.Round(f)) > 1e-6 {
		dec++ // 2.5 times a power of ten needs one decimal more
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

// logTicks marks a logarithmic axis at 1, 2 and 5 times each power of ten,
// labelled when the axis spans few decades, and at the powers of ten only
// (the others unlabelled) when it spans more.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	if !(min > 0) || !(max > min) {
		return niceTicks{}.Ticks(min, max)
	}
	few := math.Log10(max/min) <= 2.5
	var out []plot.Tick
	for e := math.Floor(math.Log10(min)); math.Pow(10, e) <= max; e++ {
		p := math.Pow(10, e)
		for _, m := range []float64{1, 2, 5} {
			v := m * p
			if v < min*(1-1e-9) || v > max*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || few {
				t.Label = strconv.FormatFloat(v, 'f', -1, 64)
			}
			out = append(out, t)
		}
	}
	if len(out) < 2 { // less than a decade without a 1, 2 or 5 in it
		return niceTicks{}.Ticks(min, max)
	}
	return out
}
