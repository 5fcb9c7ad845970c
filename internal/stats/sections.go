package stats

import (
	"fmt"
	"strings"
)

// Letters lists every schema letter with the section it selects, in the
// order of the help text.
var Letters = []struct {
	Letter byte
	Name   string
	Help   string
}{
	{'u', "usage", "JuiceFS client: cpu, mem, buf, [cache]"},
	{'f', "fuse", "JuiceFS FUSE: ops, lat, read, write"},
	{'m', "meta", "JuiceFS metadata: ops, lat, [txn, lat, retry]"},
	{'c', "blockcache", "JuiceFS block cache: read, write"},
	{'o', "object", "JuiceFS object storage: get, [get_c, lat], put, [put_c, lat, del_c, lat]"},
	{'g', "go", "Go runtime of the client: alloc, sys"},
	{'t', "time", "the time of the row"},
	{'s', "system", "CPU usr, sys, wait, memory used, dirty, wback, [cache, free]"},
	{'d', "disk", "block device: r/s, w/s, read, write, await, util"},
	{'n', "nfs", "NFS client: ops, read, write, per class (read, write, meta) ops, rtt, exe"},
	{'p', "process", "the FUSE daemon: cpu, mem, [thr]"},
	{'b', "fsbench", "running fsbench benchmarks: ops, lat, read, write, err, [runs, phase]"},
	{'x', "metrics", "the --metric values of a Prometheus endpoint"},
}

// hist is the pair of columns of a JuiceFS histogram: operations per
// second and mean latency in milliseconds.
func hist(nick, field, name string) []Column {
	return []Column{
		{Nick: nick, Field: field + "_per_s", Kind: Rate, Unit: Count, Key: name + "_total"},
		{Nick: "lat", Field: field + "_lat_ms", Kind: Mean, Unit: Millis, Key: name + "_sum", Count: name + "_total", Scale: 1000},
	}
}

// class is the three columns of an NFS operation class.
func class(nick, name string) []Column {
	return []Column{
		{Nick: nick, Field: name + "_ops_per_s", Kind: Rate, Unit: Count, Key: "nfs." + name + ".ops"},
		{Nick: "rtt", Field: name + "_rtt_ms", Kind: Mean, Unit: Millis, Key: "nfs." + name + ".rtt_ms", Count: "nfs." + name + ".ops"},
		{Nick: "exe", Field: name + "_exe_ms", Kind: Mean, Unit: Millis, Key: "nfs." + name + ".exe_ms", Count: "nfs." + name + ".ops"},
	}
}

