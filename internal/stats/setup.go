package stats

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/fsbench/fsbench/internal/juicefs"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/pkg/object"
)

// Options are what `fsbench stats` is asked to show.
type Options struct {
	// Mount is the mount to watch; nil for the system-wide view.
	Mount *sysio.Mount
	// Path is the path asked for (the fsbench section also shows runs
	// whose target is below it).
	Path       string
	Schema     string // schema letters; "" chooses from what applies
	Verbosity  int
	Interval   time.Duration
	Count      int
	MetricsURL string
	Metrics    []MetricSpec
	ProcRoot   string // "" means sysio.ProcRoot
	HTTPClient *http.Client
	Clock      Clock
	// Warn is told when a source fails and when it recovers.
	Warn func(format string, args ...any)
}

// Plan is a prepared view: its sources, sections and first sample, ready to
// run.
type Plan struct {
	Runner   *Runner
	Schema   string
	Warnings []string
}

// ScrapeTimeout bounds one scrape of a --metrics-url endpoint: the interval,
// and never more than this.
const ScrapeTimeout = 5 * time.Second

// Prepare chooses the sources and sections for opts and takes the first
// sample. It fails when the metrics endpoint cannot be read at all, or the
// schema is wrong.
func Prepare(ctx context.Context, opts Options) (*Plan, error) {
	root := opts.ProcRoot
	if root == "" {
		root = sysio.ProcRoot
	}
	if opts.Interval <= 0 {
		return nil, fmt.Errorf("interval must be positive")
	}
	plan := &Plan{}
	have := localSources(root, opts)
	prom, err := probeMetrics(ctx, opts, have, plan)
	if err != nil {
		return nil, err
	}
	schema := opts.Schema
	if schema == "" {
		schema = autoSchema(have, opts.Mount != nil && juicefs.IsJuiceFS(opts.Mount.FSType))
	}
	var xcols []Column
	if prom != nil {
		xcols = MetricColumns(opts.Metrics, prom.Types)
	}
	sections, err := ParseSchema(schema, opts.Verbosity, xcols)
	if err != nil {
		return nil, err
	}
	plan.Schema = schema
	r := &Runner{Sources: neededSources(sections, have, prom, plan), Sections: sections,
		Interval: opts.Interval, Count: opts.Count, Clock: opts.Clock, Warn: opts.Warn}
	// The first sample: errors now are warnings, like later ones.
	r.First = r.Collect(ctx)
	plan.Runner = r
	return plan, nil
}

// localSources are what the kernel and the mount offer, by section letter.
func localSources(root string, opts Options) map[byte]Source {
	m := opts.Mount
	isJFS := m != nil && juicefs.IsJuiceFS(m.FSType)
	have := map[byte]Source{}
	if isJFS {
		j := &JuiceFSSource{MountPoint: m.MountPoint}
		for _, l := range []byte("ufmcog") {
			have[l] = j
		}
	}
	if m != nil && (m.FSType == "fuse" || strings.HasPrefix(m.FSType, "fuse.")) {
		if p := fuseDaemon(root, m, isJFS); p != nil {
			have['p'] = p
		}
	}
	if m != nil && (m.FSType == "nfs" || m.FSType == "nfs4") {
		if n, err := NewNFSSource(root, m.MountPoint); err == nil {
			have['n'] = n
		}
	}
	switch {
	case m == nil:
		if d, err := NewDiskSource(root, 0, 0, true); err == nil {
			have['d'] = d
		}
	case m.Major != 0:
		if d, err := NewDiskSource(root, uint32(m.Major), uint32(m.Minor), false); err == nil {
			have['d'] = d
		}
	}
	if s, err := NewSystemSource(root); err == nil {
		have['s'] = s
	}
	fb := &FSBenchSource{}
	if m != nil {
		fb.Mount, fb.Path = m.MountPoint, opts.Path
	}
	have['b'] = fb
	return have
}

