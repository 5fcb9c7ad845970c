// Package cluster runs one benchmark on many hosts: `fsbench agent` serves
// jobs on each client host, and a coordinator (the ordinary command given
// --hosts: one of Commands, such as bench, objbench or train) starts every
// phase on all of them together and merges what they measured into one
// result.
//
// The protocol is HTTP with JSON, TLS when the agent has a certificate,
// and a bearer token on every request. A job's life on an agent: info ->
// prepare (validate, make the run's directory) -> a stream of events
// (heartbeats, "ready" at each phase's barrier, "started", and finally
// "done" with the host's result) while the coordinator releases each
// barrier with a Release (POST .../go) and pings -> cleanup. Either side
// that stops hearing from the other cancels and cleans up.
//
// It runs no operation on storage itself (the commands' packages do, on each
// host), and an agent touches no path outside its --allow-root.
package cluster

import (
	"strconv"
	"strings"
	"time"

	"github.com/fsbench/fsbench/internal/report"
)

// Protocol is the version of the agent protocol; coordinator and agents
// must speak the same one. 2: every phase also ends at a barrier (EndOf),
// which an agent of 1 never reaches. 3: an open loop's rate is the total
// across the hosts, each agent running its share, and a job may carry a
// capacity probe's Pace; an agent of 2 would run the whole rate. 4: a
// Pace also carries replay's speed and train's shared dataset, which an
// agent of 3 would ignore.
const Protocol = 4

// Default timings.
const (
	// HeartbeatEvery is how often an agent sends a heartbeat on a job's
	// event stream, and a coordinator pings.
	HeartbeatEvery = time.Second
	// LostAfter is how long a coordinator waits without hearing from an
	// agent before it declares the agent lost.
	LostAfter = 5 * time.Second
	// OrphanAfter is how long an agent runs a job without a ping before it
	// cancels the job and removes its files.
	OrphanAfter = 10 * time.Second
)

// Limits on what an agent accepts.
const (
	maxRequestBytes = MaxJobBytes
	maxArgs         = 256
)

// Info is what an agent says about itself.
type Info struct {
	// ID names the agent process: the same agent reached under two
	// addresses gives the same ID.
	ID       string      `json:"id,omitempty"`
	Protocol int         `json:"protocol"`
	Version  string      `json:"version"`
	Host     report.Host `json:"host"`
	Roots    []Root      `json:"roots"`
	Busy     bool        `json:"busy"`
	Time     time.Time   `json:"time"` // the agent's clock, for the offset
	// Machine names the kernel the agent runs on (sysio.Machine): an
	// agent on the coordinator's own kernel reads the same clock, and
	// its offset is 0, not an estimate.
	Machine string `json:"machine,omitempty"`
	// CPUs are the CPUs the agent's process runs on (a launcher binds
	// each of a few ranks to a core); none when it does not say.
	CPUs []int `json:"cpus,omitempty"`
}

// Root is a directory jobs may work under, and its free space.
type Root struct {
	Path      string `json:"path"`
	FreeBytes int64  `json:"free_bytes"`
}

// The commands an agent runs, by the name a Job gives.
const (
	CommandBench      = "bench"
	CommandObjbench   = "objbench"
	CommandCheckpoint = "checkpoint"
	CommandTrain      = "train"
	CommandReplay     = "replay"
	CommandIO500      = "io500"
)

// Commands are the commands an agent runs: the one list that an agent's
// check of a job reads, and that cli's table of the commands it builds
// on an agent (agentCommands, with the flags each sends) must match, as
// its tests check. A command added here is added there.
var Commands = []string{CommandBench, CommandObjbench, CommandCheckpoint, CommandTrain, CommandReplay, CommandIO500}

