package stats

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fsbench/fsbench/pkg/object"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Families are parsed Prometheus metric families by name.
type Families map[string]*dto.MetricFamily

// ParseProm parses the Prometheus text exposition format. Malformed text
// is an error: expfmt's parser panics on some (a line "{}" with no metric
// name, in v0.63.0), and that panic comes back as an error too, so a bad
// metrics endpoint cannot stop fsbench.
func ParseProm(r io.Reader) (fams Families, err error) {
	defer func() {
		if v := recover(); v != nil {
			fams, err = nil, fmt.Errorf("parse Prometheus text: malformed input (%v)", v)
		}
	}()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err = p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parse Prometheus text: %w", err)
	}
	return fams, nil
}

// ignoredLabels are left out of flat names: JuiceFS's constant labels and
// the ones a Prometheus server adds.
var ignoredLabels = map[string]bool{"mp": true, "vol_name": true, "instance": true, "job": true}

// Flatten turns families into flat names in the manner of JuiceFS's .stats
// file: the values of the labels are appended to the name with "_"
// (juicefs_object_request_data_bytes{method="GET"} becomes
// juicefs_object_request_data_bytes_GET); a histogram or summary becomes
// NAME_total (its count) and NAME_sum. Series that end up with the same
// name (the same metric of two mount points) are added up.
func Flatten(fams Families, sm *Sample) {
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			key := name
			for _, lp := range m.GetLabel() {
				if !ignoredLabels[lp.GetName()] {
					key += "_" + lp.GetValue()
				}
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				sm.Add(key, m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				sm.Add(key, m.GetGauge().GetValue())
			case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
				h := m.GetHistogram()
				sm.Add(key+"_total", float64(h.GetSampleCount()))
				sm.Add(key+"_sum", h.GetSampleSum())
			case dto.MetricType_SUMMARY:
				s := m.GetSummary()
				sm.Add(key+"_total", float64(s.GetSampleCount()))
				sm.Add(key+"_sum", s.GetSampleSum())
			default:
				sm.Add(key, m.GetUntyped().GetValue())
			}
		}
	}
}

// value is the number of a counter, gauge or untyped series.
func value(t dto.MetricType, m *dto.Metric) float64 {
	switch t {
	case dto.MetricType_COUNTER:
		return m.GetCounter().GetValue()
	case dto.MetricType_GAUGE:
		return m.GetGauge().GetValue()
	}
	return m.GetUntyped().GetValue()
}

func label(m *dto.Metric, name string) string {
	for _, lp := range m.GetLabel() {
		if lp.GetName() == name {
			return lp.GetValue()
		}
	}
	return ""
}

// sumBy adds up the series of a family into keys chosen by fn ("" skips).
func sumBy(fams Families, name string, sm *Sample, fn func(m *dto.Metric) string) bool {
	f, ok := fams[name]
	if !ok {
		return false
	}
	for _, m := range f.GetMetric() {
		if k := fn(m); k != "" {
			sm.Add(k, value(f.GetType(), m))
		}
	}
	return true
}

// Translate maps the metrics of known exporters onto the names the
// sections read: node_exporter's CPU, memory and disks onto the system and
// disk sections, MinIO's traffic and process onto usage and object.
func Translate(fams Families, sm *Sample) {
	translateNodeCPU(fams, sm)
	translateNodeMemory(fams, sm)
	translateNodeDisks(fams, sm)
	translateMinIO(fams, sm)
}

// translateNodeCPU maps node_exporter's CPU modes onto the system
// section's shares.
func translateNodeCPU(fams Families, sm *Sample) {
	cpu := func(m *dto.Metric) string {
		switch label(m, "mode") {
		case "user", "nice":
			return "sys.cpu.user"
		case "system", "irq", "softirq":
			return "sys.cpu.system"
		case "iowait":
			return "sys.cpu.iowait"
		case "idle":
			return "sys.cpu.idle"
		case "steal":
			return "sys.cpu.steal"
		}
		return ""
	}
	if sumBy(fams, "node_cpu_seconds_total", sm, cpu) {
		sumBy(fams, "node_cpu_seconds_total", sm, func(m *dto.Metric) string {
			if cpu(m) != "" {
				return "sys.cpu.total"
			}
			return ""
		})
	}
}

