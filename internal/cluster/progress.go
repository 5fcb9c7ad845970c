package cluster

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Progress is how far a host has got in a phase: units done of Total
// (-1 when the phase runs for a time or its count is unknown). An agent
// sends it with every heartbeat and with each barrier's ready event (then
// it is the last phase's final count), so the coordinator can show the
// hosts' progress altogether at no cost beyond the heartbeat it sends
// anyway.
type Progress struct {
	Phase string `json:"phase"`
	Done  int64  `json:"done"`
	Total int64  `json:"total"`
	Unit  string `json:"unit,omitempty"` // what is counted: blocks, files, ops, objects
}

// meter holds the phase in progress of an agent's job: what Meter was
// last told.
type meter struct {
	mu    sync.Mutex
	phase string
	total int64
	unit  string
	poll  func() int64
}

type meterKey struct{}

// withMeter gives the job's context the meter its phases report to.
func withMeter(ctx context.Context, m *meter) context.Context {
	return context.WithValue(ctx, meterKey{}, m)
}

// Meter tells the agent that runs ctx's job that a phase begins: its
// name, its units (total; -1 when unknown) and what they are, and the
// function that returns the units done so far (called from another
// goroutine, about once a second). Outside an agent's job it does nothing.
func Meter(ctx context.Context, phase string, total int64, unit string, poll func() int64) {
	m, _ := ctx.Value(meterKey{}).(*meter)
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.phase, m.total, m.unit, m.poll = phase, total, unit, poll
}

// Settle tells the agent that runs ctx's job that the phase in progress
// has ended: its count stays what it is now. The counter it polled may
// start again for the next phase before the next barrier, where this
// phase's last count is reported. Outside an agent's job it does nothing.
func Settle(ctx context.Context) {
	m, _ := ctx.Value(meterKey{}).(*meter)
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.poll != nil {
		n := m.poll()
		m.poll = func() int64 { return n }
	}
}

// read is the phase in progress, or nil before the first.
func (m *meter) read() *Progress {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.poll == nil {
		return nil
	}
	return &Progress{Phase: m.phase, Done: m.poll(), Total: m.total, Unit: m.unit}
}

// sum adds up the hosts' progress in phase: the units done, and the total
// when every host knows its own (else -1).
func sum(hosts []*host, phase string) (p Progress) {
	p.Phase = phase
	done, total := &p.Done, &p.Total
	for _, h := range hosts {
		hp := h.prog
		if hp == nil || hp.Phase != phase {
			*total = -1
			continue
		}
		p.Unit = hp.Unit
		*done += hp.Done
		if hp.Total < 0 || *total < 0 {
			*total = -1
		} else {
			*total += hp.Total
		}
	}
	return p
}

// jobLine is the one line an agent logs per job, when it ends: which job,
// how it ended and how long it ran. The job's arguments are not in it:
// they may hold credentials.
func jobLine(j *agentJob, ev Event, d time.Duration) string {
	how := "finished"
	switch {
	case ev.Interrupted:
		how = "stopped"
	case ev.Error != "":
		how = "failed"
	}
	line := fmt.Sprintf("job %s: %s (host %d of %d, run %s) %s after %.1fs", j.id, j.job.Command,
		j.job.Index+1, j.job.Hosts, j.job.RunName, how, d.Seconds())
	if ev.Result != nil {
		line += fmt.Sprintf(", %d phases", len(ev.Result.Phases))
	}
	if ev.Error != "" {
		line += ": " + ev.Error
	}
	return line
}
