package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/fsbench/fsbench/internal/units"
)

// Origin is where a read phase's bytes came from, measured by the counters
// of what sits under the target, read just before and just after the
// phase. FromStorage is nil when no counter of the storage applies, and
// Unknown then says why: it is never inferred.
type Origin struct {
	// Source names the counter of the storage under test, e.g.
	// "block device loop0 (7:0)", "NFS client", "JuiceFS object storage";
	// empty when none applies.
	Source string `json:"source,omitempty"`
	// ReadBytes is what the phase read.
	ReadBytes int64 `json:"read_bytes"`
	// StorageBytes is what the run read from the storage during the
	// phase: with Own, what this run's process had fetched from storage
	// (the kernel's count of it, /proc/self/io read_bytes); else what the
	// counter of Source grew by, which counts every reader of a device.
	// Read-ahead and metadata may make it more than was asked for.
	StorageBytes *int64 `json:"storage_bytes,omitempty"`
	// Own is set when StorageBytes counts this run's process alone, the
	// process PID of Machine.
	Own bool `json:"own,omitempty"`
	PID int  `json:"pid,omitempty"`
	// DeviceBytes is what the machine-wide counter of Source grew by, set
	// with Own: more than StorageBytes when other I/O used the device.
	DeviceBytes *int64 `json:"device_bytes,omitempty"`
	// Shared is set when other I/O read from the device of Source during
	// the phase (its counter grew well beyond what the run read or had
	// fetched): without Own, FromStorage is then unknown, since the
	// counter is not the run's own.
	Shared bool `json:"shared,omitempty"`
	// Clamped is set when StorageBytes exceeds ReadBytes (read-ahead,
	// metadata) and FromStorage counts it as 100%.
	Clamped bool `json:"clamped,omitempty"`
	// CacheBytes is what a client's own cache served (JuiceFS's block
	// cache hits), named by Cache.
	CacheBytes *int64 `json:"cache_bytes,omitempty"`
	Cache      string `json:"cache,omitempty"`
	// PageCacheBytes is how much of the phase's files sat in the page
	// cache just before it began; PageCacheUnknown says why it is absent.
	PageCacheBytes   *int64 `json:"page_cache_bytes,omitempty"`
	PageCacheUnknown string `json:"page_cache_unknown,omitempty"`
	// FromStorage is StorageBytes as a percentage of ReadBytes, at most
	// 100; nil when unknown.
	FromStorage *float64 `json:"from_storage_pct,omitempty"`
	// Unknown says why FromStorage is unknown.
	Unknown string `json:"unknown,omitempty"`
	// Machine tells the machine whose counters were read (a digest of its
	// kernel's boot ID, the same in every container on it): parts of one
	// phase run at the same time on one machine read the same counters.
	Machine string `json:"machine,omitempty"`
}

// MostlyFromStorage is the share of a read phase's bytes, in percent, from
// which the storage served it mostly; below it a cache did.
const MostlyFromStorage = 50

// SetFromStorage fills FromStorage from StorageBytes and ReadBytes, or
// says why it is unknown.
func (o *Origin) SetFromStorage() {
	o.FromStorage, o.Clamped = nil, false
	switch {
	case o.StorageBytes == nil:
		if o.Unknown == "" {
			o.Unknown = "no counter of the storage"
		}
	case o.ReadBytes <= 0:
		o.Unknown = "the phase read nothing"
	case o.Shared && !o.Own:
		o.Unknown = fmt.Sprintf("shared device: not the run's own: %s counted %s while the phase read %s, and this process's own reads are not counted by the kernel here",
			o.Source, units.FormatBytes(*o.StorageBytes), units.FormatBytes(o.ReadBytes))
	default:
		o.Clamped = *o.StorageBytes > o.ReadBytes
		v := min(100, float64(*o.StorageBytes)*100/float64(o.ReadBytes))
		o.FromStorage = &v
		o.Unknown = ""
	}
}

// SharedMargin is how far a device's counter may grow beyond what a run
// read or fetched before other I/O is said to share the device: a
// quarter more (read-ahead, metadata) and 8 MiB.
func SharedMargin(own int64) int64 { return own + own/4 + 8<<20 }

// MergeOrigins adds up the origins of the same phase over runs, one after
// another: each kind of bytes when every part has it, else it is unknown.
// It returns nil when no part has an origin.
func MergeOrigins(parts []PhaseResult) *Origin {
	list := make([]*Origin, len(parts))
	for i := range parts {
		list[i] = parts[i].Origin
	}
	return sumOrigins(list)
}

// MergeConcurrentOrigins merges the origins of parts of one phase that ran
// at the same time, on many hosts or as many ranks of one host. The
// counters of one machine's storage (its block device, its NFS client)
// count what all its parts read, so each part saw them grow by about the
// whole machine's reads: a machine's storage and cache bytes are the
// largest any of its parts saw, not their sum. What was read, and what of
// each part's files sat in the page cache, still add up. Parts that do not
// name their machine count on their own.
func MergeConcurrentOrigins(parts []PhaseResult) *Origin {
	var order []string
	machines := map[string][]*Origin{}
	var list []*Origin
	for i := range parts {
		o := parts[i].Origin
		if o == nil || o.Machine == "" {
			list = append(list, o)
			continue
		}
		key := o.Machine + "\x00" + o.Source
		if _, ok := machines[key]; !ok {
			order = append(order, key)
		}
		machines[key] = append(machines[key], o)
	}
	for _, k := range order {
		list = append(list, oneMachine(machines[k]))
	}
	return sumOrigins(list)
}

