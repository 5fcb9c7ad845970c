package vdbjob

import (
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/fsbench/fsbench/internal/jobfile"
	"github.com/fsbench/fsbench/internal/workload"
)

// The workload file's keys (jobfile's format), in the order written.
type yamlJob struct {
	Name    string      `yaml:"name"`
	Threads int         `yaml:"threads,omitempty"`
	Direct  bool        `yaml:"direct,omitempty"`
	Verify  bool        `yaml:"verify,omitempty"`
	Tree    *yamlTree   `yaml:"tree,omitempty"`
	Phases  []yamlPhase `yaml:"phases"`
}

type yamlTree struct {
	Dir      string `yaml:"dir,omitempty"`
	Depth    int    `yaml:"depth"`
	Width    int    `yaml:"width"`
	Files    int    `yaml:"files"`
	FileSize int64  `yaml:"file_size"`
	Format   string `yaml:"format"`
}

type yamlPhase struct {
	Name     string  `yaml:"name"`
	Op       string  `yaml:"op"`
	Access   string  `yaml:"access"`
	Select   string  `yaml:"select"`
	XferSize int64   `yaml:"xfer_size"`
	ReadPct  *int    `yaml:"read_pct,omitempty"`
	Ops      int64   `yaml:"ops,omitempty"`
	Duration string  `yaml:"duration,omitempty"`
	Warmup   string  `yaml:"warmup,omitempty"`
	Interval string  `yaml:"interval,omitempty"`
	Rate     float64 `yaml:"rate,omitempty"`
}

// YAML writes a job made by Read as a workload file that jobfile.Parse
// reads back into the same job: what `fsbench vdbench --print-job` shows,
// and what agents are sent.
func YAML(j *jobfile.Job) ([]byte, error) {
	y := yamlJob{Name: j.Name, Threads: j.Threads, Direct: j.Direct, Verify: j.Verify}
	if t := j.Tree; t != nil {
		y.Tree = &yamlTree{Dir: t.Dir, Depth: t.Depth, Width: t.Width, Files: t.Files, FileSize: t.FileSize, Format: t.Format}
	}
	for _, p := range j.Phases {
		yp := yamlPhase{Name: p.Name, Op: p.Op, Access: access(p.Access), Select: access(p.Select), XferSize: p.XferSize,
			Ops: p.Ops, Duration: duration(p.Duration), Warmup: duration(p.Warmup),
			Interval: duration(p.Interval), Rate: p.Rate}
		if p.Op == jobfile.OpRW {
			pct := p.ReadPct
			yp.ReadPct = &pct
		}
		y.Phases = append(y.Phases, yp)
	}
	return yaml.Marshal(y)
}

func access(a workload.Access) string {
	if a == workload.Random {
		return "random"
	}
	return "seq"
}

// duration is d as Go writes it (exact to the nanosecond), or "" for none.
func duration(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}
