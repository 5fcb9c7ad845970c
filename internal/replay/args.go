package replay

// A JuiceFS entry's arguments as the first pass reads them: its fields
// and their numbers, which the builder, on its one processor, would
// otherwise read, some more than once.

// argNums are the first maxArgs fields of a JuiceFS entry's arguments
// as numbers: v[k] is field k's when bit k of isNum is set; bit k of read
// says the first pass read field k (else jargs.num reads it from the
// field).
type argNums struct {
	v           [maxArgs]uint64
	read, isNum uint8
}

// jargs are a JuiceFS entry's argument fields, and the first ones'
// numbers.
type jargs struct {
	f [][]byte
	argNums
}

// num is field k as a decimal number.
func (a *jargs) num(k int) (uint64, bool) {
	if k < maxArgs && a.read>>k&1 != 0 {
		return a.v[k], a.isNum>>k&1 != 0
	}
	return num(a.f[k])
}

// readArgs is the first pass's split of a JuiceFS argument list, args in
// line, into r: the fields' spans in r.a and their count in r.args
// (noArgs: more than r.a holds, or an argument list that is not one),
// and the numbers among them. It splits as fields does.
func readArgs(line, args []byte, r *rec) {
	r.args, r.an = noArgs, argNums{}
	if len(args) < 2 {
		r.args = 0
		return
	}
	args = args[1 : len(args)-1]
	k, start := 0, 0
	for i := 0; i <= len(args); i++ {
		if i < len(args) && args[i] != ',' {
			continue
		}
		if k == maxArgs {
			r.args, r.an = noArgs, argNums{}
			return
		}
		fld := args[start:i]
		at := cap(line) - cap(fld)
		r.a[2*k], r.a[2*k+1] = uint16(at), uint16(at+len(fld))
		v, ok := num(fld)
		r.an.v[k], r.an.read = v, r.an.read|1<<k
		if ok {
			r.an.isNum |= 1 << k
		}
		k, start = k+1, i+1
	}
	r.args = uint8(k)
}

// of sets a to the fields of the entry's arguments, args in line: from
// the first pass's split in r when it made one.
func (a *jargs) of(line, args []byte, r *rec) {
	if r.kind != kindEntry || r.args == noArgs {
		a.f, a.argNums = fields(a.f, args), argNums{}
		return
	}
	a.f = a.f[:0]
	for k := range int(r.args) {
		a.f = append(a.f, line[r.a[2*k]:r.a[2*k+1]])
	}
	a.argNums = r.an
}
