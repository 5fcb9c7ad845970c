package report

import (
	"strconv"

	"github.com/fsbench/fsbench/internal/units"
)

// endpointRows are the table's rows under a phase run through several
// endpoints of one store: each endpoint's rate in the phase's unit, its
// mean time per request, and its requests and errors.
func endpointRows(p *PhaseResult) []row {
	var rows []row
	for _, e := range p.Endpoints {
		v := Measure{Unit: UnitRequestsPerSec, Value: e.RequestsPerSec}
		if p.Value.Unit == UnitMiBPerSec {
			v = Measure{Unit: UnitMiBPerSec, Value: e.BytesPerSec / float64(units.MiB)}
		}
		cost := strconv.FormatFloat(e.MeanMs, 'f', 2, 64) + " ms/req"
		what := "endpoint: " + count(e.Requests, "request")
		if e.Errors > 0 {
			what += ", " + count(e.Errors, "error")
		}
		rows = append(rows, row{"ITEM": "  " + e.Endpoint, "VALUE": FormatMeasure(v), "COST": cost, "LATENCY OF": what})
	}
	return rows
}

// count is n and the noun, plural unless n is 1.
func count(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatInt(n, 10) + " " + noun + "s"
}
