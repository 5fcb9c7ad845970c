package sysio

import "strings"

// Renamed is err with every from in its message written as to, for a
// directory reached through a descriptor (/proc/self/fd/N) that the user
// knows by its name; errors.Is and errors.As see err as it was.
func Renamed(err error, from, to string) error {
	if err == nil || from == to {
		return err
	}
	return &renamed{err, from, to}
}

type renamed struct {
	err      error
	from, to string
}

func (r *renamed) Error() string { return strings.ReplaceAll(r.err.Error(), r.from, r.to) }
func (r *renamed) Unwrap() error { return r.err }
