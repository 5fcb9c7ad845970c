package bench

import (
	"github.com/fsbench/fsbench/internal/jobfile"
	"github.com/fsbench/fsbench/internal/workload"
)

// probeEngines checks, before anything is written, that the I/O engines
// the job's phases ask for can be had.
func probeEngines(j *jobfile.Job) error {
	for _, p := range j.Phases {
		if p.IOEngine == workload.IOUring && p.Data() {
			return workload.ProbeIOUring()
		}
	}
	return nil
}