// oneMachine merges the origins of parts that read the same device's
// counters at the same time: parts of one process (ranks) saw the same
// counts, so the largest is kept; the own counts of several processes
// (agents on one machine) add up, while the device's count stays the
// largest any of them saw.
func oneMachine(list []*Origin) *Origin {
	var order []int
	procs := map[int]*Origin{}
	for _, o := range list {
		pid := 0
		if o.Own {
			pid = o.PID
		}
		if p, ok := procs[pid]; ok {
			p.absorb(o, maxInt)
			continue
		}
		c := *o
		procs[pid], order = &c, append(order, pid)
	}
	out := procs[order[0]]
	for _, pid := range order[1:] {
		o := procs[pid]
		if out.Own && o.Own {
			dev := maxInt(out.DeviceBytes, o.DeviceBytes)
			out.absorb(o, addInt)
			out.DeviceBytes = dev
			// Each process's count holds what it read from other devices
			// too; together they read from this one at most what its
			// counter grew by over the longest window, which holds them all.
			if out.StorageBytes != nil && dev != nil && *out.StorageBytes > *dev {
				out.StorageBytes = cloneInt(dev)
			}
			continue
		}
		out.absorb(o, maxInt)
	}
	return out
}

// absorb adds part o to out: what was read and the page cache add up, the
// storage's and a client cache's counters combine by counters (added up,
// or the largest of parts that read the same ones).
func (out *Origin) absorb(o *Origin, counters func(a, b *int64) *int64) {
	out.ReadBytes += o.ReadBytes
	out.StorageBytes = counters(out.StorageBytes, o.StorageBytes)
	if out.Own || o.Own {
		out.DeviceBytes = counters(out.DeviceBytes, o.DeviceBytes)
	}
	out.Own = out.Own && o.Own
	out.Shared = out.Shared || o.Shared
	out.CacheBytes = counters(out.CacheBytes, o.CacheBytes)
	out.PageCacheBytes = addInt(out.PageCacheBytes, o.PageCacheBytes)
	out.Unknown = cmp.Or(out.Unknown, o.Unknown)
	out.PageCacheUnknown = cmp.Or(out.PageCacheUnknown, o.PageCacheUnknown)
}

// sumOrigins adds up origins measured apart: each kind of bytes when every
// part has it, else it is unknown. A nil part has none. It returns nil
// when no part has an origin.
func sumOrigins(parts []*Origin) *Origin {
	var out *Origin
	missing := false
	for _, o := range parts {
		if o == nil {
			missing = true
			continue
		}
		if out == nil {
			zero := int64(0)
			out = &Origin{Source: o.Source, Cache: o.Cache, StorageBytes: &zero,
				CacheBytes: cloneInt(&zero), PageCacheBytes: cloneInt(&zero), Own: o.Own, DeviceBytes: cloneInt(&zero)}
		}
		switch {
		case out.Source == "":
			out.Source = o.Source
		case o.Source != "" && !slices.Contains(strings.Split(out.Source, ", "), o.Source):
			out.Source += ", " + o.Source
		}
		out.absorb(o, addInt)
	}
	if out == nil {
		return nil
	}
	if missing {
		out.StorageBytes, out.Unknown = nil, "not measured in every run or host"
	}
	if !out.Own {
		out.DeviceBytes = nil
	}
	out.SetFromStorage()
	return out
}

func cloneInt(p *int64) *int64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// maxInt is the larger of a and b, or nil when either is unknown.
func maxInt(a, b *int64) *int64 {
	if a == nil || b == nil {
		return nil
	}
	v := max(*a, *b)
	return &v
}

// addInt is a+b, or nil when either is unknown.
func addInt(a, b *int64) *int64 {
	if a == nil || b == nil {
		return nil
	}
	v := *a + *b
	return &v
}

// OriginLine is the table's line for a phase's origin, e.g.
// "Read big file: 100.0% from storage (block device loop0 (7:0): 256.0
// MiB of 256.0 MiB); page cache before: 0 B".
func OriginLine(p *PhaseResult) string {
	o := p.Origin
	if o == nil {
		return ""
	}
	s := strings.TrimSpace(p.Title) + ": "
	if o.FromStorage != nil {
		s += fmt.Sprintf("%s%% from storage (%s: %s of %s%s)", strconv.FormatFloat(*o.FromStorage, 'f', 1, 64),
			o.Source, units.FormatBytes(*o.StorageBytes), units.FormatBytes(o.ReadBytes), originNotes(o))
	} else {
		s += "from storage unknown (" + o.Unknown + ")"
	}
	if o.CacheBytes != nil {
		s += "; " + o.Cache + ": " + units.FormatBytes(*o.CacheBytes)
	}
	if o.PageCacheBytes != nil {
		s += "; page cache before: " + units.FormatBytes(*o.PageCacheBytes)
	}
	return s
}

// originNotes qualifies the bytes from storage of OriginLine: whose they
// are, and why a share is capped at 100%.
func originNotes(o *Origin) string {
	var s string
	if o.Own {
		s += ", fetched by this process"
	}
	if o.Clamped {
		s += "; more than it read (read-ahead, metadata): counted as 100%"
	}
	if o.Shared && o.DeviceBytes != nil {
		s += "; shared device: it read " + units.FormatBytes(*o.DeviceBytes) + " in all, the rest for other I/O"
	}
	return s
}

// writeOrigins writes, under the table, where each read phase's bytes
// came from; nothing when no phase measured it.
func writeOrigins(w io.Writer, r *Result) {
	for i := range r.Phases {
		if line := OriginLine(&r.Phases[i]); line != "" {
			fmt.Fprintln(w, "Origin of "+line)
		}
	}
}