// Job is what a coordinator asks an agent to run.
type Job struct {
	// Command is one of Commands; Args are its arguments as the
	// coordinator's user gave them, less the coordinator's own flags.
	Command string   `json:"command"`
	Args    []string `json:"args"`
	// Files holds the files the arguments name that every host reads
	// (workload files, logs to replay, CA certificates, key files), by
	// the name given on the command line; the agent keeps them in a
	// directory of its own while the job runs and reads no other.
	Files map[string][]byte `json:"files,omitempty"`
	// RunName is the run's directory (or key prefix) under the benchmark
	// path, shared by all hosts; each host works in RunName/host-N.
	RunName string `json:"run_name"`
	Index   int    `json:"index"` // this host's place in the host list
	Hosts   int    `json:"hosts"` // how many hosts run the job
	// ReadOthers has host i read what host i+1 wrote.
	ReadOthers bool   `json:"read_others,omitempty"`
	Seed       uint64 `json:"seed"`
	// Need is the free space the job needs on the host, bytes (0: unknown).
	Need int64 `json:"need,omitempty"`
	// IdleCPUs are the CPUs that the other hosts on this host's machine
	// run on and this host does not: they wait through a phase that one
	// host runs for all (io500's find), which may run there.
	IdleCPUs []int `json:"idle_cpus,omitempty"`
	// Crowd is how much longer than alone the host may wait for a word
	// from the coordinator (a ping) before it gives up the job, as the
	// coordinator waits longer for its heartbeats: the run has other
	// hosts on its machine (Crowded).
	Crowd time.Duration `json:"crowd_ns,omitempty"`
	// Pace, when set, is a probe of a capacity search or curve (--slo,
	// --curve): the open-loop rate of the paced phase, total across the
	// hosts as --rate is, and how long it runs.
	Pace *Pace `json:"pace,omitempty"`
	// Base is set by the agent, never sent: RunName's directory as the
	// agent opened it beneath its allowed root (/proc/self/fd/N), which
	// the run uses in place of PATH/RunName so that no link swapped into
	// PATH later leads it elsewhere; "" for an object store.
	Base string `json:"-"`
	// Path is set by the agent, never sent: the job's PATH as the agent
	// opened it beneath its allowed root (/proc/self/fd/N), beneath which
	// the run makes and opens what it keeps there (a kept tree); "" for
	// an object store.
	Path string `json:"-"`
}

// Pace is the rate of the phase that a capacity search or curve paces
// (the last one limited by time or count), for one probe.
type Pace struct {
	// Rate is the total across the hosts, operations per second; 0 is a
	// closed loop.
	Rate float64 `json:"rate"`
	// Duration, if set, is the phase's duration, stretched to gather the
	// samples the objective needs; else MinOps, if set, is the fewest
	// operations of all hosts together.
	Duration time.Duration `json:"duration_ns,omitempty"`
	MinOps   int64         `json:"min_ops,omitempty"`
	// Speed is replay's: the speed at which every host replays its log
	// (Rate is then the whole log's operations per second at it).
	Speed float64 `json:"speed,omitempty"`
	// Dataset is train's: what becomes of the dataset that the probes of
	// one search share in the run's directory (one RunName for them all).
	// DatasetKeep makes it and keeps it for the probes after;
	// DatasetReuse trains on it; DatasetRemove trains nothing and
	// removes it. "" is a run's own dataset, made and removed.
	Dataset string `json:"dataset,omitempty"`
}

// The values of Pace.Dataset.
const (
	DatasetKeep   = "keep"
	DatasetReuse  = "reuse"
	DatasetRemove = "remove"
)

// MaxJobBytes bounds a job as an agent accepts it, the files it carries
// included.
const MaxJobBytes = 4 << 20

// HostDir is the name of host i's directory (or key prefix) in a run.
func HostDir(i int) string { return "host-" + strconv.Itoa(i) }

// Accepted is an agent's answer to a job it prepared.
type Accepted struct {
	ID string `json:"id"`
}

// Event types on a job's stream.
const (
	EventHeartbeat = "heartbeat"
	EventReady     = "ready"   // at a barrier: Seq, Phase
	EventStarted   = "started" // the barrier was released: Seq, Phase, Time
	EventWarning   = "warning" // Message
	EventDone      = "done"    // Result, Error
)

