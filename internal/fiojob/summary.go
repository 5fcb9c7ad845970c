package fiojob

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/report"
)

// fio's completion-latency percentiles.
var percentiles = []float64{1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99}

// Summary writes fio's summary lines for each phase of res, as fio users
// read them: IOPS, BW (with bytes and time), clat and its percentiles in
// microseconds. groups names the fio jobs behind each phase (Result.Groups).
func Summary(w io.Writer, res *report.Result, groups [][]string) {
	for i := range res.Phases {
		p := &res.Phases[i]
		jobs := p.Name
		if i < len(groups) {
			jobs = strings.Join(groups[i], ", ")
		}
		fmt.Fprintf(w, "%s: (groupid=%d, jobs=%d): err=%2d\n", jobs, i, res.Threads, p.Errors)
		fmt.Fprintf(w, "  %s: IOPS=%s, BW=%s (%s)(%s/%dmsec)\n", direction(p), siCount(p.OpsPerSec),
			binRate(p.BytesPerSec), decRate(p.BytesPerSec), binBytes(float64(p.Bytes)), int64(p.Seconds*1000+0.5))
		lat, hist := p.Latency, p.Histogram
		if p.ServiceTime != nil { // fio's clat is the service time
			lat, hist = *p.ServiceTime, p.ServiceHistogram
		}
		fmt.Fprintf(w, "    clat (usec): min=%.0f, max=%.0f, avg=%.2f\n", lat.Min, lat.Max, lat.Mean)
		writePercentiles(w, hist)
	}
}

// direction is fio's word for what the phase did.
func direction(p *report.PhaseResult) string {
	l := p.LatencyOf
	switch {
	case strings.Contains(l, "read/write"):
		return "read+write"
	case strings.Contains(l, "write"):
		return "write"
	}
	return "read"
}

func writePercentiles(w io.Writer, encoded string) {
	h, err := metrics.Decode(encoded)
	if encoded == "" || err != nil || h.Count() == 0 {
		return
	}
	fmt.Fprintln(w, "    clat percentiles (usec):")
	for i, q := range percentiles {
		if i%4 == 0 {
			fmt.Fprint(w, "     |")
		}
		us := h.Quantile(q) / time.Microsecond
		fmt.Fprintf(w, " %5.2fth=[%5d]", q, us)
		switch {
		case i == len(percentiles)-1:
			fmt.Fprintln(w)
		case i%4 == 3:
			fmt.Fprintln(w, ",")
		default:
			fmt.Fprint(w, ",")
		}
	}
}

// siCount is fio's IOPS figure: 1234, 12.3k, 1234k.
func siCount(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func scaled(v float64, base float64, units []string) (float64, string) {
	i := 0
	for v >= 10000 && i < len(units)-1 {
		v /= base
		i++
	}
	return v, units[i]
}

func binRate(v float64) string {
	n, u := scaled(v, 1024, []string{"B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s"})
	return fmt.Sprintf("%.0f%s", n, u)
}

func decRate(v float64) string {
	n, u := scaled(v, 1000, []string{"B/s", "kB/s", "MB/s", "GB/s", "TB/s"})
	return fmt.Sprintf("%.0f%s", n, u)
}

func binBytes(v float64) string {
	n, u := scaled(v, 1024, []string{"B", "KiB", "MiB", "GiB", "TiB"})
	return fmt.Sprintf("%.0f%s", n, u)
}
