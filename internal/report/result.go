// Package report holds the result model of an fsbench run and its renderers
// (table, JSON, CSV). Every command fills one Result; how it is shown is the
// renderers' business alone.
//
// It measures nothing and does no I/O but writing to the writer it is given.
package report

import (
	"encoding/json"
	"time"

	"github.com/fsbench/fsbench/internal/metrics"
)

// SchemaVersion is the version of the JSON result layout. It changes only
// when a field is removed or changes meaning; adding fields keeps it.
// Version 2 keeps each phase's latency histogram and the hosts of a run
// on many hosts; version 3 keeps every run of a repeated benchmark
// (--repeat) and each phase's spread over them. Results of versions 1 and
// 2 are still read (version 1 without histograms).
const SchemaVersion = 3

// Result describes one run of a benchmark command.
type Result struct {
	SchemaVersion int    `json:"schema_version"`
	Tool          string `json:"tool"`
	Version       string `json:"version"`
	Command       string `json:"command"`
	// CommandLine is the command as typed, with secrets removed.
	CommandLine string    `json:"command_line,omitempty"`
	StartedAt   time.Time `json:"started_at"`
	Host        Host      `json:"host"`
	// Hosts are the agents of a run on many hosts (--hosts), in the order
	// of the host list; Host is then the coordinator's machine.
	Hosts      []AgentHost `json:"hosts,omitempty"`
	Target     Target      `json:"target"`
	Parameters Params      `json:"parameters"`
	// Threads is how many threads (bench, objbench), accelerators (train)
	// or ranks (checkpoint, io500) measured the phases, on each host: the
	// workers a cost per file or object is counted over. Read it with
	// ThreadCount, which also reads results of older versions.
	Threads int `json:"threads,omitempty"`
	// CacheDrop says how kernel caches were dropped before read phases:
	// "drop_caches" (all caches, as root), "fadvise" (only our files' pages),
	// "none" (--drop-caches never or SKIP_DROP_CACHES), or "" when not applicable.
	CacheDrop    string        `json:"cache_drop,omitempty"`
	Checks       []Check       `json:"checks,omitempty"`
	Phases       []PhaseResult `json:"phases"`
	Internal     *Internal     `json:"internal,omitempty"`
	Expectations []Expectation `json:"expectations,omitempty"`
	Usage        Usage         `json:"usage"`
	Interrupted  bool          `json:"interrupted,omitempty"`
	// Error is set when the run failed (exit code 1): what failed, in one
	// line. The figures are those measured before the failure.
	Error    string   `json:"error,omitempty"`
	Warnings []string `json:"warnings,omitempty"`

	// Training is set by fsbench train: the accelerators' utilisation.
	Training *Training `json:"training,omitempty"`
	// Replay is set by fsbench replay: the recording beside the replay.
	Replay *Replay `json:"replay,omitempty"`
	// IO500 is set by fsbench io500: the scores of its phases.
	IO500 *IO500 `json:"io500,omitempty"`
	// Capacity is set by --slo and --curve: the rates run and the highest
	// one that met the latency objective.
	Capacity *Capacity `json:"capacity,omitempty"`

	// Runs are the runs of a benchmark repeated with --repeat N (N > 1),
	// each with its own figures and histograms, in the order they ran.
	// Phases and Training are then the summary of the runs (see Spread),
	// computed from them and never stored instead of them.
	Runs []Run `json:"runs,omitempty"`
}

// Run is one run of a repeated benchmark: the whole benchmark, with the
// figures it measured as a result of one run holds them.
type Run struct {
	Index       int           `json:"index"` // 1 for the first run
	StartedAt   time.Time     `json:"started_at"`
	Seconds     float64       `json:"seconds"`
	Load        float64       `json:"load,omitempty"` // the host's 1-minute load average at the run's end
	Phases      []PhaseResult `json:"phases"`
	Training    *Training     `json:"training,omitempty"`
	Interrupted bool          `json:"interrupted,omitempty"`
	Error       string        `json:"error,omitempty"`
}