// Event is one line of a job's event stream (NDJSON).
type Event struct {
	Type    string         `json:"type"`
	Seq     int            `json:"seq,omitempty"`
	Phase   string         `json:"phase,omitempty"`
	Time    time.Time      `json:"time"`
	Message string         `json:"message,omitempty"`
	Result  *report.Result `json:"result,omitempty"`
	// ParamTexts are the labels and displays of Result's parameters,
	// which its JSON does not carry, so the table header reads as on one host.
	ParamTexts []report.ParamText `json:"param_texts,omitempty"`
	Error      string             `json:"error,omitempty"`
	// Interrupted is set on done when the job was cancelled.
	Interrupted bool `json:"interrupted,omitempty"`
	// Live are the host's cumulative counts of each phase of the job so
	// far, on heartbeats and done, for the coordinator's live metrics.
	// Agents of older versions send none.
	Live []PhaseCounts `json:"live,omitempty"`
	// Progress is on heartbeats (the phase in progress) and ready events
	// (the phase just ended), once the job has begun its first phase.
	Progress *Progress `json:"progress,omitempty"`
}

// PhaseCounts are one phase's cumulative counts on one host, or one
// operation's of a phase of several (Op): operations, bytes (the part
// read too), errors, the sum of latencies, and the operations by latency
// bucket (metrics.Live's buckets).
type PhaseCounts struct {
	Phase string `json:"phase"`
	Op    string `json:"op,omitempty"`
	Ops   int64  `json:"ops"`
	Bytes int64  `json:"bytes"`
	// ReadBytes and WriteBytes split Bytes by direction (0 from an
	// agent of an older version, whose bytes then count as written).
	ReadBytes  int64   `json:"read_bytes,omitempty"`
	WriteBytes int64   `json:"write_bytes,omitempty"`
	Errors     int64   `json:"errors"`
	LatencyNs  int64   `json:"latency_ns"`
	Buckets    []int64 `json:"buckets,omitempty"`
}

// Release is the coordinator's message that releases the barrier Seq,
// posted to a job's "go" (the path and JSON fields are the wire format;
// the type's name is not on the wire).
type Release struct {
	Seq int `json:"seq"`
	// At is the moment to start, given to an agent on the coordinator's
	// own kernel, whose clock is the coordinator's. A wait counted from
	// the request's arrival (Delay) also counts the request's own time on
	// the way, which differs from host to host: ranks on one machine with
	// 2 CPUs, released so, started up to 2.6 ms apart.
	At time.Time `json:"at,omitzero"`
	// Delay is the wait from the request's arrival, the moment less half
	// the agent's round trip, for an agent on another machine (whose
	// clock is only estimated, and drifts) or that does not read At.
	Delay time.Duration `json:"delay_ns"`
}

// wait is how long an agent that took g waits before it starts: until
// At (at most a minute, as Delay), or Delay without At.
func (g Release) wait() time.Duration {
	if g.At.IsZero() {
		return g.Delay
	}
	return min(max(time.Until(g.At), 0), time.Minute)
}

// ErrorBody is the JSON body of an error answer.
type ErrorBody struct {
	Error string `json:"error"`
}

// FinishPhase is the name of the barrier every host reaches after its
// last phase, before it removes its files: no host removes what another
// may still read.
const FinishPhase = "finish"

// EndOf names the barrier every host reaches when it has ended phase,
// before it prepares the next one. Without it a host that ended first
// dropped its caches, wrote back its dirty data, listed its files and
// collected its garbage for the next phase while the others were still
// in this one: ranks on one machine slowed each other so (IO500 puts an
// MPI barrier between its phases for the same reason). Its release is
// not a common start: hosts go on at once.
func EndOf(phase string) string { return endPrefix + phase }

// IsEnd reports whether a barrier is one of EndOf's. No phase's own name
// has a space (a workload file's are checked so), so none is taken for one.
func IsEnd(barrier string) bool { return strings.HasPrefix(barrier, endPrefix) }

const endPrefix = "end of "
