// Package leftover names what a run leaves behind when it ends before its
// clean-up (a second Ctrl-C, a store that stopped answering) and says how
// to remove it, in one phrase for a one-line message.
//
// It removes nothing itself and does no I/O: it only names what is left and
// how to remove it.
package leftover

import (
	"strings"
	"sync"
)

// Dir describes a run directory left behind.
func Dir(path string) string {
	return "directory " + path + " (remove it with: rm -rf " + ShellQuote(path) + ")"
}

// Objects describes the objects under a run's prefix left behind; url is
// the store's URL ending in the prefix.
func Objects(url string) string {
	return "the objects under " + url + " (delete every key under that prefix to remove them)"
}

// ShellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and -_./:@%+=,.
func ShellQuote(s string) string {
	safe := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./:@%+=,", c)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Tracker holds what the running command has created and not yet removed.
// It is safe for concurrent use: a signal handler reads it while the run
// sets it.
type Tracker struct {
	mu   sync.Mutex
	what string
}

// Set records what a run has created (a phrase from Dir or Objects).
func (t *Tracker) Set(what string) {
	t.mu.Lock()
	t.what = what
	t.mu.Unlock()
}

// Clear records that what was created is gone.
func (t *Tracker) Clear() { t.Set("") }

// What returns what is left behind if the process ends now, or "".
func (t *Tracker) What() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.what
}

// Label makes s (a host name) fit in the name of a run's own directory or
// key prefix: ASCII letters and digits stay, and so do the bytes in keep;
// any other byte becomes repl; the label is at most max bytes long.
func Label(s, keep string, repl byte, max int) string {
	out := []byte(s)
	for i, c := range out {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(keep, c) >= 0) {
			out[i] = repl
		}
	}
	if len(out) > max {
		out = out[:max]
	}
	return string(out)
}

// DirPath is the path of a directory that Dir named, and whether what is
// such a name.
func DirPath(what string) (string, bool) {
	const pre = "directory "
	rest, ok := strings.CutPrefix(what, pre)
	if !ok {
		return "", false
	}
	// The path is followed by " (remove it with: ...)": try each place
	// the suffix could start, so that a path holding " (" still parses.
	for i := len(rest) - 1; i > 0; i-- {
		if rest[i] == '(' && rest[i-1] == ' ' && Dir(rest[:i-1]) == what {
			return rest[:i-1], true
		}
	}
	return "", false
}