// Spread is how a phase's VALUE varied over the runs of a repeated
// benchmark. The phase's Value is their median.
type Spread struct {
	Runs   int       `json:"runs"`
	Values []float64 `json:"values"` // each run's VALUE, in run order
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	// Low and High bound the median with the stated Confidence, without
	// assuming a distribution; nil when the runs are too few for that
	// (six at 95%).
	Low        *float64 `json:"low,omitempty"`
	High       *float64 `json:"high,omitempty"`
	Confidence float64  `json:"confidence"`
}

// Host is the machine that ran fsbench.
type Host struct {
	Name   string `json:"name"`
	OS     string `json:"os"`
	Arch   string `json:"arch"`
	Kernel string `json:"kernel,omitempty"`
	CPUs   int    `json:"cpus"`
	// Load is the machine's 1-minute load average when the run ended (0:
	// unknown), so that two results can say whether one ran on a busier
	// machine.
	Load float64 `json:"load,omitempty"`
}

// AgentHost is one agent of a run on many hosts.
type AgentHost struct {
	Address string `json:"address"` // as given to --hosts
	Host
	Version string `json:"version"`
	// Journal is, with --journal, the journal file the host wrote its
	// writes in, on that host (FILE.host-N).
	Journal string `json:"journal,omitempty"`
}

// Target is what was measured.
type Target struct {
	Path         string `json:"path,omitempty"`
	URL          string `json:"url,omitempty"` // object store URL, credentials removed
	Storage      string `json:"storage,omitempty"`
	FSType       string `json:"fs_type,omitempty"`
	MountPoint   string `json:"mount_point,omitempty"`
	MountSource  string `json:"mount_source,omitempty"`
	MountOptions string `json:"mount_options,omitempty"`
}

// Usage is what the fsbench process itself consumed.
type Usage struct {
	Seconds      float64 `json:"seconds"`
	CPUPercent   float64 `json:"cpu_percent"`
	PeakRSSBytes int64   `json:"peak_rss_bytes"`
}

// Grade rates a value against the thresholds of its item.
type Grade string

// Grades, shown as green, yellow and red on a terminal.
const (
	Good Grade = "good"
	Fair Grade = "fair"
	Poor Grade = "poor"
)

// Measure is a number with its unit, e.g. 98.9 MiB/s or 2.17 ms/file.
type Measure struct {
	Value float64 `json:"value"`
	Unit  Unit    `json:"unit"`
	Grade Grade   `json:"grade,omitempty"`
}