// translateNodeMemory maps node_exporter's memory onto the system section.
func translateNodeMemory(fams Families, sm *Sample) {
	renameAll(fams, sm, map[string]string{
		"node_memory_MemTotal_bytes":  "sys.mem.total",
		"node_memory_MemFree_bytes":   "sys.mem.free",
		"node_memory_Cached_bytes":    "sys.mem.cached",
		"node_memory_Dirty_bytes":     "sys.mem.dirty",
		"node_memory_Writeback_bytes": "sys.mem.writeback",
	})
	if t, ok := sm.Values["sys.mem.total"]; ok {
		if f, ok := fams["node_memory_MemAvailable_bytes"]; ok && len(f.GetMetric()) > 0 {
			sm.Set("sys.mem.used", t-value(f.GetType(), f.GetMetric()[0]))
		}
	}
}

// translateNodeDisks sums node_exporter's whole disks into the disk
// section.
func translateNodeDisks(fams Families, sm *Sample) {
	for _, d := range []struct {
		from, to string
		scale    float64
	}{
		{"node_disk_reads_completed_total", "disk.reads", 1},
		{"node_disk_writes_completed_total", "disk.writes", 1},
		{"node_disk_read_bytes_total", "disk.read_bytes", 1},
		{"node_disk_written_bytes_total", "disk.write_bytes", 1},
		{"node_disk_read_time_seconds_total", "disk.wait_ms", 1000},
		{"node_disk_write_time_seconds_total", "disk.wait_ms", 1000},
		{"node_disk_io_time_seconds_total", "disk.busy_ms", 1000},
		{"node_disk_reads_completed_total", "disk.ios", 1},
		{"node_disk_writes_completed_total", "disk.ios", 1},
	} {
		f, ok := fams[d.from]
		if !ok {
			continue
		}
		for _, m := range f.GetMetric() {
			if dev := label(m, "device"); dev != "" && WholeDisk(dev) {
				sm.Add(d.to, value(f.GetType(), m)*d.scale)
			}
		}
	}
}

// translateMinIO maps MinIO's traffic and process (metrics v2) onto the
// usage, object and go sections, only where JuiceFS's own names are
// absent.
func translateMinIO(fams Families, sm *Sample) {
	names := map[string]string{
		"minio_s3_traffic_sent_bytes":              "juicefs_object_request_data_bytes_GET",
		"minio_s3_traffic_received_bytes":          "juicefs_object_request_data_bytes_PUT",
		"minio_node_process_cpu_total_seconds":     "juicefs_cpu_usage",
		"minio_node_process_resident_memory_bytes": "juicefs_memory",
	}
	if _, ok := fams["minio_s3_traffic_sent_bytes"]; ok {
		// The Go runtime's families are MinIO's only on MinIO's endpoint.
		names["go_memstats_alloc_bytes"] = "juicefs_go_memstats_alloc_bytes"
		names["go_memstats_sys_bytes"] = "juicefs_go_memstats_sys_bytes"
	}
	renameAll(fams, sm, absent(sm, names))
}

// renameAll sums each family of names into its new name.
func renameAll(fams Families, sm *Sample, names map[string]string) {
	for from, to := range names {
		sumBy(fams, from, sm, func(*dto.Metric) string { return to })
	}
}

// absent is the part of names whose new names the sample does not hold.
func absent(sm *Sample, names map[string]string) map[string]string {
	out := map[string]string{}
	for from, to := range names {
		if _, ok := sm.Values[to]; !ok {
			out[from] = to
		}
	}
	return out
}

// MetricSpec is one --metric: [NICK=]NAME[{label="value",...}].
type MetricSpec struct {
	Spec   string // as given, without the nick
	Nick   string
	Name   string
	Labels map[string]string
}

