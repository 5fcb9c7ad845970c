package replay

import "time"

// The kinds of strace's calls, and the parse of their latencies and
// arguments.

// callKind is what the replay does of the calls of one name: those of
// pathCalls, of fdCalls, or neither.
type callKind struct {
	name   string
	onPath bool
	path   pathCall
	onFD   bool
	act    action
	args   bool // the replay reads the call's arguments
	// follow is what the reader follows of a call it does not replay:
	// a descriptor's position, a process's working directory.
	follow follow
}

// follow is a call that changes what later calls mean without being
// replayed.
type follow uint8

const (
	followNone   follow = iota
	followSeek          // lseek: a descriptor's position
	followChdir         // chdir: the working directory, by path
	followFchdir        // fchdir: the working directory, by descriptor
	followFork          // a new process, in its parent's directory
	followDup           // dup, dup2, dup3, fcntl's F_DUPFD: a descriptor's copy
)

// followCalls are the calls of each follow.
var followCalls = map[string]follow{
	"lseek": followSeek, "chdir": followChdir, "fchdir": followFchdir,
	"clone": followFork, "clone3": followFork, "fork": followFork, "vfork": followFork,
	"dup": followDup, "dup2": followDup, "dup3": followDup, "fcntl": followDup,
}

// newCallKind is the kind of the calls named name.
func newCallKind(name string) *callKind {
	k := &callKind{name: name, follow: followCalls[name]}
	k.path, k.onPath = pathCalls[name]
	k.act, k.onFD = fdCalls[name]
	k.args = k.onPath || k.onFD || k.follow != followNone && k.follow != followFork
	return k
}

// callKinds are the kinds of the calls whose arguments the replay reads,
// the same for every log; knownCalls indexes them by name, from 1.
var callKinds, knownCalls = func() ([]*callKind, map[string]uint8) {
	ks, idx := []*callKind{nil}, map[string]uint8{}
	add := func(name string) {
		if idx[name] == 0 {
			idx[name] = uint8(len(ks))
			ks = append(ks, newCallKind(name))
		}
	}
	for name := range pathCalls {
		add(name)
	}
	for name := range fdCalls {
		add(name)
	}
	for name := range followCalls {
		add(name)
	}
	return ks, idx
}()

// kind is the kind of the calls named b, looked up once per name.
func (s *strc) kind(b []byte) *callKind {
	if k := s.last; k != nil && string(b) == k.name {
		return k // a log's lines often repeat a call
	}
	k, ok := s.names[string(b)]
	if !ok {
		if i := knownCalls[string(b)]; i > 0 {
			k = callKinds[i]
		} else {
			k = newCallKind(string(b))
		}
		s.names[k.name] = k
	}
	s.last = k
	return k
}

// seconds reads a latency, "0.000059", of a million seconds at most.
func seconds(b []byte) (time.Duration, bool) {
	v, ok := nanos(b)
	if !ok || v > 1e15 {
		return 0, false
	}
	return time.Duration(v), true
}

// Classes of the bytes of strace's arguments, for splitArgs.
const (
	argPlain = iota
	argQuote
	argOpen
	argClose
	argComma
)

// argClass classes each byte, so that splitArgs's loop passes over the
// plain ones (most of them) with one load and one test.
var argClass = func() (t [256]uint8) {
	t['"'], t[','] = argQuote, argComma
	for _, c := range "[{(<" {
		t[c] = argOpen
	}
	for _, c := range "]})>" {
		t[c] = argClose
	}
	return t
}()

// splitArgs splits strace's arguments at the commas outside strings,
// brackets, braces and paths, appending them to out.
func splitArgs(out []string, s string) []string {
	for i := 0; ; {
		a, e, next := nextArg(s, i)
		if next < 0 {
			if e > a || len(out) > 0 {
				out = append(out, s[a:e])
			}
			return out
		}
		out = append(out, s[a:e])
		i = next
	}
}

// nextArg finds the argument of strace's that starts at i in s: it is
// s[a:e], without the spaces around it, and the next starts at next, -1
// when it is the last.
func nextArg[T string | []byte](s T, i int) (a, e, next int) {
	depth, next := 0, -1
	start := i
	for ; i < len(s); i++ {
		switch argClass[s[i]] {
		case argPlain:
		case argQuote:
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case argOpen:
			depth++
		case argClose:
			depth--
		default:
			if depth == 0 {
				next = i + 1
				goto found
			}
		}
	}
	i = len(s)
found:
	a, e = start, i
	for a < e && asciiSpace[s[a]] {
		a++
	}
	for e > a && asciiSpace[s[e-1]] {
		e--
	}
	return a, e, next
}

// asciiSpace are the bytes of white space.
var asciiSpace = [256]bool{' ': true, '\t': true, '\n': true, '\v': true, '\f': true, '\r': true}