// PhaseResult is the measurement of one phase (bench) or item (objbench).
type PhaseResult struct {
	// Name is the stable metric name used by --expect and compare,
	// e.g. "write-big"; Title is what the table shows ("Write big file").
	Name  string `json:"name"`
	Title string `json:"title"`
	// Ops counts timed operations (the latency samples); Items counts the
	// files or objects completed. For a big-file write, an op is one block.
	Ops       int64 `json:"ops"`
	Items     int64 `json:"items"`
	Bytes     int64 `json:"bytes"`
	Errors    int64 `json:"errors"`
	Throttled int64 `json:"throttled,omitempty"`
	// Missed counts the operations an open-loop phase (a fixed rate)
	// scheduled before the end of its duration and never began, because
	// the target did not keep up with the rate.
	Missed  int64   `json:"missed,omitempty"`
	Seconds float64 `json:"seconds"`
	// Throughput, derived from the counters above and Seconds.
	BytesPerSec float64 `json:"bytes_per_sec"`
	OpsPerSec   float64 `json:"ops_per_sec"`
	ItemsPerSec float64 `json:"items_per_sec"`
	// Value and Cost are the two figures of the ITEM | VALUE | COST table.
	Value Measure `json:"value"`
	Cost  Measure `json:"cost"`
	// LatencyOf names what one latency sample times, e.g. "1 MiB write".
	LatencyOf string          `json:"latency_of"`
	Latency   metrics.Summary `json:"latency"`
	// Histogram is the latency histogram behind Latency, in HdrHistogram's
	// standard encoded form (V2 compressed, base64, values in ns): results
	// of many runs or hosts merge exactly from it.
	Histogram string `json:"histogram,omitempty"`
	// TTFB is the time to first byte of downloads, where measured.
	TTFB          *metrics.Summary `json:"ttfb,omitempty"`
	TTFBHistogram string           `json:"ttfb_histogram,omitempty"`
	// ServiceTime is set for open-loop phases (a fixed rate), where
	// Latency is the response time, counted from each operation's
	// scheduled start, and this the service time, from its actual start.
	ServiceTime      *metrics.Summary `json:"service_time,omitempty"`
	ServiceHistogram string           `json:"service_histogram,omitempty"`
	// Incomplete is set when the phase was interrupted or failed midway.
	Incomplete   bool     `json:"incomplete,omitempty"`
	ErrorSamples []string `json:"error_samples,omitempty"`
	Series       []Sample `json:"series,omitempty"`
	// Access is how the phase's random picks of files, blocks or objects
	// fell, when they were drawn from a distribution (--distribution).
	Access []Access `json:"access,omitempty"`

	// The fields below are set for a run on many hosts: the phase's figures
	// above are then the aggregate, over the time from the first host's
	// start to the last host's end.
	Hosts []HostPhase `json:"hosts,omitempty"`
	// StartSkew is the spread of the hosts' actual start times, seconds.
	StartSkew float64 `json:"start_skew_s,omitempty"`
	// Stonewall is the aggregate rate while every host was still running
	// (until the first host finished), so one slow host shows.
	Stonewall *Stonewall `json:"stonewall,omitempty"`

	// Ranks are the ranks of a checkpoint phase, one row each.
	Ranks []RankPhase `json:"ranks,omitempty"`
	// Endpoints is each endpoint's share of a phase run against several
	// endpoints of one object store (objbench --endpoints).
	Endpoints []EndpointRow `json:"endpoints,omitempty"`

	// Spread is set on the summary of a repeated benchmark (--repeat):
	// how the phase's VALUE varied over the runs. Ops, Items, Bytes and
	// Errors are then totals over the runs, Seconds, the rates, Value and
	// Cost medians, and Latency the percentiles of every run's samples.
	Spread *Spread `json:"spread,omitempty"`

	// Origin is set on read phases: how much of what they read reached
	// the storage under test, and what the caches held.
	Origin *Origin `json:"origin,omitempty"`
}

// RankPhase is one rank's part of a checkpoint phase: the shard it wrote
// or read back, and how long that took it, from opening the shard to
// closing it (after fsync, for a write).
type RankPhase struct {
	Rank        int     `json:"rank"`
	Shard       int     `json:"shard"`          // the rank that wrote the shard
	Host        string  `json:"host,omitempty"` // on many hosts: the rank's host
	Bytes       int64   `json:"bytes"`
	Seconds     float64 `json:"seconds"`
	BytesPerSec float64 `json:"bytes_per_sec"`
	Errors      int64   `json:"errors,omitempty"`
	Incomplete  bool    `json:"incomplete,omitempty"`
}

// EndpointRow is what one endpoint of an object store served in a phase:
// its requests (a multipart upload or a versioned cycle makes several),
// their bytes, failures and mean time.
type EndpointRow struct {
	Endpoint       string  `json:"endpoint"`
	Requests       int64   `json:"requests"`
	Bytes          int64   `json:"bytes"`
	Errors         int64   `json:"errors"`
	Seconds        float64 `json:"seconds"`
	BytesPerSec    float64 `json:"bytes_per_sec"`
	RequestsPerSec float64 `json:"requests_per_sec"`
	MeanMs         float64 `json:"mean_ms"`
}

// HostPhase is one host's share of a phase on many hosts.
type HostPhase struct {
	Address     string          `json:"address"`
	Ops         int64           `json:"ops"`
	Items       int64           `json:"items"`
	Bytes       int64           `json:"bytes"`
	Errors      int64           `json:"errors"`
	Seconds     float64         `json:"seconds"`
	StartOffset float64         `json:"start_offset_s"` // its start after the first host's, seconds
	BytesPerSec float64         `json:"bytes_per_sec"`
	OpsPerSec   float64         `json:"ops_per_sec"`
	Latency     metrics.Summary `json:"latency"`
	Histogram   string          `json:"histogram,omitempty"`
	Incomplete  bool            `json:"incomplete,omitempty"`
	Error       string          `json:"error,omitempty"`
}

