package cli

import "testing"

// A rate split over hosts adds up to the total exactly, differs by at most
// one operation per second between hosts, and never leaves a host a
// closed loop (0).
func TestHostShare(t *testing.T) {
	for _, c := range []struct {
		total float64
		hosts int
		want  []float64
	}{
		{300, 3, []float64{100, 100, 100}},
		{1001, 3, []float64{334, 334, 333}},
		{2, 3, []float64{2.0 / 3, 2.0 / 3, 2.0 / 3}},
		{10.5, 2, []float64{5.25, 5.25}},
		{0, 3, []float64{0, 0, 0}},
		{7, 1, []float64{7}},
	} {
		sum := 0.0
		for i, w := range c.want {
			got := hostShare(c.total, i, c.hosts)
			if got != w {
				t.Errorf("hostShare(%g, %d, %d) = %g, want %g", c.total, i, c.hosts, got, w)
			}
			sum += got
		}
		if c.total == float64(int64(c.total)) && c.total >= float64(c.hosts) && sum != c.total {
			t.Errorf("%g over %d hosts adds up to %g", c.total, c.hosts, sum)
		}
	}
}
