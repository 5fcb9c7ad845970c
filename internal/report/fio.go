package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/fsbench/fsbench/internal/units"
)

// FioPercentiles are the percentiles fio prints under "clat percentiles".
var FioPercentiles = []float64{1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99}

// FioSummary writes phase p's figures in the lines fio prints for one
// direction of a job, labelled label ("read", "write", or the phase's
// name): IOPS and bandwidth, the latency's minimum, maximum, mean and
// standard deviation, and the grid of FioPercentiles. The latency is what
// one of p's samples times (LatencyOf), shown as fio's clat. The figures
// come from the phase's histogram; a phase without one (a result of
// schema version 1) shows its summary without the grid.
func FioSummary(w io.Writer, label string, p *PhaseResult) error {
	bw := &ErrWriter{W: w}
	fmt.Fprintf(bw, "  %s: IOPS=%s, BW=%s/s (%s/s)(%s/%dmsec)\n", label,
		fioNumber(p.OpsPerSec, 1000, "", "k", "M", "G"),
		fioNumber(p.BytesPerSec, 1024, "B", "KiB", "MiB", "GiB", "TiB"),
		fioNumber(p.BytesPerSec, 1000, "B", "kB", "MB", "GB", "TB"),
		fioNumber(float64(p.Bytes), 1024, "B", "KiB", "MiB", "GiB", "TiB"),
		int64(math.Round(p.Seconds*1000)))
	l := p.Latency
	if l.Count == 0 {
		fmt.Fprintln(bw, "    clat: no latency recorded")
		return bw.Err()
	}
	unit, div := fioTimeUnit(l.Min * 1e3)
	fmt.Fprintf(bw, "    clat (%s): min=%d, max=%d, avg=%.2f", unit, whole(l.Min*1e3/div), whole(l.Max*1e3/div), l.Mean*1e3/div)
	h, err := p.LatencyHistogram()
	if err != nil || h == nil || h.Count() == 0 {
		fmt.Fprintln(bw)
		return bw.Err()
	}
	fmt.Fprintf(bw, ", stdev=%.2f\n", float64(h.StdDev())/div)
	values := make([]time.Duration, len(FioPercentiles))
	for i, q := range FioPercentiles {
		values[i] = h.Quantile(q)
	}
	unit, div = fioTimeUnit(float64(values[0]))
	digits := max(5, len(fmt.Sprint(whole(float64(values[len(values)-1])/div))))
	fmt.Fprintf(bw, "    clat percentiles (%s):\n", unit)
	for i := 0; i < len(values); i += 4 {
		var cells []string
		for j := i; j < min(i+4, len(values)); j++ {
			cells = append(cells, fmt.Sprintf("%5.2fth=[%*d]", FioPercentiles[j], digits, whole(float64(values[j])/div)))
		}
		end := ","
		if i+4 >= len(values) {
			end = ""
		}
		fmt.Fprintf(bw, "     | %s%s\n", strings.Join(cells, ", "), end)
	}
	return bw.Err()
}

// whole is v rounded to an integer.
func whole(v float64) int64 { return int64(math.Round(v)) }

// fioTimeUnit is the unit fio shows latencies in, chosen by the smallest
// of them (ns): nanoseconds, microseconds once it reaches one, and
// milliseconds once it reaches a thousand of those; and the divisor.
func fioTimeUnit(minNs float64) (string, float64) {
	switch {
	case minNs >= 1e6:
		return "msec", 1e6
	case minNs >= 1e3:
		return "usec", 1e3
	}
	return "nsec", 1
}

// fioNumber prints v as fio does: at most four digits before a unit
// prefix, which steps up by base.
func fioNumber(v float64, base float64, names ...string) string {
	i := 0
	for v >= 10000 && i < len(names)-1 {
		v /= base
		i++
	}
	switch {
	case i == 0 || v >= 100:
		return fmt.Sprintf("%.0f%s", v, names[i])
	case v >= 10:
		return fmt.Sprintf("%.1f%s", v, names[i])
	}
	return fmt.Sprintf("%.2f%s", v, names[i])
}

// writeFioSummaries writes, under a verbose table, each measured phase's
// latency as fio prints it.
func writeFioSummaries(bw *ErrWriter, r *Result) {
	first := true
	for i := range r.Phases {
		p := &r.Phases[i]
		if p.Ops == 0 || p.Value.Unit == UnitNotSupported {
			continue
		}
		if first {
			fmt.Fprintln(bw, "Latency as fio prints it (clat: the time of what LATENCY OF names):")
			first = false
		}
		what := units.Count(int(p.Ops), "operation")
		if p.Errors > 0 {
			what += ", " + units.Count(int(p.Errors), "error")
		}
		if p.LatencyOf != "" {
			what = p.LatencyOf + ", " + what
		}
		fmt.Fprintf(bw, "%s (%s):\n", p.Title, what)
		_ = FioSummary(bw, p.Name, p)
	}
}
