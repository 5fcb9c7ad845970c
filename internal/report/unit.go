package report

import "github.com/fsbench/fsbench/internal/units"

// Unit is the unit of a Measure, as the table shows it and the JSON keeps
// it (a plain string there). Every unit a command writes is one of the
// constants below and is listed in Units: a run on many hosts recomputes
// each figure by its unit (cluster's merge), and a unit it does not know
// is an error there rather than a figure of 0.
type Unit string

// Units of a phase's value: rates, higher is better.
const (
	UnitMiBPerSec     Unit = "MiB/s"
	UnitGiBPerSec     Unit = "GiB/s"
	UnitOpsPerSec     Unit = "ops/s"
	UnitFilesPerSec   Unit = "files/s"
	UnitObjectsPerSec Unit = "objects/s"
	UnitSamplesPerSec Unit = "samples/s" // train: samples read per second
	UnitKIOPS         Unit = "kIOPS"     // io500's metadata phases: thousands of items per second
	// UnitRequestsPerSec is the rate of requests of one endpoint of an
	// object store (the rows under an item run on many endpoints).
	UnitRequestsPerSec Unit = "req/s"
)

// Units of a phase's cost: times, lower is better.
const (
	UnitSecondsPerFile Unit = "s/file"
	UnitMsPerFile      Unit = "ms/file"
	UnitMsPerObject    Unit = "ms/object"
	UnitMsPerList      Unit = "ms/list"
	UnitMsPerOp        Unit = "ms/op" // the mean latency of an operation
	UnitSeconds        Unit = "s"     // the phase's time (checkpoint: the slowest rank's)
	// UnitAUPercent is train's cost: the accelerators' utilisation, the
	// share of the time they computed rather than waited for data.
	UnitAUPercent Unit = "% AU"
)

// Other units.
const (
	// UnitOperations counts operations.
	UnitOperations Unit = "operations"
	// UnitNotSupported is the value and cost of an item the storage
	// cannot do (objbench: chmod on S3), shown as such and never merged.
	UnitNotSupported Unit = CheckNotSupport
)

// Units lists every unit declared above; a test checks that none is
// missing.
var Units = []Unit{
	UnitMiBPerSec, UnitGiBPerSec, UnitOpsPerSec, UnitFilesPerSec, UnitObjectsPerSec, UnitSamplesPerSec,
	UnitKIOPS, UnitRequestsPerSec,
	UnitSecondsPerFile, UnitMsPerFile, UnitMsPerObject, UnitMsPerList, UnitMsPerOp, UnitSeconds, UnitAUPercent,
	UnitOperations, UnitNotSupported,
}

// Rate is the figure in rate unit u of bytes, items (files, objects,
// samples) and operations done in seconds; ok is false when u is not a
// rate. It is 0 when seconds is not positive.
func (u Unit) Rate(bytes, items, ops int64, seconds float64) (v float64, ok bool) {
	per := func(n float64) float64 {
		if seconds <= 0 {
			return 0
		}
		return n / seconds
	}
	switch u {
	case UnitMiBPerSec:
		return per(float64(bytes)) / float64(units.MiB), true
	case UnitGiBPerSec:
		return per(float64(bytes)) / float64(units.GiB), true
	case UnitOpsPerSec, UnitRequestsPerSec:
		return per(float64(ops)), true
	case UnitFilesPerSec, UnitObjectsPerSec, UnitSamplesPerSec:
		return per(float64(items)), true
	case UnitKIOPS:
		return per(float64(items)) / 1000, true
	}
	return 0, false
}

// decimals is how many digits after the point a figure in u shows: as
// JuiceFS shows its units.
func (u Unit) decimals() int {
	switch u {
	case UnitOperations:
		return 0
	case UnitFilesPerSec, UnitObjectsPerSec, UnitOpsPerSec:
		return 1
	}
	return 2
}
