package replay

import (
	"testing"
	"time"
)

func TestCheckSpeed(t *testing.T) {
	week := 7 * 24 * time.Hour
	for _, tc := range []struct {
		speed float64
		span  time.Duration
		ok    bool
	}{
		{0, week * 100, true},
		{1, week, true},
		{1, week + time.Second, false},
		{0.5, week / 2, true},
		{0.5, week/2 + time.Second, false},
		{1e-9, 0, true},                  // a microsecond paced over 1,000 s
		{1e-12, 0, false},                // a microsecond paced over 11.6 days
		{1e-300, 0, false},               // overflows a Duration
		{1e-300, time.Nanosecond, false}, // a span under the finest recorded time counts as one
		{1e-9, time.Second, false},
		{1e-4, 15 * time.Second, true},
		{-1, time.Second, false},
	} {
		if err := CheckSpeed(tc.speed, tc.span); (err == nil) != tc.ok {
			t.Errorf("CheckSpeed(%g, %v) = %v, want ok %v", tc.speed, tc.span, err, tc.ok)
		}
	}
}
