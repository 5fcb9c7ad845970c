package profile

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"
)

// FuzzRun feeds arbitrary input through a summary and a replay: nothing
// panics, the only error is bad input for lines with not one entry among
// them, and every line is accounted for exactly once (counted, filtered
// out or skipped).
func FuzzRun(f *testing.F) {
	sample, err := readSampleFile()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sample[:2000], "", uint8(2))
	f.Add([]byte("#\n\n\xff\n2026.11.21 21:03:17.175294 [uid:0,gid:0,pid:1] lookup (1,a): - OK <0.000161>"), "a", uint8(0))
	f.Add(append(sample[:300:300], sample[150:900]...), "bigfile", uint8(1))
	f.Fuzz(func(t *testing.T, in []byte, path string, iv uint8) {
		want := int64(bytes.Count(in, []byte("\n")))
		if len(in) > 0 && in[len(in)-1] != '\n' {
			want++
		}
		for _, interval := range []time.Duration{0, time.Duration(iv) * time.Second} {
			var out bytes.Buffer
			err := Run(context.Background(), bytes.NewReader(in), &out, Options{Interval: interval, JSON: true, Filter: Filter{Path: path}, Location: time.UTC})
			// Lines and not one entry: the input is not an access log,
			// said after its (empty) windows.
			if err != nil && !errors.Is(err, ErrBadInput) {
				t.Fatalf("Run: %v", err)
			}
			var lines, entries, bad int64
			for _, w := range windows(t, out.String()) {
				if w.Lines != w.Entries+w.Filtered+w.Skipped.Total() {
					t.Fatalf("window %+v does not add up", w)
				}
				lines += w.Lines
				entries += w.Entries + w.Filtered
				bad += w.Skipped.Bad()
			}
			if (err != nil) != (entries == 0 && bad > 0) {
				t.Fatalf("interval %v: error %v with %d entries and %d bad lines", interval, err, entries, bad)
			}
			if lines != want {
				t.Fatalf("interval %v: %d lines accounted for, input has %d", interval, lines, want)
			}
		}
	})
}