// Stonewall is a phase's aggregate rate up to the end of its first host.
type Stonewall struct {
	Seconds     float64 `json:"seconds"`
	Ops         int64   `json:"ops"`
	Bytes       int64   `json:"bytes"`
	BytesPerSec float64 `json:"bytes_per_sec"`
	OpsPerSec   float64 `json:"ops_per_sec"`
}

// Sample is one interval of a phase's time series.
type Sample struct {
	Start       float64         `json:"start_s"` // seconds since the phase began
	Seconds     float64         `json:"seconds"`
	Ops         int64           `json:"ops"`
	Bytes       int64           `json:"bytes"`
	Errors      int64           `json:"errors"`
	OpsPerSec   float64         `json:"ops_per_sec"`
	BytesPerSec float64         `json:"bytes_per_sec"`
	Latency     metrics.Summary `json:"latency"`
}

// Check is one functional check of an object store.
type Check struct {
	Category string `json:"category"`
	Name     string `json:"name"`
	// Status is one of "pass", "failed", "warning", "not support".
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// Check statuses.
const (
	CheckPass       = "pass"
	CheckFailed     = "failed"
	CheckWarning    = "warning"
	CheckNotSupport = "not support"
)

// Internal holds what the storage client itself reported during the run
// (for JuiceFS, the deltas of its .stats file).
type Internal struct {
	Source string        `json:"source"`
	Rows   []InternalRow `json:"rows"`
	// ClientCPUPercent and ClientMemoryBytes describe the storage client
	// process; nil when unknown.
	ClientCPUPercent  *float64 `json:"client_cpu_percent"`
	ClientMemoryBytes *int64   `json:"client_memory_bytes"`
}

// InternalRow is one internal counter over the run: a count of operations
// and their mean latency. Unknown is set when the counter went backwards
// (the client restarted), in which case Count and AvgMs are not meaningful.
type InternalRow struct {
	Name    string  `json:"name"`
	Count   int64   `json:"count"`
	AvgMs   float64 `json:"avg_ms"`
	Unknown bool    `json:"unknown,omitempty"`
	Grade   Grade   `json:"grade,omitempty"`
}

// Expectation is one --expect clause and its outcome.
type Expectation struct {
	Expr     string  `json:"expr"`
	Metric   string  `json:"metric"`
	Op       string  `json:"op"`
	Want     float64 `json:"want"`
	Unit     string  `json:"unit"`
	Measured float64 `json:"measured"`
	// Pass is false only when the expectation failed: a run too short to
	// judge it does not fail, as its exit code does not. Verdict tells
	// the three outcomes apart.
	Pass bool `json:"pass"`
	// Verdict is VerdictPass, VerdictFail or VerdictTooShort; empty in
	// results of older versions (then Pass decides, see Outcome).
	Verdict string `json:"verdict,omitempty"`
	// Reason says why it failed, or what would make it judgeable.
	Reason string `json:"reason,omitempty"`
}

// The verdicts of an expectation and of train's AU.
const (
	VerdictPass = "pass"
	VerdictFail = "fail"
	// VerdictTooShort is given when the run holds too few samples, steps
	// or runs to tell whether the figure meets its bound.
	VerdictTooShort = "too short to judge"
)

// Outcome is the expectation's verdict, also for results written before
// verdicts existed.
func (e Expectation) Outcome() string {
	switch {
	case e.Verdict != "":
		return e.Verdict
	case e.Pass:
		return VerdictPass
	}
	return VerdictFail
}

// ThreadCount is how many threads measured r's phases on its host (see
// Threads). A result of an older version keeps it only as the parameter
// "threads", read from JSON as a number; without either it is 1.
func (r *Result) ThreadCount() int {
	if r.Threads > 0 {
		return r.Threads
	}
	switch v := r.Parameters.Get("threads").(type) {
	case int:
		return max(v, 1)
	case json.Number:
		if n, err := v.Int64(); err == nil && n > 0 {
			return int(n)
		}
	case float64:
		return max(int(v), 1)
	}
	return 1
}

// FindPhase returns the phase with the given name, or nil.
func (r *Result) FindPhase(name string) *PhaseResult {
	for i := range r.Phases {
		if r.Phases[i].Name == name {
			return &r.Phases[i]
		}
	}
	return nil
}

// FindPhase returns the run's phase of that name, or nil.
func (r *Run) FindPhase(name string) *PhaseResult {
	for i := range r.Phases {
		if r.Phases[i].Name == name {
			return &r.Phases[i]
		}
	}
	return nil
}

// TotalErrors adds the errors of all phases.
func (r *Result) TotalErrors() int64 {
	var n int64
	for _, p := range r.Phases {
		n += p.Errors
	}
	return n
}

// Replay is set by fsbench replay: what was replayed of a recorded log,
// per type of operation beside the recording, and what was not.
type Replay struct {
	Log    string `json:"log"`
	Format string `json:"format"` // juicefs, fsbench or strace
	// Streams are the recorded processes or threads, each replayed in
	// its recorded order by a worker of its own.
	Streams int `json:"streams"`
	// Speed is the pace: 0 as fast as possible, 1 as recorded, 2 twice
	// as fast.
	Speed float64 `json:"speed"`
	// RecordedSeconds is the recording's span, from its first operation's
	// start to its last one's end; Seconds is the replay's; Speedup is
	// RecordedSeconds over Seconds (above 1: faster here).
	RecordedSeconds float64 `json:"recorded_seconds"`
	Seconds         float64 `json:"seconds"`
	Speedup         float64 `json:"speedup"`
	// Prepared counts the files and directories the recording used without
	// creating them, made before the replay (or, inside a directory the
	// recording created, just before their first use), untimed.
	Prepared int `json:"prepared"`
	// Emptied counts the directories the recording removed while, in the
	// log, they still held entries (the log lost their removal): emptied,
	// untimed, before their rmdir.
	Emptied int `json:"emptied,omitempty"`
	// Ops is each type of operation, in the order the log first shows it.
	Ops []ReplayOp `json:"ops"`
	// Differed are the distinct outcomes that differed from the
	// recording's (a write that failed here with no space left, where it
	// succeeded there), each with how many operations had it.
	Differed []ErrorCount `json:"differed,omitempty"`
	// Lines read, and those not replayed: blank or keep-alive lines,
	// malformed lines, operations on JuiceFS's virtual files (.stats,
	// .accesslog, .config: the client's own, not the workload's), and
	// operations the replay does not perform, per operation.
	Lines       int64     `json:"lines"`
	Blank       int64     `json:"blank"`
	Malformed   int64     `json:"malformed"`
	Virtual     int64     `json:"virtual"`
	Unsupported []OpCount `json:"unsupported,omitempty"`
}

// ReplayOp is one type of operation of a replay: the replay's figures
// beside the recording's.
type ReplayOp struct {
	Op string `json:"op"`
	// Ops and Bytes count the successful operations; Failed those that
	// failed as recorded (a lookup of a missing name); Errors those whose
	// outcome differed from the recording's, and the failures to make,
	// untimed, what one used first or to empty a directory before its
	// rmdir.
	Ops     int64           `json:"ops"`
	Bytes   int64           `json:"bytes"`
	Failed  int64           `json:"failed"`
	Errors  int64           `json:"errors"`
	Latency metrics.Summary `json:"latency"`
	// Recorded is what the log says of the same operations.
	Recorded RecordedOps `json:"recorded"`
}

// RecordedOps are a log's figures for one type of operation.
type RecordedOps struct {
	Ops     int64           `json:"ops"`
	Bytes   int64           `json:"bytes"`
	Failed  int64           `json:"failed"`
	Latency metrics.Summary `json:"latency"`
}

// ErrorCount is one error and how many times it occurred.
type ErrorCount struct {
	Error string `json:"error"`
	Count int64  `json:"count"`
}

// OpCount is a count of one operation.
type OpCount struct {
	Op    string `json:"op"`
	Count int64  `json:"count"`
}
