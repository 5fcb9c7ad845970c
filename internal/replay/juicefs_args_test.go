package replay

import (
	"bytes"
	"testing"
)

// argsAsFields checks that the first pass's split of args (readArgs), as
// the builder takes it (jargs.of), gives the fields fields gives and the
// numbers num reads of them.
func argsAsFields(t *testing.T, args []byte) {
	t.Helper()
	line := append(append([]byte("op "), args...), " - OK"...)
	args = line[3 : 3+len(args)]
	var r rec
	r.kind = kindEntry
	readArgs(line, args, &r)
	var a jargs
	a.of(line, args, &r)
	want := fields(nil, args)
	if len(a.f) != len(want) {
		t.Fatalf("%q: %d fields %q, want %q", args, len(a.f), a.f, want)
	}
	for k := range want {
		if !bytes.Equal(a.f[k], want[k]) {
			t.Fatalf("%q: field %d %q, want %q", args, k, a.f[k], want[k])
		}
		v, ok := a.num(k)
		wv, wok := num(want[k])
		if v != wv && wok || ok != wok {
			t.Fatalf("%q: field %d reads %d %v, want %d %v", args, k, v, ok, wv, wok)
		}
	}
	if r.args != noArgs && a.read != 1<<len(want)-1 {
		t.Fatalf("%q: %d fields split, read %b", args, r.args, a.read)
	}
}

// TestReadArgsAsFields: the first pass splits a JuiceFS argument list as
// the builder does, reads its numbers as num does, and leaves a list of
// more fields than a rec holds to the builder.
func TestReadArgsAsFields(t *testing.T) {
	for _, s := range []string{
		"", "(", "()", "(7)", "(1,f1,-rw-r--r--:0100644)", "(12,16384,0,12)", "(1,a,b,1,c,d,0)",
		"(,)", "(,,,)", "(1,,2)", "(18446744073709551615,18446744073709551616,007,-1)",
		"(99999999999999999999999,x)", "(12,0x8000)",
	} {
		argsAsFields(t, []byte(s))
	}
	line := []byte("op (1,2,3,4,5) - OK")
	var r rec
	r.kind = kindEntry
	if readArgs(line, line[3:14], &r); r.args != noArgs || r.an.read != 0 {
		t.Fatalf("five fields: args %d, read %b", r.args, r.an.read)
	}
}

// FuzzReadArgs: any argument list splits as fields splits it.
func FuzzReadArgs(f *testing.F) {
	f.Add([]byte("(12,16384,0,12)"))
	f.Add([]byte("(1,a,b,1,c,d,0)"))
	f.Fuzz(func(t *testing.T, args []byte) {
		if len(args) > 1000 {
			return
		}
		argsAsFields(t, args)
	})
}
