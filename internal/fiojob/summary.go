package fiojob

import (
	"fmt"
	"io"
	"strings"

	"github.com/fsbench/fsbench/internal/report"
)

// Summary writes fio's summary lines for each phase of res, as fio users
// read them: the jobs behind the phase, then report.FioSummary's IOPS, BW
// and clat lines. groups names the fio jobs behind each phase
// (Result.Groups). A phase paced at a rate shows its service time, which
// is what fio's clat is.
func Summary(w io.Writer, res *report.Result, groups [][]string) {
	for i := range res.Phases {
		p := res.Phases[i]
		jobs := p.Name
		if i < len(groups) {
			jobs = strings.Join(groups[i], ", ")
		}
		fmt.Fprintf(w, "%s: (groupid=%d, jobs=%d): err=%2d\n", jobs, i, res.Threads, p.Errors)
		if p.ServiceTime != nil {
			p.Latency, p.Histogram = *p.ServiceTime, p.ServiceHistogram
		}
		_ = report.FioSummary(w, direction(&p), &p)
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
