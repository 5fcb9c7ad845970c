package object

import "time"

// StallError is the error of a request during which nothing moved for the
// configured timeout: no byte of the request body was taken, no response
// header came, no byte of the response body arrived. A store that hangs
// (a stopped process, a lost network) fails its requests with it instead
// of holding them forever; a transfer that keeps moving is never cut,
// however long it takes.
type StallError struct{ After time.Duration }

func (e *StallError) Error() string {
	return "no answer from the store for " + e.After.String() + " (--timeout)"
}

// Timeout reports true: a StallError is a net.Error that timed out.
func (e *StallError) Timeout() bool { return true }

// Temporary is part of net.Error.
func (e *StallError) Temporary() bool { return true }