// fuseDaemon is the process source of the daemon that serves a FUSE
// mount, or nil when it cannot be found.
func fuseDaemon(root string, m *sysio.Mount, isJFS bool) Source {
	pid := 0
	if isJFS {
		pid = JuiceFSPID(m.MountPoint)
	}
	if pid == 0 {
		pid = FindFUSEDaemon(root, m.MountPoint)
	}
	if pid > 0 {
		if p, err := NewProcessSource(root, pid); err == nil {
			return p
		}
	}
	return nil
}

// probeMetrics scrapes the --metrics-url endpoint once, to learn what it
// offers, and adds it to have for the sections it can fill; nil without
// an endpoint.
func probeMetrics(ctx context.Context, opts Options, have map[byte]Source, plan *Plan) (*PromSource, error) {
	if opts.MetricsURL == "" {
		if len(opts.Metrics) > 0 {
			return nil, fmt.Errorf("--metric needs --metrics-url URL")
		}
		return nil, nil
	}
	timeout := min(opts.Interval, ScrapeTimeout)
	prom := &PromSource{URL: opts.MetricsURL, Client: opts.HTTPClient, Timeout: timeout, TimeoutIsInterval: timeout == opts.Interval, Specs: opts.Metrics}
	fams, err := prom.Scrape(ctx)
	if err != nil {
		return nil, err
	}
	probe := NewSample(time.Time{})
	Flatten(fams, probe)
	Translate(fams, probe)
	prom.Types = Select(fams, opts.Metrics, probe)
	for _, ms := range opts.Metrics {
		if _, ok := prom.Types[ms.Spec]; !ok {
			plan.Warnings = append(plan.Warnings, fmt.Sprintf("--metric %s: not (yet) exported by %s", ms.Spec, object.RedactURL(opts.MetricsURL)))
		}
	}
	for _, l := range []byte("ufmcogsd") {
		sec, _ := NewSection(l, 1, nil)
		if provides(sec, probe) {
			have[l] = prom
		}
	}
	if len(opts.Metrics) > 0 {
		have['x'] = prom
	}
	return prom, nil
}

// neededSources are the sources the sections need, each once, in a fixed
// order so that the endpoint's values replace local ones for the same
// names.
func neededSources(sections []*Section, have map[byte]Source, prom *PromSource, plan *Plan) []Source {
	need := map[Source]bool{}
	for _, s := range sections {
		if s.Letter == 't' {
			continue
		}
		src, ok := have[s.Letter]
		if !ok {
			plan.Warnings = append(plan.Warnings, fmt.Sprintf("section %s (%c) has no source here: shown as -", s.Name, s.Letter))
			continue
		}
		need[src] = true
	}
	var ordered []Source
	for _, l := range []byte("ufmcogpndsbx") {
		if src, ok := have[l]; ok && need[src] && (prom == nil || src != Source(prom)) {
			ordered = append(ordered, src)
			delete(need, src)
		}
	}
	if prom != nil && need[prom] {
		ordered = append(ordered, prom)
	}
	return ordered
}

// provides reports whether a sample holds any value a section reads.
func provides(s *Section, sm *Sample) bool {
	for _, c := range s.Columns {
		if c.Kind == WallTime || c.Kind == Text {
			continue
		}
		if _, ok := sm.Values[c.Key]; ok {
			return true
		}
	}
	return false
}

// autoSchema shows every section that has a source, in a fixed order:
// JuiceFS's own ufmco first, as `juicefs stats` shows them.
func autoSchema(have map[byte]Source, isJFS bool) string {
	var b strings.Builder
	for _, l := range []byte("ufmcopndsbx") {
		if _, ok := have[l]; !ok {
			continue
		}
		if l == 'p' && isJFS {
			continue // the usage section already shows the client's CPU and memory
		}
		b.WriteByte(l)
	}
	return b.String()
}
