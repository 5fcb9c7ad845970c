package units

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		bad  bool
	}{
		{"0", 0, false},
		{"4096", 4096, false},
		{"1K", 1024, false},
		{"1k", 1024, false},
		{"1KB", 1024, false},
		{"1KiB", 1024, false},
		{"128K", 128 << 10, false},
		{"1M", 1 << 20, false},
		{"1MiB", 1 << 20, false},
		{"1G", 1 << 30, false},
		{"1 GiB", 1 << 30, false},
		{"2T", 2 << 40, false},
		{"1.5G", 3 << 29, false},
		{"0.5K", 512, false},
		{"10B", 10, false},
		{" 1M ", 1 << 20, false},
		{"", 0, true},
		{"M", 0, true},
		{"-1M", 0, true},
		{"abc", 0, true},
		{"1X", 0, true},
		{"1.3B", 0, true},
		{"0.1K", 0, true},
		{"9999999999P", 0, true},
		{"NaN", 0, true},
		{"Inf", 0, true},
		{"1e3", 1000, false},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if tt.bad {
			if err == nil {
				t.Errorf("ParseSize(%q) = %d, want error", tt.in, got)
			} else if !errors.Is(err, ErrSyntax) {
				t.Errorf("ParseSize(%q) error %v does not wrap ErrSyntax", tt.in, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	tests := map[int64]string{
		0:             "0 B",
		512:           "512 B",
		1024:          "1 KiB",
		128 << 10:     "128 KiB",
		1 << 20:       "1 MiB",
		1536 << 20:    "1.50 GiB",
		1 << 30:       "1 GiB",
		(1 << 40) * 3: "3 TiB",
		1<<20 + 1<<19: "1.50 MiB",
	}
	for in, want := range tests {
		if got := FormatBytes(in); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", in, got, want)
		}
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"1M", "128K", "1.5GiB", "-1", "", "1e30", "0.5K"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err == nil && n < 0 {
			t.Fatalf("ParseSize(%q) = %d: negative without error", s, n)
		}
	})
}

func TestFormatLatency(t *testing.T) {
	tests := map[float64]string{
		0: "0", 2.345: "2.3us", 87.4: "87us", 999: "999us", 1234: "1.23ms",
		12345: "12.3ms", 123456: "123ms", 2_500_000: "2.50s",
	}
	for in, want := range tests {
		if got := FormatLatency(in); got != want {
			t.Errorf("FormatLatency(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"600": 600 * time.Second, "1.5": 1500 * time.Millisecond, "2m": 2 * time.Minute, "250ms": 250 * time.Millisecond} {
		if d, err := ParseDuration(in); err != nil || d != want {
			t.Errorf("ParseDuration(%q) = %v, %v", in, d, err)
		}
	}
	for _, in := range []string{"", "-1s", "-5", "soon", "1e30", "NaN", "nan", "Inf", "-0.5"} {
		if _, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) accepted", in)
		}
	}
}

// FuzzParseDuration: no input panics, and no duration accepted is
// negative.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"600", "1.5", "2m", "250ms", "1h2m3.5s", "-1s", "", "NaN", "1e9", "0x1p4", " 7 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err == nil && d < 0 {
			t.Fatalf("ParseDuration(%q) = %v: negative without error", s, d)
		}
		if err != nil && (d != 0 || strings.Contains(err.Error(), "\n") && !strings.Contains(s, "\n")) {
			t.Fatalf("ParseDuration(%q) = %v, %q", s, d, err)
		}
	})
}

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 threads"}, {1, "1 thread"}, {2, "2 threads"}, {-1, "-1 threads"}} {
		if got := Count(c.n, "thread"); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	if got := CountOf(1, "directory", "directories"); got != "1 directory" {
		t.Errorf("CountOf(1) = %q", got)
	}
	if got := CountOf(3, "directory", "directories"); got != "3 directories" {
		t.Errorf("CountOf(3) = %q", got)
	}
}

func TestCountGrouped(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{1, "1 file"}, {0, "0 files"}, {999, "999 files"}, {1000, "1,000 files"}, {12000, "12,000 files"}, {1234567, "1,234,567 files"}, {-1000, "-1,000 files"}, {-100, "-100 files"}} {
		if got := CountGrouped(c.n, "file"); got != c.want {
			t.Errorf("CountGrouped(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestParseSizeIn(t *testing.T) {
	for _, c := range []struct {
		in   string
		unit int64
		want int64
		err  string
	}{
		{"4", MiB, 4 * MiB, ""}, {"4", KiB, 4 * KiB, ""}, {"0.5", MiB, MiB / 2, ""}, {"1.3", KiB, 1331, ""},
		{"4K", MiB, 4 * KiB, ""}, {"4B", MiB, 4, ""}, {" 64 ", MiB, 64 * MiB, ""}, {"0", MiB, 0, ""}, {"0", 0, 0, ""},
		{"4M", 0, 4 * MiB, ""}, {"4", 0, 0, "a bare number is ambiguous; write 4K, 4M or 4B"},
		{"-4", MiB, 0, "negative"}, {"1e30", MiB, 0, "too large"}, {"x", MiB, 0, "want a number"},
	} {
		got, err := ParseSizeIn(c.in, c.unit)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("ParseSizeIn(%q, %d) = %d, %v; want %d", c.in, c.unit, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ParseSizeIn(%q, %d) = %d, %v; want an error with %q", c.in, c.unit, got, err, c.err)
		}
	}
}
