//go:build !linux

package uring

import (
	"errors"
	"fmt"
	"time"
)

// Ring is io_uring's ring, which only Linux has.
type Ring struct{}

// ErrUnavailable wraps every reason io_uring cannot be set up.
var ErrUnavailable = errors.New("io_uring is not available")

// New fails: io_uring is Linux's.
func New(entries uint32, deferred bool) (*Ring, error) {
	return nil, fmt.Errorf("%w: it is Linux's; use --ioengine sync", ErrUnavailable)
}

func (r *Ring) Close() error                                                     { return nil }
func (r *Ring) NeedsStart() bool                                                 { return false }
func (r *Ring) Start() error                                                     { return ErrUnavailable }
func (r *Ring) RegisterBuffer(buf []byte) bool                                   { return false }
func (r *Ring) SetHold(on bool)                                                  {}
func (r *Ring) Holds() bool                                                      { return false }
func (r *Ring) Free() int                                                        { return 0 }
func (r *Ring) Prep(write bool, fd int, buf []byte, off int64, data uint64) bool { return false }
func (r *Ring) Enter(wait uint32, timeout time.Duration) error                   { return ErrUnavailable }
func (r *Ring) Reap(fn func(data uint64, res int32)) int                         { return 0 }
