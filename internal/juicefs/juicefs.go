// Package juicefs holds what is specific to JuiceFS: recognising its mounts
// and reading the counters its client exposes in the .stats file.
//
// It only reads: it never writes to a JuiceFS mount or changes its client's
// settings.
package juicefs

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fsbench/fsbench/internal/report"
)

// FSType is the file-system type of a JuiceFS FUSE mount in mountinfo.
const FSType = "fuse.juicefs"

// IsJuiceFS reports whether a mount's file-system type is JuiceFS's.
func IsJuiceFS(fsType string) bool { return fsType == FSType }

// StatsFiles are the virtual files a JuiceFS mount exposes its metrics in,
// newest name first.
var StatsFiles = []string{".stats", ".jfs.stats"}

// Stats is one reading of the .stats file: metric name to value.
type Stats map[string]float64

// ParseStats parses "name value" lines. Lines that do not parse are skipped.
func ParseStats(data []byte) Stats {
	out := Stats{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		name, val, ok := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		if !ok || name == "" {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			continue
		}
		out[name] = v
	}
	return out
}

// ReadStats reads the .stats file at the root of a JuiceFS mount.
func ReadStats(mountPoint string) (Stats, error) {
	var firstErr error
	for _, name := range StatsFiles {
		data, err := os.ReadFile(filepath.Join(mountPoint, name))
		if err == nil {
			return ParseStats(data), nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, errors.Join(errors.New("read JuiceFS .stats"), firstErr)
}

// Row describes one internal row of the bench table: the histogram whose
// _total and _sum give a count and a total time in seconds, and the cost
// thresholds in ms/op (good below the first, fair below the second).
type Row struct {
	Name      string
	Histogram string
	Good      float64
	Fair      float64
}

// Rows are JuiceFS's own rows of `juicefs bench`, in its order and with its
// thresholds.
var Rows = []Row{
	{"FUSE operation", "juicefs_fuse_ops_durations_histogram_seconds", 0.5, 2},
	{"Update meta", "juicefs_transaction_durations_histogram_seconds", 2, 5},
	{"Put object", "juicefs_object_request_durations_histogram_seconds_PUT", 100, 200},
	{"Get object", "juicefs_object_request_durations_histogram_seconds_GET", 100, 200},
	{"Delete object", "juicefs_object_request_durations_histogram_seconds_DELETE", 30, 100},
	{"Write into cache", "juicefs_blockcache_write_hist_seconds", 10, 20},
	{"Read from cache", "juicefs_blockcache_read_hist_seconds", 1, 5},
}

// Delta turns two readings taken seconds apart into the internal section
// of a result. A counter that went backwards (the client was restarted or
// remounted in between) makes its row unknown instead of negative, and so
// does one that vanished. A counter missing only from the first reading was
// zero then: the client creates labelled series on first use.
func Delta(before, after Stats, seconds float64) *report.Internal {
	in := &report.Internal{Source: "JuiceFS"}
	up0, okUp0 := before["juicefs_uptime"]
	up1, okUp1 := after["juicefs_uptime"]
	restarted := okUp0 && okUp1 && up1 < up0
	for _, r := range Rows {
		row := report.InternalRow{Name: r.Name}
		c0, ok0 := before[r.Histogram+"_total"]
		c1, ok1 := after[r.Histogram+"_total"]
		s0 := before[r.Histogram+"_sum"]
		s1 := after[r.Histogram+"_sum"]
		switch {
		case ok0 && !ok1, c1 < c0, s1 < s0, restarted:
			row.Unknown = true
		default:
			row.Count = int64(c1 - c0)
			if row.Count > 0 {
				row.AvgMs = (s1 - s0) * 1000 / (c1 - c0)
			}
			row.Grade = report.Ranges{CostGood: r.Good, CostFair: r.Fair}.GradeCost(row.AvgMs)
		}
		in.Rows = append(in.Rows, row)
	}
	cpu0, ok0 := before["juicefs_cpu_usage"]
	cpu1, ok1 := after["juicefs_cpu_usage"]
	if ok0 && ok1 && cpu1 >= cpu0 && !restarted && seconds > 0 {
		v := (cpu1 - cpu0) / seconds * 100
		in.ClientCPUPercent = &v
	}
	if m, ok := after["juicefs_memory"]; ok {
		v := int64(m)
		in.ClientMemoryBytes = &v
	}
	return in
}
