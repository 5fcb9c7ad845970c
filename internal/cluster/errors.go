package cluster

import (
	"errors"
	"strings"
)

// HostError is a failure of one host, named.
type HostError struct {
	Host string
	Err  error
}

func (e *HostError) Error() string { return "host " + e.Host + ": " + e.Err.Error() }
func (e *HostError) Unwrap() error { return e.Err }

// ErrLost is the cause of a host's failure when it stopped answering.
var ErrLost = errors.New("lost: no answer")

// ErrStopped is the cause of a host's failure when its job was stopped on
// the host itself (its agent terminated, or orphaned) while this
// coordinator had asked no one to stop.
var ErrStopped = errors.New("stopped before the end")

// ErrJobRefused is wrapped by the preflight's failure where an agent
// refused the job itself, before anything was made: its arguments, a
// PATH outside the allowed roots, too little room there. The user changes
// the command line; the hosts are fine.
var ErrJobRefused = errors.New("the job was refused")

type refusal struct{ err error }

func (r *refusal) Error() string   { return r.err.Error() }
func (r *refusal) Unwrap() []error { return []error{ErrJobRefused, r.err} }

// HostsError is the failure of several hosts, grouped by cause.
type HostsError struct {
	Errs []*HostError
	c    *Coordinator
}

func (e *HostsError) Error() string {
	var g Causes
	for _, he := range e.Errs {
		g.Add(he.Host, he.Err.Error())
	}
	return strings.Join(g.Lines(e.c.few), "; ")
}

func (e *HostsError) Unwrap() []error {
	errs := make([]error, len(e.Errs))
	for i, he := range e.Errs {
		errs[i] = he
	}
	return errs
}