func cols(groups ...[]Column) []Column {
	var out []Column
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

func one(c Column) []Column { return []Column{c} }

// NewSection builds the section of a schema letter; verbosity > 0 adds the
// bracketed columns. metrics are the columns of the 'x' section.
func NewSection(letter byte, verbosity int, metrics []Column) (*Section, error) {
	s := &Section{Letter: letter}
	if letter == 'x' {
		s.Name = "metrics"
		s.Columns = metrics
		if len(metrics) == 0 {
			return nil, fmt.Errorf("schema letter x needs at least one --metric")
		}
		return s, nil
	}
	build, ok := sectionBuilders[letter]
	if !ok {
		return nil, fmt.Errorf("unknown schema letter %q (want one of %s)", letter, letterList())
	}
	build(s, verbosity > 0)
	return s, nil
}

// sectionBuilders fill the name and the columns of the section of each
// schema letter but x; v adds the bracketed columns.
var sectionBuilders = map[byte]func(s *Section, v bool){
	'u': usageSection,
	'f': fuseSection,
	'm': metaSection,
	'c': blockcacheSection,
	'o': objectSection,
	'g': goSection,
	't': timeSection,
	's': systemSection,
	'd': diskSection,
	'n': nfsSection,
	'p': processSection,
	'b': fsbenchSection,
}

func usageSection(s *Section, v bool) {
	s.Name = "usage"
	s.Columns = []Column{
		{Nick: "cpu", Field: "cpu_pct", Kind: Rate, Unit: Percent, Key: "juicefs_cpu_usage", Scale: 100},
		{Nick: "mem", Field: "mem_bytes", Kind: Gauge, Unit: Bytes, Key: "juicefs_memory"},
		{Nick: "buf", Field: "buf_bytes", Kind: Gauge, Unit: Bytes, Key: "juicefs_used_buffer_size_bytes"},
	}
	if v {
		s.Columns = append(s.Columns, Column{Nick: "cache", Field: "cache_bytes", Kind: Gauge, Unit: Bytes, Key: "juicefs_store_cache_size_bytes"})
	}
}

func fuseSection(s *Section, v bool) {
	s.Name = "fuse"
	s.Columns = cols(hist("ops", "ops", "juicefs_fuse_ops_durations_histogram_seconds"),
		one(Column{Nick: "read", Field: "read_bytes_per_s", Kind: Rate, Unit: Bytes, Key: "juicefs_fuse_read_size_bytes_sum"}),
		one(Column{Nick: "write", Field: "write_bytes_per_s", Kind: Rate, Unit: Bytes, Key: "juicefs_fuse_written_size_bytes_sum"}))
}

func metaSection(s *Section, v bool) {
	s.Name = "meta"
	s.Columns = hist("ops", "ops", "juicefs_meta_ops_durations_histogram_seconds")
	if v {
		s.Columns = cols(s.Columns, hist("txn", "txn", "juicefs_transaction_durations_histogram_seconds"),
			one(Column{Nick: "retry", Field: "retry_per_s", Kind: Rate, Unit: Count, Key: "juicefs_transaction_restart"}))
	}
}

func blockcacheSection(s *Section, v bool) {
	s.Name = "blockcache"
	s.Columns = []Column{
		{Nick: "read", Field: "read_bytes_per_s", Kind: Rate, Unit: Bytes, Key: "juicefs_blockcache_hit_bytes"},
		{Nick: "write", Field: "write_bytes_per_s", Kind: Rate, Unit: Bytes, Key: "juicefs_blockcache_write_bytes"},
	}
}

func objectSection(s *Section, v bool) {
	s.Name = "object"
	get := Column{Nick: "get", Field: "get_bytes_per_s", Kind: Rate, Unit: Bytes, Key: "juicefs_object_request_data_bytes_GET"}
	put := Column{Nick: "put", Field: "put_bytes_per_s", Kind: Rate, Unit: Bytes, Key: "juicefs_object_request_data_bytes_PUT"}
	if v {
		s.Columns = cols(one(get), hist("get_c", "get", "juicefs_object_request_durations_histogram_seconds_GET"),
			one(put), hist("put_c", "put", "juicefs_object_request_durations_histogram_seconds_PUT"),
			hist("del_c", "del", "juicefs_object_request_durations_histogram_seconds_DELETE"))
	} else {
		s.Columns = []Column{get, put}
	}
}

func goSection(s *Section, v bool) {
	s.Name = "go"
	s.Columns = []Column{
		{Nick: "alloc", Field: "alloc_bytes", Kind: Gauge, Unit: Bytes, Key: "juicefs_go_memstats_alloc_bytes"},
		{Nick: "sys", Field: "sys_bytes", Kind: Gauge, Unit: Bytes, Key: "juicefs_go_memstats_sys_bytes"},
	}
}

func timeSection(s *Section, v bool) {
	s.Name = "time"
	s.Columns = []Column{{Nick: "time", Field: "time", Kind: WallTime, Unit: Time, Width: 8}}
}

func systemSection(s *Section, v bool) {
	s.Name = "system"
	s.Columns = []Column{
		{Nick: "usr", Field: "usr_pct", Kind: Share, Unit: Percent, Key: "sys.cpu.user", Count: "sys.cpu.total"},
		{Nick: "sys", Field: "sys_pct", Kind: Share, Unit: Percent, Key: "sys.cpu.system", Count: "sys.cpu.total"},
		{Nick: "wait", Field: "wait_pct", Kind: Share, Unit: Percent, Key: "sys.cpu.iowait", Count: "sys.cpu.total"},
		{Nick: "used", Field: "used_bytes", Kind: Gauge, Unit: Bytes, Key: "sys.mem.used"},
		{Nick: "dirty", Field: "dirty_bytes", Kind: Gauge, Unit: Bytes, Key: "sys.mem.dirty"},
		{Nick: "wback", Field: "writeback_bytes", Kind: Gauge, Unit: Bytes, Key: "sys.mem.writeback"},
	}
	if v {
		s.Columns = append(s.Columns,
			Column{Nick: "cache", Field: "cache_bytes", Kind: Gauge, Unit: Bytes, Key: "sys.mem.cached"},
			Column{Nick: "free", Field: "free_bytes", Kind: Gauge, Unit: Bytes, Key: "sys.mem.free"})
	}
}

func diskSection(s *Section, v bool) {
	s.Name = "disk"
	s.Columns = []Column{
		{Nick: "r/s", Field: "reads_per_s", Kind: Rate, Unit: Count, Key: "disk.reads"},
		{Nick: "w/s", Field: "writes_per_s", Kind: Rate, Unit: Count, Key: "disk.writes"},
		{Nick: "read", Field: "read_bytes_per_s", Kind: Rate, Unit: Bytes, Key: "disk.read_bytes"},
		{Nick: "write", Field: "write_bytes_per_s", Kind: Rate, Unit: Bytes, Key: "disk.write_bytes"},
		{Nick: "await", Field: "await_ms", Kind: Mean, Unit: Millis, Key: "disk.wait_ms", Count: "disk.ios"},
		{Nick: "util", Field: "util_pct", Kind: Rate, Unit: Percent, Key: "disk.busy_ms", Scale: 0.1},
	}
}

func nfsSection(s *Section, v bool) {
	s.Name = "nfs"
	s.Columns = cols(
		one(Column{Nick: "ops", Field: "ops_per_s", Kind: Rate, Unit: Count, Key: "nfs.ops"}),
		one(Column{Nick: "read", Field: "read_bytes_per_s", Kind: Rate, Unit: Bytes, Key: "nfs.read_bytes"}),
		one(Column{Nick: "write", Field: "write_bytes_per_s", Kind: Rate, Unit: Bytes, Key: "nfs.write_bytes"}),
		class("rd", "read"), class("wr", "write"), class("meta", "meta"))
}

func processSection(s *Section, v bool) {
	s.Name = "process"
	s.Columns = []Column{
		{Nick: "cpu", Field: "cpu_pct", Kind: Rate, Unit: Percent, Key: "proc.cpu", Scale: 100},
		{Nick: "mem", Field: "mem_bytes", Kind: Gauge, Unit: Bytes, Key: "proc.rss"},
	}
	if v {
		s.Columns = append(s.Columns, Column{Nick: "thr", Field: "threads", Kind: Gauge, Unit: Count, Key: "proc.threads"})
	}
}

func fsbenchSection(s *Section, v bool) {
	s.Name = "fsbench"
	s.Columns = []Column{
		{Nick: "ops", Field: "ops_per_s", Kind: Rate, Unit: Count, Key: "fsbench.ops"},
		{Nick: "lat", Field: "lat_ms", Kind: Mean, Unit: Millis, Key: "fsbench.latency_ns", Count: "fsbench.ops", Scale: 1e-6},
		{Nick: "read", Field: "read_bytes_per_s", Kind: Rate, Unit: Bytes, Key: "fsbench.read_bytes"},
		{Nick: "write", Field: "write_bytes_per_s", Kind: Rate, Unit: Bytes, Key: "fsbench.write_bytes"},
		{Nick: "err", Field: "errors_per_s", Kind: Rate, Unit: Count, Key: "fsbench.errors"},
	}
	if v {
		s.Columns = append(s.Columns,
			Column{Nick: "runs", Field: "runs", Kind: Gauge, Unit: Count, Key: "fsbench.runs"},
			Column{Nick: "phase", Field: "phase", Kind: Text, Unit: String, Key: "fsbench.phase", Width: 10})
	}
}

func letterList() string {
	var b strings.Builder
	for _, l := range Letters {
		b.WriteByte(l.Letter)
	}
	return b.String()
}

// ParseSchema builds the sections of a schema string such as "ufmco". A
// letter may appear once.
func ParseSchema(schema string, verbosity int, metrics []Column) ([]*Section, error) {
	if schema == "" {
		return nil, fmt.Errorf("empty schema")
	}
	var out []*Section
	seen := map[byte]bool{}
	for i := 0; i < len(schema); i++ {
		l := schema[i]
		if seen[l] {
			return nil, fmt.Errorf("schema %q: letter %q twice", schema, l)
		}
		seen[l] = true
		s, err := NewSection(l, verbosity, metrics)
		if err != nil {
			return nil, fmt.Errorf("schema %q: %w", schema, err)
		}
		out = append(out, s)
	}
	return out, nil
}
