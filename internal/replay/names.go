package replay

import "strings"

// opSlot is where an operation's name, of length n, first bytes b0 and
// b1 and last byte z, goes in knownOps: a hash that gives each of
// opNames a slot of its own (TestKnownOps).
func opSlot(n int, b0, b1, z byte) uint8 {
	return uint8(n+int(b0)*24+int(z)+int(b1)*3) & 63
}

// knownOps holds opNames, each in its slot: a log's operation names are
// found there with one comparison, rather than in a map.
var knownOps = func() (t [64]string) {
	for _, n := range opNames {
		t[opSlot(len(n), n[0], n[1], n[len(n)-1])] = n
	}
	return t
}()

// knownOp is the slot of name b in knownOps, -1 when it is not there.
func knownOp[T string | []byte](b T) int {
	if len(b) < 2 {
		return -1
	}
	s := opSlot(len(b), b[0], b[1], b[len(b)-1])
	if knownOps[s] != string(b) {
		return -1
	}
	return int(s)
}

// plainName reports whether name is one entry of its directory: not
// empty, "." or "..", and without a slash or a NUL, which would make its
// path another file's, or one outside the run directory.
func plainName(name string) bool {
	switch name {
	case "", ".", "..":
		return false
	}
	return strings.IndexByte(name, '/') < 0 && strings.IndexByte(name, 0) < 0
}

// escapeName is a name for one entry that stands for name, which is not
// plainName: its slashes, NULs and dots as %2F, %00 and %2E ("%" for
// the empty name).
func escapeName(name string) string {
	if name == "" {
		return "%"
	}
	r := strings.NewReplacer("%", "%25", "/", "%2F", "\x00", "%00")
	name = r.Replace(name)
	if name == "." || name == ".." {
		name = strings.ReplaceAll(name, ".", "%2E")
	}
	return name
}
