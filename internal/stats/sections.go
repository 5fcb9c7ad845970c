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

// letterColumns are the columns of the section of each schema letter but
// x (whose columns are the --metric values); v adds the bracketed ones.
var letterColumns = map[byte]func(v bool) []Column{
	'u': usageColumns,
	'f': fuseColumns,
	'm': metaColumns,
	'c': blockcacheColumns,
	'o': objectColumns,
	'g': goColumns,
	't': timeColumns,
	's': systemColumns,
	'd': diskColumns,
	'n': nfsColumns,
	'p': processColumns,
	'b': fsbenchColumns,
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

// byteRate is the column of bytes per second of the counter key, in the
// field nick_bytes_per_s.
func byteRate(nick, key string) Column {
	return Column{Nick: nick, Field: nick + "_bytes_per_s", Kind: Rate, Unit: Bytes, Key: key}
}

// byteGauge is the column of a size in bytes, in the field nick_bytes.
func byteGauge(nick, key string) Column {
	return Column{Nick: nick, Field: nick + "_bytes", Kind: Gauge, Unit: Bytes, Key: key}
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
	for _, l := range Letters {
		if l.Letter != letter {
			continue
		}
		s := &Section{Letter: letter, Name: l.Name, Columns: metrics}
		if columns, ok := letterColumns[letter]; ok {
			s.Columns = columns(verbosity > 0)
		} else if len(metrics) == 0 {
			return nil, fmt.Errorf("schema letter x needs at least one --metric")
		}
		return s, nil
	}
	return nil, fmt.Errorf("unknown schema letter %q (want one of %s)", letter, letterList())
}

func usageColumns(v bool) []Column {
	c := []Column{
		{Nick: "cpu", Field: "cpu_pct", Kind: Rate, Unit: Percent, Key: "juicefs_cpu_usage", Scale: 100},
		byteGauge("mem", "juicefs_memory"),
		byteGauge("buf", "juicefs_used_buffer_size_bytes"),
	}
	if v {
		c = append(c, byteGauge("cache", "juicefs_store_cache_size_bytes"))
	}
	return c
}

func fuseColumns(bool) []Column {
	return cols(hist("ops", "ops", "juicefs_fuse_ops_durations_histogram_seconds"),
		[]Column{byteRate("read", "juicefs_fuse_read_size_bytes_sum"), byteRate("write", "juicefs_fuse_written_size_bytes_sum")})
}

func metaColumns(v bool) []Column {
	c := hist("ops", "ops", "juicefs_meta_ops_durations_histogram_seconds")
	if v {
		c = cols(c, hist("txn", "txn", "juicefs_transaction_durations_histogram_seconds"),
			one(Column{Nick: "retry", Field: "retry_per_s", Kind: Rate, Unit: Count, Key: "juicefs_transaction_restart"}))
	}
	return c
}

func blockcacheColumns(bool) []Column {
	return []Column{byteRate("read", "juicefs_blockcache_hit_bytes"), byteRate("write", "juicefs_blockcache_write_bytes")}
}

func objectColumns(v bool) []Column {
	get := byteRate("get", "juicefs_object_request_data_bytes_GET")
	put := byteRate("put", "juicefs_object_request_data_bytes_PUT")
	if !v {
		return []Column{get, put}
	}
	return cols(one(get), hist("get_c", "get", "juicefs_object_request_durations_histogram_seconds_GET"),
		one(put), hist("put_c", "put", "juicefs_object_request_durations_histogram_seconds_PUT"),
		hist("del_c", "del", "juicefs_object_request_durations_histogram_seconds_DELETE"))
}

func goColumns(bool) []Column {
	return []Column{byteGauge("alloc", "juicefs_go_memstats_alloc_bytes"), byteGauge("sys", "juicefs_go_memstats_sys_bytes")}
}

func timeColumns(bool) []Column {
	return one(Column{Nick: "time", Field: "time", Kind: WallTime, Unit: Time, Width: 8})
}

func systemColumns(v bool) []Column {
	c := []Column{
		{Nick: "usr", Field: "usr_pct", Kind: Share, Unit: Percent, Key: "sys.cpu.user", Count: "sys.cpu.total"},
		{Nick: "sys", Field: "sys_pct", Kind: Share, Unit: Percent, Key: "sys.cpu.system", Count: "sys.cpu.total"},
		{Nick: "wait", Field: "wait_pct", Kind: Share, Unit: Percent, Key: "sys.cpu.iowait", Count: "sys.cpu.total"},
		byteGauge("used", "sys.mem.used"),
		byteGauge("dirty", "sys.mem.dirty"),
		{Nick: "wback", Field: "writeback_bytes", Kind: Gauge, Unit: Bytes, Key: "sys.mem.writeback"},
	}
	if v {
		c = append(c, byteGauge("cache", "sys.mem.cached"), byteGauge("free", "sys.mem.free"))
	}
	return c
}

func diskColumns(bool) []Column {
	return []Column{
		{Nick: "r/s", Field: "reads_per_s", Kind: Rate, Unit: Count, Key: "disk.reads"},
		{Nick: "w/s", Field: "writes_per_s", Kind: Rate, Unit: Count, Key: "disk.writes"},
		byteRate("read", "disk.read_bytes"),
		byteRate("write", "disk.write_bytes"),
		{Nick: "await", Field: "await_ms", Kind: Mean, Unit: Millis, Key: "disk.wait_ms", Count: "disk.ios"},
		{Nick: "util", Field: "util_pct", Kind: Rate, Unit: Percent, Key: "disk.busy_ms", Scale: 0.1},
	}
}

func nfsColumns(bool) []Column {
	return cols(
		[]Column{
			{Nick: "ops", Field: "ops_per_s", Kind: Rate, Unit: Count, Key: "nfs.ops"},
			byteRate("read", "nfs.read_bytes"),
			byteRate("write", "nfs.write_bytes"),
		},
		class("rd", "read"), class("wr", "write"), class("meta", "meta"))
}

func processColumns(v bool) []Column {
	c := []Column{
		{Nick: "cpu", Field: "cpu_pct", Kind: Rate, Unit: Percent, Key: "proc.cpu", Scale: 100},
		byteGauge("mem", "proc.rss"),
	}
	if v {
		c = append(c, Column{Nick: "thr", Field: "threads", Kind: Gauge, Unit: Count, Key: "proc.threads"})
	}
	return c
}

func fsbenchColumns(v bool) []Column {
	c := []Column{
		{Nick: "ops", Field: "ops_per_s", Kind: Rate, Unit: Count, Key: "fsbench.ops"},
		{Nick: "lat", Field: "lat_ms", Kind: Mean, Unit: Millis, Key: "fsbench.latency_ns", Count: "fsbench.ops", Scale: 1e-6},
		byteRate("read", "fsbench.read_bytes"),
		byteRate("write", "fsbench.write_bytes"),
		{Nick: "err", Field: "errors_per_s", Kind: Rate, Unit: Count, Key: "fsbench.errors"},
	}
	if v {
		c = append(c,
			Column{Nick: "runs", Field: "runs", Kind: Gauge, Unit: Count, Key: "fsbench.runs"},
			Column{Nick: "phase", Field: "phase", Kind: Text, Unit: String, Key: "fsbench.phase", Width: 10})
	}
	return c
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