// ParseMetricSpec parses a --metric value.
func ParseMetricSpec(s string) (MetricSpec, error) {
	ms := MetricSpec{Labels: map[string]string{}}
	rest := strings.TrimSpace(s)
	if nick, name, ok := strings.Cut(rest, "="); ok && !strings.Contains(nick, "{") {
		ms.Nick, rest = strings.TrimSpace(nick), strings.TrimSpace(name)
		if ms.Nick == "" || len(ms.Nick) > 5 {
			return ms, fmt.Errorf("--metric %q: the nick before = must be 1 to 5 characters", s)
		}
	}
	ms.Spec = rest
	name, sel, hasSel := strings.Cut(rest, "{")
	ms.Name = strings.TrimSpace(name)
	if ms.Name == "" || !model.IsValidMetricName(model.LabelValue(ms.Name)) {
		return ms, fmt.Errorf("--metric %q: %q is not a metric name", s, ms.Name)
	}
	if hasSel {
		sel, ok := strings.CutSuffix(strings.TrimSpace(sel), "}")
		if !ok {
			return ms, fmt.Errorf("--metric %q: missing }", s)
		}
		for _, part := range splitLabels(sel) {
			if part == "" {
				continue
			}
			k, v, ok := strings.Cut(part, "=")
			if !ok {
				return ms, fmt.Errorf("--metric %q: want label=\"value\", got %q", s, part)
			}
			uq, err := strconv.Unquote(strings.TrimSpace(v))
			if err != nil {
				uq = strings.TrimSpace(v)
			}
			ms.Labels[strings.TrimSpace(k)] = uq
		}
	}
	if ms.Nick == "" {
		ms.Nick = defaultNick(ms.Name)
	}
	return ms, nil
}

// splitLabels splits a label selector on commas outside quotes.
func splitLabels(s string) []string {
	var out []string
	var cur strings.Builder
	quoted, esc := false, false
	for _, r := range s {
		switch {
		case esc:
			esc = false
		case r == '\\':
			esc = true
		case r == '"':
			quoted = !quoted
		case r == ',' && !quoted:
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
			continue
		}
		cur.WriteRune(r)
	}
	return append(out, strings.TrimSpace(cur.String()))
}

// defaultNick picks the most telling word of a metric name: the last one
// that is not a unit or a suffix.
func defaultNick(name string) string {
	words := strings.Split(name, "_")
	for i := len(words) - 1; i >= 0; i-- {
		switch w := words[i]; w {
		case "", "total", "bytes", "seconds", "count", "sum", "ratio", "histogram", "durations", "info":
			continue
		default:
			if len(w) > 5 {
				w = w[:5]
			}
			return w
		}
	}
	if len(name) > 5 {
		return name[:5]
	}
	return name
}

func (ms MetricSpec) matches(m *dto.Metric) bool {
	for k, v := range ms.Labels {
		if label(m, k) != v {
			return false
		}
	}
	return true
}

func (ms MetricSpec) key() string { return "metric:" + ms.Spec }

// Select adds the series of fams matching each spec into metric:SPEC
// (metric:SPEC_total and metric:SPEC_sum for histograms and summaries) and
// returns the type of each spec's family (absent when not found).
func Select(fams Families, specs []MetricSpec, sm *Sample) map[string]dto.MetricType {
	types := map[string]dto.MetricType{}
	for _, ms := range specs {
		f, ok := fams[ms.Name]
		if !ok {
			continue
		}
		types[ms.Spec] = f.GetType()
		k := ms.key()
		for _, m := range f.GetMetric() {
			if !ms.matches(m) {
				continue
			}
			switch f.GetType() {
			case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
				sm.Add(k+"_total", float64(m.GetHistogram().GetSampleCount()))
				sm.Add(k+"_sum", m.GetHistogram().GetSampleSum())
			case dto.MetricType_SUMMARY:
				sm.Add(k+"_total", float64(m.GetSummary().GetSampleCount()))
				sm.Add(k+"_sum", m.GetSummary().GetSampleSum())
			default:
				sm.Add(k, value(f.GetType(), m))
			}
		}
	}
	return types
}

