package objbench

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/pkg/object"
)

// extras is the run's state for several endpoints, versioned objects and
// operations made of several requests.
type extras struct {
	eps *object.Endpoints // with --endpoints
	// createdBucket: the run created the bucket, so it may set it up
	// (versioning); a bucket of the user's is never changed.
	createdBucket bool
	// versioned: the run wrote versions, which its clean-up removes too.
	versioned bool
	vers      *versions // the versioned workload's
	// steps records the requests inside each worker's operations.
	steps []*steps
}

// checkEndpoints checks --endpoints before anything is opened.
func (o *Options) checkEndpoints() error {
	if len(o.Endpoints) == 0 {
		return nil
	}
	switch o.Storage {
	case "s3", "minio", "cos":
	default:
		return fmt.Errorf("--endpoints: the %s store has no endpoints; it is for s3, minio and cos", o.Storage)
	}
	seen := map[string]bool{}
	for _, e := range o.Endpoints {
		ep, err := object.ParseEndpoint(e)
		if err != nil {
			return fmt.Errorf("--endpoints: %w", err)
		}
		if seen[ep] {
			return fmt.Errorf("--endpoints: %s is given twice", ep)
		}
		seen[ep] = true
	}
	return nil
}

// open opens the store, through every endpoint when there are several.
func (r *run) open(ctx context.Context) (object.Storage, error) {
	if len(r.o.Endpoints) == 0 {
		return object.Open(ctx, r.o.Storage, r.o.URL, r.o.Object)
	}
	e, err := object.OpenEndpoints(ctx, r.o.Storage, r.o.URL, r.o.Endpoints, r.o.Object)
	if err != nil {
		return nil, err
	}
	r.x.eps = e
	return e, nil
}

// endpointStats are the endpoints' counts so far (nil with one endpoint).
func (r *run) endpointStats() []object.EndpointStats {
	if r.x.eps == nil {
		return nil
	}
	return r.x.eps.Stats()
}

// endpointRows are what each endpoint served since before, over a phase
// of the given seconds.
func (r *run) endpointRows(before []object.EndpointStats, seconds float64) []report.EndpointRow {
	var rows []report.EndpointRow
	for i, now := range r.endpointStats() {
		d := now.Sub(before[i])
		row := report.EndpointRow{Endpoint: d.Endpoint, Requests: d.Ops, Bytes: d.Bytes, Errors: d.Errors, Seconds: seconds}
		if seconds > 0 {
			row.RequestsPerSec = float64(d.Ops) / seconds
			row.BytesPerSec = float64(d.Bytes) / seconds
		}
		if d.Ops > 0 {
			row.MeanMs = float64(d.Busy.Microseconds()) / 1000 / float64(d.Ops)
		}
		rows = append(rows, row)
	}
	return rows
}

// errNotSupported tells a workload the store lacks a capability it needs.
func notSupported(err error) bool { return errors.Is(err, object.ErrNotSupported) }

// notSupportedRow is the result row of a workload the store cannot run.
func (r *run) notSupportedRow(wl *Workload, err error) {
	r.warn("%s: %v", wl.Name, err)
	r.res.Phases = append(r.res.Phases, report.PhaseResult{Name: wl.Name, Title: wl.Name,
		Value: report.Measure{Unit: report.UnitNotSupported}, Cost: report.Measure{Unit: report.UnitNotSupported}})
}

// moreParams are the parameters of endpoints and multipart uploads, when
// they apply.
func (o *Options) moreParams() report.Params {
	var ps report.Params
	if len(o.Endpoints) > 0 {
		ps = append(ps, report.Param{Key: "endpoints", Label: "Endpoints", Value: o.Endpoints, Display: strconv.Itoa(len(o.Endpoints))})
	}
	if o.Workload == "multipart" {
		ps = append(ps,
			report.Param{Key: "part_size", Label: "PartSize", Value: o.PartSize, Display: units.FormatBytes(o.PartSize)},
			report.Param{Key: "parts_in_flight", Label: "PartsInFlight", Value: o.PartsInFlight, Display: strconv.Itoa(o.PartsInFlight)})
	}
	return append(ps, report.DataParams(o.Data.Compress, o.Data.Dedupe)...)
}