// MetricColumns are the columns of the x section for specs whose family
// types are known (from a first scrape); a spec not seen yet is taken for
// a counter when its name ends in _total, a gauge otherwise.
func MetricColumns(specs []MetricSpec, types map[string]dto.MetricType) []Column {
	var out []Column
	used := map[string]int{}
	for _, ms := range specs {
		nick := ms.Nick
		if n := used[nick]; n > 0 && len(nick) < 5 {
			nick += strconv.Itoa(n)
		}
		used[ms.Nick]++
		unit := Count
		if strings.Contains(ms.Name, "bytes") {
			unit = Bytes
		}
		field := sanitizeField(ms.Spec)
		t, known := types[ms.Spec]
		if !known {
			t = dto.MetricType_GAUGE
			if strings.HasSuffix(ms.Name, "_total") {
				t = dto.MetricType_COUNTER
			}
		}
		k := ms.key()
		switch t {
		case dto.MetricType_COUNTER:
			out = append(out, Column{Nick: nick, Field: field + "_per_s", Kind: Rate, Unit: unit, Key: k})
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM, dto.MetricType_SUMMARY:
			out = append(out, Column{Nick: nick, Field: field + "_per_s", Kind: Rate, Unit: Count, Key: k + "_total"})
			if strings.Contains(ms.Name, "seconds") {
				out = append(out, Column{Nick: "lat", Field: field + "_mean_ms", Kind: Mean, Unit: Millis, Key: k + "_sum", Count: k + "_total", Scale: 1000})
			} else {
				out = append(out, Column{Nick: "avg", Field: field + "_mean", Kind: Mean, Unit: unit, Key: k + "_sum", Count: k + "_total"})
			}
		default:
			out = append(out, Column{Nick: nick, Field: field, Kind: Gauge, Unit: unit, Key: k})
		}
	}
	return out
}

func sanitizeField(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == ':':
			b.WriteRune(r)
		case r == '{' || r == ',' || r == '=':
			b.WriteByte('_')
		}
	}
	return strings.Trim(b.String(), "_")
}

// PromSource scrapes a Prometheus endpoint.
type PromSource struct {
	URL     string
	Client  *http.Client
	Timeout time.Duration // of one scrape, bounded by the interval
	// TimeoutIsInterval says that Timeout is --interval, which the
	// message of a scrape that runs out of time then names.
	TimeoutIsInterval bool
	Specs             []MetricSpec
	Types             map[string]dto.MetricType // of the specs, from the last scrape
}

// MaxScrapeBytes bounds what is read of one scrape.
const MaxScrapeBytes = 64 << 20

// Name implements Source.
func (p *PromSource) Name() string { return "metrics" }

// Collect implements Source.
func (p *PromSource) Collect(ctx context.Context, sm *Sample) error {
	fams, err := p.Scrape(ctx)
	if err != nil {
		return err
	}
	Flatten(fams, sm)
	Translate(fams, sm)
	types := Select(fams, p.Specs, sm)
	if p.Types == nil {
		p.Types = types
	}
	return nil
}

// Scrape fetches and parses the endpoint once.
func (p *PromSource) Scrape(ctx context.Context) (Families, error) {
	if p.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, p.Timeout, &scrapeTimeout{p.Timeout, p.TimeoutIsInterval})
		defer cancel()
	}
	shown := object.RedactURL(p.URL)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("metrics %s: %w", shown, err)
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=1,*/*;q=0.1")
	c := p.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	var st *scrapeTimeout
	if err != nil && errors.As(context.Cause(ctx), &st) {
		return nil, fmt.Errorf("metrics %s: %w", shown, st) // not just "context deadline exceeded"
	}
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text holds the URL, user name and all
		}
		return nil, fmt.Errorf("metrics %s: %w", shown, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("metrics %s: %s", shown, resp.Status)
	}
	fams, err := ParseProm(io.LimitReader(resp.Body, MaxScrapeBytes))
	if err != nil {
		return nil, fmt.Errorf("metrics %s: %w", shown, err)
	}
	return fams, nil
}

// scrapeTimeout is the end of a scrape that took longer than its timeout.
type scrapeTimeout struct {
	d          time.Duration
	isInterval bool
}

func (e *scrapeTimeout) Error() string {
	if e.isInterval {
		return fmt.Sprintf("no answer within %v, the scrape timeout, which is --interval (a longer --interval gives the endpoint more time)", e.d)
	}
	return fmt.Sprintf("no answer within %v, the scrape timeout", e.d)
}

func (e *scrapeTimeout) Unwrap() error { return context.DeadlineExceeded }

// Names lists the metric families of a scrape, sorted, for error messages.
func (f Families) Names() []string {
	out := make([]string, 0, len(f))
	for n := range f {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
